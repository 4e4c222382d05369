package wire

import "fmt"

// Extension header bits.
const (
	ExtFlagZ   = 0x80 // another extension follows
	ExtEncMask = 0x60
	ExtEncUnit = 0x00
	ExtEncZ64  = 0x20
	ExtEncZBuf = 0x40
	ExtFlagM   = 0x10 // mandatory: a receiver that does not know it must fail
	ExtIDMask  = 0x0f
)

// Ext is an extension kept as it came (an unknown optional one that zenoh
// forwards). ID is the header without the Z flag: id, M flag and encoding.
type Ext struct {
	ID  uint8
	Z64 uint64 // ENC z64
	Buf []byte // ENC zbuf
}

// Mandatory reports the M flag.
func (e Ext) Mandatory() bool { return e.ID&ExtFlagM != 0 }

// Enc is the encoding bits (ExtEncUnit, ExtEncZ64 or ExtEncZBuf).
func (e Ext) Enc() uint8 { return e.ID & ExtEncMask }

func appendExt(b []byte, e *Ext, more bool) []byte {
	h := e.ID &^ ExtFlagZ
	if more {
		h |= ExtFlagZ
	}
	b = append(b, h)
	switch h & ExtEncMask {
	case ExtEncZ64:
		b = AppendZint(b, e.Z64)
	case ExtEncZBuf:
		b = appendBytes(b, e.Buf)
	}
	return b
}

// extHeader writes an extension header byte with the Z flag when more.
func extHeader(b []byte, id uint8, more bool) []byte {
	if more {
		id |= ExtFlagZ
	}
	return append(b, id)
}

// readExtBody reads the body of the extension whose header h was just
// read.
func (r *reader) readExtBody(h byte) Ext {
	e := Ext{ID: h &^ ExtFlagZ}
	switch h & ExtEncMask {
	case ExtEncUnit:
	case ExtEncZ64:
		e.Z64 = r.zint()
	case ExtEncZBuf:
		e.Buf = r.bytesZ(0xffffffff, "extension body")
	default:
		r.fail(ErrMalformed, "extension 0x%02x: reserved encoding", h)
	}
	return e
}

// unknownExt handles an extension the message does not know: a mandatory
// one is an error, an optional one is returned to be kept or dropped.
func (r *reader) unknownExt(h byte, msg string) Ext {
	e := r.readExtBody(h)
	if r.err == nil && e.Mandatory() {
		r.fail(ErrMandatoryExtension, "%s extension 0x%02x", msg, h&^ExtFlagZ)
	}
	return e
}

// expectEnc checks that the extension h has the encoding its id implies.
func (r *reader) expectEnc(h byte, enc uint8, msg string) bool {
	if h&ExtEncMask != enc {
		r.fail(ErrMalformed, "%s extension 0x%02x: wrong encoding", msg, h)
		return false
	}
	return r.err == nil
}

// extZBuf reads a zbuf extension body (after its header) and returns a
// reader over it.
func (r *reader) extZBuf(what string) reader {
	p := r.bytesZ(0xffffffff, what)
	if r.err != nil {
		return reader{err: r.err}
	}
	return reader{b: p}
}

// exts iterates over the extensions that follow when the Z flag of the
// message is set, calling f with each header. f reads the body.
func (r *reader) exts(has bool, f func(h byte)) {
	for more := has; more && r.err == nil; {
		h := r.u8("extension header")
		if r.err != nil {
			return
		}
		more = h&ExtFlagZ != 0
		f(h)
	}
}

func (r *reader) skipExts(has bool, msg string) {
	r.exts(has, func(h byte) { r.unknownExt(h, msg) })
}

// extWriter counts down extensions to set the Z flag on all but the last.
type extWriter struct{ n int }

func (w *extWriter) more() bool { w.n--; return w.n > 0 }

// String implements fmt.Stringer.
func (e Ext) String() string {
	switch e.Enc() {
	case ExtEncZ64:
		return fmt.Sprintf("ext(0x%02x z64 %d)", e.ID, e.Z64)
	case ExtEncZBuf:
		return fmt.Sprintf("ext(0x%02x zbuf %d bytes)", e.ID, len(e.Buf))
	}
	return fmt.Sprintf("ext(0x%02x unit)", e.ID)
}
