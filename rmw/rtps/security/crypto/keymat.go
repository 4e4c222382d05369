package crypto

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// KeyMaterial is KeyMaterial_AES_GCM_GMAC: what a sender gives a receiver so
// that it can verify and decrypt, and, with a receiver-specific key, check
// the MAC meant only for it.
type KeyMaterial struct {
	Kind                      TransformKind
	MasterSalt                []byte // Kind.KeySize() bytes
	SenderKeyID               KeyID
	MasterSenderKey           []byte // Kind.KeySize() bytes
	ReceiverSpecificKeyID     KeyID  // zero: no origin authentication
	MasterReceiverSpecificKey []byte // Kind.KeySize() bytes when the id is not zero
}

// NewKeyMaterial makes fresh master salt and sender key of kind, with key id
// id and no receiver-specific key. rnd nil means crypto/rand.
func NewKeyMaterial(kind TransformKind, id KeyID, rnd io.Reader) (KeyMaterial, error) {
	if !kind.Valid() {
		return KeyMaterial{}, fmt.Errorf("crypto: no key material for kind %v", kind)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	n := kind.KeySize()
	b := make([]byte, 2*n)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return KeyMaterial{}, fmt.Errorf("crypto: key material: %w", err)
	}
	return KeyMaterial{Kind: kind, MasterSalt: b[:n:n], SenderKeyID: id, MasterSenderKey: b[n:]}, nil
}

// WithReceiverSpecificKey returns a copy of km with a fresh receiver-specific
// key of id id: the material for one receiver of an origin-authenticated
// sender. rnd nil means crypto/rand.
func (km KeyMaterial) WithReceiverSpecificKey(id KeyID, rnd io.Reader) (KeyMaterial, error) {
	if id.IsZero() {
		return KeyMaterial{}, fmt.Errorf("crypto: receiver-specific key id must not be zero")
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	k := make([]byte, km.Kind.KeySize())
	if _, err := io.ReadFull(rnd, k); err != nil {
		return KeyMaterial{}, fmt.Errorf("crypto: receiver-specific key: %w", err)
	}
	km.ReceiverSpecificKeyID = id
	km.MasterReceiverSpecificKey = k
	return km, nil
}

// check reports whether km is usable for a transform.
func (km *KeyMaterial) check() error {
	n := km.Kind.KeySize()
	switch {
	case !km.Kind.Valid():
		return fmt.Errorf("%w: key material of kind %v", ErrMalformed, km.Kind)
	case len(km.MasterSalt) != n || len(km.MasterSenderKey) != n:
		return fmt.Errorf("%w: %v key material with a %d-byte salt and a %d-byte key", ErrMalformed, km.Kind, len(km.MasterSalt), len(km.MasterSenderKey))
	case !km.ReceiverSpecificKeyID.IsZero() && len(km.MasterReceiverSpecificKey) != n:
		return fmt.Errorf("%w: %v receiver-specific key of %d bytes", ErrMalformed, km.Kind, len(km.MasterReceiverSpecificKey))
	}
	return nil
}

// AppendCDR appends km as big-endian CDR (the encoding both vendors put in
// the dds.cryp.keymat binary property): kind octet[4], master_salt
// sequence<octet,32>, sender_key_id octet[4], master_sender_key
// sequence<octet,32>, receiver_specific_key_id octet[4],
// master_receiver_specific_key sequence<octet,32>. The receiver-specific key
// is written empty when its id is zero.
func (km KeyMaterial) AppendCDR(b []byte) []byte {
	start := len(b)
	seq := func(v []byte) {
		for (len(b)-start)%4 != 0 {
			b = append(b, 0)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	arr := func(v [4]byte) {
		for (len(b)-start)%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, v[:]...)
	}
	arr([4]byte{0, 0, 0, byte(km.Kind)})
	seq(km.MasterSalt)
	arr(km.SenderKeyID)
	seq(km.MasterSenderKey)
	arr(km.ReceiverSpecificKeyID)
	if km.ReceiverSpecificKeyID.IsZero() {
		seq(nil)
	} else {
		seq(km.MasterReceiverSpecificKey)
	}
	return b
}

// ParseKeyMaterial decodes the CDR of AppendCDR. Bytes after the last
// sequence are ignored (Fast DDS 2.9 writes 40 zero bytes after a NONE kind).
// A keyed kind needs a salt and sender key of its key size.
func ParseKeyMaterial(b []byte) (KeyMaterial, error) {
	var km KeyMaterial
	off := 0
	bad := func(what string) (KeyMaterial, error) {
		return KeyMaterial{}, fmt.Errorf("%w: key material: %s at offset %d of %d", ErrMalformed, what, off, len(b))
	}
	arr := func(v *[4]byte) bool {
		off = (off + 3) &^ 3
		if len(b)-off < 4 {
			return false
		}
		copy(v[:], b[off:])
		off += 4
		return true
	}
	seq := func() ([]byte, bool) {
		off = (off + 3) &^ 3
		if len(b)-off < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b[off:])
		off += 4
		if n > 32 || uint32(len(b)-off) < n {
			return nil, false
		}
		v := append([]byte(nil), b[off:off+int(n)]...)
		off += int(n)
		return v, true
	}
	var kind [4]byte
	if !arr(&kind) {
		return bad("short transformation kind")
	}
	if kind[0]|kind[1]|kind[2] != 0 || kind[3] > byte(KindAES256GCM) {
		return bad(fmt.Sprintf("unknown transformation kind % x", kind))
	}
	km.Kind = TransformKind(kind[3])
	var ok bool
	if km.MasterSalt, ok = seq(); !ok {
		return bad("bad master_salt")
	}
	if !arr((*[4]byte)(&km.SenderKeyID)) {
		return bad("short sender_key_id")
	}
	if km.MasterSenderKey, ok = seq(); !ok {
		return bad("bad master_sender_key")
	}
	if !arr((*[4]byte)(&km.ReceiverSpecificKeyID)) {
		return bad("short receiver_specific_key_id")
	}
	if km.MasterReceiverSpecificKey, ok = seq(); !ok {
		return bad("bad master_receiver_specific_key")
	}
	if km.Kind == KindNone {
		return KeyMaterial{Kind: KindNone}, nil
	}
	if km.ReceiverSpecificKeyID.IsZero() {
		km.MasterReceiverSpecificKey = nil
	}
	if err := km.check(); err != nil {
		return KeyMaterial{}, err
	}
	return km, nil
}

// Names of the crypto token.
const (
	TokenClassID    = "DDS:Crypto:AES_GCM_GMAC" // CryptoToken class_id
	TokenPropKeyMat = "dds.cryp.keymat"         // its one binary property
)

// Property is a name/value string pair of a DataHolder.
type Property struct {
	Name, Value string
}

// BinaryProperty is a name/octets pair of a DataHolder.
type BinaryProperty struct {
	Name  string
	Value []byte
}

// Token is the content of one CryptoToken (a DataHolder); the envelope that
// carries a sequence of them (ParticipantGenericMessage on
// DCPSParticipantVolatileMessageSecure) is encoded elsewhere.
type Token struct {
	ClassID          string
	Properties       []Property
	BinaryProperties []BinaryProperty
}

// Tokens makes one CryptoToken per key material, in order: a participant
// sends one, a reader one, a writer one or two (submessage key, then payload
// key).
func Tokens(kms ...KeyMaterial) []Token {
	t := make([]Token, len(kms))
	for i, km := range kms {
		t[i] = Token{ClassID: TokenClassID, BinaryProperties: []BinaryProperty{{Name: TokenPropKeyMat, Value: km.AppendCDR(nil)}}}
	}
	return t
}

// ParseTokens decodes the key material of each token. Like Fast DDS it wants
// the class id and exactly one binary property dds.cryp.keymat and no string
// property; an empty sequence is refused.
func ParseTokens(ts []Token) ([]KeyMaterial, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("%w: no crypto token", ErrMalformed)
	}
	kms := make([]KeyMaterial, 0, len(ts))
	for i, t := range ts {
		if t.ClassID != TokenClassID {
			return nil, fmt.Errorf("%w: crypto token %d has class id %q, want %q", ErrMalformed, i, t.ClassID, TokenClassID)
		}
		if len(t.BinaryProperties) != 1 || len(t.Properties) != 0 || t.BinaryProperties[0].Name != TokenPropKeyMat {
			return nil, fmt.Errorf("%w: crypto token %d does not hold exactly one %s", ErrMalformed, i, TokenPropKeyMat)
		}
		km, err := ParseKeyMaterial(t.BinaryProperties[0].Value)
		if err != nil {
			return nil, fmt.Errorf("crypto token %d: %w", i, err)
		}
		kms = append(kms, km)
	}
	return kms, nil
}

// KxKeyMaterial is the key material that protects the crypto tokens on
// DCPSParticipantVolatileMessageSecure between two participants (spec tables
// 67 and 68): AES256_GCM, key ids zero,
//
//	master_salt       = HMAC-SHA256(SHA256(challenge1 | "keyexchange salt" | challenge2), shared secret)
//	master_sender_key = HMAC-SHA256(SHA256(challenge2 | "key exchange key" | challenge1), shared secret)
//
// challenge1 is the handshake initiator's challenge, challenge2 the
// replier's; both sides derive the same material.
func KxKeyMaterial(challenge1, challenge2, sharedSecret []byte) KeyMaterial {
	derive := func(a []byte, cookie string, c []byte) []byte {
		h := sha256.New()
		h.Write(a)
		h.Write([]byte(cookie))
		h.Write(c)
		m := hmac.New(sha256.New, h.Sum(nil))
		m.Write(sharedSecret)
		return m.Sum(nil)
	}
	return KeyMaterial{
		Kind:            KindAES256GCM,
		MasterSalt:      derive(challenge1, "keyexchange salt", challenge2),
		MasterSenderKey: derive(challenge2, "key exchange key", challenge1),
	}
}

// SessionKey derives the session key of sessionID (its 4 wire bytes) from
// km's master sender key and salt.
func SessionKey(km *KeyMaterial, sessionID [4]byte) []byte {
	return deriveSessionKey("SessionKey", km.MasterSenderKey, km.MasterSalt, sessionID, km.Kind.KeySize())
}

// ReceiverSpecificSessionKey derives the receiver-specific session key of
// sessionID from km's master receiver-specific key and salt.
func ReceiverSpecificSessionKey(km *KeyMaterial, sessionID [4]byte) []byte {
	return deriveSessionKey("SessionReceiverKey", km.MasterReceiverSpecificKey, km.MasterSalt, sessionID, km.Kind.KeySize())
}

func deriveSessionKey(label string, master, salt []byte, sid [4]byte, size int) []byte {
	m := hmac.New(sha256.New, master[:size])
	m.Write([]byte(label))
	m.Write(salt[:size])
	m.Write(sid[:])
	return m.Sum(nil)[:size]
}
