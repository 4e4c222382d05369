package wire

// Scratch decodes the messages of a sample's path, a FRAME and the PUSH
// messages in it with their PUT bodies (timestamps and source info
// included), into structures it keeps and reuses instead of new ones per
// message, and keeps the PUSH key suffixes it read (up to maxKeys of them
// and maxKeyBytes in all) so that a key seen before is not a new string.
// A receiver that handles what it decodes before decoding more
// (session.Rx: its messages are valid only during the delivery)
// allocates nothing per sample; at 100 Hz after a 10 ms sleep each
// allocation is a string of cache misses on the way to the callback.
//
// What a Scratch's decoders return in it (the *Frame, each *Push and its
// *Put, *Timestamp and *SourceInfo) is valid until its next decode or
// Release; everything else they return (requests, responses and their
// bodies, declarations, DEL bodies, other transport messages) is new, as
// from the package's functions. A Scratch is not safe for concurrent
// use. The zero value is ready to use.
type Scratch struct {
	frame    Frame
	push     Push
	put      Put
	ts       [2]Timestamp // tsNet, tsBody
	src      SourceInfo
	keys     map[string]string // PUSH key suffixes read, each its own key
	keyBytes int               // their length in all
}

// The bounds of the key suffixes a Scratch keeps: past either it forgets
// them and keeps anew (a peer that sends ever new keys costs a string per
// key, as without a Scratch).
const (
	maxKeys     = 256
	maxKeyBytes = 64 << 10
)

// The timestamps a Scratch keeps: a PUSH's extension and its PUT's own.
const (
	tsNet = iota
	tsBody
)

// slot returns the Scratch's timestamp i (nil without a Scratch).
func (s *Scratch) slot(i int) *Timestamp {
	if s == nil {
		return nil
	}
	return &s.ts[i]
}

// sourceInfo returns the Scratch's source info (nil without a Scratch).
func (s *Scratch) sourceInfo() *SourceInfo {
	if s == nil {
		return nil
	}
	return &s.src
}

// Release drops what the messages decoded into s point to (the frame's
// payload, the PUT's payload, attachment, encoding schema and unknown
// extensions: the batch or a reassembly buffer), so that s does not keep
// them alive; the messages are invalid from then on. The keys stay.
func (s *Scratch) Release() {
	s.frame = Frame{}
	s.push = Push{}
	s.put = Put{}
}

// DecodeTransport is DecodeTransport into s.
func (s *Scratch) DecodeTransport(b []byte) (TransportMessage, int, error) {
	return decodeTransport(&reader{b: b, sc: s})
}

// DecodeFrame is DecodeFrame into s: each message is valid during f's
// call.
func (s *Scratch) DecodeFrame(payload []byte, f func(NetworkMessage) error) error {
	return decodeFrame(payload, s, f)
}

// keySuffix reads a PUSH key expression's suffix: with a Scratch, a
// suffix read before is that string again.
func (r *reader) keySuffix(sc *Scratch) string {
	if sc == nil {
		return r.stringZ(0xffff, "key suffix")
	}
	p := r.bytesZ(0xffff, "key suffix")
	if r.err != nil || len(p) == 0 {
		return ""
	}
	if s, ok := sc.keys[string(p)]; ok {
		return s // valid UTF-8: it was checked when it was read first
	}
	s := r.str(p, "key suffix")
	if r.err != nil {
		return s
	}
	if sc.keys == nil {
		sc.keys = make(map[string]string)
	}
	if len(sc.keys) >= maxKeys || sc.keyBytes+len(s) > maxKeyBytes {
		clear(sc.keys)
		sc.keyBytes = 0
	}
	sc.keys[s] = s // a suffix is at most 0xffff bytes: within the bound
	sc.keyBytes += len(s)
	return s
}

// Clone returns a deep copy of m: a handler keeps a message a Scratch
// decoded (or any received one, whose bytes alias the batch) this way.
func (m *Push) Clone() *Push {
	c := *m
	c.Timestamp = clonePtr(m.Timestamp)
	switch b := m.Body.(type) {
	case *Put:
		c.Body = b.Clone()
	case *Del:
		d := *b
		d.Timestamp, d.SourceInfo = clonePtr(b.Timestamp), clonePtr(b.SourceInfo)
		d.Attachment = cloneBytes(b.Attachment)
		d.Unknown = cloneExts(b.Unknown)
		c.Body = &d
	}
	return &c
}

// Clone returns a deep copy of p.
func (p *Put) Clone() *Put {
	c := *p
	c.Timestamp, c.SourceInfo = clonePtr(p.Timestamp), clonePtr(p.SourceInfo)
	c.Encoding.Schema = cloneBytes(p.Encoding.Schema)
	c.Attachment = cloneBytes(p.Attachment)
	c.Unknown = cloneExts(p.Unknown)
	c.Payload = cloneBytes(p.Payload)
	return &c
}

// clonePtr copies what p points to (nil stays nil); T holds no pointers.
func clonePtr[T Timestamp | SourceInfo](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneBytes copies b, keeping nil nil and empty empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func cloneExts(es []Ext) []Ext {
	if es == nil {
		return nil
	}
	c := make([]Ext, len(es))
	for i, e := range es {
		c[i] = Ext{ID: e.ID, Z64: e.Z64, Buf: cloneBytes(e.Buf)}
	}
	return c
}
