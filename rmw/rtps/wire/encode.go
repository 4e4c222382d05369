package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTooLarge is returned when a submessage or parameter does not fit its
// 16-bit length field.
var ErrTooLarge = errors.New("rtps: too large for the wire format")

// ErrInvalid is returned by the Builder for values it refuses to encode.
var ErrInvalid = errors.New("rtps: invalid value")

// Builder appends an RTPS message (header and submessages) to a buffer.
// Everything is written little endian (E flag set) and every submessage is
// padded to a multiple of 4 so that octetsToNextHeader is always exact.
// Reusing a Builder with Reset(buf[:0], ...) does not allocate once buf is
// large enough.
type Builder struct {
	buf  []byte
	base int // offset of the message header in buf
}

var le = binary.LittleEndian

// Reset starts a new message in dst (its contents are overwritten from
// len(dst) on; pass buf[:0] to reuse a buffer) and writes the header.
func (b *Builder) Reset(dst []byte, h Header) {
	b.base = len(dst)
	b.buf = append(dst, 'R', 'T', 'P', 'S', h.Version.Major, h.Version.Minor, h.Vendor[0], h.Vendor[1])
	b.buf = append(b.buf, h.Prefix[:]...)
}

// Bytes returns the buffer passed to Reset with the message appended. It
// aliases the Builder's buffer.
func (b *Builder) Bytes() []byte { return b.buf }

// Message returns only the message built so far (without any bytes that
// preceded it in the buffer passed to Reset).
func (b *Builder) Message() []byte { return b.buf[b.base:] }

// Len returns the length of the message built so far.
func (b *Builder) Len() int { return len(b.buf) - b.base }

// begin writes a submessage header with a placeholder length and returns
// the offset of the header.
func (b *Builder) begin(id SubmessageID, flags byte) int {
	at := len(b.buf)
	b.buf = append(b.buf, byte(id), flags|FlagEndianness, 0, 0)
	return at
}

// end pads the submessage to 4 and fills in octetsToNextHeader.
func (b *Builder) end(at int) error {
	b.buf = appendZeros(b.buf, (4-(len(b.buf)-b.base)%4)%4)
	n := len(b.buf) - at - SubmessageHeaderSize
	if n > 0xffff {
		b.buf = b.buf[:at]
		return ErrTooLarge
	}
	le.PutUint16(b.buf[at+2:], uint16(n))
	return nil
}

func (b *Builder) entity(e EntityID) { b.buf = append(b.buf, e[:]...) }

func (b *Builder) sn(s SequenceNumber) { b.buf = appendSN(b.buf, s) }

func (b *Builder) u32(v uint32) { b.buf = le.AppendUint32(b.buf, v) }

func (b *Builder) u16(v uint16) { b.buf = le.AppendUint16(b.buf, v) }

func (b *Builder) snSet(s *SequenceNumberSet) error {
	if s.NumBits > MaxSetBits {
		return fmt.Errorf("%w: numBits %d > 256", ErrInvalid, s.NumBits)
	}
	b.sn(s.Base)
	b.u32(s.NumBits)
	bm := s.Bitmap
	maskBitmap(&bm, s.NumBits)
	for i := range (s.NumBits + 31) / 32 {
		b.u32(bm[i])
	}
	return nil
}

func (b *Builder) fnSet(s *FragmentNumberSet) error {
	if s.NumBits > MaxSetBits {
		return fmt.Errorf("%w: numBits %d > 256", ErrInvalid, s.NumBits)
	}
	b.u32(s.Base)
	b.u32(s.NumBits)
	bm := s.Bitmap
	maskBitmap(&bm, s.NumBits)
	for i := range (s.NumBits + 31) / 32 {
		b.u32(bm[i])
	}
	return nil
}

func (b *Builder) inlineQos(pl ParameterList) error {
	if len(pl.Data) == 0 {
		return nil
	}
	if pl.BigEndian {
		return fmt.Errorf("%w: big-endian inline QoS", ErrInvalid)
	}
	if len(pl.Data)%4 != 0 {
		return fmt.Errorf("%w: inline QoS length %d not a multiple of 4", ErrInvalid, len(pl.Data))
	}
	b.buf = append(b.buf, pl.Data...)
	return nil
}

// InfoTS appends INFO_TS with timestamp t.
func (b *Builder) InfoTS(t Time) {
	at := b.begin(SubmsgInfoTS, 0)
	b.u32(uint32(t.Seconds))
	b.u32(t.Fraction)
	_ = b.end(at)
}

// InfoTSInvalidate appends INFO_TS with the I flag (no timestamp).
func (b *Builder) InfoTSInvalidate() {
	at := b.begin(SubmsgInfoTS, FlagInfoTSInvalidate)
	_ = b.end(at)
}

// InfoDst appends INFO_DST; GuidPrefixUnknown addresses everyone.
func (b *Builder) InfoDst(p GuidPrefix) {
	at := b.begin(SubmsgInfoDst, 0)
	b.buf = append(b.buf, p[:]...)
	_ = b.end(at)
}

// InfoSrc appends INFO_SRC.
func (b *Builder) InfoSrc(s InfoSrc) {
	at := b.begin(SubmsgInfoSrc, 0)
	b.u32(0)
	b.buf = append(b.buf, s.Version.Major, s.Version.Minor, s.Vendor[0], s.Vendor[1])
	b.buf = append(b.buf, s.Prefix[:]...)
	_ = b.end(at)
}

// InfoReply appends INFO_REPLY with the given locator lists (the M flag is
// set when multicast is non-nil).
func (b *Builder) InfoReply(unicast, multicast []Locator) {
	var flags byte
	if multicast != nil {
		flags = FlagInfoReplyMulticast
	}
	at := b.begin(SubmsgInfoReply, flags)
	b.locators(unicast)
	if multicast != nil {
		b.locators(multicast)
	}
	_ = b.end(at)
}

func (b *Builder) locators(ls []Locator) {
	b.u32(uint32(len(ls)))
	for i := range ls {
		b.buf = appendLocator(b.buf, ls[i])
	}
}

func appendLocator(dst []byte, l Locator) []byte {
	dst = le.AppendUint32(dst, uint32(l.Kind))
	dst = le.AppendUint32(dst, l.Port)
	return append(dst, l.Address[:]...)
}

// Pad appends a PAD submessage with n body bytes (n is rounded up to 4).
func (b *Builder) Pad(n int) {
	at := b.begin(SubmsgPad, 0)
	b.buf = appendZeros(b.buf, n)
	_ = b.end(at)
}

// Data appends a DATA submessage. The flags come from d: Q if InlineQos is
// non-empty (it must be little endian and include its sentinel), D if
// SerializedPayload is non-nil and Key is false, K if Key is true. The
// payload is padded with zeros to a multiple of 4.
func (b *Builder) Data(d *Data) error {
	var flags byte
	if len(d.InlineQos.Data) > 0 {
		flags |= FlagDataInlineQos
	}
	if d.SerializedPayload != nil {
		if d.Key {
			flags |= FlagDataKey
		} else {
			flags |= FlagDataData
		}
	}
	if d.NonStandardPayload {
		flags |= FlagDataNonStd
	}
	at := b.begin(SubmsgData, flags)
	b.u16(0)  // extraFlags
	b.u16(16) // octetsToInlineQos
	b.entity(d.ReaderID)
	b.entity(d.WriterID)
	b.sn(d.WriterSN)
	if err := b.inlineQos(d.InlineQos); err != nil {
		b.buf = b.buf[:at]
		return err
	}
	b.buf = append(b.buf, d.SerializedPayload...)
	return b.end(at)
}

// DataFrag appends a DATA_FRAG submessage carrying d.Fragments. Flags come
// from d as for Data (Q, K, N). The fragment fields are written as given
// and not checked against the fragment bytes.
func (b *Builder) DataFrag(d *DataFrag) error {
	var flags byte
	if len(d.InlineQos.Data) > 0 {
		flags |= FlagDataFragInlineQos
	}
	if d.Key {
		flags |= FlagDataFragKey
	}
	if d.NonStandardPayload {
		flags |= FlagDataFragNonStd
	}
	at := b.begin(SubmsgDataFrag, flags)
	b.u16(0)  // extraFlags
	b.u16(28) // octetsToInlineQos
	b.entity(d.ReaderID)
	b.entity(d.WriterID)
	b.sn(d.WriterSN)
	b.u32(d.FragmentStartingNum)
	b.u16(d.FragmentsInSubmessage)
	b.u16(d.FragmentSize)
	b.u32(d.SampleSize)
	if err := b.inlineQos(d.InlineQos); err != nil {
		b.buf = b.buf[:at]
		return err
	}
	b.buf = append(b.buf, d.Fragments...)
	return b.end(at)
}

// Heartbeat appends a HEARTBEAT submessage (F and L flags from h).
func (b *Builder) Heartbeat(h *Heartbeat) {
	var flags byte
	if h.Final {
		flags |= FlagHeartbeatFinal
	}
	if h.Liveliness {
		flags |= FlagHeartbeatLiveliness
	}
	at := b.begin(SubmsgHeartbeat, flags)
	b.entity(h.ReaderID)
	b.entity(h.WriterID)
	b.sn(h.FirstSN)
	b.sn(h.LastSN)
	b.u32(uint32(h.Count))
	_ = b.end(at)
}

// HeartbeatFrag appends a HEARTBEAT_FRAG submessage.
func (b *Builder) HeartbeatFrag(h *HeartbeatFrag) {
	at := b.begin(SubmsgHeartbeatFrag, 0)
	b.entity(h.ReaderID)
	b.entity(h.WriterID)
	b.sn(h.WriterSN)
	b.u32(h.LastFragmentNum)
	b.u32(uint32(h.Count))
	_ = b.end(at)
}

// AckNack appends an ACKNACK submessage (F flag from a). It fails if the
// set has more than 256 bits. Bits beyond NumBits are not sent.
func (b *Builder) AckNack(a *AckNack) error {
	var flags byte
	if a.Final {
		flags |= FlagAckNackFinal
	}
	at := b.begin(SubmsgAckNack, flags)
	b.entity(a.ReaderID)
	b.entity(a.WriterID)
	if err := b.snSet(&a.ReaderSNState); err != nil {
		b.buf = b.buf[:at]
		return err
	}
	b.u32(uint32(a.Count))
	return b.end(at)
}

// Gap appends a GAP submessage. It fails if the set has more than 256 bits.
func (b *Builder) Gap(g *Gap) error {
	at := b.begin(SubmsgGap, 0)
	b.entity(g.ReaderID)
	b.entity(g.WriterID)
	b.sn(g.GapStart)
	if err := b.snSet(&g.GapList); err != nil {
		b.buf = b.buf[:at]
		return err
	}
	return b.end(at)
}

// NackFrag appends a NACK_FRAG submessage. It fails if the set has more
// than 256 bits.
func (b *Builder) NackFrag(n *NackFrag) error {
	at := b.begin(SubmsgNackFrag, 0)
	b.entity(n.ReaderID)
	b.entity(n.WriterID)
	b.sn(n.WriterSN)
	if err := b.fnSet(&n.FragmentNumberState); err != nil {
		b.buf = b.buf[:at]
		return err
	}
	b.u32(uint32(n.Count))
	return b.end(at)
}
