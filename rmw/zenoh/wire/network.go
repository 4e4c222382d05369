package wire

import (
	"fmt"
	"time"
)

// Network message ids (header bits 0-4).
const (
	MidNetOAM        = 0x1f
	MidDeclare       = 0x1e
	MidPush          = 0x1d
	MidRequest       = 0x1c
	MidResponse      = 0x1b
	MidResponseFinal = 0x1a
	MidInterest      = 0x19
)

// Network extension ids (header without the Z flag).
const (
	extNetQoS       = 0x01 | ExtEncZ64
	extNetTimestamp = 0x02 | ExtEncZBuf
	extNetNodeID    = 0x03 | ExtFlagM | ExtEncZ64
	extReqTarget    = 0x04 | ExtFlagM | ExtEncZ64
	extReqBudget    = 0x05 | ExtEncZ64
	extReqTimeout   = 0x06 | ExtEncZ64
	extRespID       = 0x03 | ExtEncZBuf
)

// NetworkMessage is one of *Push, *Request, *Response, *ResponseFinal,
// *Declare, *Interest or *NetworkOAM.
type NetworkMessage interface{ isNetwork() }

// Push is PUSH: a PUT or DEL for a key expression.
type Push struct {
	WireExpr  WireExpr
	QoS       QoS
	Timestamp *Timestamp
	// NodeID is the routing node id (0: this node), sent when not 0.
	NodeID uint16
	Body   PushBody
}

// QueryTarget says which queryables a request goes to.
type QueryTarget uint8

// The query targets (BestMatching is the default and is not sent).
const (
	TargetBestMatching QueryTarget = 0
	TargetAll          QueryTarget = 1
	TargetAllComplete  QueryTarget = 2
)

// Request is REQUEST: a QUERY for a key expression.
type Request struct {
	ID        uint32
	WireExpr  WireExpr
	QoS       QoS
	Timestamp *Timestamp
	NodeID    uint16
	Target    QueryTarget
	// Budget is the maximum number of responses (0: not sent).
	Budget uint32
	// Timeout is sent in milliseconds when not 0.
	Timeout time.Duration
	Query   *Query
}

// Response is RESPONSE: a REPLY or ERR to a request.
type Response struct {
	RequestID   uint32
	WireExpr    WireExpr
	QoS         QoS
	Timestamp   *Timestamp
	ResponderID *EntityGlobalID
	Body        ResponseBody
}

// ResponseFinal is RESPONSE_FINAL: no more responses to a request.
type ResponseFinal struct {
	RequestID uint32
	QoS       QoS
	Timestamp *Timestamp
}

// NetworkOAM is the network-level OAM message (zenoh's link-state
// gossip uses it).
type NetworkOAM struct {
	ID        uint16
	QoS       QoS
	Timestamp *Timestamp
	// Body is the payload: Body.ID holds only its encoding bits.
	Body Ext
}

func (*Push) isNetwork()          {}
func (*Request) isNetwork()       {}
func (*Response) isNetwork()      {}
func (*ResponseFinal) isNetwork() {}
func (*Declare) isNetwork()       {}
func (*Interest) isNetwork()      {}
func (*NetworkOAM) isNetwork()    {}

// netExts holds the QoS, timestamp and node id extensions shared by the
// network messages.
type netExts struct {
	qos    *QoS
	ts     **Timestamp
	nodeID *uint16
	tsDst  *Timestamp // where to read the timestamp (nil: a new one)
}

func (e netExts) count() int {
	n := 0
	if e.qos != nil && !e.qos.IsDefault() {
		n++
	}
	if e.ts != nil && *e.ts != nil {
		n++
	}
	if e.nodeID != nil && *e.nodeID != 0 {
		n++
	}
	return n
}

func (e netExts) appendQoSTs(b []byte, ew *extWriter) []byte {
	if e.qos != nil && !e.qos.IsDefault() {
		b = extHeader(b, extNetQoS, ew.more())
		b = AppendZint(b, uint64(e.qos.Byte()))
	}
	if e.ts != nil && *e.ts != nil {
		b = extHeader(b, extNetTimestamp, ew.more())
		b = AppendZint(b, uint64(timestampLen(*e.ts)))
		b = appendTimestamp(b, *e.ts)
	}
	return b
}

func (e netExts) appendNodeID(b []byte, ew *extWriter) []byte {
	if e.nodeID != nil && *e.nodeID != 0 {
		b = extHeader(b, extNetNodeID, ew.more())
		b = AppendZint(b, uint64(*e.nodeID))
	}
	return b
}

// read handles x if it is one of the shared extensions.
func (e netExts) read(r *reader, x byte) bool {
	switch x &^ ExtFlagZ {
	case extNetQoS:
		if e.qos == nil {
			return false
		}
		v := r.zint()
		*e.qos = QoSFromByte(uint8(v))
	case extNetTimestamp:
		if e.ts == nil {
			return false
		}
		sub := r.extZBuf("timestamp")
		t := sub.timestamp(e.tsDst)
		if sub.err != nil {
			r.fail(ErrMalformed, "timestamp extension: %v", sub.err)
			return true
		}
		*e.ts = t
	case extNetNodeID:
		if e.nodeID == nil {
			return false
		}
		v := r.zint()
		*e.nodeID = uint16(v)
	default:
		return false
	}
	return true
}

func wireExprFlags(h byte, w *WireExpr) byte {
	if w.SenderMapping {
		h |= flag6
	}
	if w.HasSuffix() {
		h |= flag5
	}
	return h
}

// AppendNetwork appends the encoding of m to b.
func AppendNetwork(b []byte, m NetworkMessage) ([]byte, error) {
	switch m := m.(type) {
	case *Push:
		e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
		ew := extWriter{n: e.count()}
		h := wireExprFlags(MidPush, &m.WireExpr)
		if ew.n > 0 {
			h |= flagZ
		}
		b = append(b, h)
		b = appendWireExpr(b, &m.WireExpr)
		b = e.appendQoSTs(b, &ew)
		b = e.appendNodeID(b, &ew)
		return appendPushBody(b, m.Body)
	case *Request:
		if m.Query == nil {
			return b, fmt.Errorf("%w: request without query", ErrMalformed)
		}
		e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
		ew := extWriter{n: e.count() + count(m.Target != TargetBestMatching, m.Budget != 0, m.Timeout != 0)}
		h := wireExprFlags(MidRequest, &m.WireExpr)
		if ew.n > 0 {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(m.ID))
		b = appendWireExpr(b, &m.WireExpr)
		b = e.appendQoSTs(b, &ew)
		if m.Target != TargetBestMatching {
			b = extHeader(b, extReqTarget, ew.more())
			b = AppendZint(b, uint64(m.Target))
		}
		if m.Budget != 0 {
			b = extHeader(b, extReqBudget, ew.more())
			b = AppendZint(b, uint64(m.Budget))
		}
		if m.Timeout != 0 {
			b = extHeader(b, extReqTimeout, ew.more())
			b = AppendZint(b, uint64(m.Timeout/time.Millisecond))
		}
		b = e.appendNodeID(b, &ew)
		return appendQuery(b, m.Query), nil
	case *Response:
		e := netExts{qos: &m.QoS, ts: &m.Timestamp}
		ew := extWriter{n: e.count() + count(m.ResponderID != nil)}
		h := wireExprFlags(MidResponse, &m.WireExpr)
		if ew.n > 0 {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(m.RequestID))
		b = appendWireExpr(b, &m.WireExpr)
		b = e.appendQoSTs(b, &ew)
		if m.ResponderID != nil {
			b = extHeader(b, extRespID, ew.more())
			b = AppendZint(b, uint64(entityGlobalIDLen(m.ResponderID)))
			b = appendEntityGlobalID(b, m.ResponderID)
		}
		switch body := m.Body.(type) {
		case *Reply:
			return appendReply(b, body)
		case *Err:
			return appendErr(b, body), nil
		}
		return b, fmt.Errorf("%w: response body %T", ErrUnknownMessage, m.Body)
	case *ResponseFinal:
		e := netExts{qos: &m.QoS, ts: &m.Timestamp}
		ew := extWriter{n: e.count()}
		h := byte(MidResponseFinal)
		if ew.n > 0 {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(m.RequestID))
		return e.appendQoSTs(b, &ew), nil
	case *Declare:
		return appendDeclare(b, m)
	case *Interest:
		return appendInterest(b, m), nil
	case *NetworkOAM:
		e := netExts{qos: &m.QoS, ts: &m.Timestamp}
		ew := extWriter{n: e.count()}
		h := byte(MidNetOAM) | m.Body.Enc()
		if ew.n > 0 {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(m.ID))
		b = e.appendQoSTs(b, &ew)
		return appendExtBody(b, &m.Body), nil
	}
	return b, fmt.Errorf("%w: network message %T", ErrUnknownMessage, m)
}

func (r *reader) push(h byte) *Push {
	sc := r.sc // only a PUSH and its PUT decode into the Scratch
	var m *Push
	if sc != nil {
		m = &sc.push
		*m = Push{}
	} else {
		m = new(Push)
	}
	m.WireExpr = r.wireExprKeys(h&flag5 != 0, h&flag6 != 0, sc)
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID, tsDst: sc.slot(tsNet)}
	r.exts(h&flagZ != 0, func(x byte) {
		if !e.read(r, x) {
			r.unknownExt(x, "push")
		}
	})
	m.Body = r.pushBody(sc)
	return m
}

func (r *reader) request(h byte) *Request {
	m := &Request{}
	m.ID = r.z32("request id")
	m.WireExpr = r.wireExpr(h&flag5 != 0, h&flag6 != 0)
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
	r.exts(h&flagZ != 0, func(x byte) {
		if e.read(r, x) {
			return
		}
		switch x &^ ExtFlagZ {
		case extReqTarget:
			t := r.zint()
			if t > 2 && r.err == nil {
				r.fail(ErrMalformed, "query target %d", t)
			}
			m.Target = QueryTarget(t)
		case extReqBudget:
			m.Budget = uint32(r.zint())
		case extReqTimeout:
			ms := r.zint()
			if ms > uint64(1<<63-1)/uint64(time.Millisecond) {
				ms = uint64(1<<63-1) / uint64(time.Millisecond)
			}
			m.Timeout = time.Duration(ms) * time.Millisecond
		default:
			r.unknownExt(x, "request")
		}
	})
	bh := r.u8("request body header")
	if r.err == nil {
		if bh&midMask != MidQuery {
			r.fail(ErrUnknownMessage, "request body 0x%02x", bh)
			return m
		}
		m.Query = r.query(bh)
	}
	return m
}

func (r *reader) response(h byte) *Response {
	m := &Response{}
	m.RequestID = r.z32("response request id")
	m.WireExpr = r.wireExpr(h&flag5 != 0, h&flag6 != 0)
	e := netExts{qos: &m.QoS, ts: &m.Timestamp}
	r.exts(h&flagZ != 0, func(x byte) {
		if e.read(r, x) {
			return
		}
		if x&^ExtFlagZ == extRespID {
			sub := r.extZBuf("responder id")
			id := sub.entityGlobalID()
			if sub.err != nil {
				r.fail(ErrMalformed, "responder id: %v", sub.err)
				return
			}
			m.ResponderID = &id
			return
		}
		r.unknownExt(x, "response")
	})
	bh := r.u8("response body header")
	if r.err == nil {
		switch bh & midMask {
		case MidReply:
			m.Body = r.reply(bh)
		case MidErr:
			m.Body = r.errBody(bh)
		default:
			r.fail(ErrUnknownMessage, "response body 0x%02x", bh)
		}
	}
	return m
}

// DecodeNetwork decodes the network message at the start of b and returns
// it with the number of bytes it took. The messages of a FRAME follow each
// other to the end of its payload.
func DecodeNetwork(b []byte) (NetworkMessage, int, error) {
	return decodeNetwork(&reader{b: b})
}

func decodeNetwork(r *reader) (NetworkMessage, int, error) {
	h := r.u8("network header")
	if r.err != nil {
		return nil, 0, r.err
	}
	var m NetworkMessage
	switch h & midMask {
	case MidPush:
		m = r.push(h)
	case MidRequest:
		m = r.request(h)
	case MidResponse:
		m = r.response(h)
	case MidResponseFinal:
		f := &ResponseFinal{}
		f.RequestID = r.z32("response final request id")
		e := netExts{qos: &f.QoS, ts: &f.Timestamp}
		r.exts(h&flagZ != 0, func(x byte) {
			if !e.read(r, x) {
				r.unknownExt(x, "response final")
			}
		})
		m = f
	case MidDeclare:
		m = r.declare(h)
	case MidInterest:
		m = r.interest(h)
	case MidNetOAM:
		o := &NetworkOAM{}
		o.ID = r.z16("oam id")
		e := netExts{qos: &o.QoS, ts: &o.Timestamp}
		r.exts(h&flagZ != 0, func(x byte) {
			if !e.read(r, x) {
				r.unknownExt(x, "oam")
			}
		})
		o.Body = r.readExtBody(h & ExtEncMask)
		m = o
	default:
		return nil, 0, fmt.Errorf("%w: network 0x%02x", ErrUnknownMessage, h)
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return m, r.i, nil
}

// DecodeFrame decodes every network message of a FRAME payload, calling f
// for each. It stops at the first malformed one and returns its error
// (messages before it were delivered).
func DecodeFrame(payload []byte, f func(NetworkMessage) error) error {
	return decodeFrame(payload, nil, f)
}

// decodeFrame is DecodeFrame into sc (nil: new messages).
func decodeFrame(payload []byte, sc *Scratch, f func(NetworkMessage) error) error {
	for len(payload) > 0 {
		m, n, err := decodeNetwork(&reader{b: payload, sc: sc})
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
