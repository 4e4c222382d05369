package wire

import "fmt"

// Zenoh body ids (header bits 0-4).
const (
	MidPut   = 0x01
	MidDel   = 0x02
	MidQuery = 0x03
	MidReply = 0x04
	MidErr   = 0x05
)

// Zenoh body extension ids (header without the Z flag).
const (
	extSourceInfo    = 0x01 | ExtEncZBuf
	extPutShm        = 0x02 | ExtFlagM // unit
	extPutAttachment = 0x03 | ExtEncZBuf
	extDelAttachment = 0x02 | ExtEncZBuf
	extQueryBody     = 0x03 | ExtEncZBuf
	extQueryBodyShm  = 0x04 // unit, precedes a shared-memory body
	extQueryAttach   = 0x05 | ExtEncZBuf
	extErrShm        = 0x02 | ExtFlagM
)

// PushBody is *Put or *Del: the body of PUSH and of REPLY.
type PushBody interface{ isPushBody() }

// Put is PUT: a sample.
type Put struct {
	Timestamp  *Timestamp
	Encoding   Encoding
	SourceInfo *SourceInfo
	// Attachment, when non-nil, is sent (rmw_zenoh puts its 33 bytes here).
	Attachment []byte
	Unknown    []Ext
	Payload    []byte
}

// Del is DEL: a deletion.
type Del struct {
	Timestamp  *Timestamp
	SourceInfo *SourceInfo
	Attachment []byte
	Unknown    []Ext
}

func (*Put) isPushBody() {}
func (*Del) isPushBody() {}

// Consolidation is the consolidation mode of a query or reply.
type Consolidation uint8

// The consolidation modes (Auto is the default and is not sent).
const (
	ConsolidationAuto      Consolidation = 0
	ConsolidationNone      Consolidation = 1
	ConsolidationMonotonic Consolidation = 2
	ConsolidationLatest    Consolidation = 3
)

// QueryBody is the value a query may carry.
type QueryBody struct {
	Encoding Encoding
	Payload  []byte
}

// Query is QUERY, the body of REQUEST.
type Query struct {
	Consolidation Consolidation
	Parameters    string
	SourceInfo    *SourceInfo
	Body          *QueryBody
	Attachment    []byte
	Unknown       []Ext
}

// Reply is REPLY, a body of RESPONSE.
type Reply struct {
	Consolidation Consolidation
	Unknown       []Ext
	Body          PushBody
}

// Err is ERR, a body of RESPONSE.
type Err struct {
	Encoding   Encoding
	SourceInfo *SourceInfo
	Unknown    []Ext
	Payload    []byte
}

// ResponseBody is *Reply or *Err.
type ResponseBody interface{ isResponseBody() }

func (*Reply) isResponseBody() {}
func (*Err) isResponseBody()   {}

func appendSourceInfo(b []byte, s *SourceInfo, more bool) []byte {
	b = extHeader(b, extSourceInfo, more)
	b = AppendZint(b, uint64(entityGlobalIDLen(&s.ID)+ZintLen(uint64(s.SN))))
	b = appendEntityGlobalID(b, &s.ID)
	return AppendZint(b, uint64(s.SN))
}

// sourceInfo reads a source-info extension into dst (nil: a new one).
func (r *reader) sourceInfo(dst *SourceInfo) *SourceInfo {
	sub := r.extZBuf("source info")
	s := dst
	if dst == nil {
		s = new(SourceInfo)
	}
	*s = SourceInfo{ID: sub.entityGlobalID(), SN: sub.z32("source info sn")}
	if sub.err != nil {
		r.fail(ErrMalformed, "source info: %v", sub.err)
		return nil
	}
	return s
}

func appendAttachment(b []byte, id uint8, a []byte, more bool) []byte {
	b = extHeader(b, id, more)
	return appendBytes(b, a)
}

func (r *reader) attachment() []byte {
	a := r.bytesZ(0xffffffff, "attachment")
	if a == nil && r.err == nil {
		a = []byte{}
	}
	return a
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func appendPut(b []byte, m *Put) []byte {
	h := byte(MidPut)
	if m.Timestamp != nil {
		h |= flag5
	}
	if !m.Encoding.IsEmpty() {
		h |= flag6
	}
	ew := extWriter{n: count(m.SourceInfo != nil, m.Attachment != nil) + len(m.Unknown)}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if m.Timestamp != nil {
		b = appendTimestamp(b, m.Timestamp)
	}
	if !m.Encoding.IsEmpty() {
		b = appendEncoding(b, &m.Encoding)
	}
	if m.SourceInfo != nil {
		b = appendSourceInfo(b, m.SourceInfo, ew.more())
	}
	if m.Attachment != nil {
		b = appendAttachment(b, extPutAttachment, m.Attachment, ew.more())
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	return appendBytes(b, m.Payload)
}

func (r *reader) put(h byte, sc *Scratch) *Put {
	var m *Put
	if sc != nil {
		m = &sc.put
		*m = Put{}
	} else {
		m = new(Put)
	}
	if h&flag5 != 0 {
		m.Timestamp = r.timestamp(sc.slot(tsBody))
	}
	if h&flag6 != 0 {
		m.Encoding = r.encoding()
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extSourceInfo:
			m.SourceInfo = r.sourceInfo(sc.sourceInfo())
		case extPutAttachment:
			m.Attachment = r.attachment()
		case extPutShm:
			r.fail(ErrSharedMemory, "put payload in shared memory")
		default:
			if e := r.unknownExt(x, "put"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	m.Payload = r.bytesZ(0xffffffff, "put payload")
	if m.Payload == nil && r.err == nil {
		m.Payload = []byte{}
	}
	return m
}

func appendDel(b []byte, m *Del) []byte {
	h := byte(MidDel)
	if m.Timestamp != nil {
		h |= flag5
	}
	ew := extWriter{n: count(m.SourceInfo != nil, m.Attachment != nil) + len(m.Unknown)}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if m.Timestamp != nil {
		b = appendTimestamp(b, m.Timestamp)
	}
	if m.SourceInfo != nil {
		b = appendSourceInfo(b, m.SourceInfo, ew.more())
	}
	if m.Attachment != nil {
		b = appendAttachment(b, extDelAttachment, m.Attachment, ew.more())
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	return b
}

func (r *reader) del(h byte) *Del {
	m := &Del{}
	if h&flag5 != 0 {
		m.Timestamp = r.timestamp(nil)
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extSourceInfo:
			m.SourceInfo = r.sourceInfo(nil)
		case extDelAttachment:
			m.Attachment = r.attachment()
		default:
			if e := r.unknownExt(x, "del"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	return m
}

func appendPushBody(b []byte, p PushBody) ([]byte, error) {
	switch p := p.(type) {
	case *Put:
		return appendPut(b, p), nil
	case *Del:
		return appendDel(b, p), nil
	}
	return b, fmt.Errorf("%w: push body %T", ErrUnknownMessage, p)
}

// pushBody reads a PUSH's or a REPLY's body; a PUT into sc (nil: a new
// one).
func (r *reader) pushBody(sc *Scratch) PushBody {
	h := r.u8("push body header")
	if r.err != nil {
		return nil
	}
	switch h & midMask {
	case MidPut:
		return r.put(h, sc)
	case MidDel:
		return r.del(h)
	}
	r.fail(ErrUnknownMessage, "push body 0x%02x", h)
	return nil
}

func appendQuery(b []byte, m *Query) []byte {
	h := byte(MidQuery)
	if m.Consolidation != ConsolidationAuto {
		h |= flag5
	}
	if m.Parameters != "" {
		h |= flag6
	}
	ew := extWriter{n: count(m.SourceInfo != nil, m.Body != nil, m.Attachment != nil) + len(m.Unknown)}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if m.Consolidation != ConsolidationAuto {
		b = AppendZint(b, uint64(m.Consolidation))
	}
	if m.Parameters != "" {
		b = appendString(b, m.Parameters)
	}
	if m.SourceInfo != nil {
		b = appendSourceInfo(b, m.SourceInfo, ew.more())
	}
	if m.Body != nil {
		b = extHeader(b, extQueryBody, ew.more())
		b = AppendZint(b, uint64(encodingLen(&m.Body.Encoding)+len(m.Body.Payload)))
		b = appendEncoding(b, &m.Body.Encoding)
		b = append(b, m.Body.Payload...)
	}
	if m.Attachment != nil {
		b = appendAttachment(b, extQueryAttach, m.Attachment, ew.more())
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	return b
}

func (r *reader) consolidation() Consolidation {
	v := r.zint()
	if v > 3 {
		return ConsolidationAuto // zenoh falls back on Auto for unknown modes
	}
	return Consolidation(v)
}

func (r *reader) query(h byte) *Query {
	m := &Query{}
	if h&flag5 != 0 {
		m.Consolidation = r.consolidation()
	}
	if h&flag6 != 0 {
		m.Parameters = r.stringZ(0xffffffff, "query parameters")
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extSourceInfo:
			m.SourceInfo = r.sourceInfo(nil)
		case extQueryBody:
			sub := r.extZBuf("query body")
			qb := &QueryBody{Encoding: sub.encoding()}
			if sub.err != nil {
				r.fail(ErrMalformed, "query body: %v", sub.err)
				return
			}
			qb.Payload = sub.rest()
			m.Body = qb
		case extQueryBodyShm:
			r.fail(ErrSharedMemory, "query body in shared memory")
		case extQueryAttach:
			m.Attachment = r.attachment()
		default:
			if e := r.unknownExt(x, "query"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	return m
}

func appendReply(b []byte, m *Reply) ([]byte, error) {
	h := byte(MidReply)
	if m.Consolidation != ConsolidationAuto {
		h |= flag5
	}
	ew := extWriter{n: len(m.Unknown)}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if m.Consolidation != ConsolidationAuto {
		b = AppendZint(b, uint64(m.Consolidation))
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	return appendPushBody(b, m.Body)
}

func (r *reader) reply(h byte) *Reply {
	m := &Reply{}
	if h&flag5 != 0 {
		m.Consolidation = r.consolidation()
	}
	r.exts(h&flagZ != 0, func(x byte) {
		if e := r.unknownExt(x, "reply"); r.err == nil {
			m.Unknown = append(m.Unknown, e)
		}
	})
	m.Body = r.pushBody(nil)
	return m
}

func appendErr(b []byte, m *Err) []byte {
	h := byte(MidErr)
	if !m.Encoding.IsEmpty() {
		h |= flag6
	}
	ew := extWriter{n: count(m.SourceInfo != nil) + len(m.Unknown)}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if !m.Encoding.IsEmpty() {
		b = appendEncoding(b, &m.Encoding)
	}
	if m.SourceInfo != nil {
		b = appendSourceInfo(b, m.SourceInfo, ew.more())
	}
	for i := range m.Unknown {
		b = appendExt(b, &m.Unknown[i], ew.more())
	}
	return appendBytes(b, m.Payload)
}

func (r *reader) errBody(h byte) *Err {
	m := &Err{}
	if h&flag6 != 0 {
		m.Encoding = r.encoding()
	}
	r.exts(h&flagZ != 0, func(x byte) {
		switch x &^ ExtFlagZ {
		case extSourceInfo:
			m.SourceInfo = r.sourceInfo(nil)
		case extErrShm:
			r.fail(ErrSharedMemory, "error payload in shared memory")
		default:
			if e := r.unknownExt(x, "err"); r.err == nil {
				m.Unknown = append(m.Unknown, e)
			}
		}
	})
	m.Payload = r.bytesZ(0xffffffff, "err payload")
	if m.Payload == nil && r.err == nil {
		m.Payload = []byte{}
	}
	return m
}
