package wire

// MaxSetBits is the largest numBits of a SequenceNumberSet or
// FragmentNumberSet (256, i.e. 8 bitmap words).
const MaxSetBits = 256

// SequenceNumberSet is a SequenceNumberSet_t: a base and up to 256 bits.
// Element i (0-based, i < NumBits) stands for Base+i and is bit 31-i%32 of
// Bitmap[i/32]. Bits at or beyond NumBits are always zero after decoding.
type SequenceNumberSet struct {
	Base    SequenceNumber
	NumBits uint32
	Bitmap  [8]uint32
}

// Contains reports whether sn is in the set.
func (s *SequenceNumberSet) Contains(sn SequenceNumber) bool {
	if sn < s.Base {
		return false
	}
	d := uint64(sn - s.Base)
	if d >= uint64(s.NumBits) || d >= MaxSetBits {
		return false
	}
	return s.Bitmap[d/32]&(1<<(31-d%32)) != 0
}

// Add puts sn in the set, growing NumBits as needed. It returns false
// (and leaves the set unchanged) if sn < Base or sn >= Base+256.
func (s *SequenceNumberSet) Add(sn SequenceNumber) bool {
	if sn < s.Base {
		return false
	}
	d := uint64(sn - s.Base)
	if d >= MaxSetBits {
		return false
	}
	s.Bitmap[d/32] |= 1 << (31 - d%32)
	if uint32(d)+1 > s.NumBits {
		s.NumBits = uint32(d) + 1
	}
	return true
}

// Empty reports whether no bit is set.
func (s *SequenceNumberSet) Empty() bool { return bitmapEmpty(&s.Bitmap, s.NumBits) }

// AppendMembers appends the sequence numbers in the set, in increasing order, to dst.
func (s *SequenceNumberSet) AppendMembers(dst []SequenceNumber) []SequenceNumber {
	n := min(s.NumBits, MaxSetBits)
	for i := range n {
		if s.Bitmap[i/32]&(1<<(31-i%32)) != 0 {
			dst = append(dst, s.Base+SequenceNumber(i))
		}
	}
	return dst
}

// FragmentNumberSet is a FragmentNumberSet_t: like SequenceNumberSet but
// with a 32-bit base. Fragment numbers start at 1.
type FragmentNumberSet struct {
	Base    uint32
	NumBits uint32
	Bitmap  [8]uint32
}

// Contains reports whether fragment fn is in the set.
func (s *FragmentNumberSet) Contains(fn uint32) bool {
	if fn < s.Base {
		return false
	}
	d := uint64(fn - s.Base)
	if d >= uint64(s.NumBits) || d >= MaxSetBits {
		return false
	}
	return s.Bitmap[d/32]&(1<<(31-d%32)) != 0
}

// Add puts fn in the set, growing NumBits as needed. It returns false
// if fn < Base or fn >= Base+256.
func (s *FragmentNumberSet) Add(fn uint32) bool {
	if fn < s.Base {
		return false
	}
	d := uint64(fn - s.Base)
	if d >= MaxSetBits {
		return false
	}
	s.Bitmap[d/32] |= 1 << (31 - d%32)
	if uint32(d)+1 > s.NumBits {
		s.NumBits = uint32(d) + 1
	}
	return true
}

// Empty reports whether no bit is set.
func (s *FragmentNumberSet) Empty() bool { return bitmapEmpty(&s.Bitmap, s.NumBits) }

// AppendMembers appends the fragment numbers in the set, in increasing order, to dst.
func (s *FragmentNumberSet) AppendMembers(dst []uint32) []uint32 {
	n := min(s.NumBits, MaxSetBits)
	for i := range n {
		if s.Bitmap[i/32]&(1<<(31-i%32)) != 0 {
			dst = append(dst, s.Base+i)
		}
	}
	return dst
}

func bitmapEmpty(b *[8]uint32, numBits uint32) bool {
	words := (min(numBits, MaxSetBits) + 31) / 32
	for i := range words {
		if b[i] != 0 {
			return false
		}
	}
	return true
}

// maskBitmap clears bits at or beyond numBits.
func maskBitmap(b *[8]uint32, numBits uint32) {
	for i := uint32(0); i < 8; i++ {
		lo := i * 32
		switch {
		case numBits <= lo:
			b[i] = 0
		case numBits < lo+32:
			keep := numBits - lo // 1..31 high bits kept
			b[i] &= ^uint32(0) << (32 - keep)
		}
	}
}
