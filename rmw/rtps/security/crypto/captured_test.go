package crypto

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/captured-{cyclone,fastdds}.hex are protected RTPS messages taken
// from a capture on lo of Debian's Cyclone DDS 0.10.2 and Fast DDS 2.9.1
// secure peers (interop TestSecureCapture, NROS_SECURE_DUMP) under SROS2's
// default governance: rtps SIGN (GMAC) around metadata ENCRYPT (GCM)
// submessages. Without the keys only their shape can be checked.
func capturedMessages(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, v := range []string{"cyclone", "fastdds"} {
		b, err := os.ReadFile("testdata/captured-" + v + ".hex")
		if err != nil {
			t.Fatal(err)
		}
		out[v] = unhex(t, strings.TrimSpace(string(b)))
	}
	return out
}

func TestCapturedVendorShapes(t *testing.T) {
	for v, b := range capturedMessages(t) {
		m, err := SplitMessage(b)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if m.Header.Kind != KindAES256GMAC || m.Encrypted || m.Footer.NumReceiverMACs() != 0 {
			t.Errorf("%s: kind %v encrypted %v receiver MACs %d; want signed AES256_GMAC without origin authentication",
				v, m.Header.Kind, m.Encrypted, m.Footer.NumReceiverMACs())
		}
		// Both vendors repeat the header in an INFO_SRC first.
		if len(m.Body) < infoSrcSize || m.Body[0] != submsgInfoSrc || !bytes.Equal(m.Body[8:24], b[4:20]) {
			t.Errorf("%s: no INFO_SRC repeating the header first", v)
		}
		nested := 0
		for off := 0; off < len(m.Body); {
			if m.Body[off] == SubmsgSecPrefix {
				s, n, err := SplitSubmessage(m.Body[off:])
				if err != nil {
					t.Fatalf("%s: nested submessage at %d: %v", v, off, err)
				}
				if s.Header.Kind != KindAES256GCM || !s.Encrypted {
					t.Errorf("%s: nested submessage %v encrypted %v, want AES256_GCM", v, s.Header.Kind, s.Encrypted)
				}
				nested++
				off += n
				continue
			}
			sm, err := readSubmsg(m.Body[off:])
			if err != nil {
				t.Fatalf("%s: submessage at %d: %v", v, off, err)
			}
			off += sm.size
		}
		if nested == 0 {
			t.Errorf("%s: no protected submessage inside", v)
		}
		// Fast DDS appends its statistics submessage after SRTPS_POSTFIX.
		if v == "fastdds" && (len(m.Trailing) == 0 || m.Trailing[0] != 0x80) {
			t.Errorf("fastdds: trailing % x, want a 0x80 submessage", m.Trailing)
		}
		if v == "cyclone" && len(m.Trailing) != 0 {
			t.Errorf("cyclone: %d trailing bytes", len(m.Trailing))
		}
		// Someone else's message: refused by key id, counted, no panic.
		o := mustOpener(t, vecMaterial(KindAES256GMAC))
		if _, err := o.DecodeMessage(nil, b); err == nil || !named(err) {
			t.Errorf("%s: decoded without its key: %v", v, err)
		}
	}
}
