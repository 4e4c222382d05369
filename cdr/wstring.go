package cdr

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// WriteWString writes a ROS wstring the way rmw_cyclonedds and Fast CDR 1.x
// do: a uint32 count of UTF-16 code units (no terminator), then each unit
// as a 4-byte aligned uint32 (the 4-byte wchar_t of Linux).
func (e *Encoder) WriteWString(s string) {
	e.WriteUint32(uint32(WStringLen(s)))
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			e.WriteUint32(uint32(r1))
			e.WriteUint32(uint32(r2))
		} else {
			e.WriteUint32(uint32(r))
		}
	}
}

// WStringLen returns the length of s in UTF-16 code units, the unit of a
// wstring's count and bound.
func WStringLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ReadWString reads a wstring written by WriteWString; max >= 0 bounds
// the number of UTF-16 code units. Unpaired surrogates and code units
// above 0xFFFF are decoded as U+FFFD.
func (d *Decoder) ReadWString(max int) string {
	if d.err != nil {
		return ""
	}
	start := d.pos
	n := d.read4("wstring length")
	if d.err != nil {
		return ""
	}
	if uint64(n) > uint64(d.Remaining()/4) {
		d.fail(ErrTooLong, start, "wstring", fmt.Sprintf("length %d but only %d bytes remain", n, d.Remaining()))
		return ""
	}
	if max >= 0 && uint64(n) > uint64(max) {
		d.fail(ErrTooLong, start, "wstring", fmt.Sprintf("length %d exceeds bound %d", n, max))
		return ""
	}
	if n == 0 {
		return ""
	}
	b := make([]byte, 0, n)
	for i := uint32(0); i < n; i++ {
		u := d.read4("wstring unit")
		r := rune(u)
		switch {
		case u > 0xFFFF:
			r = utf8.RuneError
		case utf16.IsSurrogate(r):
			r = utf8.RuneError
			if u < 0xDC00 && i+1 < n {
				saved := *d
				u2 := d.read4("wstring unit")
				if r2 := utf16.DecodeRune(rune(u), rune(u2)); r2 != utf8.RuneError {
					r = r2
					i++
				} else {
					*d = saved
				}
			}
		}
		b = utf8.AppendRune(b, r)
	}
	if d.err != nil {
		return ""
	}
	return string(b)
}
