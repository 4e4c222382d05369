package crypto

import "fmt"

// TransformKind is a CryptoTransformKind: the last of its four wire bytes
// (the first three are zero).
type TransformKind uint8

// The transformation kinds of DDS:Crypto:AES-GCM-GMAC.
const (
	KindNone       TransformKind = 0 // no transformation
	KindAES128GMAC TransformKind = 1 // AES-128 GMAC: authenticate only
	KindAES128GCM  TransformKind = 2 // AES-128 GCM: encrypt and authenticate
	KindAES256GMAC TransformKind = 3 // AES-256 GMAC: authenticate only
	KindAES256GCM  TransformKind = 4 // AES-256 GCM: encrypt and authenticate
)

// Valid reports whether k is one of the four keyed kinds.
func (k TransformKind) Valid() bool { return k >= KindAES128GMAC && k <= KindAES256GCM }

// Encrypts reports whether k encrypts (GCM) rather than only signs (GMAC).
func (k TransformKind) Encrypts() bool { return k == KindAES128GCM || k == KindAES256GCM }

// KeySize is the key (and master salt) length of k in bytes, 0 for none.
func (k TransformKind) KeySize() int {
	switch k {
	case KindAES128GMAC, KindAES128GCM:
		return 16
	case KindAES256GMAC, KindAES256GCM:
		return 32
	}
	return 0
}

// String names k as the spec does.
func (k TransformKind) String() string {
	switch k {
	case KindNone:
		return "NONE"
	case KindAES128GMAC:
		return "AES128_GMAC"
	case KindAES128GCM:
		return "AES128_GCM"
	case KindAES256GMAC:
		return "AES256_GMAC"
	case KindAES256GCM:
		return "AES256_GCM"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ProtectionKind is the protection governance selects for RTPS messages,
// metadata (submessages) or data (payloads).
type ProtectionKind uint8

// Protection kinds, in the order of the spec's ProtectionKind IDL (these
// numbers are this package's, not a wire encoding).
const (
	ProtectNone                            ProtectionKind = iota // NONE
	ProtectSign                                                  // SIGN
	ProtectEncrypt                                               // ENCRYPT
	ProtectSignWithOriginAuthentication                          // SIGN_WITH_ORIGIN_AUTHENTICATION
	ProtectEncryptWithOriginAuthentication                       // ENCRYPT_WITH_ORIGIN_AUTHENTICATION
)

// Encrypts reports whether p asks for encryption.
func (p ProtectionKind) Encrypts() bool {
	return p == ProtectEncrypt || p == ProtectEncryptWithOriginAuthentication
}

// OriginAuthentication reports whether p asks for receiver-specific MACs.
func (p ProtectionKind) OriginAuthentication() bool {
	return p == ProtectSignWithOriginAuthentication || p == ProtectEncryptWithOriginAuthentication
}

// TransformKind is the kind a sender uses for p: AES-256 as Cyclone DDS does
// (Fast DDS defaults to AES-128; receivers take whatever the sender's key
// material says). KindNone for ProtectNone.
func (p ProtectionKind) TransformKind() TransformKind {
	switch p {
	case ProtectSign, ProtectSignWithOriginAuthentication:
		return KindAES256GMAC
	case ProtectEncrypt, ProtectEncryptWithOriginAuthentication:
		return KindAES256GCM
	}
	return KindNone
}

// String names p as governance documents do.
func (p ProtectionKind) String() string {
	switch p {
	case ProtectNone:
		return "NONE"
	case ProtectSign:
		return "SIGN"
	case ProtectEncrypt:
		return "ENCRYPT"
	case ProtectSignWithOriginAuthentication:
		return "SIGN_WITH_ORIGIN_AUTHENTICATION"
	case ProtectEncryptWithOriginAuthentication:
		return "ENCRYPT_WITH_ORIGIN_AUTHENTICATION"
	}
	return fmt.Sprintf("protection(%d)", uint8(p))
}

// KeyID is a CryptoTransformKeyId (4 opaque bytes; both vendors write a
// big-endian counter). The zero id means "none" for a receiver-specific key.
type KeyID [4]byte

// IsZero reports whether id is all zeros.
func (id KeyID) IsZero() bool { return id == KeyID{} }

// Submessage ids of the secure submessages.
const (
	SubmsgSecBody      = 0x30 // SEC_BODY
	SubmsgSecPrefix    = 0x31 // SEC_PREFIX
	SubmsgSecPostfix   = 0x32 // SEC_POSTFIX
	SubmsgSRTPSPrefix  = 0x33 // SRTPS_PREFIX
	SubmsgSRTPSPostfix = 0x34 // SRTPS_POSTFIX
	submsgInfoSrc      = 0x0c
)

// Sizes on the wire.
const (
	HeaderSize      = 20 // CryptoHeader
	MACSize         = 16 // common MAC and receiver-specific MAC
	ReceiverMACSize = 20 // key id + MAC
	FooterMinSize   = 20 // common MAC + receiver-specific MAC count
	rtpsHeaderSize  = 20
	infoSrcSize     = 24
)
