package crypto

import (
	"bytes"
	"testing"
)

// Fuzz targets for every decoder of outside bytes: refusals must be named
// errors, never panics; what splits must stay inside its input.

func FuzzParseKeyMaterial(f *testing.F) {
	f.Add(vecMaterial(KindAES256GCM).AppendCDR(nil))
	f.Add(vecMaterial(KindAES128GMAC).AppendCDR(nil))
	f.Add(make([]byte, 44))
	f.Fuzz(func(t *testing.T, b []byte) {
		km, err := ParseKeyMaterial(b)
		if err != nil {
			if !named(err) {
				t.Fatalf("unnamed error %v", err)
			}
			return
		}
		if km.Kind != KindNone {
			again, err := ParseKeyMaterial(km.AppendCDR(nil))
			if err != nil || !bytes.Equal(again.AppendCDR(nil), km.AppendCDR(nil)) {
				t.Fatalf("re-encoding changes the material: %v", err)
			}
		}
	})
}

func FuzzDecodePayload(f *testing.F) {
	f.Add(unhex(f, vecPayload256GCM))
	o := mustOpener(f, vecMaterial(KindAES256GCM))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := SplitPayload(b); err == nil && len(s.Body) > len(b) {
			t.Fatal("body longer than input")
		}
		if _, err := o.DecodePayload(nil, b); err != nil && !named(err) {
			t.Fatalf("unnamed error %v", err)
		}
	})
}

func FuzzDecodeSubmessage(f *testing.F) {
	f.Add(unhex(f, vecSubmsg128GMAC))
	p := newPair(f, KindAES256GCM, 1, true, SenderOptions{})
	enc, _ := p.s.EncodeSubmessage(nil, submessage(16), p.rks)
	f.Add(enc)
	o := mustOpener(f, vecMaterial(KindAES128GMAC))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, n, err := SplitSubmessage(b); err == nil && (n > len(b) || len(s.Body) > n) {
			t.Fatal("split beyond input")
		}
		for _, op := range []*Opener{o, p.openers[0]} {
			plain, n, err := op.DecodeSubmessage(nil, b)
			if err != nil && !named(err) {
				t.Fatalf("unnamed error %v", err)
			}
			if err == nil && (n > len(b) || len(plain) > n) {
				t.Fatal("decoded beyond input")
			}
		}
	})
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add(unhex(f, vecMessage256GCM))
	for _, b := range capturedMessages(f) {
		f.Add(b)
	}
	p := newPair(f, KindAES128GMAC, 1, true, SenderOptions{})
	enc, _ := p.s.EncodeMessage(nil, rtpsMessage(submessage(8), submessage(0)), p.rks)
	f.Add(enc)
	o := mustOpener(f, vecMaterial(KindAES256GCM))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := SplitMessage(b); err == nil && len(s.Body) > len(b) {
			t.Fatal("body longer than input")
		}
		for _, op := range []*Opener{o, p.openers[0]} {
			plain, err := op.DecodeMessage(nil, b)
			if err != nil && !named(err) {
				t.Fatalf("unnamed error %v", err)
			}
			if err == nil && len(plain) > len(b) {
				t.Fatal("decoded message longer than input")
			}
		}
	})
}
