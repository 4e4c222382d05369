package crypto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

var allKinds = []TransformKind{KindAES128GMAC, KindAES128GCM, KindAES256GMAC, KindAES256GCM}

// pair is a sender and the material its receivers get.
type pair struct {
	s        *Sender
	rks      []*ReceiverKey
	openers  []*Opener
	counters *Counters
}

// newPair makes a sender of kind with n receivers; with origin each gets a
// receiver-specific key (ids 100+i), otherwise all share the plain material.
func newPair(t testing.TB, kind TransformKind, n int, origin bool, o SenderOptions) *pair {
	t.Helper()
	km, err := NewKeyMaterial(kind, KeyID{0, 0, 0, 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{counters: &Counters{}}
	if p.s, err = NewSender(km, o); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		rkm := km
		if origin {
			if rkm, err = km.WithReceiverSpecificKey(KeyID{0, 0, 0, byte(100 + i)}, nil); err != nil {
				t.Fatal(err)
			}
			rk, err := NewReceiverKey(rkm)
			if err != nil {
				t.Fatal(err)
			}
			p.rks = append(p.rks, rk)
		}
		op, err := NewOpener(rkm, p.counters)
		if err != nil {
			t.Fatal(err)
		}
		p.openers = append(p.openers, op)
	}
	return p
}

func submessage(n int) []byte {
	b := []byte{0x15, 0x05, byte(n), byte(n >> 8)}
	for i := range n {
		b = append(b, byte(i*7))
	}
	return b
}

func rtpsMessage(subs ...[]byte) []byte {
	b := append([]byte("RTPS\x02\x03\x01\x0f"), seq(0x30, 12)...)
	for _, s := range subs {
		b = append(b, s...)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, kind := range allKinds {
		for _, origin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/origin=%v", kind, origin), func(t *testing.T) {
				p := newPair(t, kind, 3, origin, SenderOptions{})
				payload := []byte("\x00\x01\x00\x00\x0f\x00\x00\x00Hello World: 1\x00\x00")
				enc, err := p.s.EncodePayload(nil, payload)
				if err != nil {
					t.Fatal(err)
				}
				if kind.Encrypts() == bytes.Contains(enc, []byte("Hello World")) {
					t.Errorf("clear text in encoded payload: %v", bytes.Contains(enc, []byte("Hello World")))
				}
				sub := submessage(40)
				encSub, err := p.s.EncodeSubmessage([]byte("prefix"), sub, p.rks)
				if err != nil {
					t.Fatal(err)
				}
				encSub = encSub[len("prefix"):]
				msg := rtpsMessage(submessage(12), submessage(0), submessage(8))
				encMsg, err := p.s.EncodeMessage(nil, msg, p.rks)
				if err != nil {
					t.Fatal(err)
				}
				for i, o := range p.openers {
					got, err := o.DecodePayload(nil, enc)
					if err != nil || !bytes.Equal(got, payload) {
						t.Fatalf("receiver %d payload: %x, %v", i, got, err)
					}
					got, n, err := o.DecodeSubmessage([]byte{9}, append(encSub, 1, 2, 3, 4))
					if err != nil || n != len(encSub) || !bytes.Equal(got, append([]byte{9}, sub...)) {
						t.Fatalf("receiver %d submessage: %x %d, %v", i, got, n, err)
					}
					got, err = o.DecodeMessage(nil, encMsg)
					if err != nil || !bytes.Equal(got, msg) {
						t.Fatalf("receiver %d message: %x, %v", i, got, err)
					}
				}
				if c := p.counters.Total(); c != 0 {
					t.Errorf("%d refusals counted", c)
				}
			})
		}
	}
}

// Every single-bit flip of a protected unit is refused with a named error,
// or (a bit the transforms do not cover, like an unused flag) yields the very
// same plain bytes. Never a panic, never other plain bytes.
func TestTamper(t *testing.T) {
	for _, kind := range allKinds {
		t.Run(kind.String(), func(t *testing.T) {
			p := newPair(t, kind, 1, true, SenderOptions{})
			o := p.openers[0]
			payload := []byte("\x00\x01\x00\x00payload!")
			sub := submessage(24)
			msg := rtpsMessage(submessage(16))
			check := func(name string, enc, want []byte, dec func([]byte) ([]byte, error)) {
				for i := range enc {
					for bit := range 8 {
						b := bytes.Clone(enc)
						b[i] ^= 1 << bit
						got, err := dec(b)
						if err == nil && !bytes.Equal(got, want) {
							t.Fatalf("%s: flip byte %d bit %d accepted as %x", name, i, bit, got)
						}
						if err != nil && !named(err) {
							t.Fatalf("%s: flip byte %d bit %d: unnamed error %v", name, i, bit, err)
						}
					}
				}
			}
			enc, _ := p.s.EncodePayload(nil, payload)
			check("payload", enc, payload, func(b []byte) ([]byte, error) { return o.DecodePayload(nil, b) })
			enc, _ = p.s.EncodeSubmessage(nil, sub, p.rks)
			check("submessage", enc, sub, func(b []byte) ([]byte, error) { g, _, err := o.DecodeSubmessage(nil, b); return g, err })
			enc, _ = p.s.EncodeMessage(nil, msg, p.rks)
			check("message", enc, msg, func(b []byte) ([]byte, error) { return o.DecodeMessage(nil, b) })
			if p.counters.Auth.Load() == 0 || p.counters.Total() == 0 {
				t.Errorf("refusals not counted: auth %d total %d", p.counters.Auth.Load(), p.counters.Total())
			}
		})
	}
}

func named(err error) bool {
	for _, e := range []error{ErrMalformed, ErrUnknownKey, ErrProtection, ErrAuth, ErrReceiverMAC, ErrReplay} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func TestReplay(t *testing.T) {
	p := newPair(t, KindAES256GCM, 1, false, SenderOptions{})
	o := p.openers[0]
	enc, _ := p.s.EncodeSubmessage(nil, submessage(8), nil)
	if _, _, err := o.DecodeSubmessage(nil, enc); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.DecodeSubmessage(nil, enc); !errors.Is(err, ErrReplay) {
		t.Fatalf("replay: %v, want ErrReplay", err)
	}
	msg, _ := p.s.EncodeMessage(nil, rtpsMessage(submessage(4)), nil)
	if _, err := o.DecodeMessage(nil, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := o.DecodeMessage(nil, msg); !errors.Is(err, ErrReplay) {
		t.Fatalf("message replay: %v, want ErrReplay", err)
	}
	if got := p.counters.Replay.Load(); got != 2 {
		t.Errorf("replays counted %d, want 2", got)
	}
}

// A counting sender's IVs below the window are refused after the window moved
// on; messages within it arrive in any order.
func TestReplayWindow(t *testing.T) {
	p := newPair(t, KindAES128GMAC, 1, false, SenderOptions{})
	o := p.openers[0]
	var encs [][]byte
	for range ReplayWindow + 10 {
		enc, _ := p.s.EncodeSubmessage(nil, submessage(4), nil)
		encs = append(encs, enc)
	}
	// the last 20 first, reversed: out of order inside the window is fine,
	// but it ends "counting"; so feed in order first.
	for i, enc := range encs {
		if _, _, err := o.DecodeSubmessage(nil, enc); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for _, i := range []int{0, 5, 9, ReplayWindow + 9} {
		if _, _, err := o.DecodeSubmessage(nil, encs[i]); !errors.Is(err, ErrReplay) {
			t.Errorf("replay of %d: %v, want ErrReplay", i, err)
		}
	}
}

// Out-of-order delivery inside a session is accepted once each.
func TestReorder(t *testing.T) {
	p := newPair(t, KindAES256GMAC, 1, true, SenderOptions{})
	o := p.openers[0]
	var encs [][]byte
	for range 10 {
		enc, _ := p.s.EncodeSubmessage(nil, submessage(4), p.rks)
		encs = append(encs, enc)
	}
	for _, i := range []int{3, 1, 0, 2, 9, 4, 8, 5, 7, 6} {
		if _, _, err := o.DecodeSubmessage(nil, encs[i]); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if _, _, err := o.DecodeSubmessage(nil, encs[4]); !errors.Is(err, ErrReplay) {
		t.Errorf("replay: %v", err)
	}
}

// Session keys move on after MaxBlocksPerSession; the receiver follows, and
// a message of a session left behind is refused.
func TestSessionRotation(t *testing.T) {
	p := newPair(t, KindAES128GCM, 1, true, SenderOptions{MaxBlocksPerSession: 4})
	o := p.openers[0]
	sids := map[[4]byte]bool{}
	var first []byte
	for i := range 40 {
		enc, err := p.s.EncodeSubmessage(nil, submessage(28), p.rks) // 2 blocks
		if err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(enc[4:])
		sids[h.SessionID] = true
		if i == 0 {
			first = enc
		}
		if _, _, err := o.DecodeSubmessage(nil, enc); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if len(sids) != 20 {
		t.Errorf("%d sessions for 40 two-block messages at 4 blocks a session, want 20", len(sids))
	}
	if _, _, err := o.DecodeSubmessage(nil, first); !errors.Is(err, ErrReplay) {
		t.Errorf("message of a retired session: %v, want ErrReplay", err)
	}
}

// Forged messages with random session ids cannot evict the real sessions.
func TestForgedSessionsKeepNoState(t *testing.T) {
	p := newPair(t, KindAES256GCM, 1, false, SenderOptions{})
	o := p.openers[0]
	a, _ := p.s.EncodeSubmessage(nil, submessage(4), nil)
	b, _ := p.s.EncodeSubmessage(nil, submessage(4), nil)
	if _, _, err := o.DecodeSubmessage(nil, a); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		f := bytes.Clone(b)
		binary.BigEndian.PutUint32(f[12:], uint32(i)) // session id
		if _, _, err := o.DecodeSubmessage(nil, f); !errors.Is(err, ErrAuth) {
			t.Fatalf("forged session %d: %v", i, err)
		}
	}
	if _, _, err := o.DecodeSubmessage(nil, b); err != nil {
		t.Fatalf("real message after forgeries: %v", err)
	}
}

func TestWrongKeys(t *testing.T) {
	p := newPair(t, KindAES256GCM, 2, true, SenderOptions{})
	enc, _ := p.s.EncodeSubmessage(nil, submessage(8), p.rks[:1]) // only for receiver 0
	if _, _, err := p.openers[1].DecodeSubmessage(nil, enc); !errors.Is(err, ErrReceiverMAC) {
		t.Errorf("receiver without MAC: %v, want ErrReceiverMAC", err)
	}
	// Another key revision (new sender key id): unknown to the old opener.
	km2, _ := NewKeyMaterial(KindAES256GCM, KeyID{0, 0, 0, 8}, nil)
	s2, _ := NewSender(km2, SenderOptions{})
	enc2, _ := s2.EncodeSubmessage(nil, submessage(8), nil)
	if _, _, err := p.openers[0].DecodeSubmessage(nil, enc2); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("other key id: %v, want ErrUnknownKey", err)
	}
	// Same key id, signed where encryption was agreed.
	km3 := p.s.KeyMaterial()
	km3.Kind = KindAES256GMAC
	s3, _ := NewSender(km3, SenderOptions{})
	enc3, _ := s3.EncodeSubmessage(nil, submessage(8), nil)
	if _, _, err := p.openers[0].DecodeSubmessage(nil, enc3); !errors.Is(err, ErrProtection) {
		t.Errorf("signed instead of encrypted: %v, want ErrProtection", err)
	}
	// Same key id and kind, another key: the MAC fails.
	km4, _ := NewKeyMaterial(KindAES256GCM, KeyID{0, 0, 0, 7}, nil)
	s4, _ := NewSender(km4, SenderOptions{})
	enc4, _ := s4.EncodePayload(nil, []byte("abcd"))
	if _, err := p.openers[0].DecodePayload(nil, enc4); !errors.Is(err, ErrAuth) {
		t.Errorf("other key: %v, want ErrAuth", err)
	}
	c := p.counters
	if c.ReceiverMAC.Load() != 1 || c.UnknownKey.Load() != 1 || c.Protection.Load() != 1 || c.Auth.Load() != 1 {
		t.Errorf("counters receiverMAC %d unknownKey %d protection %d auth %d, want 1 each",
			c.ReceiverMAC.Load(), c.UnknownKey.Load(), c.Protection.Load(), c.Auth.Load())
	}
	// A receiver key of another material is refused at encode time.
	other, _ := km4.WithReceiverSpecificKey(KeyID{1}, nil)
	rk, _ := NewReceiverKey(other)
	if _, err := p.s.EncodeSubmessage(nil, submessage(8), []*ReceiverKey{rk}); err == nil {
		t.Error("receiver key of another material accepted")
	}
}

// The spoofed-header case: a protected message whose clear RTPS header names
// another participant than its INFO_SRC is refused.
func TestMessageHeaderSpoof(t *testing.T) {
	for _, kind := range []TransformKind{KindAES128GMAC, KindAES256GCM} {
		p := newPair(t, kind, 1, false, SenderOptions{})
		msg := rtpsMessage(submessage(8))
		enc, _ := p.s.EncodeMessage(nil, msg, nil)
		enc[12] ^= 0xff // GUID prefix byte in the clear header
		if _, err := p.openers[0].DecodeMessage(nil, enc); !errors.Is(err, ErrAuth) {
			t.Errorf("%v: spoofed header: %v, want ErrAuth", kind, err)
		}
	}
}

// A protected message without the INFO_SRC (the spec's form before it was
// added) is accepted as is; with Fast DDS's statistics submessage 0x80 after
// SRTPS_POSTFIX (unprotected) too, which is dropped.
func TestMessageWithoutInfoSrc(t *testing.T) {
	for _, kind := range allKinds {
		p := newPair(t, kind, 1, true, SenderOptions{})
		msg := rtpsMessage(submessage(8), submessage(4))
		// Build what Fast DDS sends: protect the submessages alone.
		h, g := p.s.next(len(msg) - 20)
		b := append([]byte(nil), msg[:20]...)
		b = appendSubmsgHeader(b, SubmsgSRTPSPrefix, HeaderSize)
		b = AppendHeader(b, h)
		if kind.Encrypts() {
			b = appendSubmsgHeader(b, SubmsgSecBody, 4+len(msg)-20)
			b = binary.BigEndian.AppendUint32(b, uint32(len(msg)-20))
		}
		b, tag := seal(b, &h, g, msg[20:])
		b = appendSubmsgHeader(b, SubmsgSRTPSPostfix, FooterMinSize+ReceiverMACSize)
		b = appendFooter(b, &h, tag, p.rks)
		got, err := p.openers[0].DecodeMessage(nil, b)
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("%v: %x, %v", kind, got, err)
		}
		stat := append([]byte{0x80, 0x01, 8, 0}, seq(0, 8)...)
		fresh := mustOpener(t, p.openers[0].KeyMaterial()) // the first one saw this IV
		got, err = fresh.DecodeMessage(nil, append(b, stat...))
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("%v with a trailing 0x80: %x, %v", kind, got, err)
		}
	}
}

// Fast DDS 2.9 aligns the payload footer's count to 4 from the payload
// start; both readings of a GMAC payload and the GCM one are accepted.
func TestPayloadFastDDSPadding(t *testing.T) {
	for _, kind := range allKinds {
		for _, n := range []int{20, 21, 22, 23} {
			p := newPair(t, kind, 1, false, SenderOptions{})
			plain := bytes.Repeat([]byte{0}, n) // zeros: the worst case for a padding guess
			plain[0] = 1
			enc, _ := p.s.EncodePayload(nil, plain)
			if pad := (4 - n%4) % 4; pad > 0 {
				at := len(enc) - 4
				enc = append(enc[:at:at], append(make([]byte, pad), enc[at:]...)...)
			}
			got, err := p.openers[0].DecodePayload(nil, enc)
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("%v len %d: %x, %v", kind, n, got, err)
			}
		}
	}
}

func TestKeyMaterialCDR(t *testing.T) {
	km := vecMaterial(KindAES128GCM)
	b := km.AppendCDR(nil)
	want := "00000002" + "00000010" + "000102030405060708090a0b0c0d0e0f" + "00000001" + "00000010" +
		"202122232425262728292a2b2c2d2e2f" + "00000002" + "00000010" + "404142434445464748494a4b4c4d4e4f"
	if got := fmt.Sprintf("%x", b); got != want {
		t.Errorf("CDR %s\nwant %s", got, want)
	}
	back, err := ParseKeyMaterial(b)
	if err != nil || fmt.Sprint(back) != fmt.Sprint(km) {
		t.Errorf("parse: %v, %v", back, err)
	}
	// Without receiver-specific key: an empty sequence.
	km.ReceiverSpecificKeyID = KeyID{}
	if b := km.AppendCDR(nil); len(b) != 4+4+16+4+4+16+4+4 {
		t.Errorf("CDR without receiver key: %d bytes", len(b))
	}
	// Fast DDS writes a NONE material as the kind and 40 zero bytes.
	none, err := ParseKeyMaterial(make([]byte, 44))
	if err != nil || none.Kind != KindNone {
		t.Errorf("Fast DDS NONE material: %v, %v", none, err)
	}
	for _, bad := range []string{"", "00000005", "0100000200000010", "00000002000000210000", "00000002" + "00000004" + "00010203" + "00000001"} {
		if _, err := ParseKeyMaterial(unhex(t, bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
}

func TestTokens(t *testing.T) {
	a, _ := NewKeyMaterial(KindAES256GCM, KeyID{1}, nil)
	b, _ := NewKeyMaterial(KindAES128GMAC, KeyID{2}, nil)
	ts := Tokens(a, b)
	if len(ts) != 2 || ts[0].ClassID != "DDS:Crypto:AES_GCM_GMAC" || ts[1].BinaryProperties[0].Name != "dds.cryp.keymat" {
		t.Fatalf("tokens %+v", ts)
	}
	kms, err := ParseTokens(ts)
	if err != nil || len(kms) != 2 || fmt.Sprint(kms[0]) != fmt.Sprint(a) || fmt.Sprint(kms[1]) != fmt.Sprint(b) {
		t.Fatalf("parse: %v, %v", kms, err)
	}
	bad := []Token{
		{ClassID: "DDS:Auth:PKI-DH:1.0", BinaryProperties: ts[0].BinaryProperties},
		{ClassID: TokenClassID},
		{ClassID: TokenClassID, BinaryProperties: ts[0].BinaryProperties, Properties: []Property{{"a", "b"}}},
		{ClassID: TokenClassID, BinaryProperties: []BinaryProperty{{Name: TokenPropKeyMat, Value: []byte{1, 2}}}},
	}
	for i, tok := range bad {
		if _, err := ParseTokens([]Token{tok}); !errors.Is(err, ErrMalformed) {
			t.Errorf("bad token %d: %v", i, err)
		}
	}
	if _, err := ParseTokens(nil); err == nil {
		t.Error("no token accepted")
	}
}

func TestEncodeRefusals(t *testing.T) {
	p := newPair(t, KindAES256GCM, 0, false, SenderOptions{})
	for _, sub := range [][]byte{nil, {0x15, 1, 4, 0}, {0x15, 1, 3, 0, 1, 2, 3}, append(submessage(4), 0, 0, 0, 0)} {
		if _, err := p.s.EncodeSubmessage(nil, sub, nil); err == nil {
			t.Errorf("submessage %x accepted", sub)
		}
	}
	for _, msg := range [][]byte{nil, []byte("RTPS"), rtpsMessage(), append(rtpsMessage(submessage(4)), 1)} {
		if _, err := p.s.EncodeMessage(nil, msg, nil); err == nil {
			t.Errorf("message %x accepted", msg)
		}
	}
	if _, err := p.s.EncodeSubmessage(nil, submessage(0xfffc), nil); err == nil {
		t.Error("oversized submessage accepted")
	}
	if _, err := NewSender(KeyMaterial{Kind: KindNone}, SenderOptions{}); err == nil {
		t.Error("sender of kind NONE")
	}
}

// With rtps SIGN and metadata ENCRYPT (SROS2's default governance) a signed
// message carries protected submessages: SEC_BODY inside a GMAC body is
// plain content, not the message's own SEC_BODY. Found in a Cyclone capture.
func TestNestedProtection(t *testing.T) {
	inner := newPair(t, KindAES256GCM, 1, false, SenderOptions{})
	outer := newPair(t, KindAES256GMAC, 1, true, SenderOptions{})
	sub := submessage(20)
	secSub, err := inner.s.EncodeSubmessage(nil, sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := rtpsMessage(submessage(8), secSub)
	enc, err := outer.s.EncodeMessage(nil, msg, outer.rks)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := outer.openers[0].DecodeMessage(nil, enc)
	if err != nil || !bytes.Equal(plain, msg) {
		t.Fatalf("outer: %x, %v", plain, err)
	}
	got, n, err := inner.openers[0].DecodeSubmessage(nil, plain[20+12:])
	if err != nil || n != len(secSub) || !bytes.Equal(got, sub) {
		t.Fatalf("inner: %x %d, %v", got, n, err)
	}
}
