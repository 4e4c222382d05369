package wire

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// Version is the zenoh protocol version of zenoh 1.x and zenoh-pico 1.x.
const Version = 0x09

// ZenohID is the id of a zenoh session: 1 to 16 bytes on the wire, the
// little-endian bytes of a non-zero unsigned 128-bit integer without its
// high zero bytes. The zero value is "no id". ZenohID is comparable.
type ZenohID struct {
	b [16]byte
	n uint8
}

// NewZenohID makes an id from its little-endian wire bytes (1..16 bytes,
// not all zero). High zero bytes are dropped, as zenoh does.
func NewZenohID(b []byte) (ZenohID, error) {
	var z ZenohID
	if len(b) < 1 || len(b) > 16 {
		return z, fmt.Errorf("%w: zenoh id of %d bytes (1..16)", ErrMalformed, len(b))
	}
	copy(z.b[:], b)
	z.n = 16
	for z.n > 0 && z.b[z.n-1] == 0 {
		z.n--
	}
	if z.n == 0 {
		return ZenohID{}, fmt.Errorf("%w: zenoh id is zero", ErrMalformed)
	}
	return z, nil
}

// RandomZenohID makes a random 16-byte id (its high byte is not zero, so
// it always takes 16 bytes on the wire, like zenoh's).
func RandomZenohID() ZenohID {
	var z ZenohID
	_, _ = rand.Read(z.b[:])
	if z.b[15] == 0 {
		z.b[15] = 1
	}
	z.n = 16
	return z
}

// ParseZenohID parses the canonical string form (String).
func ParseZenohID(s string) (ZenohID, error) {
	if len(s) == 0 || len(s) > 32 || strings.ToLower(s) != s {
		return ZenohID{}, fmt.Errorf("%w: zenoh id %q", ErrMalformed, s)
	}
	if len(s)%2 == 1 {
		s = "0" + s
	}
	be, err := hex.DecodeString(s)
	if err != nil {
		return ZenohID{}, fmt.Errorf("%w: zenoh id %q", ErrMalformed, s)
	}
	le := make([]byte, len(be))
	for i := range be {
		le[i] = be[len(be)-1-i]
	}
	return NewZenohID(le)
}

// IsZero reports whether z is the zero value (no id).
func (z ZenohID) IsZero() bool { return z.n == 0 }

// Len is the number of bytes z takes on the wire.
func (z ZenohID) Len() int { return int(z.n) }

// Bytes returns the wire bytes (little endian).
func (z ZenohID) Bytes() []byte { return append([]byte(nil), z.b[:z.n]...) }

// String is zenoh's canonical form: the id as an unsigned 128-bit integer
// in lowercase hexadecimal without leading zeros (zenoh::Id::to_string).
func (z ZenohID) String() string {
	if z.n == 0 {
		return "0"
	}
	var sb strings.Builder
	i := int(z.n) - 1
	fmt.Fprintf(&sb, "%x", z.b[i])
	for i--; i >= 0; i-- {
		fmt.Fprintf(&sb, "%02x", z.b[i])
	}
	return sb.String()
}

func (r *reader) zid(n int, what string) ZenohID {
	p := r.take(n, what)
	if r.err != nil {
		return ZenohID{}
	}
	z, err := NewZenohID(p)
	if err != nil {
		r.fail(ErrMalformed, "%s: %v", what, err)
	}
	return z
}

// WhatAmI is the role of a zenoh node; the values are zenoh's bit mask.
type WhatAmI uint8

// The roles.
const (
	Router WhatAmI = 1
	Peer   WhatAmI = 2
	Client WhatAmI = 4
)

// String implements fmt.Stringer.
func (w WhatAmI) String() string {
	switch w {
	case Router:
		return "router"
	case Peer:
		return "peer"
	case Client:
		return "client"
	}
	return fmt.Sprintf("whatami(%d)", uint8(w))
}

// code is the 2-bit wire value: router 0, peer 1, client 2.
func (w WhatAmI) code() (byte, error) {
	switch w {
	case Router:
		return 0, nil
	case Peer:
		return 1, nil
	case Client:
		return 2, nil
	}
	return 0, fmt.Errorf("%w: whatami %d", ErrMalformed, uint8(w))
}

func whatAmIFromCode(c byte) (WhatAmI, bool) {
	switch c & 3 {
	case 0:
		return Router, true
	case 1:
		return Peer, true
	case 2:
		return Client, true
	}
	return 0, false
}

// Bits is a sequence number or id resolution (2-bit wire value).
type Bits uint8

// The resolutions.
const (
	Bits8  Bits = 0
	Bits16 Bits = 1
	Bits32 Bits = 2
	Bits64 Bits = 3
)

// SNMask is the largest sequence number of a resolution as zenoh uses it:
// it keeps the encoded zint within 1, 2, 4 or 9 bytes (7, 14, 28 or 63
// bits).
func (b Bits) SNMask() uint64 {
	switch b & 3 {
	case Bits8:
		return 0xff >> 1
	case Bits16:
		return 0xffff >> 2
	case Bits32:
		return 0xffffffff >> 4
	}
	return ^uint64(0) >> 1
}

// Resolution packs the frame sequence number resolution (bits 0-1) and
// the request id resolution (bits 2-3). zenoh-pico also sends a key id
// resolution in bits 4-5, which is kept and ignored.
type Resolution uint8

// DefaultResolution is 32-bit frame sequence numbers and request ids.
const DefaultResolution Resolution = Resolution(Bits32) | Resolution(Bits32)<<2

// FrameSN is the frame sequence number resolution.
func (r Resolution) FrameSN() Bits { return Bits(r & 3) }

// RequestID is the request id resolution.
func (r Resolution) RequestID() Bits { return Bits(r>>2) & 3 }

// With returns r with the frame SN and request id resolutions replaced.
func (r Resolution) With(frameSN, requestID Bits) Resolution {
	return r&^0x0f | Resolution(frameSN&3) | Resolution(requestID&3)<<2
}

// Priority is a zenoh priority class, 0 (Control) highest to 7
// (Background) lowest.
type Priority uint8

// The priorities.
const (
	PriorityControl         Priority = 0
	PriorityRealTime        Priority = 1
	PriorityInteractiveHigh Priority = 2
	PriorityInteractiveLow  Priority = 3
	PriorityDataHigh        Priority = 4
	PriorityData            Priority = 5
	PriorityDataLow         Priority = 6
	PriorityBackground      Priority = 7
	// NumPriorities is the number of priority classes.
	NumPriorities = 8
)

// CongestionControl says what a full transmission queue does to a
// message.
type CongestionControl uint8

// The congestion control modes.
const (
	Drop       CongestionControl = 0
	Block      CongestionControl = 1
	BlockFirst CongestionControl = 2
)

// QoS is the network-message QoS extension byte (|0|r|F|E|D|prio|). The
// zero value is zenoh's default: priority Data, congestion control Drop,
// not express. (It is stored relative to that default so that the zero
// value means it.)
type QoS struct{ x uint8 }

const (
	qosDefault = 5
	qosD       = 0x08
	qosE       = 0x10
	qosF       = 0x20
)

// MakeQoS builds a QoS.
func MakeQoS(p Priority, cc CongestionControl, express bool) QoS {
	v := uint8(p & 7)
	switch cc {
	case Block:
		v |= qosD
	case BlockFirst:
		v |= qosF
	}
	if express {
		v |= qosE
	}
	return QoSFromByte(v)
}

// QoSFromByte wraps a raw extension value.
func QoSFromByte(v uint8) QoS { return QoS{v ^ qosDefault} }

// Byte is the raw extension value.
func (q QoS) Byte() uint8 { return q.x ^ qosDefault }

// IsDefault reports whether q is zenoh's default (it is then not sent).
func (q QoS) IsDefault() bool { return q.x == 0 }

// Priority is the priority class.
func (q QoS) Priority() Priority { return Priority(q.Byte() & 7) }

// CongestionControl is Block when D is set, BlockFirst when only F is set,
// Drop otherwise.
func (q QoS) CongestionControl() CongestionControl {
	v := q.Byte()
	switch {
	case v&qosD != 0:
		return Block
	case v&qosF != 0:
		return BlockFirst
	}
	return Drop
}

// Express reports the E flag (do not batch).
func (q QoS) Express() bool { return q.Byte()&qosE != 0 }

// QoS values zenoh uses by default for each kind of network message.
var (
	QoSDeclare  = MakeQoS(PriorityControl, Block, false)
	QoSPush     = MakeQoS(PriorityData, Drop, false)
	QoSRequest  = MakeQoS(PriorityData, Block, false)
	QoSResponse = MakeQoS(PriorityData, Block, false)
	QoSOAM      = MakeQoS(PriorityControl, Block, false)
)

// Timestamp is a zenoh (uhlc) timestamp: a 64-bit NTP time (32.32 fixed
// point seconds since 1900) and the id of the clock that made it.
type Timestamp struct {
	Time uint64
	ID   ZenohID
}

func appendTimestamp(b []byte, t *Timestamp) []byte {
	b = AppendZint(b, t.Time)
	b = AppendZint(b, uint64(t.ID.n))
	return append(b, t.ID.b[:t.ID.n]...)
}

func timestampLen(t *Timestamp) int {
	return ZintLen(t.Time) + ZintLen(uint64(t.ID.n)) + int(t.ID.n)
}

// timestamp reads a timestamp into dst (nil: a new one).
func (r *reader) timestamp(dst *Timestamp) *Timestamp {
	t := dst
	if dst == nil {
		t = new(Timestamp)
	}
	*t = Timestamp{Time: r.zint()}
	n := r.zintMax(16, "timestamp id length")
	t.ID = r.zid(int(n), "timestamp id")
	if r.err != nil {
		return nil
	}
	return t
}

// Encoding is a zenoh encoding: a numeric id (zenoh's predefined table)
// and an optional schema. The zero value is the empty encoding, which is
// not sent.
type Encoding struct {
	ID uint16
	// Schema, when non-nil, is sent (even if empty).
	Schema []byte
}

// IsEmpty reports whether e is the empty encoding (id 0, no schema).
func (e Encoding) IsEmpty() bool { return e.ID == 0 && e.Schema == nil }

func appendEncoding(b []byte, e *Encoding) []byte {
	id := uint64(e.ID) << 1
	if e.Schema != nil {
		id |= 1
	}
	b = AppendZint(b, id)
	if e.Schema != nil {
		b = appendBytes(b, e.Schema)
	}
	return b
}

func encodingLen(e *Encoding) int {
	id := uint64(e.ID) << 1
	n := ZintLen(id)
	if e.Schema != nil {
		n += ZintLen(uint64(len(e.Schema))) + len(e.Schema)
	}
	return n
}

func (r *reader) encoding() Encoding {
	id := r.z32("encoding id")
	var e Encoding
	if id>>1 > 0xffff {
		r.fail(ErrMalformed, "encoding id %d", id>>1)
		return e
	}
	e.ID = uint16(id >> 1)
	if id&1 != 0 {
		e.Schema = r.bytesZ(0xff, "encoding schema")
		if e.Schema == nil && r.err == nil {
			e.Schema = []byte{}
		}
	}
	return e
}

// WireExpr is a key expression on the wire: a scope (0, or the id of a key
// expression declared before) and a suffix appended to it. SenderMapping
// says whose declarations the scope refers to: the sender's (true, flag M)
// or the receiver's.
type WireExpr struct {
	Scope         uint16
	Suffix        string
	SenderMapping bool
}

// HasSuffix reports whether the suffix is sent (flag N).
func (w WireExpr) HasSuffix() bool { return w.Suffix != "" }

// String implements fmt.Stringer.
func (w WireExpr) String() string {
	if w.Scope == 0 {
		return w.Suffix
	}
	m := "r"
	if w.SenderMapping {
		m = "s"
	}
	return fmt.Sprintf("[%d%s]%s", w.Scope, m, w.Suffix)
}

func appendWireExpr(b []byte, w *WireExpr) []byte {
	b = AppendZint(b, uint64(w.Scope))
	if w.HasSuffix() {
		b = appendString(b, w.Suffix)
	}
	return b
}

func (r *reader) wireExpr(named, sender bool) WireExpr { return r.wireExprKeys(named, sender, nil) }

// wireExprKeys is wireExpr with the suffix kept in sc's keys (nil: a new
// string).
func (r *reader) wireExprKeys(named, sender bool, sc *Scratch) WireExpr {
	w := WireExpr{Scope: r.z16("key scope"), SenderMapping: sender}
	if named {
		w.Suffix = r.keySuffix(sc)
	}
	return w
}

// EntityGlobalID names an entity (publisher, queryable, ...) of a session.
type EntityGlobalID struct {
	ZID ZenohID
	EID uint32
}

// SourceInfo is the source-info extension of PUT, DEL, QUERY and ERR.
type SourceInfo struct {
	ID EntityGlobalID
	SN uint32
}

func appendEntityGlobalID(b []byte, id *EntityGlobalID) []byte {
	n := id.ZID.n
	if n == 0 {
		n = 1 // an absent id goes out as one zero byte; it will not decode
	}
	b = append(b, (n-1)<<4)
	b = append(b, id.ZID.b[:n]...)
	return AppendZint(b, uint64(id.EID))
}

func entityGlobalIDLen(id *EntityGlobalID) int {
	n := int(id.ZID.n)
	if n == 0 {
		n = 1
	}
	return 1 + n + ZintLen(uint64(id.EID))
}

func (r *reader) entityGlobalID() EntityGlobalID {
	flags := r.u8("entity id flags")
	var id EntityGlobalID
	id.ZID = r.zid(1+int(flags>>4), "entity zid")
	id.EID = r.z32("entity id")
	return id
}
