package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
)

// DefaultMaxBlocksPerSession is how many 16-byte blocks a Sender protects
// under one session key before it moves to the next session id (256 MiB).
// Cyclone DDS never moves on; Fast DDS moves every 32 messages by default
// (dds.sec.crypto.maxblockspersession).
const DefaultMaxBlocksPerSession = 1 << 24

// SenderOptions tune a Sender; the zero value is fine.
type SenderOptions struct {
	// MaxBlocksPerSession: 16-byte blocks per session key; 0 means
	// DefaultMaxBlocksPerSession.
	MaxBlocksPerSession uint64
	// Rand seeds the session id and IV counter; nil means crypto/rand.
	Rand io.Reader
}

// Sender protects what one local participant, writer or reader sends under
// one KeyMaterial. Its IV suffix is a counter from a random start, its
// session id advances (big-endian +1) after MaxBlocksPerSession. Safe for
// concurrent use.
type Sender struct {
	mu        sync.Mutex
	km        KeyMaterial
	maxBlocks uint64
	sid       uint32
	blocks    uint64
	iv        uint64
	aead      cipher.AEAD
}

// NewSender returns a Sender for km (a keyed kind; its receiver-specific key,
// if any, is ignored: receivers get theirs through ReceiverKey).
func NewSender(km KeyMaterial, o SenderOptions) (*Sender, error) {
	km.ReceiverSpecificKeyID, km.MasterReceiverSpecificKey = KeyID{}, nil
	if err := km.check(); err != nil {
		return nil, err
	}
	r := o.Rand
	if r == nil {
		r = rand.Reader
	}
	var seed [12]byte
	if _, err := io.ReadFull(r, seed[:]); err != nil {
		return nil, fmt.Errorf("crypto: session seed: %w", err)
	}
	s := &Sender{km: km, maxBlocks: o.MaxBlocksPerSession}
	if s.maxBlocks == 0 {
		s.maxBlocks = DefaultMaxBlocksPerSession
	}
	s.sid = binary.BigEndian.Uint32(seed[:4])
	s.iv = binary.BigEndian.Uint64(seed[4:])
	s.rekey()
	return s, nil
}

// KeyMaterial returns the sender's key material (without receiver-specific
// key).
func (s *Sender) KeyMaterial() KeyMaterial { return s.km }

func (s *Sender) rekey() {
	var sid [4]byte
	binary.BigEndian.PutUint32(sid[:], s.sid)
	s.aead = newGCM(SessionKey(&s.km, sid))
	s.blocks = 0
}

func newGCM(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // key sizes are checked before
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	return g
}

// next reserves one IV for n protected bytes and returns the header and the
// session's AEAD.
func (s *Sender) next(n int) (Header, cipher.AEAD) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nb := uint64(n+15) / 16
	if s.blocks+nb > s.maxBlocks && s.blocks > 0 {
		s.sid++
		s.rekey()
	}
	s.blocks += nb
	s.iv++
	h := Header{Kind: s.km.Kind, KeyID: s.km.SenderKeyID}
	binary.BigEndian.PutUint32(h.SessionID[:], s.sid)
	binary.BigEndian.PutUint64(h.IVSuffix[:], s.iv)
	return h, s.aead
}

// ReceiverKey is one receiver's receiver-specific key as its sender holds
// it: the KeyMaterial the sender gave that receiver (with a non-zero
// ReceiverSpecificKeyID). It caches the session key of the last session.
// Safe for concurrent use.
type ReceiverKey struct {
	mu   sync.Mutex
	km   KeyMaterial
	sid  [4]byte
	aead cipher.AEAD
}

// NewReceiverKey wraps the material given to one receiver.
func NewReceiverKey(km KeyMaterial) (*ReceiverKey, error) {
	if km.ReceiverSpecificKeyID.IsZero() {
		return nil, fmt.Errorf("crypto: key material without receiver-specific key")
	}
	if err := km.check(); err != nil {
		return nil, err
	}
	return &ReceiverKey{km: km}, nil
}

// ID is the receiver-specific key id.
func (r *ReceiverKey) ID() KeyID { return r.km.ReceiverSpecificKeyID }

// mac computes the receiver-specific MAC of common under session sid.
func (r *ReceiverKey) mac(dst []byte, sid [4]byte, iv [12]byte, common []byte) []byte {
	r.mu.Lock()
	if r.aead == nil || r.sid != sid {
		r.aead, r.sid = newGCM(ReceiverSpecificSessionKey(&r.km, sid)), sid
	}
	g := r.aead
	r.mu.Unlock()
	return g.Seal(dst, iv[:], nil, common)
}

// appendFooter appends common MAC, count and one receiver-specific MAC per
// receiver.
func appendFooter(b []byte, h *Header, tag []byte, receivers []*ReceiverKey) []byte {
	iv := h.IV()
	b = append(b, tag...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(receivers)))
	for _, r := range receivers {
		b = append(b, r.km.ReceiverSpecificKeyID[:]...)
		b = r.mac(b, h.SessionID, iv, tag)
	}
	return b
}

func (s *Sender) checkReceivers(receivers []*ReceiverKey) error {
	for _, r := range receivers {
		if r.km.Kind != s.km.Kind || subtle.ConstantTimeCompare(r.km.MasterSalt, s.km.MasterSalt) != 1 {
			return fmt.Errorf("crypto: receiver key %x is not of this sender's key material", r.km.ReceiverSpecificKeyID)
		}
	}
	return nil
}

// seal appends to b the protected form of plain: ciphertext (GCM) or plain
// (GMAC), and returns b and the common MAC (which it does not append).
func seal(b []byte, h *Header, g cipher.AEAD, plain []byte) ([]byte, []byte) {
	iv := h.IV()
	if h.Kind.Encrypts() {
		n := len(b)
		b = g.Seal(b, iv[:], plain, nil)
		tag := slices.Clone(b[len(b)-MACSize:])
		return b[:n+len(plain)], tag
	}
	return append(b, plain...), g.Seal(nil, iv[:], nil, plain)
}

// EncodePayload appends to dst the encoded serialized payload of plain:
// CryptoHeader, body (GCM: length + ciphertext; GMAC: plain) and a footer
// without receiver-specific MAC. Pass a payload padded to a multiple of 4
// (as Cyclone DDS pads its CDR): Fast DDS then reads the footer where
// Cyclone writes it.
func (s *Sender) EncodePayload(dst, plain []byte) ([]byte, error) {
	if uint64(len(plain)) > 1<<31-1 {
		return dst, fmt.Errorf("crypto: payload of %d bytes", len(plain))
	}
	h, g := s.next(len(plain))
	dst = slices.Grow(dst, HeaderSize+4+len(plain)+MACSize+4)
	dst = AppendHeader(dst, h)
	if h.Kind.Encrypts() {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(plain)))
	}
	dst, tag := seal(dst, &h, g, plain)
	return appendFooter(dst, &h, tag, nil), nil
}

// EncodeSubmessage appends to dst the protected form of one plain RTPS
// submessage (header included; its length must be a multiple of 4 and match
// its octetsToNextHeader): SEC_PREFIX, SEC_BODY or the plain submessage,
// SEC_POSTFIX with one receiver-specific MAC per receiver (none without
// origin authentication). A writer passes its matched readers' keys, a
// reader its matched writers'.
func (s *Sender) EncodeSubmessage(dst, plain []byte, receivers []*ReceiverKey) ([]byte, error) {
	sm, err := readSubmsg(plain)
	if err != nil || sm.size != len(plain) {
		return dst, fmt.Errorf("crypto: submessage to protect is not one whole submessage of a length multiple of 4")
	}
	if err := s.checkReceivers(receivers); err != nil {
		return dst, err
	}
	footer := FooterMinSize + ReceiverMACSize*len(receivers)
	bodyLen := 4 + len(plain)
	if bodyLen > 0xffff || footer > 0xffff {
		return dst, fmt.Errorf("crypto: submessage of %d bytes is too long to protect", len(plain))
	}
	h, g := s.next(len(plain))
	dst = slices.Grow(dst, 4+HeaderSize+4+bodyLen+MACSize+4+footer)
	dst = appendSubmsgHeader(dst, SubmsgSecPrefix, HeaderSize)
	dst = AppendHeader(dst, h)
	if h.Kind.Encrypts() {
		dst = appendSubmsgHeader(dst, SubmsgSecBody, bodyLen)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(plain)))
	}
	dst, tag := seal(dst, &h, g, plain)
	dst = appendSubmsgHeader(dst, SubmsgSecPostfix, footer)
	return appendFooter(dst, &h, tag, receivers), nil
}

// EncodeMessage appends to dst the protected form of the RTPS message msg
// (20-byte header, then submessages): the header in clear, SRTPS_PREFIX,
// then SEC_BODY (GCM) or the plain submessages (GMAC) behind an INFO_SRC
// that repeats the header, then SRTPS_POSTFIX with one receiver-specific MAC
// per receiving participant. The submessages must span a multiple of 4
// bytes.
func (s *Sender) EncodeMessage(dst, msg []byte, receivers []*ReceiverKey) ([]byte, error) {
	if len(msg) <= rtpsHeaderSize || string(msg[:4]) != "RTPS" || (len(msg)-rtpsHeaderSize)%4 != 0 {
		return dst, fmt.Errorf("crypto: message to protect is not an RTPS message of whole submessages")
	}
	if err := s.checkReceivers(receivers); err != nil {
		return dst, err
	}
	plainLen := infoSrcSize + len(msg) - rtpsHeaderSize
	footer := FooterMinSize + ReceiverMACSize*len(receivers)
	if h := s.km.Kind; h.Encrypts() && 4+plainLen > 0xffff || footer > 0xffff {
		return dst, fmt.Errorf("crypto: message of %d bytes is too long to protect", len(msg))
	}
	h, g := s.next(plainLen)
	dst = slices.Grow(dst, rtpsHeaderSize+4+HeaderSize+8+plainLen+MACSize+4+footer)
	dst = append(dst, msg[:rtpsHeaderSize]...)
	dst = appendSubmsgHeader(dst, SubmsgSRTPSPrefix, HeaderSize)
	dst = AppendHeader(dst, h)
	if h.Kind.Encrypts() {
		dst = appendSubmsgHeader(dst, SubmsgSecBody, 4+plainLen)
		dst = binary.BigEndian.AppendUint32(dst, uint32(plainLen))
	}
	// The plain bytes are laid out in dst and, for GCM, sealed in place.
	p := len(dst)
	dst = appendSubmsgHeader(dst, submsgInfoSrc, rtpsHeaderSize)
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, msg[4:rtpsHeaderSize]...)
	dst = append(dst, msg[rtpsHeaderSize:]...)
	iv := h.IV()
	var tag []byte
	if h.Kind.Encrypts() {
		out := g.Seal(dst[p:p], iv[:], dst[p:], nil)
		tag = slices.Clone(out[plainLen:])
	} else {
		tag = g.Seal(nil, iv[:], nil, dst[p:])
	}
	dst = appendSubmsgHeader(dst, SubmsgSRTPSPostfix, footer)
	return appendFooter(dst, &h, tag, receivers), nil
}
