package auth

import (
	"crypto/ecdh"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// The 2048-bit MODP group with a 256-bit prime-order subgroup (RFC 5114
// §2.3), OpenSSL's DH_get_2048_256, which "DH+MODP-2048-256" names.
var (
	dhP = mustHex("87A8E61DB4B6663CFFBBD19C651959998CEEF608660DD0F25D2CEED4435E3B00E00DF8F1D61957D4FAF7DF4561B2AA3016C3D91134096FAA3BF4296D830E9A7C209E0C6497517ABD5A8A9D306BCF67ED91F9E6725B4758C022E0B1EF4275BF7B6C5BFC11D45F9088B941F54EB1E59BB8BC39A0BF12307F5C4FDB70C581B23F76B63ACAE1CAA6B7902D52526735488A0EF13C6D9A51BFA4AB3AD8347796524D8EF6A167B5A41825D967E144E5140564251CCACB83E6B486F6B3CA3F7971506026C0B857F689962856DED4010ABD0BE621C3A3960A54E710C375F26375D7014103A4B54330C198AF126116D2276E11715F693877FAD7EF09CADB094AE91E1A1597")
	dhG = mustHex("3FB32C9B73134D0B2E77506660EDBD484CA7B18F21EF205407F4793A1A0BA12510DBC15077BE463FFF4FED4AAC0BB555BE3A6C1B0C6B47B1BC3773BF7E8C6F62901228F8C28CBB18A55AE31341000A650196F931C77A57F2DDF463E5E9EC144B777DE62AAAB8A8628AC376D282D6ED3864E67982428EBC831D14348F6F2F9193B5045AF2767164E1DFC967C1FB3F2E55A4BD1BFFE83B9C80D052B985D182EA0ADB2A3B7313D3FE14C8484B1E052588B9B7D2BBD2DF016199ECD06E1557CD0915B3353BBB64E0EC377FD028370DF92B52C7891428CDC67EB6184B523D1DB246C32F63078490F00EF8D647D148D47954515E2327CFEF98C582664B4C0F6CC41659")
	dhQ = mustHex("8CF83642A709A097B447997640129DA299B1A47D1EB3750BA308B0FE64F5FBD3")
)

func mustHex(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("bad constant")
	}
	return n
}

// keyAgreement is one side's ephemeral key-agreement key.
type keyAgreement interface {
	// public is the encoded public value (dh1/dh2).
	public() []byte
	// shared computes the raw shared value with the peer's encoded public
	// value.
	shared(peer []byte) ([]byte, error)
}

type ecdhKey struct{ k *ecdh.PrivateKey }

func newECDH(rnd io.Reader) (keyAgreement, error) {
	k, err := ecdh.P256().GenerateKey(rnd)
	if err != nil {
		return nil, err
	}
	return &ecdhKey{k}, nil
}

func (e *ecdhKey) public() []byte { return e.k.PublicKey().Bytes() }

func (e *ecdhKey) shared(peer []byte) ([]byte, error) {
	pub, err := ecdh.P256().NewPublicKey(peer)
	if err != nil {
		return nil, fmt.Errorf("%w: ECDH public key is not a P-256 point", ErrBadToken)
	}
	return e.k.ECDH(pub)
}

// dhKey is a DH+MODP-2048-256 key. math/big is not constant-time: the
// private exponent is fresh for every handshake and used for exactly two
// exponentiations (public value and shared value), so a timing observer
// gets two samples per exponent; the peer's value is checked to be in the
// prime-order subgroup before use.
type dhKey struct {
	x, y *big.Int
	der  bool // encode the public value as a DER INTEGER (Cyclone DDS)
}

func newDH(rnd io.Reader, der bool) (keyAgreement, error) {
	// x uniform in [1, q-1]
	x, err := randInt(rnd, new(big.Int).Sub(dhQ, big.NewInt(1)))
	if err != nil {
		return nil, err
	}
	x.Add(x, big.NewInt(1))
	return &dhKey{x: x, y: new(big.Int).Exp(dhG, x, dhP), der: der}, nil
}

func randInt(rnd io.Reader, max *big.Int) (*big.Int, error) {
	b := make([]byte, (max.BitLen()+7)/8+8)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return nil, err
	}
	return new(big.Int).Mod(new(big.Int).SetBytes(b), max), nil
}

func (d *dhKey) public() []byte {
	if d.der {
		b, _ := asn1.Marshal(d.y)
		return b
	}
	return d.y.Bytes()
}

func (d *dhKey) shared(peer []byte) ([]byte, error) {
	y, _, err := decodeDHPublic(peer)
	if err != nil {
		return nil, err
	}
	// unpadded, as OpenSSL's DH derive without padding
	return new(big.Int).Exp(y, d.x, dhP).Bytes(), nil
}

// decodeDHPublic reads a DH public value, a DER INTEGER (Cyclone DDS) or
// raw big-endian octets (Fast DDS), and checks 1 < y < p-1 and y^q = 1.
func decodeDHPublic(b []byte) (y *big.Int, der bool, err error) {
	if len(b) == 0 || len(b) > 300 {
		return nil, false, fmt.Errorf("%w: DH public value of %d bytes", ErrBadToken, len(b))
	}
	if b[0] == 0x02 {
		var v *big.Int
		if rest, e := asn1.Unmarshal(b, &v); e == nil && len(rest) == 0 && v.Sign() > 0 {
			y, der = v, true
		}
	}
	if y == nil {
		y = new(big.Int).SetBytes(b)
	}
	pm1 := new(big.Int).Sub(dhP, big.NewInt(1))
	if y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(pm1) >= 0 {
		return nil, false, fmt.Errorf("%w: DH public value out of range", ErrBadToken)
	}
	if new(big.Int).Exp(y, dhQ, dhP).Cmp(big.NewInt(1)) != 0 {
		return nil, false, fmt.Errorf("%w: DH public value not in the prime-order subgroup", ErrBadToken)
	}
	return y, der, nil
}

func newKeyAgreement(algo string, rnd io.Reader, der bool) (keyAgreement, error) {
	switch algo {
	case KAgreeECDH:
		return newECDH(rnd)
	case KAgreeDH:
		return newDH(rnd, der)
	}
	return nil, errors.New("auth: unknown key agreement " + algo)
}
