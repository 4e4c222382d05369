package wire

import (
	"fmt"
	"unicode/utf8"
)

// Declaration ids (header bits 0-4 of a declaration inside DECLARE).
const (
	DeclKeyExpr      = 0x00
	UndeclKeyExpr    = 0x01
	DeclSubscriber   = 0x02
	UndeclSubscriber = 0x03
	DeclQueryable    = 0x04
	UndeclQueryable  = 0x05
	DeclToken        = 0x06
	UndeclToken      = 0x07
	DeclFinal        = 0x1a
)

const (
	extUndeclWireExpr = 0x0f | ExtFlagM | ExtEncZBuf
	extQueryableInfo  = 0x01 | ExtEncZ64
)

// Declare is DECLARE. InterestID is set when the declaration answers an
// interest (and for the declarations zenoh peers push at connection, with
// interest id 0).
type Declare struct {
	InterestID    uint32
	HasInterestID bool
	QoS           QoS
	Timestamp     *Timestamp
	NodeID        uint16
	Body          Declaration
}

// Declaration is one of *DeclareKeyExpr, *UndeclareKeyExpr,
// *DeclareSubscriber, *UndeclareSubscriber, *DeclareQueryable,
// *UndeclareQueryable, *DeclareToken, *UndeclareToken or *DeclareFinal.
type Declaration interface{ isDeclaration() }

// DeclareKeyExpr maps ID to a key expression for the sender's later
// messages (used with WireExpr.SenderMapping).
type DeclareKeyExpr struct {
	ID       uint16
	WireExpr WireExpr
}

// UndeclareKeyExpr removes a mapping.
type UndeclareKeyExpr struct{ ID uint16 }

// DeclareSubscriber declares a subscriber.
type DeclareSubscriber struct {
	ID       uint32
	WireExpr WireExpr
}

// UndeclareSubscriber removes a subscriber. WireExpr (an extension) may
// repeat its key expression; zenoh-pico leaves it out.
type UndeclareSubscriber struct {
	ID       uint32
	WireExpr *WireExpr
}

// DeclareQueryable declares a queryable.
type DeclareQueryable struct {
	ID       uint32
	WireExpr WireExpr
	// Complete and Distance form the queryable-info extension, sent when
	// not both zero.
	Complete bool
	Distance uint16
}

// UndeclareQueryable removes a queryable.
type UndeclareQueryable struct {
	ID       uint32
	WireExpr *WireExpr
}

// DeclareToken declares a liveliness token.
type DeclareToken struct {
	ID       uint32
	WireExpr WireExpr
}

// UndeclareToken removes a liveliness token.
type UndeclareToken struct {
	ID       uint32
	WireExpr *WireExpr
}

// DeclareFinal ends the declarations that answer an interest.
type DeclareFinal struct{}

func (*DeclareKeyExpr) isDeclaration()      {}
func (*UndeclareKeyExpr) isDeclaration()    {}
func (*DeclareSubscriber) isDeclaration()   {}
func (*UndeclareSubscriber) isDeclaration() {}
func (*DeclareQueryable) isDeclaration()    {}
func (*UndeclareQueryable) isDeclaration()  {}
func (*DeclareToken) isDeclaration()        {}
func (*UndeclareToken) isDeclaration()      {}
func (*DeclareFinal) isDeclaration()        {}

func appendDeclare(b []byte, m *Declare) ([]byte, error) {
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
	ew := extWriter{n: e.count()}
	h := byte(MidDeclare)
	if m.HasInterestID {
		h |= flag5
	}
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	if m.HasInterestID {
		b = AppendZint(b, uint64(m.InterestID))
	}
	b = e.appendQoSTs(b, &ew)
	b = e.appendNodeID(b, &ew)
	switch d := m.Body.(type) {
	case *DeclareKeyExpr:
		h := byte(DeclKeyExpr)
		if d.WireExpr.HasSuffix() {
			h |= flag5
		}
		b = append(b, h)
		b = AppendZint(b, uint64(d.ID))
		b = appendWireExpr(b, &d.WireExpr)
	case *UndeclareKeyExpr:
		b = append(b, UndeclKeyExpr)
		b = AppendZint(b, uint64(d.ID))
	case *DeclareSubscriber:
		b = append(b, wireExprFlags(DeclSubscriber, &d.WireExpr))
		b = AppendZint(b, uint64(d.ID))
		b = appendWireExpr(b, &d.WireExpr)
	case *UndeclareSubscriber:
		b = appendUndecl(b, UndeclSubscriber, d.ID, d.WireExpr)
	case *DeclareQueryable:
		h := wireExprFlags(DeclQueryable, &d.WireExpr)
		info := d.Complete || d.Distance != 0
		if info {
			h |= flagZ
		}
		b = append(b, h)
		b = AppendZint(b, uint64(d.ID))
		b = appendWireExpr(b, &d.WireExpr)
		if info {
			v := uint64(d.Distance) << 8
			if d.Complete {
				v |= 1
			}
			b = append(b, extQueryableInfo)
			b = AppendZint(b, v)
		}
	case *UndeclareQueryable:
		b = appendUndecl(b, UndeclQueryable, d.ID, d.WireExpr)
	case *DeclareToken:
		b = append(b, wireExprFlags(DeclToken, &d.WireExpr))
		b = AppendZint(b, uint64(d.ID))
		b = appendWireExpr(b, &d.WireExpr)
	case *UndeclareToken:
		b = appendUndecl(b, UndeclToken, d.ID, d.WireExpr)
	case *DeclareFinal:
		b = append(b, DeclFinal)
	default:
		return b, fmt.Errorf("%w: declaration %T", ErrUnknownMessage, m.Body)
	}
	return b, nil
}

// appendUndecl writes an undeclaration; the wire expression extension is
// written when w is not nil (zenoh writes it always, zenoh-pico never).
func appendUndecl(b []byte, id byte, eid uint32, w *WireExpr) []byte {
	if w != nil {
		id |= flagZ
	}
	b = append(b, id)
	b = AppendZint(b, uint64(eid))
	if w != nil {
		flags := byte(0)
		n := 1 + ZintLen(uint64(w.Scope))
		if w.HasSuffix() {
			flags |= 1
			n += len(w.Suffix)
		}
		if w.SenderMapping {
			flags |= 2
		}
		b = append(b, extUndeclWireExpr)
		b = AppendZint(b, uint64(n))
		b = append(b, flags)
		b = AppendZint(b, uint64(w.Scope))
		b = append(b, w.Suffix...)
	}
	return b
}

func (r *reader) undeclWireExpr() *WireExpr {
	sub := r.extZBuf("undeclaration key")
	flags := sub.u8("undeclaration key flags")
	w := &WireExpr{Scope: sub.z16("undeclaration key scope"), SenderMapping: flags&2 != 0}
	if sub.err != nil {
		r.fail(ErrMalformed, "undeclaration key: %v", sub.err)
		return nil
	}
	if flags&1 != 0 {
		rest := sub.rest()
		if !utf8.Valid(rest) {
			r.fail(ErrMalformed, "undeclaration key is not UTF-8")
			return nil
		}
		w.Suffix = string(rest)
	}
	return w
}

func (r *reader) undecl(h byte, msg string) (uint32, *WireExpr) {
	id := r.z32(msg + " id")
	var w *WireExpr
	r.exts(h&flagZ != 0, func(x byte) {
		if x&^ExtFlagZ == extUndeclWireExpr {
			w = r.undeclWireExpr()
			return
		}
		r.unknownExt(x, msg)
	})
	return id, w
}

func (r *reader) declare(h byte) *Declare {
	m := &Declare{}
	if h&flag5 != 0 {
		m.HasInterestID = true
		m.InterestID = r.z32("declare interest id")
	}
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
	r.exts(h&flagZ != 0, func(x byte) {
		if !e.read(r, x) {
			r.unknownExt(x, "declare")
		}
	})
	dh := r.u8("declaration header")
	if r.err != nil {
		return m
	}
	switch dh & midMask {
	case DeclKeyExpr:
		d := &DeclareKeyExpr{ID: r.z16("key expr id")}
		d.WireExpr = r.wireExpr(dh&flag5 != 0, false)
		r.skipExts(dh&flagZ != 0, "declare keyexpr")
		m.Body = d
	case UndeclKeyExpr:
		d := &UndeclareKeyExpr{ID: r.z16("key expr id")}
		r.skipExts(dh&flagZ != 0, "undeclare keyexpr")
		m.Body = d
	case DeclSubscriber:
		d := &DeclareSubscriber{ID: r.z32("subscriber id")}
		d.WireExpr = r.wireExpr(dh&flag5 != 0, dh&flag6 != 0)
		r.skipExts(dh&flagZ != 0, "declare subscriber")
		m.Body = d
	case UndeclSubscriber:
		id, w := r.undecl(dh, "undeclare subscriber")
		m.Body = &UndeclareSubscriber{ID: id, WireExpr: w}
	case DeclQueryable:
		d := &DeclareQueryable{ID: r.z32("queryable id")}
		d.WireExpr = r.wireExpr(dh&flag5 != 0, dh&flag6 != 0)
		r.exts(dh&flagZ != 0, func(x byte) {
			if x&^ExtFlagZ == extQueryableInfo {
				v := r.zint()
				d.Complete = v&1 != 0
				d.Distance = uint16(v >> 8)
				return
			}
			r.unknownExt(x, "declare queryable")
		})
		m.Body = d
	case UndeclQueryable:
		id, w := r.undecl(dh, "undeclare queryable")
		m.Body = &UndeclareQueryable{ID: id, WireExpr: w}
	case DeclToken:
		d := &DeclareToken{ID: r.z32("token id")}
		d.WireExpr = r.wireExpr(dh&flag5 != 0, dh&flag6 != 0)
		r.skipExts(dh&flagZ != 0, "declare token")
		m.Body = d
	case UndeclToken:
		id, w := r.undecl(dh, "undeclare token")
		m.Body = &UndeclareToken{ID: id, WireExpr: w}
	case DeclFinal:
		r.skipExts(dh&flagZ != 0, "declare final")
		m.Body = &DeclareFinal{}
	default:
		r.fail(ErrUnknownMessage, "declaration 0x%02x", dh)
	}
	return m
}

// InterestMode says which declarations an interest asks for.
type InterestMode uint8

// The interest modes.
const (
	// InterestFinal ends a Future or CurrentFuture interest.
	InterestFinal InterestMode = 0
	// InterestCurrent asks for the current declarations, ended by
	// DeclareFinal with the interest id.
	InterestCurrent InterestMode = 1
	// InterestFuture asks for future declarations and undeclarations.
	InterestFuture InterestMode = 2
	// InterestCurrentFuture asks for both.
	InterestCurrentFuture InterestMode = 3
)

// String implements fmt.Stringer.
func (m InterestMode) String() string {
	switch m {
	case InterestFinal:
		return "final"
	case InterestCurrent:
		return "current"
	case InterestFuture:
		return "future"
	}
	return "current+future"
}

// Current reports whether m asks for the current declarations.
func (m InterestMode) Current() bool { return m&1 != 0 }

// Future reports whether m asks for future declarations.
func (m InterestMode) Future() bool { return m&2 != 0 }

// InterestOptions are the kinds of declarations an interest asks for.
type InterestOptions uint8

// The interest options (the restricted/named/mapping bits of the wire byte
// come from Interest.WireExpr).
const (
	InterestKeyExprs    InterestOptions = 1 << 0
	InterestSubscribers InterestOptions = 1 << 1
	InterestQueryables  InterestOptions = 1 << 2
	InterestTokens      InterestOptions = 1 << 3
	// InterestAggregate asks that replies be aggregated.
	InterestAggregate InterestOptions = 1 << 7
	// InterestAll is keyexprs, subscribers, queryables and tokens.
	InterestAll = InterestKeyExprs | InterestSubscribers | InterestQueryables | InterestTokens
)

const (
	interestRestricted = 1 << 4
	interestNamed      = 1 << 5
	interestMapping    = 1 << 6
)

// Interest is INTEREST. WireExpr, when non-nil, restricts it to the
// matching key expressions.
type Interest struct {
	ID        uint32
	Mode      InterestMode
	Options   InterestOptions
	WireExpr  *WireExpr
	QoS       QoS
	Timestamp *Timestamp
	NodeID    uint16
}

func appendInterest(b []byte, m *Interest) []byte {
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
	ew := extWriter{n: e.count()}
	h := byte(MidInterest) | byte(m.Mode&3)<<5
	if ew.n > 0 {
		h |= flagZ
	}
	b = append(b, h)
	b = AppendZint(b, uint64(m.ID))
	if m.Mode != InterestFinal {
		o := byte(m.Options) &^ (interestRestricted | interestNamed | interestMapping)
		if m.WireExpr != nil {
			o |= interestRestricted
			if m.WireExpr.HasSuffix() {
				o |= interestNamed
			}
			if m.WireExpr.SenderMapping {
				o |= interestMapping
			}
		}
		b = append(b, o)
		if m.WireExpr != nil {
			b = appendWireExpr(b, m.WireExpr)
		}
	}
	b = e.appendQoSTs(b, &ew)
	return e.appendNodeID(b, &ew)
}

func (r *reader) interest(h byte) *Interest {
	m := &Interest{Mode: InterestMode(h>>5) & 3}
	m.ID = r.z32("interest id")
	if m.Mode != InterestFinal {
		o := r.u8("interest options")
		m.Options = InterestOptions(o) &^ (interestRestricted | interestNamed | interestMapping)
		if o&interestRestricted != 0 {
			w := r.wireExpr(o&interestNamed != 0, o&interestMapping != 0)
			m.WireExpr = &w
		}
	}
	e := netExts{qos: &m.QoS, ts: &m.Timestamp, nodeID: &m.NodeID}
	r.exts(h&flagZ != 0, func(x byte) {
		if !e.read(r, x) {
			r.unknownExt(x, "interest")
		}
	})
	return m
}
