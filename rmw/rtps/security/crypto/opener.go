package crypto

import (
	"bytes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
)

// Replay bookkeeping bounds.
const (
	// ReplayWindow is how many recent IVs of a session an Opener remembers.
	ReplayWindow = 4096
	// keptSessions is how many sessions an Opener keeps keys and windows
	// for; retiredSessions how many older session ids it refuses outright.
	keptSessions    = 4
	retiredSessions = 64
)

// Opener verifies and decrypts what one remote sender (participant, writer or
// reader) protected under one KeyMaterial: the material that sender gave
// this receiver. With a receiver-specific key in it, every message must
// carry a valid MAC for that key (origin authentication).
//
// Replays: a message whose session and IV were accepted before is refused
// while its IV is among the session's last ReplayWindow; when a session's IVs
// have only ever grown (a counter, as Cyclone DDS and this package send), an
// IV older than the window is refused too; a message of one of the last 64
// sessions the sender left behind is refused. Older replays (random IVs, as
// Fast DDS sends, or long-retired sessions) are left to RTPS sequence
// numbers. Safe for concurrent use.
type Opener struct {
	km       KeyMaterial
	counters *Counters

	mu       sync.Mutex
	sessions [keptSessions]*openSession
	tick     uint64
	retired  [retiredSessions][4]byte
	nretired int
}

type openSession struct {
	sid      [4]byte
	used     uint64 // LRU tick
	aead     cipher.AEAD
	raead    cipher.AEAD // receiver-specific, when origin authentication
	seen     map[uint64]struct{}
	ring     []uint64
	next     int
	counting bool // every accepted IV was above the previous ones
	max      uint64
	floor    uint64 // with counting: IVs at or below were evicted
	hasFloor bool
}

// NewOpener returns an Opener for km. counters (may be nil) counts its
// refusals; it can be shared.
func NewOpener(km KeyMaterial, counters *Counters) (*Opener, error) {
	if err := km.check(); err != nil {
		return nil, err
	}
	return &Opener{km: km, counters: counters}, nil
}

// KeyMaterial returns the material the Opener verifies with.
func (o *Opener) KeyMaterial() KeyMaterial { return o.km }

// fail counts and returns err.
func (o *Opener) fail(err error) error {
	o.counters.count(err)
	return err
}

// checkHeader matches a CryptoHeader against the key material.
func (o *Opener) checkHeader(h *Header) error {
	if h.KeyID != o.km.SenderKeyID {
		return fmt.Errorf("%w: key id %x, this receiver holds %x", ErrUnknownKey, h.KeyID[:], o.km.SenderKeyID[:])
	}
	if h.Kind != o.km.Kind {
		return fmt.Errorf("%w: %v where %v was agreed", ErrProtection, h.Kind, o.km.Kind)
	}
	return nil
}

// lookup returns the kept state of session sid, or a new one (not kept
// until insert) unless sid was retired. o.mu held.
func (o *Opener) lookup(sid [4]byte) (s *openSession, isNew bool, err error) {
	o.tick++
	for _, s := range o.sessions {
		if s != nil && s.sid == sid {
			s.used = o.tick
			return s, false, nil
		}
	}
	for i := range min(o.nretired, retiredSessions) {
		if o.retired[i] == sid {
			return nil, false, fmt.Errorf("%w: session %x was left behind", ErrReplay, sid[:])
		}
	}
	s = &openSession{sid: sid, used: o.tick, aead: newGCM(SessionKey(&o.km, sid)), seen: make(map[uint64]struct{}), counting: true}
	if !o.km.ReceiverSpecificKeyID.IsZero() {
		s.raead = newGCM(ReceiverSpecificSessionKey(&o.km, sid))
	}
	return s, true, nil
}

// insert keeps s, retiring the least recently used session when all slots
// are taken. Only sessions with an authenticated message get here, so forged
// session ids cannot push real ones out. o.mu held.
func (o *Opener) insert(s *openSession) {
	slot := 0
	for i, k := range o.sessions {
		if k == nil {
			slot = i
			break
		}
		if k.used < o.sessions[slot].used {
			slot = i
		}
	}
	if old := o.sessions[slot]; old != nil {
		o.retired[o.nretired%retiredSessions] = old.sid
		o.nretired++
	}
	o.sessions[slot] = s
}

// fresh reports whether iv was not accepted before in s. o.mu held.
func (s *openSession) fresh(iv uint64) bool {
	if _, dup := s.seen[iv]; dup {
		return false
	}
	return !(s.counting && s.hasFloor && iv <= s.floor)
}

// record remembers iv as accepted. o.mu held.
func (s *openSession) record(iv uint64) {
	if len(s.seen) > 0 && iv < s.max {
		s.counting = false
	}
	s.max = max(s.max, iv)
	if len(s.ring) < ReplayWindow {
		s.ring = append(s.ring, iv)
	} else {
		old := s.ring[s.next]
		delete(s.seen, old)
		if s.counting {
			s.floor, s.hasFloor = old, true
		}
		s.ring[s.next] = iv
		s.next = (s.next + 1) % ReplayWindow
	}
	s.seen[iv] = struct{}{}
}

// open verifies footer and body of a unit with header h and returns the
// plain bytes appended to dst. body is ciphertext (GCM) or plain (GMAC).
// origin: check the receiver-specific MAC when the material has a key for
// it (payloads carry none).
func (o *Opener) open(dst []byte, h *Header, body []byte, f *Footer, origin bool) ([]byte, error) {
	if err := o.checkHeader(h); err != nil {
		return dst, err
	}
	iv := h.IV()
	ivn := binary.BigEndian.Uint64(h.IVSuffix[:])
	o.mu.Lock()
	defer o.mu.Unlock()
	s, isNew, err := o.lookup(h.SessionID)
	if err != nil {
		return dst, err
	}
	if origin && s.raead != nil {
		if err := o.checkReceiverMAC(s, iv, f); err != nil {
			return dst, err
		}
	}
	n := len(dst)
	if h.Kind.Encrypts() {
		dst = slices.Grow(dst, len(body)+MACSize)
		ct := append(append(dst[n:n], body...), f.CommonMAC[:]...)
		out, err := s.aead.Open(ct[:0], iv[:], ct, nil)
		if err != nil {
			clear(ct)
			return dst[:n], fmt.Errorf("%w: %v common MAC does not verify", ErrAuth, h.Kind)
		}
		dst = dst[:n+len(out)]
	} else {
		tag := s.aead.Seal(nil, iv[:], nil, body)
		if subtle.ConstantTimeCompare(tag, f.CommonMAC[:]) != 1 {
			return dst, fmt.Errorf("%w: %v common MAC does not verify", ErrAuth, h.Kind)
		}
		dst = append(dst, body...)
	}
	if !s.fresh(ivn) {
		return dst[:n], fmt.Errorf("%w: session %x IV %x", ErrReplay, h.SessionID[:], h.IVSuffix[:])
	}
	s.record(ivn)
	if isNew {
		o.insert(s)
	}
	return dst, nil
}

// checkReceiverMAC finds and verifies this receiver's MAC in f.
func (o *Opener) checkReceiverMAC(s *openSession, iv [12]byte, f *Footer) error {
	want := o.km.ReceiverSpecificKeyID
	for i := range f.NumReceiverMACs() {
		id, mac := f.ReceiverMAC(i)
		if id != want {
			continue
		}
		tag := s.raead.Seal(nil, iv[:], nil, f.CommonMAC[:])
		if subtle.ConstantTimeCompare(tag, mac) == 1 {
			return nil
		}
		return fmt.Errorf("%w: the MAC for key %x does not verify", ErrReceiverMAC, want[:])
	}
	return fmt.Errorf("%w: none of %d MACs is for key %x", ErrReceiverMAC, f.NumReceiverMACs(), want[:])
}

// DecodePayload appends to dst the plain serialized payload of the encoded
// payload b. Payloads carry no receiver-specific MAC, so none is checked.
func (o *Opener) DecodePayload(dst, b []byte) ([]byte, error) {
	s, err := SplitPayload(b)
	if err != nil {
		return dst, o.fail(err)
	}
	out, err := o.open(dst, &s.Header, s.Body, &s.Footer, false)
	if err == nil || s.Encrypted || len(b)%4 != 0 || !isAuth(err) {
		return out, o.fail(err)
	}
	// A GMAC payload from Fast DDS whose length is not a multiple of 4 has
	// 1..3 zero bytes between MAC and count.
	for pad := 1; pad < 4; pad++ {
		alt, perr := splitPayload(b, pad)
		if perr != nil {
			continue
		}
		if out, aerr := o.open(dst, &alt.Header, alt.Body, &alt.Footer, false); !isAuth(aerr) {
			return out, o.fail(aerr)
		}
	}
	return dst, o.fail(err)
}

func isAuth(err error) bool { return err != nil && errorsIs(err, ErrAuth) }

// DecodeSubmessage decodes the secure submessage at the start of b (from its
// SEC_PREFIX through its SEC_POSTFIX), appends the plain submessage to dst
// and returns it with the number of bytes of b the secure submessage
// spanned.
func (o *Opener) DecodeSubmessage(dst, b []byte) ([]byte, int, error) {
	s, n, err := SplitSubmessage(b)
	if err != nil {
		return dst, 0, o.fail(err)
	}
	m := len(dst)
	dst, err = o.open(dst, &s.Header, s.Body, &s.Footer, true)
	if err != nil {
		return dst, 0, o.fail(err)
	}
	if s.Encrypted {
		if sm, err := readSubmsg(dst[m:]); err != nil || sm.size != len(dst)-m {
			return dst[:m], 0, o.fail(fmt.Errorf("%w: decrypted SEC_BODY is not one submessage", ErrMalformed))
		}
	}
	return dst, n, nil
}

// DecodeMessage decodes a protected RTPS message b (header included) and
// appends the plain message to dst: the same RTPS header, then the protected
// submessages. A leading INFO_SRC that repeats the header is removed; one
// that does not match it is refused (the header would be spoofed).
// Unprotected bytes after SRTPS_POSTFIX are dropped, as Cyclone DDS does.
func (o *Opener) DecodeMessage(dst, b []byte) ([]byte, error) {
	s, err := SplitMessage(b)
	if err != nil {
		return dst, o.fail(err)
	}
	m := len(dst)
	dst = append(dst, s.RTPSHeader...)
	dst, err = o.open(dst, &s.Header, s.Body, &s.Footer, true)
	if err != nil {
		return dst[:m], o.fail(err)
	}
	body := dst[m+rtpsHeaderSize:]
	if len(body) >= infoSrcSize && body[0] == submsgInfoSrc {
		sm, err := readSubmsg(body)
		if err != nil || sm.size != infoSrcSize {
			return dst[:m], o.fail(fmt.Errorf("%w: INFO_SRC of the protected message", ErrMalformed))
		}
		if !bytes.Equal(sm.body[4:20], s.RTPSHeader[4:20]) {
			return dst[:m], o.fail(fmt.Errorf("%w: RTPS header does not match the protected INFO_SRC", ErrAuth))
		}
		copy(body, body[infoSrcSize:])
		dst = dst[:len(dst)-infoSrcSize]
	}
	return dst, nil
}
