package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/keyexpr"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Config configures a Session. The zero value (with Mode set) is zenoh's
// defaults.
type Config struct {
	// ZID is this session's id (zero: random).
	ZID wire.ZenohID
	// Mode is wire.Peer, wire.Client or wire.Router. A router session
	// routes nothing by itself: its Handler does (see Routing).
	Mode wire.WhatAmI
	// Listen and Connect are endpoints ("tcp/127.0.0.1:7447"). A client
	// connects to one of Connect at a time (its router); a peer connects to
	// all of them. Lost links are reconnected with backoff.
	Listen  []string
	Connect []string
	// Lease is this side's lease (10 s); keep-alives go out every Lease/4
	// when idle.
	Lease time.Duration
	// BatchSize is the largest batch accepted (65535, and at most the
	// link's MTU).
	BatchSize uint16
	// NoQoS stops asking for QoS (8 priority channels); zenoh asks by
	// default, zenoh-pico does not.
	NoQoS bool
	// MaxMessageSize bounds a message reassembled from fragments
	// (DefaultMaxMessageSize).
	MaxMessageSize int
	// HandshakeTimeout bounds the INIT/OPEN exchange (10 s).
	HandshakeTimeout time.Duration
	// RetryMin and RetryMax bound the reconnection backoff (1 s doubling
	// up to 4 s, as zenoh).
	RetryMin, RetryMax time.Duration
	// InterestTimeout bounds how long an interest waits for the
	// DeclareFinal of every face it was sent to (10 s).
	InterestTimeout time.Duration
	// Clock times the session (nil: SystemClock).
	Clock Clock
	// Logf, when set, receives diagnostics.
	Logf func(format string, args ...any)
	// Trace, when set, sees every batch a link reads (rx) or writes, the
	// handshake included; batch is valid only during the call. It runs on
	// the links' goroutines: keep it short.
	Trace func(remote link.Endpoint, rx bool, batch []byte)
}

func (c *Config) defaults() error {
	if c.ZID.IsZero() {
		c.ZID = wire.RandomZenohID()
	}
	switch c.Mode {
	case 0:
		c.Mode = wire.Peer
	case wire.Peer, wire.Client, wire.Router:
	default:
		return fmt.Errorf("zenoh session: mode %v not supported (peer, client, router)", c.Mode)
	}
	if c.Lease <= 0 {
		c.Lease = 10 * time.Second
	}
	if c.BatchSize == 0 {
		c.BatchSize = wire.DefaultUnicastBatchSize
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.RetryMin <= 0 {
		c.RetryMin = time.Second
	}
	if c.RetryMax < c.RetryMin {
		c.RetryMax = max(4*time.Second, c.RetryMin)
	}
	if c.InterestTimeout <= 0 {
		c.InterestTimeout = 10 * time.Second
	}
	return nil
}

// DeclKind is the kind of a declared entity.
type DeclKind uint8

// The kinds of declarations a Handler sees.
const (
	KindSubscriber DeclKind = iota + 1
	KindQueryable
	KindToken
)

// String implements fmt.Stringer.
func (k DeclKind) String() string {
	switch k {
	case KindSubscriber:
		return "subscriber"
	case KindQueryable:
		return "queryable"
	case KindToken:
		return "token"
	}
	return "?"
}

// Decl is a remote declaration or undeclaration with its key resolved.
type Decl struct {
	Kind DeclKind
	// ID is the entity id in the remote's numbering.
	ID  uint32
	Key string
	// Complete and Distance are the queryable's info.
	Complete bool
	Distance uint16
	// Undeclare is set when the entity went away (also for every entity of
	// a face that went down).
	Undeclare bool
	// Interest is set when the declaration answers this session's
	// interest InterestID (a liveliness get, for instance).
	Interest   bool
	InterestID uint32
}

// Handler receives what the session's faces send. Calls for one face come
// from that face's reader goroutine, in order; calls for different faces
// and those not tied to a face (ResponseFinal, InterestFinal, and
// declarations answering an interest from this session's own tables) may
// run concurrently. The session holds no lock during a call, so a Handler
// may call the Session, except Close. Messages and their byte slices are
// valid only during the call: copy what you keep.
type Handler interface {
	// FaceUp: a face is established (before anything it sends).
	FaceUp(f *Face)
	// FaceDown: a face is gone (after undeclarations of what it declared).
	FaceDown(f *Face, err error)
	// Push: a PUT or DEL for key.
	Push(f *Face, key string, m *wire.Push, reliable bool)
	// Request: a query for key; answer with Reply/ReplyErr and ReplyFinal
	// on f with m.ID.
	Request(f *Face, key string, m *wire.Request)
	// Response: a reply to this session's request rid (key is "" when the
	// reply names none, as zenoh's timeout errors).
	Response(rid uint32, f *Face, key string, m *wire.Response)
	// ResponseFinal: no more responses to request rid.
	ResponseFinal(rid uint32)
	// Declared: a remote declaration or undeclaration (f is nil when the
	// session answered an interest from what it already knew).
	Declared(f *Face, d Decl)
	// InterestFinal: the current declarations asked for by interest id
	// have all been delivered.
	InterestFinal(id uint32)
}

// NopHandler implements Handler doing nothing; embed it to implement only
// some methods.
type NopHandler struct{}

// FaceUp implements Handler.
func (NopHandler) FaceUp(*Face) {}

// FaceDown implements Handler.
func (NopHandler) FaceDown(*Face, error) {}

// Push implements Handler.
func (NopHandler) Push(*Face, string, *wire.Push, bool) {}

// Request implements Handler.
func (NopHandler) Request(*Face, string, *wire.Request) {}

// Response implements Handler.
func (NopHandler) Response(uint32, *Face, string, *wire.Response) {}

// ResponseFinal implements Handler.
func (NopHandler) ResponseFinal(uint32) {}

// Declared implements Handler.
func (NopHandler) Declared(*Face, Decl) {}

// InterestFinal implements Handler.
func (NopHandler) InterestFinal(uint32) {}

// Routing is implemented by a Handler that routes between faces, as a
// zenoh router does (rmw/zenoh/router). When the Handler given to Open
// implements it, the session answers no remote interest itself: every
// INTEREST a face sends goes to Interest, with its key resolved; and the
// RESPONSEs and RESPONSE_FINALs to request ids this session did not issue
// with Request (those the Handler sent itself with Face.Send) go to
// RoutedResponse and RoutedResponseFinal. These calls come as the other
// Handler calls do: from the face's reader, in order, with no session lock
// held.
type Routing interface {
	Handler
	// Interest: a remote interest. key is "" when it names none (always
	// for InterestFinal). An interest whose key does not resolve or is not
	// canonical never comes here: the session counts it and answers
	// DeclareFinal when it asked for current declarations.
	Interest(f *Face, key string, m *wire.Interest)
	// RoutedResponse: a response from f to request m.RequestID of f's
	// numbering, sent with Face.Send. key is "" when the response names
	// none (zenoh's timeout errors do not).
	RoutedResponse(f *Face, key string, m *wire.Response)
	// RoutedResponseFinal: f sends no more responses to request rid.
	RoutedResponseFinal(f *Face, rid uint32)
}

// Face is an established link to another zenoh node.
type Face struct {
	ID      uint64
	ZID     wire.ZenohID
	WhatAmI wire.WhatAmI
	Local   link.Endpoint
	Remote  link.Endpoint
	Params  Params

	t    *transport
	done chan struct{}

	// guarded by Session.mu
	keyExprs     map[uint16]string // the remote's key expression declarations
	keyExprBytes int
	subs         map[uint32]string
	qbls         map[uint32]qblDecl
	tokens       map[uint32]string
	interests    map[uint32]*remoteInterest // the remote's future interests
	initialDone  bool                       // DeclareFinal for the p2p initial interest 0 came
	// this session's future interests whose current part the face (a
	// router) finalized: from then on it declares what they ask for
	finalized map[uint32]*localInterest
}

type qblDecl struct {
	key      string
	complete bool
	distance uint16
}

type remoteInterest struct {
	options wire.InterestOptions
	key     string // "" = all
	// an aggregate interest is answered with one declaration on its own
	// key while some local entity matches it
	aggregate bool
	agg       [2]aggDecl // subscribers, queryables
}

type aggDecl struct {
	id       uint32
	declared bool
}

func aggIndex(k DeclKind) int {
	if k == KindQueryable {
		return 1
	}
	return 0
}

// String implements fmt.Stringer.
func (f *Face) String() string {
	return fmt.Sprintf("face %d (%v %s %s)", f.ID, f.WhatAmI, f.ZID, f.Remote)
}

// Done is closed when the face is down.
func (f *Face) Done() <-chan struct{} { return f.done }

// Dropped is the number of messages dropped on f because its link could
// not keep up.
func (f *Face) Dropped() uint64 { return f.t.dropped.Load() }

// Send queues a network message on f; it never blocks and reports whether
// the message was queued.
func (f *Face) Send(m wire.NetworkMessage, reliable bool) bool { return f.t.send(m, reliable) }

// Close closes the face's link (CLOSE sent).
func (f *Face) Close() { f.t.shutdown(closeErr(wire.CloseGeneric, "closed locally"), true) }

// Limits on what one face may declare.
const (
	maxKeyExprs     = 1 << 16
	maxKeyExprBytes = 16 << 20
	maxDecls        = 1 << 18
)

// Stats counts what the session dropped.
type Stats struct {
	UnknownScope  atomic.Uint64 // messages naming an undeclared key expression id
	InvalidKey    atomic.Uint64 // keys not canonical
	DeclOverflow  atomic.Uint64 // declarations beyond a face's limits
	UnknownReply  atomic.Uint64 // responses to unknown requests
	Unhandled     atomic.Uint64 // OAM and other messages not handled
	FacesRejected atomic.Uint64 // links refused (duplicate zid, closing)
	// Malformed counts batches, frames or messages from open links that
	// did not decode (the rest of such a batch is dropped, the link stays
	// up), OutOfOrder the frames and fragments whose sequence number was
	// not after the last one (dropped), over every face.
	Malformed  atomic.Uint64
	OutOfOrder atomic.Uint64
}

// Session is a zenoh session in peer or client mode: it owns the faces,
// this node's declarations, and the requests and interests in flight.
type Session struct {
	cfg     Config
	h       Handler
	routing Routing // h, when it routes

	mu        sync.Mutex
	closed    bool
	faces     map[uint64]*Face
	byZID     map[wire.ZenohID]*Face
	nextFace  uint64
	nextID    uint32
	subs      map[uint32]string
	qbls      map[uint32]qblDecl
	tokens    map[uint32]string
	interests map[uint32]*localInterest
	requests  map[uint32]*pendingRequest

	listeners []link.Listener
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup // reader, accept, connect and dispatch goroutines
	eventsq   []func()
	eventsMu  sync.Mutex
	eventsCh  chan struct{}

	// Stats are the session's drop counters.
	Stats Stats
}

type localInterest struct {
	mode    wire.InterestMode
	options wire.InterestOptions
	key     string
	waiting map[uint64]bool // faces whose DeclareFinal is awaited
	timer   Timer
}

type pendingRequest struct {
	waiting map[uint64]bool
	timer   Timer
}

// ZID is this session's id.
func (s *Session) ZID() wire.ZenohID { return s.cfg.ZID }

// Mode is this session's role.
func (s *Session) Mode() wire.WhatAmI { return s.cfg.Mode }

// Open starts a session: it listens and connects as cfg says and returns
// at once (connections are made in the background). h receives what faces
// send.
func Open(cfg Config, h Handler) (*Session, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if h == nil {
		h = NopHandler{}
	}
	s := &Session{cfg: cfg, h: h, faces: map[uint64]*Face{}, byZID: map[wire.ZenohID]*Face{},
		subs: map[uint32]string{}, qbls: map[uint32]qblDecl{}, tokens: map[uint32]string{},
		interests: map[uint32]*localInterest{}, requests: map[uint32]*pendingRequest{},
		eventsCh: make(chan struct{}, 1)}
	s.routing, _ = h.(Routing)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	var eps []link.Endpoint
	for _, e := range cfg.Connect {
		ep, err := link.ParseEndpoint(e)
		if err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	for _, e := range cfg.Listen {
		ep, err := link.ParseEndpoint(e)
		if err != nil {
			s.closeListeners()
			return nil, err
		}
		ln, err := link.Listen(ep)
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("zenoh session: listen on %s: %w", e, err)
		}
		s.listeners = append(s.listeners, ln)
	}
	s.wg.Add(1)
	go s.dispatcher()
	for _, ln := range s.listeners {
		s.wg.Add(1)
		go s.acceptLoop(ln)
	}
	if len(eps) > 0 {
		if cfg.Mode == wire.Client {
			s.wg.Add(1)
			go s.connectLoop(eps)
		} else {
			for _, ep := range eps {
				s.wg.Add(1)
				go s.connectLoop([]link.Endpoint{ep})
			}
		}
	}
	return s, nil
}

func (s *Session) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// Listeners returns the endpoints the session listens on (ports chosen).
func (s *Session) Listeners() []link.Endpoint {
	var eps []link.Endpoint
	for _, ln := range s.listeners {
		eps = append(eps, ln.Endpoint())
	}
	return eps
}

// Faces returns the faces up now.
func (s *Session) Faces() []*Face {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := make([]*Face, 0, len(s.faces))
	for _, f := range s.faces {
		fs = append(fs, f)
	}
	return fs
}

func (s *Session) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
}

// Close closes every face (CLOSE sent) and listener and waits for the
// session's goroutines: no Handler call happens after it returns. It must
// not be called from a Handler.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	faces := make([]*Face, 0, len(s.faces))
	for _, f := range s.faces {
		faces = append(faces, f)
	}
	for _, r := range s.requests {
		r.timer.Stop()
	}
	for _, i := range s.interests {
		if i.timer != nil {
			i.timer.Stop()
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.closeListeners()
	for _, f := range faces {
		f.t.shutdown(closeErr(wire.CloseGeneric, "session closed"), true)
	}
	s.wg.Wait()
	return nil
}

// post queues a handler call that is not tied to a face's reader.
func (s *Session) post(fn func()) {
	s.eventsMu.Lock()
	s.eventsq = append(s.eventsq, fn)
	s.eventsMu.Unlock()
	select {
	case s.eventsCh <- struct{}{}:
	default:
	}
}

func (s *Session) dispatcher() {
	defer s.wg.Done()
	for {
		select {
		case <-s.eventsCh:
		case <-s.ctx.Done():
			return
		}
		for {
			s.eventsMu.Lock()
			q := s.eventsq
			s.eventsq = nil
			s.eventsMu.Unlock()
			if len(q) == 0 {
				break
			}
			for _, fn := range q {
				select {
				case <-s.ctx.Done():
					return
				default:
				}
				fn()
			}
		}
	}
}

func (s *Session) acceptLoop(ln link.Listener) {
	defer s.wg.Done()
	for {
		l, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() == nil && !errors.Is(err, link.ErrClosed) {
				s.logf("zenoh: accept on %s: %v", ln.Endpoint(), err)
				time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors: do not spin
				continue
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if _, err := s.establish(l, false); err != nil {
				s.logf("zenoh: link from %s: %v", l.Remote(), err)
			}
		}()
	}
}

// connectLoop keeps one face up towards one of eps, reconnecting with
// backoff when it goes down or cannot be opened.
func (s *Session) connectLoop(eps []link.Endpoint) {
	defer s.wg.Done()
	backoff := s.cfg.RetryMin
	for i := 0; ; i = (i + 1) % len(eps) {
		if s.ctx.Err() != nil {
			return
		}
		ep := eps[i]
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.HandshakeTimeout)
		l, err := link.Dial(ctx, ep)
		cancel()
		var f *Face
		if err == nil {
			f, err = s.establish(l, true)
		}
		if err == nil {
			backoff = s.cfg.RetryMin
			select {
			case <-f.done:
			case <-s.ctx.Done():
				return
			}
			continue
		}
		s.logf("zenoh: connect to %s: %v (retry in %v)", ep, err, backoff)
		wait, stop := after(s.cfg.Clock, backoff)
		select {
		case <-wait:
		case <-s.ctx.Done():
			stop()
			return
		}
		backoff = min(2*backoff, s.cfg.RetryMax)
	}
}

// Connect opens one link to ep now (no retry) and returns its face.
func (s *Session) Connect(ctx context.Context, endpoint string) (*Face, error) {
	ep, err := link.ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	l, err := link.Dial(ctx, ep)
	if err != nil {
		return nil, err
	}
	return s.establish(l, true)
}

// Attach runs the handshake on a link opened elsewhere (for instance an
// in-memory pipe) and adds the face.
func (s *Session) Attach(l link.Link, initiator bool) (*Face, error) {
	return s.establish(l, initiator)
}

func (s *Session) linkConfig(l link.Link) LinkConfig {
	return LinkConfig{ZID: s.cfg.ZID, WhatAmI: s.cfg.Mode, BatchSize: uint16(min(int(s.cfg.BatchSize), l.MTU())),
		Resolution: wire.DefaultResolution, Lease: s.cfg.Lease, QoS: !s.cfg.NoQoS, Patch: wire.PatchCurrent}
}

// handshake runs INIT/OPEN on l within the handshake timeout.
func (s *Session) handshake(l link.Link, initiator bool) (Params, error) {
	timer := s.cfg.Clock.AfterFunc(s.cfg.HandshakeTimeout, func() { l.Close() })
	defer timer.Stop()
	stop := context.AfterFunc(s.ctx, func() { l.Close() })
	defer stop()
	lc := s.linkConfig(l)
	var h *Handshake
	if initiator {
		var b []byte
		var err error
		h, b, err = NewInitiator(lc)
		if err != nil {
			return Params{}, err
		}
		s.trace(l, false, b)
		if err := l.WriteBatch(b); err != nil {
			return Params{}, err
		}
	} else {
		h = NewAcceptor(lc)
	}
	buf := make([]byte, link.MaxBatch)
	for {
		n, err := l.ReadBatch(buf)
		if err != nil {
			if !timer.Stop() {
				return Params{}, fmt.Errorf("zenoh handshake: timeout after %v", s.cfg.HandshakeTimeout)
			}
			return Params{}, err
		}
		s.trace(l, true, buf[:n])
		out, done, err := h.Handle(buf[:n])
		if err != nil {
			if cb := CloseBatch(err, false); cb != nil {
				s.trace(l, false, cb)
				_ = l.WriteBatch(cb)
			}
			return Params{}, err
		}
		if out != nil {
			s.trace(l, false, out)
			if err := l.WriteBatch(out); err != nil {
				return Params{}, err
			}
		}
		if done {
			return h.Params(), nil
		}
	}
}

func (s *Session) trace(l link.Link, rx bool, b []byte) {
	if s.cfg.Trace != nil {
		s.cfg.Trace(l.Remote(), rx, b)
	}
}

// establish handshakes l and adds its face.
func (s *Session) establish(l link.Link, initiator bool) (*Face, error) {
	p, err := s.handshake(l, initiator)
	if err != nil {
		l.Close()
		return nil, err
	}
	f := &Face{ZID: p.RemoteZID, WhatAmI: p.RemoteWhatAmI, Local: l.Local(), Remote: l.Remote(), Params: p,
		done: make(chan struct{}), keyExprs: map[uint16]string{}, subs: map[uint32]string{},
		qbls: map[uint32]qblDecl{}, tokens: map[uint32]string{}, interests: map[uint32]*remoteInterest{},
		finalized: map[uint32]*localInterest{}}
	f.t = newTransport(s, l, p)
	f.t.f = f
	s.mu.Lock()
	old := s.byZID[p.RemoteZID]
	if s.closed || (old != nil && !replaces(p, old.Params)) {
		reason := "session closed"
		if !s.closed {
			reason = "a link to " + p.RemoteZID.String() + " is already up"
		}
		s.mu.Unlock()
		s.Stats.FacesRejected.Add(1)
		if b := CloseBatch(closeErr(wire.CloseMaxLinks, "%s", reason), false); b != nil {
			_ = l.WriteBatch(b)
		}
		l.Close()
		return nil, errors.New("zenoh: " + reason)
	}
	if old != nil {
		old.t.shutdown(closeErr(wire.CloseMaxLinks, "replaced by a new link"), true)
	}
	s.nextFace++
	f.ID = s.nextFace
	s.faces[f.ID] = f
	s.byZID[f.ZID] = f
	s.sendInitialLocked(f)
	s.wg.Add(1) // the reader: Close waits for it even if it starts after
	s.mu.Unlock()
	s.h.FaceUp(f)
	f.t.start()
	return f, nil
}

// replaces decides which of two links to the same node stays, the same
// way on both sides: when different nodes initiated them, the link opened
// by the smaller zid; when the same node did, the newer one (the remote
// reconnected before the old link expired).
func replaces(newp, oldp Params) bool {
	ni, oi := initiatorZID(newp), initiatorZID(oldp)
	if ni == oi {
		return true
	}
	return zidLess(ni, oi)
}

func initiatorZID(p Params) wire.ZenohID {
	if p.InitiatorSide {
		return p.LocalZID
	}
	return p.RemoteZID
}

// zidLess orders ids as the unsigned integers they are.
func zidLess(a, b wire.ZenohID) bool {
	ab, bb := a.Bytes(), b.Bytes()
	if len(ab) != len(bb) {
		return len(ab) < len(bb)
	}
	for i := len(ab) - 1; i >= 0; i-- {
		if ab[i] != bb[i] {
			return ab[i] < bb[i]
		}
	}
	return false
}

// pushesAll reports whether declarations go to f without an interest:
// peers and routers get everything, clients only what they asked for.
func (s *Session) pushesAll(f *Face) bool { return f.WhatAmI != wire.Client }

// sendInitialLocked sends a new face this session's declarations: to a
// peer with interest id 0 then DeclareFinal(0) (zenoh's p2p initial
// interest), to a router plainly, and the interests in force.
func (s *Session) sendInitialLocked(f *Face) {
	if !s.pushesAll(f) {
		return
	}
	p2p := f.WhatAmI == wire.Peer && s.cfg.Mode == wire.Peer
	decl := func(body wire.Declaration) {
		d := &wire.Declare{QoS: wire.QoSDeclare, Body: body}
		if p2p {
			d.HasInterestID = true
		}
		f.t.send(d, true)
	}
	for id, k := range s.subs {
		decl(&wire.DeclareSubscriber{ID: id, WireExpr: wire.WireExpr{Suffix: k}})
	}
	for id, q := range s.qbls {
		decl(&wire.DeclareQueryable{ID: id, WireExpr: wire.WireExpr{Suffix: q.key}, Complete: q.complete})
	}
	for id, k := range s.tokens {
		decl(&wire.DeclareToken{ID: id, WireExpr: wire.WireExpr{Suffix: k}})
	}
	if p2p {
		decl(&wire.DeclareFinal{})
	}
	// future interests in force go to a new router (after a reconnection,
	// with their current part again so that the state is complete; their
	// DeclareFinal is not awaited)
	for id, i := range s.interests {
		if i.mode.Future() && s.sendsInterest(f, i) {
			f.t.send(interestMsg(id, i.mode, i), true)
		}
	}
}

func interestMsg(id uint32, mode wire.InterestMode, i *localInterest) *wire.Interest {
	m := &wire.Interest{ID: id, Mode: mode, Options: i.options, QoS: wire.QoSDeclare}
	if i.key != "" {
		m.WireExpr = &wire.WireExpr{Suffix: i.key}
	}
	return m
}

// sendsInterest reports whether this session's interest goes to f:
// routers answer interests; peers push their declarations, and only
// current token interests are asked of them (as zenoh peers do) until
// their initial declarations are complete.
func (s *Session) sendsInterest(f *Face, i *localInterest) bool {
	return f.WhatAmI == wire.Router
}

// faceDown removes f and reports the undeclaration of everything it had
// declared (called by its reader once the transport stopped).
func (s *Session) faceDown(f *Face) {
	s.mu.Lock()
	delete(s.faces, f.ID)
	if s.byZID[f.ZID] == f {
		delete(s.byZID, f.ZID)
	}
	var gone []Decl
	for id, k := range f.subs {
		gone = append(gone, Decl{Kind: KindSubscriber, ID: id, Key: k, Undeclare: true})
	}
	for id, q := range f.qbls {
		gone = append(gone, Decl{Kind: KindQueryable, ID: id, Key: q.key, Complete: q.complete, Distance: q.distance, Undeclare: true})
	}
	for id, k := range f.tokens {
		gone = append(gone, Decl{Kind: KindToken, ID: id, Key: k, Undeclare: true})
	}
	var finals []uint32
	for rid, r := range s.requests {
		if r.waiting[f.ID] {
			delete(r.waiting, f.ID)
			if len(r.waiting) == 0 {
				r.timer.Stop()
				delete(s.requests, rid)
				finals = append(finals, rid)
			}
		}
	}
	var ifinals []uint32
	for id, i := range s.interests {
		if i.waiting[f.ID] {
			delete(i.waiting, f.ID)
			if len(i.waiting) == 0 && i.mode.Current() {
				ifinals = append(ifinals, id)
			}
		}
	}
	s.mu.Unlock()
	for _, d := range gone {
		s.h.Declared(f, d)
	}
	for _, rid := range finals {
		s.h.ResponseFinal(rid)
	}
	for _, id := range ifinals {
		s.h.InterestFinal(id)
	}
	s.h.FaceDown(f, f.t.closeReason())
	close(f.done)
}

// resolveLocked turns a wire expression from f into a key.
func (s *Session) resolveLocked(f *Face, w wire.WireExpr) (string, bool) {
	if w.Scope == 0 {
		return w.Suffix, true
	}
	if !w.SenderMapping {
		// this session declares no key expressions
		s.Stats.UnknownScope.Add(1)
		return "", false
	}
	prefix, ok := f.keyExprs[w.Scope]
	if !ok {
		s.Stats.UnknownScope.Add(1)
		return "", false
	}
	return prefix + w.Suffix, true
}

func (s *Session) resolveKey(f *Face, w wire.WireExpr) (string, bool) {
	var key string
	if w.Scope == 0 {
		key = w.Suffix
	} else {
		var ok bool
		s.mu.Lock()
		key, ok = s.resolveLocked(f, w)
		s.mu.Unlock()
		if !ok {
			return "", false
		}
	}
	if keyexpr.Validate(key) != nil {
		s.Stats.InvalidKey.Add(1)
		return "", false
	}
	return key, true
}

// dispatch handles one network message from f (its reader goroutine).
func (s *Session) dispatch(f *Face, m wire.NetworkMessage, reliable bool) {
	switch m := m.(type) {
	case *wire.Push:
		if key, ok := s.resolveKey(f, m.WireExpr); ok {
			s.h.Push(f, key, m, reliable)
		}
	case *wire.Request:
		if key, ok := s.resolveKey(f, m.WireExpr); ok {
			s.h.Request(f, key, m)
		} else {
			f.t.send(&wire.ResponseFinal{RequestID: m.ID, QoS: wire.QoSResponse}, true)
		}
	case *wire.Response:
		s.mu.Lock()
		_, known := s.requests[m.RequestID]
		s.mu.Unlock()
		if !known && s.routing == nil {
			s.Stats.UnknownReply.Add(1)
			return
		}
		key, ok := "", true
		if m.WireExpr != (wire.WireExpr{}) {
			key, ok = s.resolveKey(f, m.WireExpr)
		}
		switch {
		case !ok:
		case known:
			s.h.Response(m.RequestID, f, key, m)
		default:
			s.routing.RoutedResponse(f, key, m)
		}
	case *wire.ResponseFinal:
		s.mu.Lock()
		r := s.requests[m.RequestID]
		if r == nil && s.routing != nil {
			s.mu.Unlock()
			s.routing.RoutedResponseFinal(f, m.RequestID)
			return
		}
		final := false
		if r != nil && r.waiting[f.ID] {
			delete(r.waiting, f.ID)
			if len(r.waiting) == 0 {
				r.timer.Stop()
				delete(s.requests, m.RequestID)
				final = true
			}
		}
		s.mu.Unlock()
		if final {
			s.h.ResponseFinal(m.RequestID)
		}
	case *wire.Declare:
		s.onDeclare(f, m)
	case *wire.Interest:
		if s.routing != nil {
			s.routeInterest(f, m)
			return
		}
		s.onInterest(f, m)
	default:
		s.Stats.Unhandled.Add(1)
	}
}

func (s *Session) onDeclare(f *Face, m *wire.Declare) {
	var ev []Decl
	var interestFinal bool
	s.mu.Lock()
	// a declaration that answers a current-only interest of ours is a
	// snapshot: reported, not kept
	keep := true
	if m.HasInterestID && m.InterestID != 0 {
		if i := s.interests[m.InterestID]; i != nil && !i.mode.Future() {
			keep = false
		}
	}
	full := func() bool {
		if len(f.subs)+len(f.qbls)+len(f.tokens) >= maxDecls {
			s.Stats.DeclOverflow.Add(1)
			return true
		}
		return false
	}
	d := Decl{Interest: m.HasInterestID && m.InterestID != 0, InterestID: m.InterestID}
	switch b := m.Body.(type) {
	case *wire.DeclareKeyExpr:
		prefix, ok := s.resolveLocked(f, wire.WireExpr{Scope: b.WireExpr.Scope, Suffix: b.WireExpr.Suffix, SenderMapping: true})
		if !ok {
			break
		}
		if _, dup := f.keyExprs[b.ID]; !dup && (len(f.keyExprs) >= maxKeyExprs || f.keyExprBytes+len(prefix) > maxKeyExprBytes) {
			s.Stats.DeclOverflow.Add(1)
			break
		}
		f.keyExprBytes += len(prefix) - len(f.keyExprs[b.ID])
		f.keyExprs[b.ID] = prefix
	case *wire.UndeclareKeyExpr:
		f.keyExprBytes -= len(f.keyExprs[b.ID])
		delete(f.keyExprs, b.ID)
	case *wire.DeclareSubscriber:
		if key, ok := s.declKeyLocked(f, b.WireExpr); ok {
			d.Kind, d.ID, d.Key = KindSubscriber, b.ID, key
			if keep {
				if _, dup := f.subs[b.ID]; !dup && full() {
					break
				}
				f.subs[b.ID] = key
			}
			ev = append(ev, d)
		}
	case *wire.UndeclareSubscriber:
		if key, ok := f.subs[b.ID]; ok {
			delete(f.subs, b.ID)
			ev = append(ev, Decl{Kind: KindSubscriber, ID: b.ID, Key: key, Undeclare: true})
		}
	case *wire.DeclareQueryable:
		if key, ok := s.declKeyLocked(f, b.WireExpr); ok {
			d.Kind, d.ID, d.Key, d.Complete, d.Distance = KindQueryable, b.ID, key, b.Complete, b.Distance
			if keep {
				if _, dup := f.qbls[b.ID]; !dup && full() {
					break
				}
				f.qbls[b.ID] = qblDecl{key, b.Complete, b.Distance}
			}
			ev = append(ev, d)
		}
	case *wire.UndeclareQueryable:
		if q, ok := f.qbls[b.ID]; ok {
			delete(f.qbls, b.ID)
			ev = append(ev, Decl{Kind: KindQueryable, ID: b.ID, Key: q.key, Complete: q.complete, Distance: q.distance, Undeclare: true})
		}
	case *wire.DeclareToken:
		if key, ok := s.declKeyLocked(f, b.WireExpr); ok {
			d.Kind, d.ID, d.Key = KindToken, b.ID, key
			if keep {
				if _, dup := f.tokens[b.ID]; !dup && full() {
					break
				}
				f.tokens[b.ID] = key
			}
			ev = append(ev, d)
		}
	case *wire.UndeclareToken:
		if key, ok := f.tokens[b.ID]; ok {
			delete(f.tokens, b.ID)
			ev = append(ev, Decl{Kind: KindToken, ID: b.ID, Key: key, Undeclare: true})
		}
	case *wire.DeclareFinal:
		if !m.HasInterestID {
			break
		}
		if m.InterestID == 0 {
			f.initialDone = true
			break
		}
		if i := s.interests[m.InterestID]; i != nil && i.waiting[f.ID] {
			delete(i.waiting, f.ID)
			if i.mode.Future() {
				f.finalized[m.InterestID] = i
			}
			if len(i.waiting) == 0 && i.mode.Current() {
				if i.timer != nil {
					i.timer.Stop()
				}
				interestFinal = true
				if !i.mode.Future() {
					delete(s.interests, m.InterestID)
				}
			}
		}
	}
	s.mu.Unlock()
	for _, d := range ev {
		s.h.Declared(f, d)
	}
	if interestFinal {
		s.h.InterestFinal(m.InterestID)
	}
}

func (s *Session) declKeyLocked(f *Face, w wire.WireExpr) (string, bool) {
	key, ok := s.resolveLocked(f, w)
	if !ok {
		return "", false
	}
	if keyexpr.Validate(key) != nil {
		s.Stats.InvalidKey.Add(1)
		return "", false
	}
	return key, true
}

// routeInterest hands an interest to the routing Handler with its key
// resolved, or answers DeclareFinal when the key is not valid.
func (s *Session) routeInterest(f *Face, m *wire.Interest) {
	key := ""
	if m.Mode != wire.InterestFinal && m.WireExpr != nil {
		k, ok := s.resolveKey(f, *m.WireExpr)
		if !ok {
			if m.Mode.Current() {
				f.t.send(&wire.Declare{HasInterestID: true, InterestID: m.ID, QoS: wire.QoSDeclare, Body: &wire.DeclareFinal{}}, true)
			}
			return
		}
		key = k
	}
	s.routing.Interest(f, key, m)
}

// onInterest answers an interest from f with this session's matching
// declarations (and, for a client, those of the other faces: a peer
// routes for its clients), then DeclareFinal; a future interest is kept.
func (s *Session) onInterest(f *Face, m *wire.Interest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Mode == wire.InterestFinal {
		delete(f.interests, m.ID)
		return
	}
	key := ""
	if m.WireExpr != nil {
		k, ok := s.resolveLocked(f, *m.WireExpr)
		if !ok || keyexpr.Validate(k) != nil {
			f.t.send(&wire.Declare{HasInterestID: true, InterestID: m.ID, QoS: wire.QoSDeclare, Body: &wire.DeclareFinal{}}, true)
			return
		}
		key = k
	}
	match := func(k string) bool { return key == "" || keyexpr.Intersects(key, k) }
	ri := &remoteInterest{options: m.Options, key: key, aggregate: m.Options&wire.InterestAggregate != 0 && key != ""}
	reply := func(body wire.Declaration) {
		f.t.send(&wire.Declare{HasInterestID: true, InterestID: m.ID, QoS: wire.QoSDeclare, Body: body}, true)
	}
	if ri.aggregate {
		// one declaration on the interest's own key while something matches
		for _, k := range []DeclKind{KindSubscriber, KindQueryable} {
			if m.Options&kindOption(k) == 0 {
				continue
			}
			a := &ri.agg[aggIndex(k)]
			if m.Mode.Future() {
				a.id = s.newIDLocked()
			}
			if complete, ok := s.anyLocalLocked(k, key); ok {
				a.declared = true
				if m.Mode.Current() {
					reply(aggBody(k, a.id, key, complete))
				}
			}
		}
	}
	if m.Mode.Current() {
		if m.Options&wire.InterestSubscribers != 0 && !ri.aggregate {
			for id, k := range s.subs {
				if match(k) {
					reply(&wire.DeclareSubscriber{ID: id, WireExpr: wire.WireExpr{Suffix: k}})
				}
			}
		}
		if m.Options&wire.InterestQueryables != 0 && !ri.aggregate {
			for id, q := range s.qbls {
				if match(q.key) {
					reply(&wire.DeclareQueryable{ID: id, WireExpr: wire.WireExpr{Suffix: q.key}, Complete: q.complete})
				}
			}
		}
		if m.Options&wire.InterestTokens != 0 {
			for id, k := range s.tokens {
				if match(k) {
					reply(&wire.DeclareToken{ID: id, WireExpr: wire.WireExpr{Suffix: k}})
				}
			}
			if f.WhatAmI == wire.Client {
				for _, o := range s.faces {
					if o == f {
						continue
					}
					for id, k := range o.tokens {
						if match(k) {
							// ids of other faces could collide with ours: offset them
							reply(&wire.DeclareToken{ID: uint32(o.ID)<<20 | id&0xfffff, WireExpr: wire.WireExpr{Suffix: k}})
						}
					}
				}
			}
		}
		reply(&wire.DeclareFinal{})
	}
	if m.Mode.Future() {
		if _, dup := f.interests[m.ID]; dup || len(f.interests) < maxDecls {
			f.interests[m.ID] = ri
		} else {
			s.Stats.DeclOverflow.Add(1)
		}
	}
}

func aggBody(k DeclKind, id uint32, key string, complete bool) wire.Declaration {
	if k == KindQueryable {
		return &wire.DeclareQueryable{ID: id, WireExpr: wire.WireExpr{Suffix: key}, Complete: complete}
	}
	return &wire.DeclareSubscriber{ID: id, WireExpr: wire.WireExpr{Suffix: key}}
}

func aggUndecl(k DeclKind, id uint32, key string) wire.Declaration {
	w := &wire.WireExpr{Suffix: key}
	if k == KindQueryable {
		return &wire.UndeclareQueryable{ID: id, WireExpr: w}
	}
	return &wire.UndeclareSubscriber{ID: id, WireExpr: w}
}

// anyLocalLocked reports whether a local subscriber (queryable) matches
// key, and for queryables whether one of them is complete.
func (s *Session) anyLocalLocked(k DeclKind, key string) (complete, ok bool) {
	switch k {
	case KindSubscriber:
		for _, sk := range s.subs {
			if keyexpr.Intersects(key, sk) {
				return false, true
			}
		}
	case KindQueryable:
		for _, q := range s.qbls {
			if keyexpr.Intersects(key, q.key) {
				ok = true
				complete = complete || q.complete
			}
		}
	}
	return complete, ok
}

// propagateLocked sends a local declaration or undeclaration to the faces:
// all of it to peers and routers; to a client, what its interests ask
// (aggregate interests as one declaration on their key while something
// matches).
func (s *Session) propagateLocked(kind DeclKind, key string, body wire.Declaration) {
	for _, f := range s.faces {
		if s.pushesAll(f) {
			f.t.send(&wire.Declare{QoS: wire.QoSDeclare, Body: body}, true)
			continue
		}
		simple := false
		for _, i := range f.interests {
			if i.options&kindOption(kind) == 0 {
				continue
			}
			if i.aggregate && kind != KindToken {
				a := &i.agg[aggIndex(kind)]
				complete, now := s.anyLocalLocked(kind, i.key)
				switch {
				case now && !a.declared:
					f.t.send(&wire.Declare{QoS: wire.QoSDeclare, Body: aggBody(kind, a.id, i.key, complete)}, true)
				case !now && a.declared:
					f.t.send(&wire.Declare{QoS: wire.QoSDeclare, Body: aggUndecl(kind, a.id, i.key)}, true)
				}
				a.declared = now
				continue
			}
			if i.key == "" || keyexpr.Intersects(i.key, key) {
				simple = true
			}
		}
		if simple {
			f.t.send(&wire.Declare{QoS: wire.QoSDeclare, Body: body}, true)
		}
	}
}

func (s *Session) newIDLocked() uint32 {
	s.nextID++
	if s.nextID == 0 {
		s.nextID = 1
	}
	return s.nextID
}

func kindOption(k DeclKind) wire.InterestOptions {
	switch k {
	case KindSubscriber:
		return wire.InterestSubscribers
	case KindQueryable:
		return wire.InterestQueryables
	}
	return wire.InterestTokens
}

func (s *Session) declare(kind DeclKind, key string, complete bool) (uint32, error) {
	if err := keyexpr.Validate(key); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("zenoh session: closed")
	}
	id := s.newIDLocked()
	var body wire.Declaration
	w := wire.WireExpr{Suffix: key}
	switch kind {
	case KindSubscriber:
		s.subs[id] = key
		body = &wire.DeclareSubscriber{ID: id, WireExpr: w}
	case KindQueryable:
		s.qbls[id] = qblDecl{key: key, complete: complete}
		body = &wire.DeclareQueryable{ID: id, WireExpr: w, Complete: complete}
	case KindToken:
		s.tokens[id] = key
		body = &wire.DeclareToken{ID: id, WireExpr: w}
	}
	s.propagateLocked(kind, key, body)
	return id, nil
}

func (s *Session) undeclare(kind DeclKind, id uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var key string
	var ok bool
	switch kind {
	case KindSubscriber:
		key, ok = s.subs[id]
		delete(s.subs, id)
	case KindQueryable:
		var q qblDecl
		q, ok = s.qbls[id]
		key = q.key
		delete(s.qbls, id)
	case KindToken:
		key, ok = s.tokens[id]
		delete(s.tokens, id)
	}
	if !ok {
		return fmt.Errorf("zenoh session: no %v %d", kind, id)
	}
	w := &wire.WireExpr{Suffix: key}
	var body wire.Declaration
	switch kind {
	case KindSubscriber:
		body = &wire.UndeclareSubscriber{ID: id, WireExpr: w}
	case KindQueryable:
		body = &wire.UndeclareQueryable{ID: id, WireExpr: w}
	case KindToken:
		body = &wire.UndeclareToken{ID: id, WireExpr: w}
	}
	s.propagateLocked(kind, key, body)
	return nil
}

// DeclareSubscriber declares a subscriber on key to the faces and returns
// its id.
func (s *Session) DeclareSubscriber(key string) (uint32, error) {
	return s.declare(KindSubscriber, key, false)
}

// UndeclareSubscriber undeclares a subscriber.
func (s *Session) UndeclareSubscriber(id uint32) error { return s.undeclare(KindSubscriber, id) }

// DeclareQueryable declares a queryable on key.
func (s *Session) DeclareQueryable(key string, complete bool) (uint32, error) {
	return s.declare(KindQueryable, key, complete)
}

// UndeclareQueryable undeclares a queryable.
func (s *Session) UndeclareQueryable(id uint32) error { return s.undeclare(KindQueryable, id) }

// DeclareToken declares a liveliness token on key.
func (s *Session) DeclareToken(key string) (uint32, error) { return s.declare(KindToken, key, false) }

// UndeclareToken undeclares a liveliness token.
func (s *Session) UndeclareToken(id uint32) error { return s.undeclare(KindToken, id) }

// DeclareInterest asks for declarations of the kinds in options on key
// ("" for all keys): with a Current mode, the matching declarations the
// session already knows are reported at once (Handler.Declared with
// Interest set), then those of routers, and Handler.InterestFinal(id)
// follows when every router answered (or InterestTimeout passed); with a
// Future mode, later declarations keep coming as plain declarations
// until UndeclareInterest. A liveliness get is (Current, Tokens, key).
func (s *Session) DeclareInterest(mode wire.InterestMode, options wire.InterestOptions, key string) (uint32, error) {
	if mode == wire.InterestFinal {
		return 0, errors.New("zenoh session: interest mode final")
	}
	if key != "" {
		if err := keyexpr.Validate(key); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("zenoh session: closed")
	}
	id := s.newIDLocked()
	i := &localInterest{mode: mode, options: options, key: key, waiting: map[uint64]bool{}}
	s.interests[id] = i
	match := func(k string) bool { return key == "" || keyexpr.Intersects(key, k) }
	var snapshot []func()
	if mode.Current() {
		for _, f := range s.faces {
			f := f
			if options&wire.InterestSubscribers != 0 {
				for sid, k := range f.subs {
					if match(k) {
						d := Decl{Kind: KindSubscriber, ID: sid, Key: k, Interest: true, InterestID: id}
						snapshot = append(snapshot, func() { s.h.Declared(f, d) })
					}
				}
			}
			if options&wire.InterestQueryables != 0 {
				for qid, q := range f.qbls {
					if match(q.key) {
						d := Decl{Kind: KindQueryable, ID: qid, Key: q.key, Complete: q.complete, Distance: q.distance, Interest: true, InterestID: id}
						snapshot = append(snapshot, func() { s.h.Declared(f, d) })
					}
				}
			}
			if options&wire.InterestTokens != 0 {
				for tid, k := range f.tokens {
					if match(k) {
						d := Decl{Kind: KindToken, ID: tid, Key: k, Interest: true, InterestID: id}
						snapshot = append(snapshot, func() { s.h.Declared(f, d) })
					}
				}
			}
		}
	}
	for _, f := range s.faces {
		if s.sendsInterest(f, i) && f.t.send(interestMsg(id, mode, i), true) && mode.Current() {
			i.waiting[f.ID] = true
		}
	}
	if mode.Current() {
		if len(i.waiting) == 0 {
			snapshot = append(snapshot, func() { s.h.InterestFinal(id) })
			if !mode.Future() {
				delete(s.interests, id)
			}
		} else {
			i.timer = s.cfg.Clock.AfterFunc(s.cfg.InterestTimeout, func() { s.interestTimeout(id) })
		}
	}
	if len(snapshot) > 0 {
		s.post(func() {
			for _, fn := range snapshot {
				fn()
			}
		})
	}
	return id, nil
}

func (s *Session) interestTimeout(id uint32) {
	s.mu.Lock()
	i := s.interests[id]
	if i == nil || len(i.waiting) == 0 || s.closed {
		s.mu.Unlock()
		return
	}
	i.waiting = map[uint64]bool{}
	if !i.mode.Future() {
		delete(s.interests, id)
	}
	s.mu.Unlock()
	s.post(func() { s.h.InterestFinal(id) })
}

// UndeclareInterest ends a future interest (INTEREST Final to the faces
// it went to).
func (s *Session) UndeclareInterest(id uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.interests[id]
	if i == nil {
		return fmt.Errorf("zenoh session: no interest %d", id)
	}
	delete(s.interests, id)
	if i.timer != nil {
		i.timer.Stop()
	}
	for _, f := range s.faces {
		delete(f.finalized, id)
	}
	if i.mode.Future() {
		for _, f := range s.faces {
			if s.sendsInterest(f, i) {
				f.t.send(&wire.Interest{ID: id, Mode: wire.InterestFinal, QoS: wire.QoSDeclare}, true)
			}
		}
	}
	return nil
}

// PutOptions are the QoS and reliability of a publication.
type PutOptions struct {
	QoS wire.QoS
	// BestEffort sends on the best-effort channel (default reliable).
	BestEffort bool
	Timestamp  *wire.Timestamp
}

// Put publishes a PUT or DEL on key to the faces that want it: in peer
// mode those with a matching subscriber, and the routers (a zenoh router
// declares subscribers to a peer only when asked: zenoh peers send their
// publications to a router unless it finalized a future subscriber
// interest of theirs covering the key), in client mode the router. It
// never blocks and returns how many faces it went to. This session's own
// subscribers are not served.
func (s *Session) Put(key string, body wire.PushBody, o PutOptions) int {
	m := &wire.Push{WireExpr: wire.WireExpr{Suffix: key}, QoS: o.QoS, Timestamp: o.Timestamp, Body: body}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faces {
		if s.cfg.Mode == wire.Client || s.routerUnaskedLocked(f, KindSubscriber, key) || f.wantsLocked(key) {
			if f.t.send(m, !o.BestEffort) {
				n++
			}
		}
	}
	return n
}

// routerUnaskedLocked reports whether a peer sends a put (a query) on key
// to router face f whatever f declared, as zenoh peers do until the router
// finalized one of their future subscriber (queryable) interests covering
// the key: from then on the router's declarations tell.
func (s *Session) routerUnaskedLocked(f *Face, k DeclKind, key string) bool {
	if s.cfg.Mode != wire.Peer || f.WhatAmI != wire.Router {
		return false
	}
	for _, i := range f.finalized {
		if i.options&kindOption(k) != 0 && (i.key == "" || keyexpr.Includes(i.key, key)) {
			return false
		}
	}
	return true
}

func (f *Face) wantsLocked(key string) bool {
	for _, k := range f.subs {
		if keyexpr.Intersects(k, key) {
			return true
		}
	}
	return false
}

// Matching reports whether some face has a subscriber matching key (in
// client mode: whether a router is connected).
func (s *Session) Matching(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faces {
		if s.cfg.Mode == wire.Client || f.wantsLocked(key) {
			return true
		}
	}
	return false
}

// RequestOptions shape a query.
type RequestOptions struct {
	// QoS zero is zenoh's request default (priority Data, Block).
	QoS     wire.QoS
	Target  wire.QueryTarget
	Budget  uint32
	Timeout time.Duration // 10 s when 0
}

// Request sends a query on key to the faces that can answer it (peer
// mode: a matching queryable, and the routers as for Put; client mode:
// the router) and returns its
// id. Responses come to Handler.Response, then one Handler.ResponseFinal
// when every face finished, timed out, or none was asked.
func (s *Session) Request(key string, q *wire.Query, o RequestOptions) (uint32, error) {
	if err := keyexpr.Validate(key); err != nil {
		return 0, err
	}
	if o.QoS == (wire.QoS{}) {
		o.QoS = wire.QoSRequest
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("zenoh session: closed")
	}
	rid := s.newIDLocked()
	m := &wire.Request{ID: rid, WireExpr: wire.WireExpr{Suffix: key}, QoS: o.QoS, Target: o.Target,
		Budget: o.Budget, Timeout: o.Timeout, Query: q}
	r := &pendingRequest{waiting: map[uint64]bool{}}
	for _, f := range s.faces {
		if s.cfg.Mode == wire.Client || s.routerUnaskedLocked(f, KindQueryable, key) || f.answersLocked(key) {
			if f.t.send(m, true) {
				r.waiting[f.ID] = true
			}
		}
	}
	if len(r.waiting) == 0 {
		s.post(func() { s.h.ResponseFinal(rid) })
		return rid, nil
	}
	s.requests[rid] = r
	r.timer = s.cfg.Clock.AfterFunc(o.Timeout, func() {
		s.mu.Lock()
		_, ok := s.requests[rid]
		delete(s.requests, rid)
		closed := s.closed
		s.mu.Unlock()
		if ok && !closed {
			s.post(func() { s.h.ResponseFinal(rid) })
		}
	})
	return rid, nil
}

func (f *Face) answersLocked(key string) bool {
	for _, q := range f.qbls {
		if keyexpr.Intersects(q.key, key) {
			return true
		}
	}
	return false
}

// Reply answers request rid of face f for key (qos zero: zenoh's response
// default, priority Data, Block).
func (s *Session) Reply(f *Face, rid uint32, key string, body wire.ResponseBody, qos wire.QoS) bool {
	if qos == (wire.QoS{}) {
		qos = wire.QoSResponse
	}
	return f.t.send(&wire.Response{RequestID: rid, WireExpr: wire.WireExpr{Suffix: key}, QoS: qos, Body: body}, true)
}

// ReplyFinal ends the responses to request rid of face f.
func (s *Session) ReplyFinal(f *Face, rid uint32) bool {
	return f.t.send(&wire.ResponseFinal{RequestID: rid, QoS: wire.QoSResponse}, true)
}
