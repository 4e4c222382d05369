package cdr

import (
	"errors"
	"testing"
)

// FuzzDecoder reads the input with a sequence of reads chosen by the first
// bytes of the input itself. Whatever the bytes, the decoder must not panic,
// must report a sentinel-wrapped error, and must never claim more bytes than
// exist.
func FuzzDecoder(f *testing.F) {
	e := NewEncoder(nil, true)
	in := sample()
	in.put(e)
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, e.Bytes())
	f.Add([]byte{11, 12, 13}, []byte{0, 0, 0, 0, 0, 0, 0, 2, 'a', 0})
	f.Add([]byte{0}, []byte{0, 1, 0, 0, 2})
	f.Fuzz(func(t *testing.T, ops []byte, data []byte) {
		d, err := NewDecoder(data)
		if err != nil {
			if !errors.Is(err, ErrBadHeader) && !errors.Is(err, ErrUnsupportedEncoding) {
				t.Fatalf("header error %v", err)
			}
		}
		for _, op := range ops {
			switch op % 16 {
			case 0:
				d.ReadBool()
			case 1:
				d.ReadOctet()
			case 2:
				d.ReadInt16()
			case 3:
				d.ReadUint32()
			case 4:
				d.ReadInt64()
			case 5:
				d.ReadFloat32()
			case 6:
				d.ReadFloat64()
			case 7:
				d.ReadString()
			case 8:
				d.ReadBoundedString(8)
			case 9:
				d.ReadOctets(nil)
			case 10:
				ReadSequence[float64](d, nil)
			case 11:
				d.ReadStrings(nil)
			case 12:
				var a [5]byte
				d.ReadOctetArray(a[:])
			case 13:
				ReadSequence[bool](d, nil)
			case 14:
				ReadSequenceFunc(d, nil, 4, func(d *Decoder, v *[]uint16) { *v = ReadSequence[uint16](d, nil) })
			case 15:
				d.Align(8)
			}
			if d.Remaining() < 0 {
				t.Fatalf("remaining %d", d.Remaining())
			}
		}
		if err := d.Err(); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *cdr.Error", err)
			}
		}
	})
}
