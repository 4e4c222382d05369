package wire

// Scratch decodes the messages of a sample's path, FRAME, PUSH and PUT
// (with their timestamps), into structures it keeps and reuses, instead
// of new ones per message, and keeps the key suffixes it read (up to
// maxKeys) so that a key seen before is not a new string. A receiver that handles what it
// decodes before decoding more (session.Rx: its messages are valid only
// during the delivery) allocates nothing per sample; at 100 Hz after a
// 10 ms sleep each allocation is a string of cache misses on the way to
// the callback.
//
// The messages a Scratch's decoders return, and what they point to in it,
// are valid until its next decode; anything else they return (requests,
// declarations, other transport messages) is new, as from the package's
// functions. A Scratch is not safe for concurrent use. The zero value is
// ready to use.
type Scratch struct {
	frame Frame
	push  Push
	put   Put
	ts    [2]Timestamp      // tsNet, tsBody
	keys  map[string]string // key suffixes read, each its own key
}

// maxKeys bounds the key suffixes a Scratch keeps: past it they are
// forgotten and kept anew (a peer that sends ever new keys costs a string
// per key, as without a Scratch).
const maxKeys = 256

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

// DecodeTransport is DecodeTransport into s.
func (s *Scratch) DecodeTransport(b []byte) (TransportMessage, int, error) {
	return decodeTransport(&reader{b: b, sc: s})
}

// DecodeFrame is DecodeFrame into s: each message is valid during f's
// call.
func (s *Scratch) DecodeFrame(payload []byte, f func(NetworkMessage) error) error {
	for len(payload) > 0 {
		m, n, err := decodeNetwork(&reader{b: payload, sc: s})
		if err != nil {
			return err
		}
		if err := f(m); err != nil {
			return err
		}
		payload = payload[n:]
	}
	return nil
}

// keySuffix reads a key expression's suffix: with a Scratch, a suffix
// read before is that string again.
func (r *reader) keySuffix() string {
	if r.sc == nil {
		return r.stringZ(0xffff, "key suffix")
	}
	p := r.bytesZ(0xffff, "key suffix")
	if r.err != nil || len(p) == 0 {
		return ""
	}
	if s, ok := r.sc.keys[string(p)]; ok {
		return s // valid UTF-8: it was checked when it was read first
	}
	s := r.str(p, "key suffix")
	if r.err == nil {
		if r.sc.keys == nil || len(r.sc.keys) >= maxKeys {
			r.sc.keys = make(map[string]string)
		}
		r.sc.keys[s] = s
	}
	return s
}
