// Package cdr encodes and decodes XCDR1 plain CDR, the serialization ROS 2
// puts in every DDS sample (both rmw_cyclonedds and rmw_fastrtps).
//
// A serialized sample starts with a 4-byte encapsulation header
// (00 01 00 00 for little endian, 00 00 00 00 for big endian) followed by
// the body. Every primitive is aligned to its own size (1, 2, 4 or 8 bytes;
// 64-bit values align to 8 in XCDR1) relative to the first byte after the
// header. Strings are a uint32 length that counts the terminating NUL, the
// bytes, then the NUL. Sequences are a uint32 element count followed by the
// elements; fixed arrays are the elements alone.
//
// An Encoder appends to a caller-owned buffer and allocates nothing once the
// buffer is large enough. A Decoder keeps the first error it meets ("sticky"):
// later reads return zero values, so generated code can read a whole message
// and check Err once. A Decoder never panics and never allocates more than
// the remaining input can justify.
package cdr

import (
	"errors"
	"fmt"
)

// HeaderSize is the size of the encapsulation header that precedes every
// serialized sample.
const HeaderSize = 4

// Representation identifiers (the first two bytes of the encapsulation
// header, big-endian on the wire).
const (
	KindCDRBE    uint16 = 0x0000 // plain CDR (XCDR1), big endian
	KindCDRLE    uint16 = 0x0001 // plain CDR (XCDR1), little endian
	KindPLCDRBE  uint16 = 0x0002 // parameter-list CDR (discovery), big endian
	KindPLCDRLE  uint16 = 0x0003 // parameter-list CDR (discovery), little endian
	KindCDR2BE   uint16 = 0x0006 // XCDR2 plain, big endian
	KindCDR2LE   uint16 = 0x0007 // XCDR2 plain, little endian
	KindDCDR2BE  uint16 = 0x0008 // XCDR2 delimited, big endian
	KindDCDR2LE  uint16 = 0x0009 // XCDR2 delimited, little endian
	KindPLCDR2BE uint16 = 0x000a // XCDR2 parameter list, big endian
	KindPLCDR2LE uint16 = 0x000b // XCDR2 parameter list, little endian
)

// Header returns the encapsulation header for plain XCDR1 in the given byte
// order, with options 00 00.
func Header(littleEndian bool) [HeaderSize]byte {
	if littleEndian {
		return [HeaderSize]byte{0x00, 0x01, 0x00, 0x00}
	}
	return [HeaderSize]byte{0x00, 0x00, 0x00, 0x00}
}

// KindName returns a readable name for a representation identifier.
func KindName(kind uint16) string {
	switch kind {
	case KindCDRBE:
		return "CDR_BE"
	case KindCDRLE:
		return "CDR_LE"
	case KindPLCDRBE:
		return "PL_CDR_BE"
	case KindPLCDRLE:
		return "PL_CDR_LE"
	case KindCDR2BE:
		return "CDR2_BE"
	case KindCDR2LE:
		return "CDR2_LE"
	case KindDCDR2BE:
		return "D_CDR2_BE"
	case KindDCDR2LE:
		return "D_CDR2_LE"
	case KindPLCDR2BE:
		return "PL_CDR2_BE"
	case KindPLCDR2LE:
		return "PL_CDR2_LE"
	}
	return fmt.Sprintf("0x%04x", kind)
}

// ParseHeader checks a 4-byte encapsulation header and reports whether the
// body is little endian. Only plain XCDR1 (CDR_LE, CDR_BE) is accepted; the
// two options bytes are ignored.
func ParseHeader(data []byte) (littleEndian bool, err error) {
	if len(data) < HeaderSize {
		return false, &Error{Err: ErrBadHeader, Offset: 0, What: "encapsulation header",
			Detail: fmt.Sprintf("need %d bytes, have %d", HeaderSize, len(data))}
	}
	kind := uint16(data[0])<<8 | uint16(data[1])
	switch kind {
	case KindCDRLE:
		return true, nil
	case KindCDRBE:
		return false, nil
	}
	return false, &Error{Err: ErrUnsupportedEncoding, Offset: 0, What: "encapsulation header",
		Detail: fmt.Sprintf("representation %s (% x); only plain XCDR1 CDR_LE/CDR_BE is supported", KindName(kind), data[:2])}
}

// Sentinel errors; every error a Decoder reports wraps one of these (test
// with errors.Is).
var (
	// ErrTruncated: the input ended in the middle of a value.
	ErrTruncated = errors.New("truncated")
	// ErrInvalidBool: a bool byte other than 0 or 1.
	ErrInvalidBool = errors.New("invalid bool")
	// ErrBadHeader: the encapsulation header is missing or short.
	ErrBadHeader = errors.New("bad encapsulation header")
	// ErrUnsupportedEncoding: the header names PL_CDR, XCDR2 or an unknown kind.
	ErrUnsupportedEncoding = errors.New("unsupported encapsulation")
	// ErrTooLong: a sequence count or string length is larger than the
	// remaining input could hold, or exceeds a declared bound.
	ErrTooLong = errors.New("length exceeds input or bound")
	// ErrString: a string is not NUL-terminated.
	ErrString = errors.New("malformed string")
	// ErrInvalid: a value read correctly but rejected by the message type
	// (see Decoder.Fail).
	ErrInvalid = errors.New("invalid value")
)

// Error describes a decoding failure: what was being read, at which byte
// offset (counted from the start of the decoder's input, header included),
// and why.
type Error struct {
	Err    error  // one of the sentinel errors
	Offset int    // byte offset in the input where the failed read started
	What   string // the value being read, e.g. "uint32", "string length"
	Detail string // optional extra explanation
}

// Error renders e.g. "cdr: truncated reading uint32 at offset 12".
func (e *Error) Error() string {
	s := fmt.Sprintf("cdr: %v reading %s at offset %d", e.Err, e.What, e.Offset)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }
