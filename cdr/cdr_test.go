package cdr

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		le      bool
		wantErr error
	}{
		{"CDR_LE", "00010000", true, nil},
		{"CDR_BE", "00000000", false, nil},
		{"CDR_LE options ignored", "00010003", true, nil},
		{"CDR_BE options ignored", "0000ffff", false, nil},
		{"short", "0001", false, ErrBadHeader},
		{"empty", "", false, ErrBadHeader},
		{"PL_CDR_LE", "00030000", false, ErrUnsupportedEncoding},
		{"PL_CDR_BE", "00020000", false, ErrUnsupportedEncoding},
		{"CDR2_LE", "00070000", false, ErrUnsupportedEncoding},
		{"D_CDR2_LE", "00090000", false, ErrUnsupportedEncoding},
		{"PL_CDR2_LE", "000b0000", false, ErrUnsupportedEncoding},
		{"byte0 nonzero", "01010000", false, ErrUnsupportedEncoding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			le, err := ParseHeader(unhex(t, tc.in))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && le != tc.le {
				t.Fatalf("le = %v, want %v", le, tc.le)
			}
		})
	}
	_, err := ParseHeader(unhex(t, "00070000"))
	if !strings.Contains(err.Error(), "CDR2_LE") {
		t.Errorf("error should name the kind: %v", err)
	}
}

func TestStringVector(t *testing.T) {
	e := NewEncoder(nil, true)
	e.WriteString("hello")
	want := unhex(t, "00010000 06000000 68656c6c6f00")
	if !bytes.Equal(e.Bytes(), want) {
		t.Fatalf("LE got % x, want % x", e.Bytes(), want)
	}
	e.Reset(nil, false)
	e.WriteString("hello")
	want = unhex(t, "00000000 00000006 68656c6c6f00")
	if !bytes.Equal(e.Bytes(), want) {
		t.Fatalf("BE got % x, want % x", e.Bytes(), want)
	}
	e.Reset(nil, true)
	e.WriteString("")
	want = unhex(t, "00010000 01000000 00")
	if !bytes.Equal(e.Bytes(), want) {
		t.Fatalf("empty got % x, want % x", e.Bytes(), want)
	}
}

func TestAlignment(t *testing.T) {
	tests := []struct {
		name  string
		write func(e *Encoder)
		le    string // body after the header, little endian
	}{
		{"uint8 then float64", func(e *Encoder) { e.WriteUint8(7); e.WriteFloat64(1) },
			"07 00000000000000 000000000000f03f"},
		{"uint8 then uint16", func(e *Encoder) { e.WriteUint8(1); e.WriteUint16(2) }, "01 00 0200"},
		{"uint8 then int32", func(e *Encoder) { e.WriteUint8(1); e.WriteInt32(-1) }, "01 000000 ffffffff"},
		{"uint32 then uint64", func(e *Encoder) { e.WriteUint32(1); e.WriteUint64(2) },
			"01000000 00000000 0200000000000000"},
		{"empty float64 sequence adds no element padding", func(e *Encoder) {
			e.WriteUint8(1)
			WriteSequence[float64](e, nil)
			e.WriteUint8(2)
		}, "01 000000 00000000 02"},
		{"non-empty float64 sequence pads to 8", func(e *Encoder) {
			e.WriteUint8(1)
			WriteSequence(e, []float64{1})
		}, "01 000000 01000000 000000000000f03f"},
		{"string then int64", func(e *Encoder) { e.WriteString("a"); e.WriteInt64(-2) },
			"02000000 6100 0000 feffffffffffffff"},
		{"octets then uint16", func(e *Encoder) { e.WriteOctets([]byte{9}); e.WriteUint16(3) },
			"01000000 09 00 0300"},
		{"bool array then uint32", func(e *Encoder) { WriteArray(e, []bool{true, false, true}); e.WriteUint32(5) },
			"010001 00 05000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEncoder(nil, true)
			tc.write(e)
			want := append([]byte{0, 1, 0, 0}, unhex(t, tc.le)...)
			if !bytes.Equal(e.Bytes(), want) {
				t.Fatalf("got  % x\nwant % x", e.Bytes(), want)
			}
		})
	}
}

func TestAlignmentRelativeToOrigin(t *testing.T) {
	// A caller prefix of 3 bytes must not shift the alignment of the body.
	e := NewEncoder([]byte{0xaa, 0xbb, 0xcc}, true)
	e.WriteUint8(1)
	e.WriteUint32(2)
	want := unhex(t, "aabbcc 00010000 01 000000 02000000")
	if !bytes.Equal(e.Bytes(), want) {
		t.Fatalf("got % x want % x", e.Bytes(), want)
	}
	d, err := NewDecoder(want[3:])
	if err != nil {
		t.Fatal(err)
	}
	if d.ReadUint8() != 1 || d.ReadUint32() != 2 || d.Err() != nil {
		t.Fatalf("decode failed: %v", d.Err())
	}
}

type all struct {
	b   bool
	o   byte
	i8  int8
	u16 uint16
	i16 int16
	u32 uint32
	i32 int32
	u64 uint64
	i64 int64
	f32 float32
	f64 float64
	s   string
	oct []byte
	f   []float64
	arr [3]int16
	ss  []string
}

func (a *all) put(e *Encoder) {
	e.WriteBool(a.b)
	e.WriteOctet(a.o)
	e.WriteInt8(a.i8)
	e.WriteUint16(a.u16)
	e.WriteInt16(a.i16)
	e.WriteUint32(a.u32)
	e.WriteInt32(a.i32)
	e.WriteUint64(a.u64)
	e.WriteInt64(a.i64)
	e.WriteFloat32(a.f32)
	e.WriteFloat64(a.f64)
	e.WriteString(a.s)
	e.WriteOctets(a.oct)
	WriteSequence(e, a.f)
	WriteArray(e, a.arr[:])
	e.WriteStrings(a.ss)
}

func (a *all) get(d *Decoder) {
	a.b = d.ReadBool()
	a.o = d.ReadOctet()
	a.i8 = d.ReadInt8()
	a.u16 = d.ReadUint16()
	a.i16 = d.ReadInt16()
	a.u32 = d.ReadUint32()
	a.i32 = d.ReadInt32()
	a.u64 = d.ReadUint64()
	a.i64 = d.ReadInt64()
	a.f32 = d.ReadFloat32()
	a.f64 = d.ReadFloat64()
	a.s = d.ReadString()
	a.oct = d.ReadOctets(nil)
	a.f = ReadSequence[float64](d, nil)
	ReadArray(d, a.arr[:])
	a.ss = d.ReadStrings(nil)
}

func sample() all {
	return all{true, 0xfe, -3, 0xbeef, -2, 0xdeadbeef, -70000, math.MaxUint64 - 1, math.MinInt64 + 5,
		1.5, -math.Pi, "héllo", []byte{1, 2, 3}, []float64{0.25, 1e300}, [3]int16{-1, 0, 1}, []string{"", "x", "yz"}}
}

func equalAll(a, b all) bool {
	return a.b == b.b && a.o == b.o && a.i8 == b.i8 && a.u16 == b.u16 && a.i16 == b.i16 && a.u32 == b.u32 &&
		a.i32 == b.i32 && a.u64 == b.u64 && a.i64 == b.i64 && a.f32 == b.f32 && a.f64 == b.f64 && a.s == b.s &&
		bytes.Equal(a.oct, b.oct) && len(a.f) == len(b.f) && (len(a.f) == 0 || a.f[0] == b.f[0] && a.f[1] == b.f[1]) &&
		a.arr == b.arr && strings.Join(a.ss, "|") == strings.Join(b.ss, "|") && len(a.ss) == len(b.ss)
}

func TestRoundTripBothEndians(t *testing.T) {
	for _, le := range []bool{true, false} {
		in := sample()
		e := NewEncoder(nil, le)
		in.put(e)
		d, err := NewDecoder(e.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if d.LittleEndian() != le {
			t.Fatalf("endianness from header = %v, want %v", d.LittleEndian(), le)
		}
		var out all
		out.get(d)
		if d.Err() != nil {
			t.Fatalf("le=%v: %v", le, d.Err())
		}
		if d.Remaining() != 0 {
			t.Fatalf("le=%v: %d bytes left", le, d.Remaining())
		}
		if !equalAll(in, out) {
			t.Fatalf("le=%v: got %+v want %+v", le, out, in)
		}
	}
}

func TestEveryPrefixFails(t *testing.T) {
	for _, le := range []bool{true, false} {
		in := sample()
		e := NewEncoder(nil, le)
		in.put(e)
		full := e.Bytes()
		for n := 0; n < len(full); n++ {
			d, _ := NewDecoder(full[:n])
			var out all
			out.get(d)
			if d.Err() == nil {
				t.Fatalf("le=%v prefix %d of %d decoded without error", le, n, len(full))
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		read func(d *Decoder)
		want error
		msg  string
	}{
		{"bool 2", "02", func(d *Decoder) { d.ReadBool() }, ErrInvalidBool, "cdr: invalid bool reading bool at offset 4: byte 0x02 is neither 0 nor 1"},
		{"bool ff", "ff", func(d *Decoder) { d.ReadBool() }, ErrInvalidBool, ""},
		{"truncated uint32", "01000000 0100", func(d *Decoder) { d.ReadUint32(); d.ReadUint32() }, ErrTruncated,
			"cdr: truncated reading uint32 at offset 8"},
		{"truncated by padding", "01 000000", func(d *Decoder) { d.ReadUint8(); d.ReadUint32() }, ErrTruncated, ""},
		{"string no NUL", "03000000 616263", func(d *Decoder) { d.ReadString() }, ErrString, ""},
		{"string longer than input", "ffffff7f 61", func(d *Decoder) { d.ReadString() }, ErrTooLong, ""},
		{"string over bound", "04000000 61626300", func(d *Decoder) { d.ReadBoundedString(2) }, ErrTooLong, ""},
		{"huge sequence count", "ffffffff 00000000", func(d *Decoder) { d.ReadSequenceLen(1) }, ErrTooLong, ""},
		{"count exceeds elem size", "03000000 0000000000000000 0000000000000000",
			func(d *Decoder) { ReadSequence[float64](d, nil) }, ErrTooLong, ""},
		{"count over bound", "03000000 010203", func(d *Decoder) { d.ReadBoundedSequenceLen(1, 2) }, ErrTooLong, ""},
		{"huge octets", "ffffffff", func(d *Decoder) { d.ReadOctets(nil) }, ErrTooLong, ""},
		{"huge string sequence", "00010000 01000000", func(d *Decoder) { d.ReadStrings(nil) }, ErrTooLong, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDecoder(append([]byte{0, 1, 0, 0}, unhex(t, tc.body)...))
			if err != nil {
				t.Fatal(err)
			}
			tc.read(d)
			if !errors.Is(d.Err(), tc.want) {
				t.Fatalf("err = %v, want %v", d.Err(), tc.want)
			}
			if tc.msg != "" && d.Err().Error() != tc.msg {
				t.Fatalf("message %q, want %q", d.Err().Error(), tc.msg)
			}
		})
	}
}

func TestZeroLengthStringReadsEmpty(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 00000000 05000000"))
	if s := d.ReadString(); s != "" || d.Err() != nil {
		t.Fatalf("got %q, %v", s, d.Err())
	}
	if v := d.ReadUint32(); v != 5 {
		t.Fatalf("next value %d", v)
	}
}

func TestStickyError(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 02 00000000 07000000"))
	d.ReadBool()
	first := d.Err()
	if first == nil {
		t.Fatal("no error")
	}
	if v := d.ReadUint32(); v != 0 {
		t.Fatalf("read after error returned %d, want 0", v)
	}
	if s := d.ReadString(); s != "" {
		t.Fatalf("string after error %q", s)
	}
	d.Fail("x", "y")
	if d.Err() != first {
		t.Fatalf("first error must win, got %v", d.Err())
	}
}

func TestFail(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 01"))
	d.ReadUint8()
	d.Fail("enum", "value 1 out of range")
	if !errors.Is(d.Err(), ErrInvalid) || !strings.Contains(d.Err().Error(), "enum at offset 5") {
		t.Fatalf("got %v", d.Err())
	}
}

func TestSnapshotRestore(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 01000000 02000000"))
	saved := *d
	d.ReadUint64() // 8 bytes, no error
	d.ReadUint8()  // truncated
	if d.Err() == nil {
		t.Fatal("expected error")
	}
	*d = saved
	if d.ReadUint32() != 1 || d.ReadUint32() != 2 || d.Err() != nil {
		t.Fatal("restore failed")
	}
}

func TestBodyCodec(t *testing.T) {
	var e Encoder
	e.ResetBody([]byte{1, 2}, false)
	e.WriteUint8(1)
	e.WriteUint16(0x0102)
	if got, want := e.Bytes(), unhex(t, "0102 01 00 0102"); !bytes.Equal(got, want) {
		t.Fatalf("got % x want % x", got, want)
	}
	var d Decoder
	d.ResetBody(unhex(t, "01 00 0102"), false)
	if d.ReadUint8() != 1 || d.ReadUint16() != 0x0102 || d.Err() != nil || d.Offset() != 4 {
		t.Fatalf("body decode: %v", d.Err())
	}
}

func TestReuseBuffers(t *testing.T) {
	e := NewEncoder(make([]byte, 0, 256), true)
	d := &Decoder{}
	dst := make([]float64, 0, 8)
	ss := make([]string, 0, 4)
	oct := make([]byte, 0, 16)
	allocs := testing.AllocsPerRun(100, func() {
		e.Reset(e.Bytes()[:0], true)
		e.WriteString("hello")
		WriteSequence(e, []float64{1, 2, 3})
		e.WriteOctets([]byte{1, 2, 3})
		e.WriteStrings(nil)
		_ = d.Reset(e.Bytes())
		_ = d.ReadString()
		dst = ReadSequence(d, dst)
		oct = d.ReadOctets(oct)
		ss = d.ReadStrings(ss)
	})
	// The only allocation allowed is the string "hello" itself.
	if allocs > 1 {
		t.Fatalf("allocs per run = %v, want <= 1", allocs)
	}
	if len(dst) != 3 || dst[2] != 3 || len(oct) != 3 || d.Err() != nil {
		t.Fatalf("bad decode %v %v %v", dst, oct, d.Err())
	}
}

func TestReadSequenceFuncStruct(t *testing.T) {
	type pt struct{ x, y int32 }
	e := NewEncoder(nil, true)
	WriteSequenceFunc(e, []pt{{1, 2}, {3, 4}}, func(e *Encoder, p *pt) { e.WriteInt32(p.x); e.WriteInt32(p.y) })
	d, _ := NewDecoder(e.Bytes())
	got := ReadSequenceFunc(d, nil, 8, func(d *Decoder, p *pt) { p.x = d.ReadInt32(); p.y = d.ReadInt32() })
	if d.Err() != nil || len(got) != 2 || got[1] != (pt{3, 4}) {
		t.Fatalf("got %v %v", got, d.Err())
	}
	// Count 2 but only one element's worth of bytes: rejected before reading.
	d, _ = NewDecoder(unhex(t, "00010000 02000000 0100000002000000"))
	got = ReadSequenceFunc(d, nil, 8, func(d *Decoder, p *pt) { p.x = d.ReadInt32(); p.y = d.ReadInt32() })
	if !errors.Is(d.Err(), ErrTooLong) || len(got) != 0 {
		t.Fatalf("got %v %v", got, d.Err())
	}
}

func TestBoundedSequence(t *testing.T) {
	e := NewEncoder(nil, true)
	WriteSequence(e, []uint16{1, 2, 3})
	d, _ := NewDecoder(e.Bytes())
	if got := ReadBoundedSequence[uint16](d, nil, 3); len(got) != 3 || d.Err() != nil {
		t.Fatalf("got %v %v", got, d.Err())
	}
	d, _ = NewDecoder(e.Bytes())
	if got := ReadBoundedSequence[uint16](d, nil, 2); len(got) != 0 || !errors.Is(d.Err(), ErrTooLong) {
		t.Fatalf("got %v %v", got, d.Err())
	}
}

func TestPrimitiveSize(t *testing.T) {
	if PrimitiveSize[bool]() != 1 || PrimitiveSize[int16]() != 2 || PrimitiveSize[float32]() != 4 ||
		PrimitiveSize[uint64]() != 8 || PrimitiveSize[float64]() != 8 {
		t.Fatal("wrong sizes")
	}
}

func TestWString(t *testing.T) {
	for _, s := range []string{"", "Hello world!", "Hellö wörld!", "ハローワールド", "a😀b"} {
		e := NewEncoder(nil, true)
		e.WriteUint8(7)
		e.WriteWString(s)
		d, err := NewDecoder(e.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		d.ReadUint8()
		if got := d.ReadWString(-1); got != s || d.Err() != nil {
			t.Errorf("%q: got %q, %v", s, got, d.Err())
		}
		if d.Remaining() != 0 {
			t.Errorf("%q: %d bytes left", s, d.Remaining())
		}
	}
	e := NewEncoder(nil, true)
	e.WriteWString("a😀")
	if want := "00010000 03000000 61000000 3dd80000 00de0000"; hexWords(e.Bytes()) != want {
		t.Errorf("layout %s, want %s", hexWords(e.Bytes()), want)
	}
	d, _ := NewDecoder(e.Bytes())
	if d.ReadWString(2); !errors.Is(d.Err(), ErrTooLong) {
		t.Errorf("bound: %v", d.Err())
	}
	d, _ = NewDecoder([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	if d.ReadWString(-1); !errors.Is(d.Err(), ErrTooLong) {
		t.Errorf("lying length: %v", d.Err())
	}
}

func TestEncoderFail(t *testing.T) {
	e := NewEncoder(nil, true)
	e.Fail("string", "too long")
	e.Fail("second", "")
	if !errors.Is(e.Err(), ErrTooLong) || !strings.Contains(e.Err().Error(), "string") {
		t.Errorf("Err = %v", e.Err())
	}
	e.Reset(nil, true)
	if e.Err() != nil {
		t.Errorf("Reset kept %v", e.Err())
	}
}

func hexWords(b []byte) string {
	var parts []string
	for i := 0; i < len(b); i += 4 {
		parts = append(parts, fmt.Sprintf("%x", b[i:min(i+4, len(b))]))
	}
	return strings.Join(parts, " ")
}
