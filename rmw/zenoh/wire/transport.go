package wire

import (
	"fmt"
	"time"
)

// Transport message ids (header bits 0-4).
const (
	MidOAM       = 0x00
	MidInit      = 0x01
	MidOpen      = 0x02
	MidClose     = 0x03
	MidKeepAlive = 0x04
	MidFrame     = 0x05
	MidFragment  = 0x06
	MidJoin      = 0x07
)

const (
	midMask = 0x1f
	flagZ   = 0x80
	flag5   = 0x20
	flag6   = 0x40
)

// Batch sizes zenoh uses when none is negotiated.
const (
	DefaultUnicastBatchSize   = 65535
	DefaultMulticastBatchSize = 8192
)

// MinBatchSize is the smallest batch size nros accepts, in a handshake
// from the other side or in its own configuration: a batch must hold a
// FRAME or FRAGMENT header and some content. (zenoh leaves it unchecked;
// with 0 nothing could ever be sent.)
const MinBatchSize = 64

// Close reasons.
const (
	CloseGeneric          = 0x00
	CloseUnsupported      = 0x01
	CloseInvalid          = 0x02
	CloseMaxSessions      = 0x03
	CloseMaxLinks         = 0x04
	CloseExpired          = 0x05
	CloseUnresponsive     = 0x06
	CloseConnectionToSelf = 0x07
)

// CloseReasonString names a close reason as zenoh does.
func CloseReasonString(r uint8) string {
	switch r {
	case CloseGeneric:
		return "GENERIC"
	case CloseUnsupported:
		return "UNSUPPORTED"
	case CloseInvalid:
		return "INVALID"
	case CloseMaxSessions:
		return "MAX_SESSIONS"
	case CloseMaxLinks:
		return "MAX_LINKS"
	case CloseExpired:
		return "EXPIRED"
	case CloseUnresponsive:
		return "UNRESPONSIVE"
	case CloseConnectionToSelf:
		return "CONNECTION_TO_SELF"
	}
	return "UNKNOWN"
}

// Patch levels negotiated by the INIT patch extension.
const (
	// PatchNone: the protocol as released with zenoh 1.0.0.
	PatchNone = 0
	// PatchCurrent: fragments carry the first/drop markers.
	PatchCurrent = 1
)

// TransportMessage is one of *Init, *Open, *Close, *KeepAlive, *Frame,
// *Fragment, *Join or *TransportOAM.
type TransportMessage interface{ isTransport() }

// Init is INIT (InitSyn when Ack is false, InitAck when true).
type Init struct {
	Ack        bool
	Version    uint8
	WhatAmI    WhatAmI
	ZID        ZenohID
	Resolution Resolution
	BatchSize  uint16
	// Cookie is sent in InitAck only.
	Cookie []byte
	// QoS asks for (or grants) the 8 priority channels.
	QoS bool
	// QoSLink is the optimized QoS extension (priority range and
	// reliability restrictions of the link), sent instead of QoS.
	QoSLink    uint64
	HasQoSLink bool
	LowLatency bool
	// Compression is only meaningful with zenoh's compression feature.
	Compression bool
	// Patch is the patch level (PatchNone: extension absent).
	Patch uint8
	// Unknown holds the other optional extensions (shared memory, auth,
	// multilink challenges) in the order they came.
	Unknown []Ext
}

// Open is OPEN (OpenSyn when Ack is false, OpenAck when true).
type Open struct {
	Ack bool
	// Lease is the sender's lease: the receiver may close the link when
	// nothing arrived for that long. Sent in seconds when a whole number
	// of seconds, else milliseconds.
	Lease     time.Duration
	InitialSN uint32
	// Cookie is the InitAck cookie echoed in OpenSyn.
	Cookie      []byte
	QoS         bool
	LowLatency  bool
	Compression bool
	Unknown     []Ext
}

// Close is CLOSE: Session true closes the whole transport, false only the
// link.
type Close struct {
	Session bool
	Reason  uint8
}

// KeepAlive is KEEP_ALIVE.
type KeepAlive struct{}

// Frame is FRAME: network messages of one channel (reliability, priority)
// under one sequence number. Payload is the encoded network messages and
// runs to the end of the batch.
type Frame struct {
	Reliable bool
	SN       uint32
	// Priority is sent (QoS extension) only when it is not PriorityData and
	// the transport negotiated QoS. Decoding sets PriorityData when absent.
	Priority Priority
	Payload  []byte
}

// Fragment is FRAGMENT: a piece of one network message too large for a
// batch. Payload runs to the end of the batch.
type Fragment struct {
	Reliable bool
	More     bool
	SN       uint32
	Priority Priority
	// First marks the first fragment, Drop says the rest of the message was
	// dropped (patch level >= 1).
	First   bool
	Drop    bool
	Payload []byte
}

// PrioritySN is the next sequence numbers of one priority.
type PrioritySN struct {
	Reliable, BestEffort uint32
}

// Join is JOIN, sent periodically on multicast links.
type Join struct {
	Version    uint8
	WhatAmI    WhatAmI
	ZID        ZenohID
	Resolution Resolution
	BatchSize  uint16
	Lease      time.Duration
	NextSN     PrioritySN
	// QoS, when non-nil, holds the next sequence numbers of each priority.
	QoS *[NumPriorities]PrioritySN
	// Shm, when non-nil, is the shared-memory extension (kept, not used).
	Shm   []byte
	Patch uint8
}

// TransportOAM is the transport-level OAM message.
type TransportOAM struct {
	ID       uint16
	Priority Priority
	// Body is the payload: Body.ID holds only its encoding bits.
	Body Ext
}

func (*Init) isTransport()         {}
func (*Open) isTransport()         {}
func (*Close) isTransport()        {}
func (*KeepAlive) isTransport()    {}
func (*Frame) isTransport()        {}
func (*Fragment) isTransport()     {}
func (*Join) isTransport()         {}
func (*TransportOAM) isTransport() {}

// Transport extension ids (header without the Z flag).
const (
	extInitQoS         = 0x01
	extInitQoSLink     = 0x01 | ExtEncZ64
	extInitLowLatency  = 0x05
	extInitCompression = 0x06
	extInitPatch       = 0x07 | ExtEncZ64
	extOpenQoS         = 0x01
	extOpenLowLatency  = 0x05
	extOpenCompression = 0x06
	extFrameQoS        = 0x01 | ExtFlagM | ExtEncZ64
	extFragFirst       = 0x02
	extFragDrop        = 0x03
	extJoinQoS         = 0x01 | ExtFlagM | ExtEncZBuf
	extJoinShm         = 0x02 | ExtFlagM | ExtEncZBuf
	extJoinPatch       = 0x07 | ExtEncZ64
	extTOAMQoS         = 0x01 | ExtFlagM | ExtEncZ64
)

func appendLease(b []byte, h *byte, flagT byte, lease time.Duration) []byte {
	ms := uint64(lease / time.Millisecond)
	if ms%1000 == 0 {
		*h |= flagT
		return AppendZint(b, ms/1000)
	}
	return AppendZint(b, ms)
}

func leaseFrom(v uint64, seconds bool) time.Duration {
	const maxS = uint64(1<<63-1) / uint64(time.Second)
	const maxMs = uint64(1<<63-1) / uint64(time.Millisecond)
	if seconds {
		if v > maxS {
			v = maxS
		}
		return time.Duration(v) * time.Second
	}
	if v > maxMs {
		v = maxMs
	}
	return time.Duration(v) * time.Millisecond
}

func appendZIDFlags(b []byte, w WhatAmI, z ZenohID) ([]byte, error) {
	c, err := w.code()
	if err != nil {
		return b, err
	}
	if z.n == 0 {
		return b, fmt.Errorf("%w: zero zenoh id", ErrMalformed)
	}
	b = append(b, (z.n-1)<<4|c)
	return append(b, z.b[:z.n]...), nil
}

func (r *reader) whatamiZID(msg string) (WhatAmI, ZenohID) {
	f := r.u8(msg + " flags")
	w, ok := whatAmIFromCode(f)
	if r.err == nil && !ok {
		r.fail(ErrMalformed, "%s: whatami code 3", msg)
	}
	z := r.zid(1+int(f>>4), msg+" zid")
	return w, z
}

// AppendTransport appends the encoding of m to b.
func AppendTransport(b []byte, m TransportMessage) ([]byte, error) {
	switch m := m.(type) {
	case *Init:
		return appendInit(b, m)
	case *Open:
		return appendOpen(b, m), nil
	case *Close:
		h := byte(MidClose)
		if m.Session {
			h |= flag5
		}
		return append(b, h, m.Reason), nil
	case *KeepAlive:
		return append(b, MidKeepAlive), nil
	case *Frame:
		b = AppendFrameHeader(b, m.Reliable, m.SN, m.Priority)
		return append(b, m.Payload...), nil
	case *Fragment:
		b = AppendFragmentHeader(b, m)
		return append(b, m.Payload...), nil
	case *Join:
		return appendJoin(b, m)
	case *TransportOAM:
		h := byte(MidOAM) | m.Body.Enc()
		if m.Priority != PriorityData {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(m.ID))
		if m.Priority != PriorityData {
			b = append(b, extTOAMQoS)
			b = AppendZint(b, uint64(m.Priority))
		}
		return appendExtBody(b, &m.Body), nil
	}
	return b, fmt.Errorf("%w: transport message %T", ErrUnknownMessage, m)
}

func appendExtBody(b []byte, e *Ext) []byte {
	switch e.Enc() {
	case ExtEncZ64:
		return AppendZint(b, e.Z64)
	case ExtEncZBuf:
		return appendBytes(b, e.Buf)
	}
	return b
}

func appendInit(b []byte, m *Init) ([]byte, error) {
	h := byte(MidInit)
	if m.Ack {
		h |= flag5
	}
	if m.Resolution != DefaultResolution || m.BatchSize != DefaultUnicastBatchSize {
		h |= flag6
	}
	ew := extWriter{n: len(m.Unknown)}
	for _, has := range []bool{m.QoS, m.HasQoSLink, m.LowLatency, m.Compression, m.Patch != PatchNone} {
		if has {
			ew.n++
		}
	}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h, m.Version)
	b, err := appendZIDFlags(b, m.WhatAmI, m.ZID)
	if err != nil {
		return b, err
	}
	if h&flag6 != 0 {
		b = append(b, byte(m.Resolution), byte(m.BatchSize), byte(m.BatchSize>>8))
	}
	if m.Ack {
		b = appendBytes(b, m.Cookie)
	}
	if m.QoS {
		b = extHeader(b, extInitQoS, ew.more())
	}
	if m.HasQoSLink {
		b = extHeader(b, extInitQoSLink, ew.more())
		b = AppendZint(b, m.QoSLink)
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	if m.LowLatency {
		b = extHeader(b, extInitLowLatency, ew.more())
	}
	if m.Compression {
		b = extHeader(b, extInitCompression, ew.more())
	}
	if m.Patch != PatchNone {
		b = extHeader(b, extInitPatch, ew.more())
		b = AppendZint(b, uint64(m.Patch))
	}
	return b, nil
}

func (r *reader) init(h byte) *Init {
	m := &Init{Ack: h&flag5 != 0, Resolution: DefaultResolution, BatchSize: DefaultUnicastBatchSize}
	m.Version = r.u8("init version")
	m.WhatAmI, m.ZID = r.whatamiZID("init")
	if h&flag6 != 0 {
		m.Resolution = Resolution(r.u8("init resolution") & 0x3f)
		m.BatchSize = r.u16le("init batch size")
	}
	if m.Ack {
		m.Cookie = r.bytesZ(0xffff, "init cookie")
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extInitQoS:
			m.QoS = true
		case extInitQoSLink:
			m.HasQoSLink, m.QoSLink = true, r.zint()
		case extInitLowLatency:
			m.LowLatency = true
		case extInitCompression:
			m.Compression = true
		case extInitPatch:
			p := r.zint()
			if p > 0xff {
				p = 0xff
			}
			m.Patch = uint8(p)
		default:
			if e := r.unknownExt(x, "init"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	return m
}

func appendOpen(b []byte, m *Open) []byte {
	h := byte(MidOpen)
	if m.Ack {
		h |= flag5
	}
	ew := extWriter{n: len(m.Unknown)}
	for _, has := range []bool{m.QoS, m.LowLatency, m.Compression} {
		if has {
			ew.n++
		}
	}
	if ew.n > 0 {
		h |= flagZ
	}
	at := len(b)
	b = append(b, 0)
	b = appendLease(b, &h, flag6, m.Lease)
	b[at] = h
	b = AppendZint(b, uint64(m.InitialSN))
	if !m.Ack {
		b = appendBytes(b, m.Cookie)
	}
	if m.QoS {
		b = extHeader(b, extOpenQoS, ew.more())
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	if m.LowLatency {
		b = extHeader(b, extOpenLowLatency, ew.more())
	}
	if m.Compression {
		b = extHeader(b, extOpenCompression, ew.more())
	}
	return b
}

func (r *reader) open(h byte) *Open {
	m := &Open{Ack: h&flag5 != 0}
	m.Lease = leaseFrom(r.zint(), h&flag6 != 0)
	m.InitialSN = r.z32("open initial sn")
	if !m.Ack {
		m.Cookie = r.bytesZ(0xffff, "open cookie")
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extOpenQoS:
			m.QoS = true
		case extOpenLowLatency:
			m.LowLatency = true
		case extOpenCompression:
			m.Compression = true
		default:
			if e := r.unknownExt(x, "open"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	return m
}

// AppendFrameHeader appends a FRAME header; the encoded network messages
// follow it to the end of the batch.
func AppendFrameHeader(b []byte, reliable bool, sn uint32, prio Priority) []byte {
	h := byte(MidFrame)
	if reliable {
		h |= flag5
	}
	if prio != PriorityData {
		h |= flagZ
	}
	b = append(b, h)
	b = AppendZint(b, uint64(sn))
	if prio != PriorityData {
		b = append(b, extFrameQoS)
		b = AppendZint(b, uint64(prio))
	}
	return b
}

// AppendFragmentHeader appends the header of f (not its payload).
func AppendFragmentHeader(b []byte, f *Fragment) []byte {
	h := byte(MidFragment)
	if f.Reliable {
		h |= flag5
	}
	if f.More {
		h |= flag6
	}
	ew := extWriter{}
	for _, has := range []bool{f.Priority != PriorityData, f.First, f.Drop} {
		if has {
			ew.n++
		}
	}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	b = AppendZint(b, uint64(f.SN))
	if f.Priority != PriorityData {
		b = extHeader(b, extFrameQoS, ew.more())
		b = AppendZint(b, uint64(f.Priority))
	}
	if f.First {
		b = extHeader(b, extFragFirst, ew.more())
	}
	if f.Drop {
		b = extHeader(b, extFragDrop, ew.more())
	}
	return b
}

func (r *reader) priorityExt(x byte, msg string) Priority {
	if !r.expectEnc(x, ExtEncZ64, msg) {
		return PriorityData
	}
	return Priority(r.zint() & 7)
}

func (r *reader) frame(h byte) *Frame {
	var m *Frame
	if r.sc != nil {
		m = &r.sc.frame
	} else {
		m = new(Frame)
	}
	*m = Frame{Reliable: h&flag5 != 0, Priority: PriorityData}
	m.SN = r.z32("frame sn")
	r.exts(h&flagZ != 0, func(x byte) {
		if x&^ExtFlagZ == extFrameQoS {
			m.Priority = r.priorityExt(x, "frame")
			return
		}
		r.unknownExt(x, "frame")
	})
	if r.err == nil {
		m.Payload = r.rest()
		r.i = len(r.b)
	}
	return m
}

func (r *reader) fragment(h byte) *Fragment {
	m := &Fragment{Reliable: h&flag5 != 0, More: h&flag6 != 0, Priority: PriorityData}
	m.SN = r.z32("fragment sn")
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extFrameQoS:
			m.Priority = r.priorityExt(x, "fragment")
		case extFragFirst:
			m.First = true
		case extFragDrop:
			m.Drop = true
		default:
			r.unknownExt(x, "fragment")
		}
	})
	if r.err == nil {
		m.Payload = r.rest()
		r.i = len(r.b)
	}
	return m
}

func appendJoin(b []byte, m *Join) ([]byte, error) {
	h := byte(MidJoin)
	if m.Resolution != DefaultResolution || m.BatchSize != DefaultMulticastBatchSize {
		h |= flag6
	}
	ew := extWriter{}
	for _, has := range []bool{m.QoS != nil, m.Shm != nil, m.Patch != PatchNone} {
		if has {
			ew.n++
		}
	}
	if ew.n > 0 {
		h |= flagZ
	}
	at := len(b)
	b = append(b, h, m.Version)
	b, err := appendZIDFlags(b, m.WhatAmI, m.ZID)
	if err != nil {
		return b, err
	}
	if h&flag6 != 0 {
		b = append(b, byte(m.Resolution), byte(m.BatchSize), byte(m.BatchSize>>8))
	}
	b = appendLease(b, &h, flag5, m.Lease)
	b[at] = h
	b = AppendZint(b, uint64(m.NextSN.Reliable))
	b = AppendZint(b, uint64(m.NextSN.BestEffort))
	if m.QoS != nil {
		n := 0
		for _, p := range m.QoS {
			n += ZintLen(uint64(p.Reliable)) + ZintLen(uint64(p.BestEffort))
		}
		b = extHeader(b, extJoinQoS, ew.more())
		b = AppendZint(b, uint64(n))
		for _, p := range m.QoS {
			b = AppendZint(b, uint64(p.Reliable))
			b = AppendZint(b, uint64(p.BestEffort))
		}
	}
	if m.Shm != nil {
		b = extHeader(b, extJoinShm, ew.more())
		b = appendBytes(b, m.Shm)
	}
	if m.Patch != PatchNone {
		b = extHeader(b, extJoinPatch, ew.more())
		b = AppendZint(b, uint64(m.Patch))
	}
	return b, nil
}

func (r *reader) join(h byte) *Join {
	m := &Join{Resolution: DefaultResolution, BatchSize: DefaultMulticastBatchSize}
	m.Version = r.u8("join version")
	m.WhatAmI, m.ZID = r.whatamiZID("join")
	if h&flag6 != 0 {
		m.Resolution = Resolution(r.u8("join resolution") & 0x3f)
		m.BatchSize = r.u16le("join batch size")
	}
	m.Lease = leaseFrom(r.zint(), h&flag5 != 0)
	m.NextSN.Reliable = r.z32("join sn")
	m.NextSN.BestEffort = r.z32("join sn")
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extJoinQoS:
			sub := r.extZBuf("join qos")
			var q [NumPriorities]PrioritySN
			for i := range q {
				q[i].Reliable = sub.z32("join qos sn")
				q[i].BestEffort = sub.z32("join qos sn")
			}
			if sub.err != nil {
				r.fail(ErrMalformed, "join qos: %v", sub.err)
				return
			}
			m.QoS = &q
		case extJoinShm:
			m.Shm = r.bytesZ(0xffffffff, "join shm")
			if m.Shm == nil && r.err == nil {
				m.Shm = []byte{}
			}
		case extJoinPatch:
			p := r.zint()
			if p > 0xff {
				p = 0xff
			}
			m.Patch = uint8(p)
		default:
			r.unknownExt(x, "join")
		}
	})
	return m
}

func (r *reader) transportOAM(h byte) *TransportOAM {
	m := &TransportOAM{Priority: PriorityData}
	m.ID = r.z16("oam id")
	r.exts(h&flagZ != 0, func(x byte) {
		if x&^ExtFlagZ == extTOAMQoS {
			m.Priority = r.priorityExt(x, "oam")
			return
		}
		r.unknownExt(x, "oam")
	})
	m.Body = r.readExtBody(h & ExtEncMask)
	return m
}

// DecodeTransport decodes the transport message at the start of b and
// returns it with the number of bytes it took. A FRAME or FRAGMENT takes
// the rest of b.
func DecodeTransport(b []byte) (TransportMessage, int, error) {
	return decodeTransport(&reader{b: b})
}

func decodeTransport(r *reader) (TransportMessage, int, error) {
	h := r.u8("transport header")
	if r.err != nil {
		return nil, 0, r.err
	}
	var m TransportMessage
	switch h & midMask {
	case MidInit:
		m = r.init(h)
	case MidOpen:
		m = r.open(h)
	case MidClose:
		c := &Close{Session: h&flag5 != 0}
		c.Reason = r.u8("close reason")
		r.skipExts(h&flagZ != 0, "close")
		m = c
	case MidKeepAlive:
		r.skipExts(h&flagZ != 0, "keep-alive")
		m = &KeepAlive{}
	case MidFrame:
		m = r.frame(h)
	case MidFragment:
		m = r.fragment(h)
	case MidJoin:
		m = r.join(h)
	case MidOAM:
		m = r.transportOAM(h)
	default:
		return nil, 0, fmt.Errorf("%w: transport 0x%02x", ErrUnknownMessage, h)
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return m, r.i, nil
}

// DecodeBatch decodes the transport messages of one batch in order,
// calling f for each. It stops at the first error (from the decoder or
// from f).
func DecodeBatch(b []byte, f func(TransportMessage) error) error {
	for len(b) > 0 {
		m, n, err := DecodeTransport(b)
		if err != nil {
			return err
		}
		if err := f(m); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
