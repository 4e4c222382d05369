package ros

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

var testGID = [16]byte{0xeb, 0x85, 0xfa, 0x88, 0x3b, 0x78, 0x46, 0xdc, 0x44, 0x8a, 0x45, 0x01, 0x89, 0x0a, 0xd0, 0x62}

func TestAttachmentCurrent(t *testing.T) {
	a := Attachment{Seq: 1, Timestamp: 0x1800_0000_1234_5678, GID: testGID}
	b := a.Bytes()
	want := "0100000000000000" + "7856341200000018" + "10" + hex.EncodeToString(testGID[:])
	if hex.EncodeToString(b) != want || len(b) != AttachmentSize {
		t.Fatalf("bytes %x, want %s", b, want)
	}
	got, l, err := ParseAttachment(b)
	if err != nil || got != a || l != LayoutCurrent {
		t.Fatalf("parse %+v %v %v", got, l, err)
	}
	// trailing bytes are ignored, as rmw_zenoh's deserializer ignores them
	if got, _, err := ParseAttachment(append(b, 0xff, 0xee)); err != nil || got != a {
		t.Errorf("trailing bytes: %+v %v", got, err)
	}
	// a non-minimal LEB128 length is still 16
	nm := append(append(append([]byte{}, b[:16]...), 0x90, 0x80, 0x00), testGID[:]...)
	if got, _, err := ParseAttachment(nm); err != nil || got != a {
		t.Errorf("non-minimal length: %+v %v", got, err)
	}
	neg := Attachment{Seq: -1, Timestamp: -2}
	if got, _, err := ParseAttachment(neg.Bytes()); err != nil || got != neg {
		t.Errorf("negative values: %+v %v", got, err)
	}
}

func TestAttachmentKeyed(t *testing.T) {
	a := Attachment{Seq: 7, Timestamp: 1700000000123456789, GID: testGID}
	b := a.AppendLayout(nil, LayoutKeyed)
	var w bytes.Buffer
	w.WriteByte(15)
	w.WriteString("sequence_number")
	w.Write([]byte{7, 0, 0, 0, 0, 0, 0, 0})
	w.WriteByte(16)
	w.WriteString("source_timestamp")
	w.Write(b[1+15+8+1+16 : 1+15+8+1+16+8])
	w.WriteByte(10)
	w.WriteString("source_gid")
	w.WriteByte(16)
	w.Write(testGID[:])
	if !bytes.Equal(b, w.Bytes()) || len(b) != 77 {
		t.Fatalf("keyed layout %x", b)
	}
	got, l, err := ParseAttachment(b)
	if err != nil || got != a || l != LayoutKeyed {
		t.Fatalf("parse %+v %v %v", got, l, err)
	}
}

func TestAttachmentErrors(t *testing.T) {
	good := Attachment{Seq: 3, GID: testGID}.Bytes()
	keyed := Attachment{Seq: 3, GID: testGID}.AppendLayout(nil, LayoutKeyed)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "sequence number truncated"},
		{"short seq", good[:5], "sequence number truncated"},
		{"short ts", good[:12], "source timestamp truncated"},
		{"no length", good[:16], "gid length truncated"},
		{"length 15", append(append([]byte{}, good[:16]...), 15), "gid length 15"},
		{"length overflow", append(append([]byte{}, good[:16]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), "overflows"},
		{"short gid", good[:30], "gid truncated"},
		{"keyed, bad key", bytes.Replace(append([]byte{}, keyed...), []byte("source_gid"), []byte("source_gix"), 1), `key "source_gid" not found`},
		{"keyed, short", keyed[:40], "truncated"},
	} {
		_, _, err := ParseAttachment(tc.b)
		if err == nil || !errors.Is(err, ErrAttachment) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestRequestAndReply(t *testing.T) {
	req := Attachment{Seq: 5, Timestamp: 100, GID: testGID}
	rep := ReplyAttachment(req.RequestID(), 200)
	if rep != (Attachment{Seq: 5, Timestamp: 200, GID: testGID}) {
		t.Errorf("reply %+v", rep)
	}
}

func FuzzParseAttachment(f *testing.F) {
	f.Add(Attachment{Seq: 1, Timestamp: 2, GID: testGID}.Bytes())
	f.Add(Attachment{Seq: 1, Timestamp: 2, GID: testGID}.AppendLayout(nil, LayoutKeyed))
	f.Add([]byte{})
	f.Add([]byte{15, 's'})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, l, err := ParseAttachment(b)
		if err != nil {
			return
		}
		// what parses re-encodes to a prefix-equivalent that parses the same
		again, l2, err := ParseAttachment(a.AppendLayout(nil, l))
		if err != nil || again != a || l2 != l {
			t.Fatalf("round trip: %+v %v %v", again, l2, err)
		}
	})
}
