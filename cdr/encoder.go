package cdr

import (
	"encoding/binary"
	"math"
)

// Encoder appends XCDR1 data to a byte slice. The zero value is not ready:
// call Reset (or use NewEncoder) first. An Encoder that is reused with Reset
// on a buffer of sufficient capacity allocates nothing.
type Encoder struct {
	buf    []byte
	origin int // index in buf that alignment is measured from
	le     bool
	err    error
}

// NewEncoder returns an Encoder that appends an encapsulation header and then
// the body to buf.
func NewEncoder(buf []byte, littleEndian bool) *Encoder {
	e := &Encoder{}
	e.Reset(buf, littleEndian)
	return e
}

// Reset starts a new sample: it appends the 4-byte encapsulation header to
// buf and aligns subsequent values relative to the byte after it. Pass
// buf[:0] to reuse a buffer.
func (e *Encoder) Reset(buf []byte, littleEndian bool) {
	h := Header(littleEndian)
	e.buf = append(buf, h[:]...)
	e.origin = len(e.buf)
	e.le = littleEndian
	e.err = nil
}

// ResetBody starts encoding without an encapsulation header: values are
// appended to buf and aligned relative to len(buf).
func (e *Encoder) ResetBody(buf []byte, littleEndian bool) {
	e.buf = buf
	e.origin = len(buf)
	e.le = littleEndian
	e.err = nil
}

// Fail records that the value being encoded is invalid for its type (a
// string or sequence longer than its bound), unless an error is already
// recorded. Encoding carries on; callers that care check Err.
func (e *Encoder) Fail(what, detail string) {
	if e.err == nil {
		e.err = &Error{Err: ErrTooLong, Offset: len(e.buf) - e.origin, What: what, Detail: detail}
	}
}

// Invalid records, like Fail, a value the type cannot carry, with the
// sentinel ErrInvalid (e.g. a dynamic message field of the wrong Go type).
func (e *Encoder) Invalid(what, detail string) {
	if e.err == nil {
		e.err = &Error{Err: ErrInvalid, Offset: len(e.buf) - e.origin, What: what, Detail: detail}
	}
}

// Err returns the first error recorded by Fail or Invalid since the last
// Reset.
func (e *Encoder) Err() error { return e.err }

// Bytes returns the buffer: whatever buf held before Reset, then the header
// (if any), then the encoded body. It aliases the encoder's storage until
// the next Reset.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of body bytes written since Reset (header excluded).
func (e *Encoder) Len() int { return len(e.buf) - e.origin }

// LittleEndian reports the byte order being written.
func (e *Encoder) LittleEndian() bool { return e.le }

// Align pads with zero bytes to a multiple of n (1, 2, 4 or 8) relative to
// the alignment origin.
func (e *Encoder) Align(n int) {
	pad := (n - (len(e.buf)-e.origin)%n) % n
	for ; pad > 0; pad-- {
		e.buf = append(e.buf, 0)
	}
}

// WriteBool writes a bool as one byte, 0 or 1.
func (e *Encoder) WriteBool(v bool) {
	var b byte
	if v {
		b = 1
	}
	e.buf = append(e.buf, b)
}

// WriteOctet writes one byte (IDL octet, ROS byte).
func (e *Encoder) WriteOctet(v byte) { e.buf = append(e.buf, v) }

// WriteUint8 writes a uint8.
func (e *Encoder) WriteUint8(v uint8) { e.buf = append(e.buf, v) }

// WriteInt8 writes an int8.
func (e *Encoder) WriteInt8(v int8) { e.buf = append(e.buf, byte(v)) }

// WriteChar writes a ROS char (one byte).
func (e *Encoder) WriteChar(v byte) { e.buf = append(e.buf, v) }

// WriteUint16 writes a 2-byte aligned uint16.
func (e *Encoder) WriteUint16(v uint16) {
	e.Align(2)
	if e.le {
		e.buf = binary.LittleEndian.AppendUint16(e.buf, v)
	} else {
		e.buf = binary.BigEndian.AppendUint16(e.buf, v)
	}
}

// WriteInt16 writes a 2-byte aligned int16.
func (e *Encoder) WriteInt16(v int16) { e.WriteUint16(uint16(v)) }

// WriteUint32 writes a 4-byte aligned uint32.
func (e *Encoder) WriteUint32(v uint32) {
	e.Align(4)
	if e.le {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
	} else {
		e.buf = binary.BigEndian.AppendUint32(e.buf, v)
	}
}

// WriteInt32 writes a 4-byte aligned int32.
func (e *Encoder) WriteInt32(v int32) { e.WriteUint32(uint32(v)) }

// WriteUint64 writes an 8-byte aligned uint64.
func (e *Encoder) WriteUint64(v uint64) {
	e.Align(8)
	if e.le {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	} else {
		e.buf = binary.BigEndian.AppendUint64(e.buf, v)
	}
}

// WriteInt64 writes an 8-byte aligned int64.
func (e *Encoder) WriteInt64(v int64) { e.WriteUint64(uint64(v)) }

// WriteFloat32 writes a 4-byte aligned IEEE 754 float32.
func (e *Encoder) WriteFloat32(v float32) { e.WriteUint32(math.Float32bits(v)) }

// WriteFloat64 writes an 8-byte aligned IEEE 754 float64.
func (e *Encoder) WriteFloat64(v float64) { e.WriteUint64(math.Float64bits(v)) }

// WriteString writes a string: uint32 length including the NUL, the bytes,
// then a NUL. The empty string is 01 00 00 00 00.
func (e *Encoder) WriteString(s string) {
	e.WriteUint32(uint32(len(s) + 1))
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, 0)
}

// WriteSequenceLen writes the uint32 element count that starts a sequence.
// The caller then writes the elements (each aligns itself, so an empty
// sequence adds no padding).
func (e *Encoder) WriteSequenceLen(n int) { e.WriteUint32(uint32(n)) }

// WriteOctets writes a sequence of octets (sequence<octet>, ROS byte[] or
// uint8[]): the count, then the bytes.
func (e *Encoder) WriteOctets(b []byte) {
	e.WriteUint32(uint32(len(b)))
	e.buf = append(e.buf, b...)
}

// WriteOctetArray writes a fixed-size octet array (no count).
func (e *Encoder) WriteOctetArray(b []byte) { e.buf = append(e.buf, b...) }
