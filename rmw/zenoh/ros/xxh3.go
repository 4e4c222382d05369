package ros

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// XXH3-128 with seed 0 and the default secret, written from the XXH3
// specification (xxhash 0.8). rmw_zenoh hashes each entity's liveliness
// token with it to make the entity's gid. It is a few hundred lines of
// arithmetic on short inputs (tokens are a few hundred bytes), so a scalar
// implementation here is cheaper than a dependency with assembly and a
// CPU-feature package behind it; testdata/xxh3.txt holds vectors produced
// by libxxhash 0.8.1 for every length class.

// xxhSecret is the 192-byte default secret of the XXH3 specification.
var xxhSecret = func() []byte {
	const s = "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f" +
		"cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c" +
		"3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8" +
		"a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364" +
		"eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e" +
		"2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e"
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 192 {
		panic("ros: bad XXH3 secret")
	}
	return b
}()

const (
	xxhPrime32_1 = 0x9E3779B1
	xxhPrime32_2 = 0x85EBCA77
	xxhPrime32_3 = 0xC2B2AE3D
	xxhPrime64_1 = 0x9E3779B185EBCA87
	xxhPrime64_2 = 0xC2B2AE3D27D4EB4F
	xxhPrime64_3 = 0x165667B19E3779F9
	xxhPrime64_4 = 0x85EBCA77C2B2AE63
	xxhPrime64_5 = 0x27D4EB2F165667C5
	xxhPrimeMX1  = 0x165667919E3779F9
	xxhPrimeMX2  = 0x9FB21C651E98DF25

	xxhStripeLen       = 64
	xxhSecretConsume   = 8
	xxhMidsizeMax      = 240
	xxhMidsizeStartOff = 3
	xxhMidsizeLastOff  = 17
	xxhSecretSizeMin   = 136
	xxhLastAccStart    = 7
	xxhMergeAccsStart  = 11
)

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxhPrime64_2
	h ^= h >> 29
	h *= xxhPrime64_3
	h ^= h >> 32
	return h
}

func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= xxhPrimeMX1
	h ^= h >> 32
	return h
}

func mul128Fold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// xxh3Hash128 returns XXH3_128bits(in) as its (low64, high64) halves.
func xxh3Hash128(in []byte) (lo, hi uint64) {
	n := len(in)
	switch {
	case n <= 16:
		return xxh3Len0to16(in)
	case n <= 128:
		return xxh3Len17to128(in)
	case n <= xxhMidsizeMax:
		return xxh3Len129to240(in)
	}
	return xxh3Long(in)
}

func xxh3Len0to16(in []byte) (uint64, uint64) {
	n := len(in)
	s := xxhSecret
	switch {
	case n > 8:
		bitflipl := le64(s[32:]) ^ le64(s[40:])
		bitfliph := le64(s[48:]) ^ le64(s[56:])
		inLo := le64(in)
		inHi := le64(in[n-8:])
		mHi, mLo := bits.Mul64(inLo^inHi^bitflipl, xxhPrime64_1)
		mLo += uint64(n-1) << 54
		inHi ^= bitfliph
		mHi += inHi + uint64(uint32(inHi))*(xxhPrime32_2-1)
		mLo ^= bits.ReverseBytes64(mHi)
		hHi, hLo := bits.Mul64(mLo, xxhPrime64_2)
		hHi += mHi * xxhPrime64_2
		return xxh3Avalanche(hLo), xxh3Avalanche(hHi)
	case n >= 4:
		inLo := uint64(le32(in))
		inHi := uint64(le32(in[n-4:]))
		input64 := inLo + inHi<<32
		bitflip := le64(s[16:]) ^ le64(s[24:])
		keyed := input64 ^ bitflip
		mHi, mLo := bits.Mul64(keyed, xxhPrime64_1+uint64(n)<<2)
		mHi += mLo << 1
		mLo ^= mHi >> 3
		mLo ^= mLo >> 35
		mLo *= xxhPrimeMX2
		mLo ^= mLo >> 28
		return mLo, xxh3Avalanche(mHi)
	case n > 0:
		c1, c2, c3 := uint32(in[0]), uint32(in[n>>1]), uint32(in[n-1])
		combinedl := c1<<16 | c2<<24 | c3 | uint32(n)<<8
		combinedh := bits.RotateLeft32(bits.ReverseBytes32(combinedl), 13)
		bitflipl := uint64(le32(s) ^ le32(s[4:]))
		bitfliph := uint64(le32(s[8:]) ^ le32(s[12:]))
		return xxh64Avalanche(uint64(combinedl) ^ bitflipl), xxh64Avalanche(uint64(combinedh) ^ bitfliph)
	}
	return xxh64Avalanche(le64(s[64:]) ^ le64(s[72:])), xxh64Avalanche(le64(s[80:]) ^ le64(s[88:]))
}

func xxh3Mix16(in, secret []byte) uint64 {
	return mul128Fold64(le64(in)^le64(secret), le64(in[8:])^le64(secret[8:]))
}

func xxh3Mix32(lo, hi uint64, in1, in2, secret []byte) (uint64, uint64) {
	lo += xxh3Mix16(in1, secret)
	lo ^= le64(in2) + le64(in2[8:])
	hi += xxh3Mix16(in2, secret[16:])
	hi ^= le64(in1) + le64(in1[8:])
	return lo, hi
}

func xxh3Finish128(lo, hi uint64, n int) (uint64, uint64) {
	rlo := lo + hi
	rhi := lo*xxhPrime64_1 + hi*xxhPrime64_4 + uint64(n)*xxhPrime64_2
	return xxh3Avalanche(rlo), -xxh3Avalanche(rhi)
}

func xxh3Len17to128(in []byte) (uint64, uint64) {
	n := len(in)
	s := xxhSecret
	lo, hi := uint64(n)*xxhPrime64_1, uint64(0)
	if n > 32 {
		if n > 64 {
			if n > 96 {
				lo, hi = xxh3Mix32(lo, hi, in[48:], in[n-64:], s[96:])
			}
			lo, hi = xxh3Mix32(lo, hi, in[32:], in[n-48:], s[64:])
		}
		lo, hi = xxh3Mix32(lo, hi, in[16:], in[n-32:], s[32:])
	}
	lo, hi = xxh3Mix32(lo, hi, in, in[n-16:], s)
	return xxh3Finish128(lo, hi, n)
}

func xxh3Len129to240(in []byte) (uint64, uint64) {
	n := len(in)
	s := xxhSecret
	rounds := n / 32
	lo, hi := uint64(n)*xxhPrime64_1, uint64(0)
	for i := 0; i < 4; i++ {
		lo, hi = xxh3Mix32(lo, hi, in[32*i:], in[32*i+16:], s[32*i:])
	}
	lo, hi = xxh3Avalanche(lo), xxh3Avalanche(hi)
	for i := 4; i < rounds; i++ {
		lo, hi = xxh3Mix32(lo, hi, in[32*i:], in[32*i+16:], s[xxhMidsizeStartOff+32*(i-4):])
	}
	lo, hi = xxh3Mix32(lo, hi, in[n-16:], in[n-32:], s[xxhSecretSizeMin-xxhMidsizeLastOff-16:])
	return xxh3Finish128(lo, hi, n)
}

func xxh3Accumulate512(acc *[8]uint64, in, secret []byte) {
	for i := 0; i < 8; i++ {
		v := le64(in[8*i:])
		k := v ^ le64(secret[8*i:])
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

func xxh3Scramble(acc *[8]uint64, secret []byte) {
	for i := 0; i < 8; i++ {
		a := acc[i]
		a ^= a >> 47
		a ^= le64(secret[8*i:])
		a *= xxhPrime32_1
		acc[i] = a
	}
}

func xxh3MergeAccs(acc *[8]uint64, secret []byte, start uint64) uint64 {
	r := start
	for i := 0; i < 4; i++ {
		r += mul128Fold64(acc[2*i]^le64(secret[16*i:]), acc[2*i+1]^le64(secret[16*i+8:]))
	}
	return xxh3Avalanche(r)
}

func xxh3Long(in []byte) (uint64, uint64) {
	n := len(in)
	s := xxhSecret
	acc := [8]uint64{xxhPrime32_3, xxhPrime64_1, xxhPrime64_2, xxhPrime64_3, xxhPrime64_4, xxhPrime32_2, xxhPrime64_5, xxhPrime32_1}
	stripesPerBlock := (len(s) - xxhStripeLen) / xxhSecretConsume
	blockLen := xxhStripeLen * stripesPerBlock
	blocks := (n - 1) / blockLen
	for b := 0; b < blocks; b++ {
		for st := 0; st < stripesPerBlock; st++ {
			xxh3Accumulate512(&acc, in[b*blockLen+st*xxhStripeLen:], s[st*xxhSecretConsume:])
		}
		xxh3Scramble(&acc, s[len(s)-xxhStripeLen:])
	}
	stripes := ((n - 1) - blockLen*blocks) / xxhStripeLen
	for st := 0; st < stripes; st++ {
		xxh3Accumulate512(&acc, in[blocks*blockLen+st*xxhStripeLen:], s[st*xxhSecretConsume:])
	}
	xxh3Accumulate512(&acc, in[n-xxhStripeLen:], s[len(s)-xxhStripeLen-xxhLastAccStart:])
	lo := xxh3MergeAccs(&acc, s[xxhMergeAccsStart:], uint64(n)*xxhPrime64_1)
	hi := xxh3MergeAccs(&acc, s[len(s)-xxhStripeLen-xxhMergeAccsStart:], ^(uint64(n) * xxhPrime64_2))
	return lo, hi
}
