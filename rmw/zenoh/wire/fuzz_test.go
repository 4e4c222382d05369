package wire

import (
	"bytes"
	"reflect"
	"testing"
)

// Seeds: every batch zenoh-pico sent in the captures, the network messages
// of their frames, and the declarations among them.
func seeds(f *testing.F) (batches, network, decls [][]byte) {
	for _, c := range loadCaptures(f) {
		batches = append(batches, c.b)
		_ = DecodeBatch(c.b, func(m TransportMessage) error {
			fr, ok := m.(*Frame)
			if !ok {
				return nil
			}
			p := fr.Payload
			for len(p) > 0 {
				nm, n, err := DecodeNetwork(p)
				if err != nil {
					break
				}
				network = append(network, p[:n])
				if _, ok := nm.(*Declare); ok {
					decls = append(decls, p[:n])
				}
				p = p[n:]
			}
			return nil
		})
	}
	return
}

// FuzzDecodeTransport feeds whole batches. Whatever decodes must encode,
// and decoding that encoding must give the same message.
func FuzzDecodeTransport(f *testing.F) {
	batches, _, _ := seeds(f)
	for _, b := range batches {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = DecodeBatch(b, func(m TransportMessage) error {
			enc, err := AppendTransport(nil, m)
			if err != nil {
				t.Fatalf("decoded %T does not encode: %v", m, err)
			}
			m2, n, err := DecodeTransport(enc)
			if err != nil || n != len(enc) {
				t.Fatalf("re-decode %T %x: n=%d err=%v", m, enc, n, err)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Fatalf("unstable %T:\n %#v\n %#v", m, m, m2)
			}
			if fr, ok := m.(*Frame); ok {
				_ = DecodeFrame(fr.Payload, func(NetworkMessage) error { return nil })
			}
			return nil
		})
	})
}

func checkNetwork(t *testing.T, b []byte) {
	m, n, err := DecodeNetwork(b)
	if err != nil {
		return
	}
	if n < 1 || n > len(b) {
		t.Fatalf("took %d of %d bytes", n, len(b))
	}
	enc, err := AppendNetwork(nil, m)
	if err != nil {
		t.Fatalf("decoded %T does not encode: %v", m, err)
	}
	m2, n2, err := DecodeNetwork(enc)
	if err != nil || n2 != len(enc) {
		t.Fatalf("re-decode %T %x: n=%d err=%v", m, enc, n2, err)
	}
	if !reflect.DeepEqual(m, m2) {
		t.Fatalf("unstable %T:\n %#v\n %#v", m, m, m2)
	}
	enc2, _ := AppendNetwork(nil, m2)
	if !bytes.Equal(enc, enc2) {
		t.Fatalf("encoding not canonical: %x vs %x", enc, enc2)
	}
}

// FuzzDecodeNetwork feeds one network message (what a FRAME carries).
func FuzzDecodeNetwork(f *testing.F) {
	_, network, _ := seeds(f)
	for _, b := range network {
		f.Add(b)
	}
	f.Fuzz(checkNetwork)
}

// FuzzDecodeDeclaration feeds the body of a DECLARE (after a header byte
// with or without an interest id) to stress the declarations.
func FuzzDecodeDeclaration(f *testing.F) {
	_, _, decls := seeds(f)
	for _, b := range decls {
		f.Add(b[0]&0x20 != 0, b[1:])
	}
	f.Fuzz(func(t *testing.T, withInterest bool, body []byte) {
		h := byte(MidDeclare)
		if withInterest {
			h |= 0x20
		}
		checkNetwork(t, append([]byte{h}, body...))
	})
}
