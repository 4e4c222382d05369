package crypto

import (
	"encoding/binary"
	"fmt"
)

// Header is a CryptoHeader: the transform identifier (kind and key id) and
// the IV, split into session id and suffix as on the wire.
type Header struct {
	Kind      TransformKind
	KeyID     KeyID
	SessionID [4]byte
	IVSuffix  [8]byte
}

// IV is the 12-byte GCM nonce: session id then suffix.
func (h *Header) IV() [12]byte {
	var iv [12]byte
	copy(iv[:4], h.SessionID[:])
	copy(iv[4:], h.IVSuffix[:])
	return iv
}

// AppendHeader appends the 20 wire bytes of h.
func AppendHeader(b []byte, h Header) []byte {
	b = append(b, 0, 0, 0, byte(h.Kind))
	b = append(b, h.KeyID[:]...)
	b = append(b, h.SessionID[:]...)
	return append(b, h.IVSuffix[:]...)
}

// ParseHeader decodes a CryptoHeader from the first 20 bytes of b.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: crypto header of %d bytes", ErrMalformed, len(b))
	}
	if b[0]|b[1]|b[2] != 0 || !TransformKind(b[3]).Valid() {
		return h, fmt.Errorf("%w: transformation kind % x", ErrMalformed, b[:4])
	}
	h.Kind = TransformKind(b[3])
	copy(h.KeyID[:], b[4:8])
	copy(h.SessionID[:], b[8:12])
	copy(h.IVSuffix[:], b[12:20])
	return h, nil
}

// Footer is a CryptoFooter. ReceiverMACs holds the raw receiver-specific
// MACs, ReceiverMACSize bytes each (key id, then MAC).
type Footer struct {
	CommonMAC    [MACSize]byte
	ReceiverMACs []byte
}

// NumReceiverMACs is the number of receiver-specific MACs.
func (f *Footer) NumReceiverMACs() int { return len(f.ReceiverMACs) / ReceiverMACSize }

// ReceiverMAC returns the i-th receiver-specific MAC.
func (f *Footer) ReceiverMAC(i int) (KeyID, []byte) {
	r := f.ReceiverMACs[i*ReceiverMACSize : (i+1)*ReceiverMACSize]
	return KeyID(r[:4]), r[4:]
}

// parseFooter decodes a footer from b, which must hold exactly the footer
// (trailing bytes allowed only when trailing is true).
func parseFooter(b []byte, trailing bool) (Footer, error) {
	var f Footer
	if len(b) < FooterMinSize {
		return f, fmt.Errorf("%w: crypto footer of %d bytes", ErrMalformed, len(b))
	}
	copy(f.CommonMAC[:], b)
	n := binary.BigEndian.Uint32(b[MACSize:])
	rest := b[FooterMinSize:]
	if uint64(n)*ReceiverMACSize > uint64(len(rest)) || (!trailing && uint64(n)*ReceiverMACSize != uint64(len(rest))) {
		return f, fmt.Errorf("%w: crypto footer of %d bytes with %d receiver-specific MACs", ErrMalformed, len(b), n)
	}
	f.ReceiverMACs = rest[:n*ReceiverMACSize]
	return f, nil
}

// submsg is one RTPS submessage header and its body.
type submsg struct {
	id, flags byte
	body      []byte
	size      int // header + body
}

// readSubmsg reads the submessage at the start of b. Its length must be a
// multiple of 4 and fit in b; a length of 0 is taken literally.
func readSubmsg(b []byte) (submsg, error) {
	if len(b) < 4 {
		return submsg{}, fmt.Errorf("%w: submessage header of %d bytes", ErrMalformed, len(b))
	}
	var n int
	if b[1]&1 != 0 {
		n = int(binary.LittleEndian.Uint16(b[2:]))
	} else {
		n = int(binary.BigEndian.Uint16(b[2:]))
	}
	if n%4 != 0 || n > len(b)-4 {
		return submsg{}, fmt.Errorf("%w: submessage 0x%02x of length %d with %d bytes left", ErrMalformed, b[0], n, len(b)-4)
	}
	return submsg{id: b[0], flags: b[1], body: b[4 : 4+n], size: 4 + n}, nil
}

// appendSubmsgHeader appends a little-endian submessage header.
func appendSubmsgHeader(b []byte, id byte, n int) []byte {
	return append(b, id, 1, byte(n), byte(n>>8))
}

// SecureSubmessage is the shape of SEC_PREFIX, body, SEC_POSTFIX (no key
// needed to split it).
type SecureSubmessage struct {
	Header Header
	// Encrypted: the body is a SEC_BODY and Body its ciphertext; otherwise
	// Body is the plain submessage, header included.
	Encrypted bool
	Body      []byte
	Footer    Footer
}

// SplitSubmessage splits the secure submessage at the start of b and reports
// how many bytes of b it spans.
func SplitSubmessage(b []byte) (SecureSubmessage, int, error) {
	var s SecureSubmessage
	pre, err := readSubmsg(b)
	if err != nil {
		return s, 0, err
	}
	if pre.id != SubmsgSecPrefix {
		return s, 0, fmt.Errorf("%w: submessage 0x%02x where SEC_PREFIX was expected", ErrMalformed, pre.id)
	}
	if s.Header, err = ParseHeader(pre.body); err != nil {
		return s, 0, err
	}
	off := pre.size
	body, err := readSubmsg(b[off:])
	if err != nil {
		return s, 0, err
	}
	switch body.id {
	case SubmsgSecBody:
		s.Encrypted = true
		if s.Body, err = secBodyContent(body.body); err != nil {
			return s, 0, err
		}
	case SubmsgSecPrefix, SubmsgSecPostfix, SubmsgSRTPSPrefix, SubmsgSRTPSPostfix:
		return s, 0, fmt.Errorf("%w: submessage 0x%02x where the protected submessage was expected", ErrMalformed, body.id)
	default:
		s.Body = b[off : off+body.size]
	}
	off += body.size
	post, err := readSubmsg(b[off:])
	if err != nil {
		return s, 0, err
	}
	if post.id != SubmsgSecPostfix {
		return s, 0, fmt.Errorf("%w: submessage 0x%02x where SEC_POSTFIX was expected", ErrMalformed, post.id)
	}
	if s.Footer, err = parseFooter(post.body, true); err != nil {
		return s, 0, err
	}
	return s, off + post.size, nil
}

// secBodyContent returns the ciphertext of a SEC_BODY body: a big-endian
// length and that many bytes (padding after them is allowed).
func secBodyContent(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: SEC_BODY of %d bytes", ErrMalformed, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, fmt.Errorf("%w: SEC_BODY content of %d bytes in %d", ErrMalformed, n, len(b)-4)
	}
	return b[4 : 4+n], nil
}

// SecureMessage is the shape of a protected RTPS message.
type SecureMessage struct {
	RTPSHeader []byte // the 20 clear bytes
	Header     Header
	// Encrypted: the body was a SEC_BODY and Body is its ciphertext;
	// otherwise Body is the plain submessages between SRTPS_PREFIX and
	// SRTPS_POSTFIX.
	Encrypted bool
	Body      []byte
	Footer    Footer
	// Trailing is what follows SRTPS_POSTFIX: unprotected, so never to be
	// taken as the sender's. Fast DDS 2.9 built with statistics (Debian's)
	// appends its vendor submessage 0x80 there, after protecting the rest.
	Trailing []byte
}

// IsProtectedMessage reports whether the RTPS message b (header included)
// starts its submessages with SRTPS_PREFIX.
func IsProtectedMessage(b []byte) bool {
	return len(b) > rtpsHeaderSize && b[rtpsHeaderSize] == SubmsgSRTPSPrefix
}

// SplitMessage splits a protected RTPS message (from its RTPS header on).
// Bytes after SRTPS_POSTFIX are returned as Trailing.
func SplitMessage(b []byte) (SecureMessage, error) {
	var s SecureMessage
	if len(b) < rtpsHeaderSize || string(b[:4]) != "RTPS" {
		return s, fmt.Errorf("%w: no RTPS header", ErrMalformed)
	}
	s.RTPSHeader = b[:rtpsHeaderSize]
	off := rtpsHeaderSize
	pre, err := readSubmsg(b[off:])
	if err != nil {
		return s, err
	}
	if pre.id != SubmsgSRTPSPrefix {
		return s, fmt.Errorf("%w: submessage 0x%02x where SRTPS_PREFIX was expected", ErrMalformed, pre.id)
	}
	if s.Header, err = ParseHeader(pre.body); err != nil {
		return s, err
	}
	off += pre.size
	bodyStart := off
	// The kind says what follows: a SEC_BODY (GCM), or plain submessages
	// (GMAC), which may themselves be protected submessages (SEC_PREFIX,
	// SEC_BODY, SEC_POSTFIX) when submessage protection is on too.
	if s.Header.Kind.Encrypts() {
		first, err := readSubmsg(b[off:])
		if err != nil {
			return s, err
		}
		if first.id != SubmsgSecBody {
			return s, fmt.Errorf("%w: submessage 0x%02x where SEC_BODY was expected", ErrMalformed, first.id)
		}
		s.Encrypted = true
		if s.Body, err = secBodyContent(first.body); err != nil {
			return s, err
		}
		off += first.size
	}
	for {
		sm, err := readSubmsg(b[off:])
		if err != nil {
			return s, err
		}
		if sm.id == SubmsgSRTPSPostfix {
			if off == bodyStart {
				return s, fmt.Errorf("%w: SRTPS_POSTFIX without a body", ErrMalformed)
			}
			if s.Footer, err = parseFooter(sm.body, true); err != nil {
				return s, err
			}
			s.Trailing = b[off+sm.size:]
			if !s.Encrypted {
				s.Body = b[bodyStart:off]
			}
			return s, nil
		}
		if s.Encrypted || sm.id == SubmsgSRTPSPrefix {
			return s, fmt.Errorf("%w: submessage 0x%02x inside a protected message", ErrMalformed, sm.id)
		}
		off += sm.size
	}
}

// SecurePayload is the shape of an encoded serialized payload.
type SecurePayload struct {
	Header Header
	// Encrypted (a GCM kind): Body is the ciphertext; otherwise the plain
	// payload.
	Encrypted bool
	Body      []byte
	Footer    Footer
}

// SplitPayload splits an encoded serialized payload. A payload carries no
// receiver-specific MAC.
//
// Fast DDS 2.9 aligns the footer's count to 4 bytes from the payload start,
// so after a payload whose length is not a multiple of 4 up to 3 zero bytes
// sit between the common MAC and the count. With a GCM kind the content
// length tells where the MAC is; with a GMAC kind it cannot be told from the
// shape: SplitPayload returns the unpadded reading (Cyclone's, and Fast DDS's
// for lengths that are multiples of 4) and the Opener tries the padded ones
// when that one does not verify.
func SplitPayload(b []byte) (SecurePayload, error) { return splitPayload(b, 0) }

// splitPayload splits b reading pad bytes between MAC and count (GMAC only;
// GCM derives it).
func splitPayload(b []byte, pad int) (SecurePayload, error) {
	var s SecurePayload
	var err error
	if s.Header, err = ParseHeader(b); err != nil {
		return s, err
	}
	off := HeaderSize
	s.Encrypted = s.Header.Kind.Encrypts()
	if s.Encrypted {
		if len(b)-off < 4 {
			return s, fmt.Errorf("%w: payload content length missing", ErrMalformed)
		}
		n := binary.BigEndian.Uint32(b[off:])
		off += 4
		if uint64(n) > uint64(len(b)-off) {
			return s, fmt.Errorf("%w: payload content of %d bytes in %d", ErrMalformed, n, len(b)-off)
		}
		s.Body = b[off : off+int(n)]
		off += int(n)
		pad = 0
		if len(b)-off != FooterMinSize {
			pad = (4 - (off+MACSize)%4) % 4
		}
	} else {
		end := len(b) - FooterMinSize - pad
		if end < off {
			return s, fmt.Errorf("%w: payload of %d bytes", ErrMalformed, len(b))
		}
		s.Body = b[off:end]
		off = end
	}
	rest := b[off:]
	if len(rest) != FooterMinSize+pad {
		return s, fmt.Errorf("%w: payload footer of %d bytes", ErrMalformed, len(rest))
	}
	if pad > 0 {
		if (off+MACSize+pad)%4 != 0 {
			return s, fmt.Errorf("%w: payload footer padding of %d bytes", ErrMalformed, pad)
		}
		for _, c := range rest[MACSize : MACSize+pad] {
			if c != 0 {
				return s, fmt.Errorf("%w: payload footer padding not zero", ErrMalformed)
			}
		}
	}
	copy(s.Footer.CommonMAC[:], rest)
	if binary.BigEndian.Uint32(rest[MACSize+pad:]) != 0 {
		return s, fmt.Errorf("%w: payload with receiver-specific MACs", ErrMalformed)
	}
	return s, nil
}
