package wire

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Errors returned (wrapped) by the decoders.
var (
	// ErrMalformed: the bytes do not follow the wire format.
	ErrMalformed = errors.New("zenoh wire: malformed")
	// ErrTruncated: the input ended inside a message.
	ErrTruncated = errors.New("zenoh wire: truncated")
	// ErrMandatoryExtension: an extension with the M flag that this
	// implementation does not know.
	ErrMandatoryExtension = errors.New("zenoh wire: unknown mandatory extension")
	// ErrSharedMemory: a shared-memory extension that changes the payload
	// layout; nros does not speak zenoh shared memory.
	ErrSharedMemory = errors.New("zenoh wire: shared memory not supported")
	// ErrUnknownMessage: a message id that is not defined.
	ErrUnknownMessage = errors.New("zenoh wire: unknown message id")
)

// MaxZintLen is the longest encoding of a zint (a u64 takes 9 bytes: eight
// 7-bit groups and a last full byte).
const MaxZintLen = 9

// AppendZint appends v as a zenoh variable-length integer (LEB128, except
// that the ninth byte, if reached, holds 8 bits).
func AppendZint(b []byte, v uint64) []byte {
	for i := 0; i < MaxZintLen-1; i++ {
		if v&^0x7f == 0 {
			return append(b, byte(v))
		}
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// ZintLen is the number of bytes AppendZint writes for v.
func ZintLen(v uint64) int {
	n := 1
	for v&^0x7f != 0 && n < MaxZintLen {
		v >>= 7
		n++
	}
	return n
}

// DecodeZint reads a zint at the start of b and returns it with the number
// of bytes it took.
func DecodeZint(b []byte) (uint64, int, error) {
	r := reader{b: b}
	v := r.zint()
	return v, r.i, r.err
}

func appendBytes(b, v []byte) []byte {
	b = AppendZint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, s string) []byte {
	b = AppendZint(b, uint64(len(s)))
	return append(b, s...)
}

// reader walks a buffer with a sticky error: after the first failure every
// read returns a zero value and the error stays.
type reader struct {
	b   []byte
	i   int
	err error
	sc  *Scratch // messages to decode into (nil: new ones)
}

func (r *reader) fail(base error, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{base}, args...)...)
	}
}

func (r *reader) left() int    { return len(r.b) - r.i }
func (r *reader) rest() []byte { return r.b[r.i:] }

func (r *reader) u8(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.i >= len(r.b) {
		r.fail(ErrTruncated, "%s", what)
		return 0
	}
	v := r.b[r.i]
	r.i++
	return v
}

func (r *reader) u16le(what string) uint16 {
	p := r.take(2, what)
	if p == nil {
		return 0
	}
	return uint16(p[0]) | uint16(p[1])<<8
}

// take returns the next n bytes (aliasing the input), or nil after an error.
func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.left() {
		r.fail(ErrTruncated, "%s: %d bytes wanted, %d left", what, n, r.left())
		return nil
	}
	p := r.b[r.i : r.i+n : r.i+n]
	r.i += n
	return p
}

func (r *reader) zint() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	shift := uint(0)
	for k := 0; ; k++ {
		if r.i >= len(r.b) {
			r.fail(ErrTruncated, "zint")
			return 0
		}
		c := r.b[r.i]
		r.i++
		if k == MaxZintLen-1 {
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
		shift += 7
	}
}

func (r *reader) zintMax(max uint64, what string) uint64 {
	v := r.zint()
	if r.err == nil && v > max {
		r.fail(ErrMalformed, "%s %d exceeds %d", what, v, max)
		return 0
	}
	return v
}

func (r *reader) z16(what string) uint16 { return uint16(r.zintMax(0xffff, what)) }
func (r *reader) z32(what string) uint32 { return uint32(r.zintMax(0xffffffff, what)) }

// bytesZ reads <u8;zint> with the length bounded by max.
func (r *reader) bytesZ(max uint64, what string) []byte {
	n := r.zint()
	if r.err != nil {
		return nil
	}
	if n > max { // the message of zintMax, without building "what length" per call
		r.fail(ErrMalformed, "%s length %d exceeds %d", what, n, max)
		return nil
	}
	if n > uint64(r.left()) {
		r.fail(ErrTruncated, "%s: %d bytes announced, %d left", what, n, r.left())
		return nil
	}
	return r.take(int(n), what)
}

// stringZ reads a UTF-8 <u8;zint> string bounded by max.
func (r *reader) stringZ(max uint64, what string) string {
	return r.str(r.bytesZ(max, what), what)
}

// str is p as a string, once checked to be UTF-8 ("" after an error).
func (r *reader) str(p []byte, what string) string {
	if r.err != nil {
		return ""
	}
	if !utf8.Valid(p) {
		r.fail(ErrMalformed, "%s is not UTF-8", what)
		return ""
	}
	return string(p)
}
