package ros

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Attachment is what rmw_zenoh attaches to every sample, query and reply:
// a sequence number, a source timestamp and a gid.
//
//   - On a sample: the publisher's sequence number (from 1), the time of
//     the put (CLOCK_REALTIME ns) and the publisher's gid.
//   - On a query (a service request): the client's sequence number (from
//     1), the time of the request and the client's gid. Sequence number and
//     gid are the request id.
//   - On a reply: the request's sequence number and the request's (the
//     client's) gid, with the time of the reply.
type Attachment struct {
	Seq       int64
	Timestamp int64 // ns since the UNIX epoch
	GID       [16]byte
}

// AttachmentSize is the size of an attachment in the current layout.
const AttachmentSize = 8 + 8 + 1 + 16

// AttachmentLayout is one of the two layouts rmw_zenoh releases have used.
type AttachmentLayout uint8

const (
	// LayoutCurrent is the zenoh-ext serialization of (int64, int64,
	// [16]uint8): 8 bytes LE, 8 bytes LE, LEB128 length 16, 16 bytes; 33
	// bytes. Every release from Humble 0.1.2, Jazzy 0.2.4 and Kilted
	// 0.6.0 on (Rolling after 0.5.0).
	LayoutCurrent AttachmentLayout = iota
	// LayoutKeyed prefixes each value with its name as a zenoh-ext string
	// ("sequence_number", "source_timestamp", "source_gid"); 77 bytes.
	// Humble 0.1.0-0.1.1, Jazzy 0.2.0-0.2.3 and Rolling 0.3.0-0.5.0 sent
	// it, and their readers require it.
	LayoutKeyed
)

var (
	keySeq = "sequence_number"
	keyTS  = "source_timestamp"
	keyGID = "source_gid"
)

// Append appends the attachment in the current layout.
func (a Attachment) Append(dst []byte) []byte { return a.AppendLayout(dst, LayoutCurrent) }

// Bytes returns the attachment in the current layout (33 bytes).
func (a Attachment) Bytes() []byte { return a.Append(make([]byte, 0, AttachmentSize)) }

// AppendLayout appends the attachment in layout l.
func (a Attachment) AppendLayout(dst []byte, l AttachmentLayout) []byte {
	str := func(s string) {
		if l == LayoutKeyed {
			dst = append(dst, byte(len(s)))
			dst = append(dst, s...)
		}
	}
	str(keySeq)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Seq))
	str(keyTS)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Timestamp))
	str(keyGID)
	dst = append(dst, 16)
	return append(dst, a.GID[:]...)
}

// ErrAttachment is wrapped by every error of ParseAttachment.
var ErrAttachment = errors.New("ros: bad attachment")

// ParseAttachment decodes an attachment in either layout (told apart by
// the keyed layout's leading "sequence_number" string). It reads what
// zenoh-ext's deserializer reads: lengths are LEB128 (a non-minimal
// encoding is accepted), the gid's length must be 16; bytes after the gid
// are ignored, as rmw_zenoh ignores them.
func ParseAttachment(b []byte) (Attachment, AttachmentLayout, error) {
	var a Attachment
	l := LayoutCurrent
	r := attReader{b: b}
	if len(b) > len(keySeq) && b[0] == byte(len(keySeq)) && string(b[1:1+len(keySeq)]) == keySeq {
		l = LayoutKeyed
	}
	if l == LayoutKeyed {
		r.key(keySeq)
	}
	a.Seq = r.i64("sequence number")
	if l == LayoutKeyed {
		r.key(keyTS)
	}
	a.Timestamp = r.i64("source timestamp")
	if l == LayoutKeyed {
		r.key(keyGID)
	}
	if n := r.varint("gid length"); r.err == nil && n != 16 {
		r.err = fmt.Errorf("%w: gid length %d, want 16", ErrAttachment, n)
	}
	if r.err == nil {
		if len(r.b) < 16 {
			r.err = fmt.Errorf("%w: gid truncated (%d of 16 bytes)", ErrAttachment, len(r.b))
		} else {
			copy(a.GID[:], r.b)
		}
	}
	if r.err != nil {
		return Attachment{}, l, r.err
	}
	return a, l, nil
}

type attReader struct {
	b   []byte
	err error
}

func (r *attReader) i64(what string) int64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = fmt.Errorf("%w: %s truncated (%d of 8 bytes)", ErrAttachment, what, len(r.b))
		return 0
	}
	v := int64(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// varint reads an unsigned LEB128 value of at most 64 bits.
func (r *attReader) varint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for i := 0; ; i++ {
		if i >= len(r.b) {
			r.err = fmt.Errorf("%w: %s truncated", ErrAttachment, what)
			return 0
		}
		c := r.b[i]
		if i == 9 && c > 1 || i > 9 {
			r.err = fmt.Errorf("%w: %s overflows 64 bits", ErrAttachment, what)
			return 0
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return v
		}
	}
}

func (r *attReader) key(want string) {
	n := r.varint("key length")
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: key %q truncated", ErrAttachment, want)
		return
	}
	if string(r.b[:n]) != want {
		r.err = fmt.Errorf("%w: key %q not found", ErrAttachment, want)
		return
	}
	r.b = r.b[n:]
}

// RequestID identifies a service request as rmw_zenoh carries it: the
// client's sequence number and gid from the query's attachment (rmw's
// rmw_request_id_t: writer_guid and sequence_number).
type RequestID struct {
	Seq int64
	GID [16]byte
}

// RequestID returns the request id an attachment carries.
func (a Attachment) RequestID() RequestID { return RequestID{Seq: a.Seq, GID: a.GID} }

// ReplyAttachment returns the attachment of the reply to request id with
// the reply's time: the request's sequence number and the client's gid,
// as rmw_zenoh's rmw_send_response sends them.
func ReplyAttachment(id RequestID, now int64) Attachment {
	return Attachment{Seq: id.Seq, Timestamp: now, GID: id.GID}
}
