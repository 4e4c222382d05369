package cdr

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Decoder reads XCDR1 data. The first error is kept and returned by Err;
// after it every read returns the zero value. A Decoder never panics on any
// input.
//
// A Decoder is a small value: copying it (saved := *d; ...; *d = saved)
// snapshots and restores the read position, which lets a caller try two
// layouts of the same bytes.
type Decoder struct {
	data   []byte
	pos    int // next byte to read, index in data
	origin int // index in data that alignment is measured from
	le     bool
	err    error
}

// NewDecoder returns a Decoder for a serialized sample that starts with the
// encapsulation header. A header that is short or names anything other
// than plain XCDR1 is reported both here and by Err.
func NewDecoder(data []byte) (*Decoder, error) {
	d := &Decoder{}
	err := d.Reset(data)
	return d, err
}

// Reset starts decoding a new sample (header included). It returns the
// header error, if any, which also becomes the sticky error.
func (d *Decoder) Reset(data []byte) error {
	*d = Decoder{data: data}
	le, err := ParseHeader(data)
	if err != nil {
		d.err = err
		d.pos = len(data)
		return err
	}
	d.le = le
	d.pos = HeaderSize
	d.origin = HeaderSize
	return nil
}

// ResetBody starts decoding a body with no encapsulation header, aligned
// relative to its first byte.
func (d *Decoder) ResetBody(body []byte, littleEndian bool) {
	*d = Decoder{data: body, le: littleEndian}
}

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Fail records err (wrapped with the current offset) unless an error is
// already recorded. Message types use it to reject values that decode
// correctly but are invalid for the type.
func (d *Decoder) Fail(what string, detail string) {
	if d.err == nil {
		d.err = &Error{Err: ErrInvalid, Offset: d.pos, What: what, Detail: detail}
	}
}

// Offset returns the read position relative to the alignment origin (the
// first body byte).
func (d *Decoder) Offset() int { return d.pos - d.origin }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.data) - d.pos }

// LittleEndian reports the byte order being read.
func (d *Decoder) LittleEndian() bool { return d.le }

func (d *Decoder) fail(sentinel error, at int, what, detail string) {
	if d.err == nil {
		d.err = &Error{Err: sentinel, Offset: at, What: what, Detail: detail}
	}
	d.pos = len(d.data)
}

// take aligns to align, then returns the next n bytes, or nil after
// recording a truncation error.
func (d *Decoder) take(align, n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	start := d.pos
	p := d.pos
	if align > 1 {
		if align&(align-1) == 0 { // 2, 4, 8: every CDR alignment
			p += -(p - d.origin) & (align - 1)
		} else {
			p += (align - (p-d.origin)%align) % align
		}
	}
	if n < 0 || p > len(d.data) || n > len(d.data)-p {
		d.fail(ErrTruncated, start, what, "")
		return nil
	}
	d.pos = p + n
	return d.data[p:d.pos:d.pos]
}

// Align skips padding up to a multiple of n relative to the origin.
func (d *Decoder) Align(n int) { d.take(n, 0, "alignment padding") }

// ReadBool reads a bool; a byte other than 0 or 1 is an error.
func (d *Decoder) ReadBool() bool {
	b := d.take(1, 1, "bool")
	if b == nil {
		return false
	}
	switch b[0] {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(ErrInvalidBool, d.pos-1, "bool", fmt.Sprintf("byte 0x%02x is neither 0 nor 1", b[0]))
	return false
}

// ReadOctet reads one byte (IDL octet, ROS byte).
func (d *Decoder) ReadOctet() byte { return d.read1("octet") }

// ReadUint8 reads a uint8.
func (d *Decoder) ReadUint8() uint8 { return d.read1("uint8") }

// ReadInt8 reads an int8.
func (d *Decoder) ReadInt8() int8 { return int8(d.read1("int8")) }

// ReadChar reads a ROS char (one byte).
func (d *Decoder) ReadChar() byte { return d.read1("char") }

func (d *Decoder) read1(what string) byte {
	b := d.take(1, 1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *Decoder) read2(what string) uint16 {
	b := d.take(2, 2, what)
	if b == nil {
		return 0
	}
	if d.le {
		return binary.LittleEndian.Uint16(b)
	}
	return binary.BigEndian.Uint16(b)
}

func (d *Decoder) read4(what string) uint32 {
	b := d.take(4, 4, what)
	if b == nil {
		return 0
	}
	if d.le {
		return binary.LittleEndian.Uint32(b)
	}
	return binary.BigEndian.Uint32(b)
}

func (d *Decoder) read8(what string) uint64 {
	b := d.take(8, 8, what)
	if b == nil {
		return 0
	}
	if d.le {
		return binary.LittleEndian.Uint64(b)
	}
	return binary.BigEndian.Uint64(b)
}

// ReadUint16 reads a 2-byte aligned uint16.
func (d *Decoder) ReadUint16() uint16 { return d.read2("uint16") }

// ReadInt16 reads a 2-byte aligned int16.
func (d *Decoder) ReadInt16() int16 { return int16(d.read2("int16")) }

// ReadUint32 reads a 4-byte aligned uint32.
func (d *Decoder) ReadUint32() uint32 { return d.read4("uint32") }

// ReadInt32 reads a 4-byte aligned int32.
func (d *Decoder) ReadInt32() int32 { return int32(d.read4("int32")) }

// ReadUint64 reads an 8-byte aligned uint64.
func (d *Decoder) ReadUint64() uint64 { return d.read8("uint64") }

// ReadInt64 reads an 8-byte aligned int64.
func (d *Decoder) ReadInt64() int64 { return int64(d.read8("int64")) }

// ReadFloat32 reads a 4-byte aligned float32.
func (d *Decoder) ReadFloat32() float32 { return math.Float32frombits(d.read4("float32")) }

// ReadFloat64 reads an 8-byte aligned float64.
func (d *Decoder) ReadFloat64() float64 { return math.Float64frombits(d.read8("float64")) }

// ReadString reads an unbounded string. A length of 0 reads as "" (both
// rmws accept it); otherwise the last byte must be NUL.
func (d *Decoder) ReadString() string { return d.readString(-1) }

// ReadBoundedString reads a string<=max; a longer string is an error.
func (d *Decoder) ReadBoundedString(max int) string { return d.readString(max) }

func (d *Decoder) readString(max int) string {
	if d.err != nil {
		return ""
	}
	start := d.pos
	n := d.read4("string length")
	if d.err != nil {
		return ""
	}
	if n == 0 {
		return ""
	}
	if uint64(n) > uint64(d.Remaining()) {
		d.fail(ErrTooLong, start, "string", fmt.Sprintf("length %d but only %d bytes remain", n, d.Remaining()))
		return ""
	}
	if max >= 0 && uint64(n)-1 > uint64(max) {
		d.fail(ErrTooLong, start, "string", fmt.Sprintf("length %d exceeds bound %d", n-1, max))
		return ""
	}
	b := d.take(1, int(n), "string")
	if b == nil {
		return ""
	}
	if b[n-1] != 0 {
		d.fail(ErrString, start, "string", "missing NUL terminator")
		return ""
	}
	return string(b[:n-1])
}

// ReadSequenceLen reads the uint32 count that starts a sequence and checks
// that count elements of at least minElemSize bytes each (at least 1) fit in
// the remaining input, so the caller can allocate count elements safely.
// On error it returns 0.
func (d *Decoder) ReadSequenceLen(minElemSize int) int {
	return d.readSeqLen(minElemSize, -1)
}

// ReadBoundedSequenceLen is ReadSequenceLen for a sequence<T, max>: a count
// above max is an error.
func (d *Decoder) ReadBoundedSequenceLen(minElemSize, max int) int {
	return d.readSeqLen(minElemSize, max)
}

func (d *Decoder) readSeqLen(minElemSize, max int) int {
	if d.err != nil {
		return 0
	}
	start := d.pos
	n := d.read4("sequence length")
	if d.err != nil {
		return 0
	}
	if minElemSize < 1 {
		minElemSize = 1
	}
	if uint64(n) > uint64(d.Remaining()/minElemSize) {
		d.fail(ErrTooLong, start, "sequence length",
			fmt.Sprintf("count %d of elements of >= %d bytes but only %d bytes remain", n, minElemSize, d.Remaining()))
		return 0
	}
	if max >= 0 && uint64(n) > uint64(max) {
		d.fail(ErrTooLong, start, "sequence length", fmt.Sprintf("count %d exceeds bound %d", n, max))
		return 0
	}
	return int(n)
}

// ReadOctets reads a sequence<octet> (count then bytes) into a new slice.
// An empty sequence returns a non-nil empty slice only if dst is non-nil:
// the result is appended to dst[:0].
func (d *Decoder) ReadOctets(dst []byte) []byte {
	n := d.ReadSequenceLen(1)
	b := d.take(1, n, "octet sequence")
	if b == nil {
		return dst[:0]
	}
	return append(dst[:0], b...)
}

// ReadOctetArray fills dst from a fixed-size octet array.
func (d *Decoder) ReadOctetArray(dst []byte) {
	b := d.take(1, len(dst), "octet array")
	if b == nil {
		clear(dst)
		return
	}
	copy(dst, b)
}

// Skip discards n bytes (no alignment).
func (d *Decoder) Skip(n int) { d.take(1, n, "skipped bytes") }
