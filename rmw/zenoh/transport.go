package zenoh

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/keyexpr"
	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// ErrClosed is returned by operations on a closed transport or endpoint.
var ErrClosed = errors.New("zenoh: closed")

// infiniteQueryTimeout stands for rmw_zenoh's "no timeout" (action
// get_result queries, transient-local history queries).
const infiniteQueryTimeout = 100 * 365 * 24 * time.Hour

// Stats counts what the transport dropped.
type Stats struct {
	// BadAttachment counts samples, queries and replies without a
	// readable rmw_zenoh attachment: rmw_zenoh drops them, so does this
	// transport.
	BadAttachment atomic.Uint64
	// BadToken counts liveliness tokens under @ros2_lv/<domain>/ that do
	// not parse as rmw_zenoh's.
	BadToken atomic.Uint64
	// ErrReplies counts error replies to this transport's queries.
	ErrReplies atomic.Uint64
	// Evicted counts service requests dropped unanswered because a server
	// had too many pending.
	Evicted atomic.Uint64
}

// Transport is an rmw.Transport that puts ROS 2 on Zenoh exactly as
// rmw_zenoh_cpp does (see the package documentation). Make one with New.
type Transport struct {
	cfg      Config
	sess     *session.Session
	zid      wire.ZenohID
	zidStr   string
	stampOn  bool
	qTimeout time.Duration
	hlc      atomic.Uint64 // last zenoh timestamp given (NTP64)
	ready    chan struct{} // closed once sess is set
	done     chan struct{} // closed by Close
	wg       sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	nextID   uint64 // rmw_zenoh's entity counter: nodes and endpoints share it
	nextEID  uint32 // zenoh entity ids of advanced publishers and subscribers
	nodes    map[rmw.NodeInfo]*localNode
	subs     map[string][]*subscriber // exact keys; slices replaced, never changed
	wsubs    []*subscriber            // keys with wildcards
	qbls     []*queryable             // replaced, never changed
	requests map[uint32]*outQuery     // this transport's queries in flight remotely
	graph    graphCache
	gsig     rmw.GraphSignal
	routers  int
	routerCh chan struct{} // closed when a router face comes up
	eps      map[endpoint]struct{}

	evMu     sync.Mutex
	evq      []pendingEvent
	draining bool

	// Stats are the transport's drop counters.
	Stats Stats
}

// endpoint is a local endpoint, for Close.
type endpoint interface{ guardOf() *guard }

type localNode struct {
	ent   ros.Entity
	token string
	tokID uint32
	refs  int
}

type pendingEvent struct {
	g  *guard
	fn func(rmw.Event)
	ev rmw.Event
}

// New opens a zenoh session as cfg says (listening and connecting in the
// background) and returns the transport on it.
func New(cfg Config) (*Transport, error) {
	ownClock := cfg.Clock != nil
	cfg.setDefaults()
	sc, err := sessionConfig(cfg.Zenoh, cfg.Logf)
	if err != nil {
		return nil, err
	}
	if sc.ZID.IsZero() {
		sc.ZID = wire.RandomZenohID()
	}
	t := &Transport{cfg: cfg, zid: sc.ZID, zidStr: sc.ZID.String(), stampOn: cfg.Zenoh.TimestampingEnabled(),
		qTimeout: cfg.Zenoh.QueryTimeout(), ready: make(chan struct{}), done: make(chan struct{}),
		nodes: map[rmw.NodeInfo]*localNode{}, subs: map[string][]*subscriber{}, requests: map[uint32]*outQuery{},
		graph: newGraphCache(), routerCh: make(chan struct{}), eps: map[endpoint]struct{}{}}
	if t.qTimeout <= 0 {
		t.qTimeout = 10 * time.Second
	}
	if ownClock {
		sc.Clock = sessionClock{c: cfg.Clock, done: t.done}
	}
	s, err := session.Open(sc, handler{t})
	if err != nil {
		close(t.done)
		return nil, fmt.Errorf("zenoh: %w", err)
	}
	t.sess = s
	close(t.ready)
	// The graph: every token of the domain, now (a liveliness get) and
	// later (a liveliness subscriber). Peers push their tokens anyway;
	// routers send them because of this interest.
	if _, err := s.DeclareInterest(wire.InterestCurrentFuture, wire.InterestTokens|wire.InterestKeyExprs, ros.LivelinessKeyAll(cfg.Domain)); err != nil {
		s.Close()
		close(t.done)
		return nil, fmt.Errorf("zenoh: liveliness interest: %w", err)
	}
	if err := t.waitConnect(); err != nil {
		s.Close()
		close(t.done)
		return nil, err
	}
	if cfg.RouterCheckAttempts > 0 && sc.Mode == wire.Peer {
		t.wg.Add(1)
		go t.routerCheck(cfg.RouterCheckAttempts)
	}
	return t, nil
}

// waitConnect makes a client wait for its router as zenoh's open does
// (connect/timeout_ms, connect/exit_on_failure): a client that cannot reach
// one fails to open.
func (t *Transport) waitConnect() error {
	zc := t.cfg.Zenoh
	if zc.Mode != config.ModeClient || len(zc.ConnectEndpoints()) == 0 {
		return nil
	}
	d, forever := zc.ConnectTimeout()
	if d <= 0 && !forever {
		// one attempt: as long as a handshake may take
		d = time.Duration(zc.Transport.Unicast.OpenTimeoutMS) * time.Millisecond
		if d <= 0 {
			d = 10 * time.Second
		}
	}
	var timeout <-chan struct{}
	if !forever {
		ch, stop := t.cfg.Clock.After(d)
		defer stop()
		timeout = ch
	}
	select {
	case <-t.routerCh:
		return nil
	case <-timeout:
		if zc.ExitOnConnectFailure() {
			return fmt.Errorf("zenoh: client mode: no router answered at %v within %v", zc.ConnectEndpoints(), d)
		}
		return nil
	}
}

// routerCheck warns as rmw_zenoh does while no router is connected.
func (t *Transport) routerCheck(attempts uint64) {
	defer t.wg.Done()
	for i := uint64(0); i < attempts; i++ {
		ch, stop := t.cfg.Clock.After(config.RouterCheckInterval)
		select {
		case <-t.routerCh:
			stop()
			return
		case <-t.done:
			stop()
			return
		case <-ch:
		}
		t.cfg.Warnf("%s", config.NoRouterWarning)
	}
	if attempts > 1 {
		t.cfg.Warnf("%s", config.NoRouterGiveUp(attempts))
	}
}

// ZID returns the session's zenoh id as zenoh prints it.
func (t *Transport) ZID() string { return t.zidStr }

// Listeners returns the endpoints the session listens on, ports chosen
// ("tcp/127.0.0.1:40123"): what a peer gives as connect endpoint.
func (t *Transport) Listeners() []string {
	var out []string
	for _, e := range t.sess.Listeners() {
		out = append(out, e.String())
	}
	return out
}

// Discovering reports true: peers and routers join the graph after the
// transport starts (rmw.Discovering).
func (t *Transport) Discovering() bool { return true }

// Close closes every endpoint and the session. Once it returns, no
// callback of the transport runs. It is safe to call twice.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	eps := make([]endpoint, 0, len(t.eps))
	for e := range t.eps {
		eps = append(eps, e)
	}
	t.mu.Unlock()
	close(t.done)
	err := t.sess.Close()
	for _, e := range eps {
		e.guardOf().close()
	}
	t.wg.Wait()
	return err
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// stamp returns the next zenoh timestamp of this session (NTP64 of the
// wall clock, strictly increasing, as uhlc's), or nil when timestamping
// is off.
func (t *Transport) stamp() *wire.Timestamp {
	if !t.stampOn {
		return nil
	}
	now := ntp64(t.cfg.WallNow())
	for {
		last := t.hlc.Load()
		v := max(now, last+1)
		if t.hlc.CompareAndSwap(last, v) {
			return &wire.Timestamp{Time: v, ID: t.zid}
		}
	}
}

// ntp64 converts ns since the Unix epoch to zenoh's 32.32 time.
func ntp64(ns int64) uint64 {
	if ns < 0 {
		ns = 0
	}
	sec, frac := uint64(ns/1e9), uint64(ns%1e9)
	return sec<<32 | (frac<<32)/1e9
}

// normNode fills the defaults rcl gives: the root namespace, the "/" enclave.
func normNode(n rmw.NodeInfo) rmw.NodeInfo {
	if n.Namespace == "" {
		n.Namespace = "/"
	}
	if n.Enclave == "" {
		n.Enclave = "/"
	}
	return n
}

// acquireNodeLocked returns the node's entity, declaring its NN token when
// it gets its first endpoint (t.mu held).
func (t *Transport) acquireNodeLocked(n rmw.NodeInfo) (*localNode, error) {
	n = normNode(n)
	if ln := t.nodes[n]; ln != nil {
		ln.refs++
		return ln, nil
	}
	ent := ros.NodeEntity(t.cfg.Domain, t.zidStr, t.nextID, n)
	tok, err := ent.Token()
	if err != nil {
		return nil, fmt.Errorf("zenoh: node %s%s: %w", n.Namespace, n.Name, err)
	}
	t.nextID++
	id, err := t.sess.DeclareToken(tok)
	if err != nil {
		return nil, fmt.Errorf("zenoh: node token: %w", err)
	}
	ln := &localNode{ent: ent, token: tok, tokID: id, refs: 1}
	t.nodes[n] = ln
	t.graphAddLocked(&gEntity{ent: &ln.ent, token: tok, gid: ros.TokenGID(tok), local: true})
	return ln, nil
}

// releaseNodeLocked drops a reference; the last undeclares the NN token.
func (t *Transport) releaseNodeLocked(n rmw.NodeInfo) {
	n = normNode(n)
	ln := t.nodes[n]
	if ln == nil {
		return
	}
	if ln.refs--; ln.refs > 0 {
		return
	}
	delete(t.nodes, n)
	_ = t.sess.UndeclareToken(ln.tokID)
	t.graphRemoveLocked(ln.token)
}

func (t *Transport) newEIDLocked() uint32 {
	t.nextEID++
	return t.nextEID
}

// queueEvent queues an endpoint event for drainEvents (t.mu held).
func (t *Transport) queueEventLocked(g *guard, fn func(rmw.Event), ev rmw.Event) {
	if fn == nil {
		return
	}
	t.evMu.Lock()
	t.evq = append(t.evq, pendingEvent{g, fn, ev})
	t.evMu.Unlock()
}

// drainEvents runs the queued events, one goroutine at a time, with no
// transport lock held.
func (t *Transport) drainEvents() {
	t.evMu.Lock()
	if t.draining {
		t.evMu.Unlock()
		return
	}
	t.draining = true
	for len(t.evq) > 0 {
		q := t.evq
		t.evq = nil
		t.evMu.Unlock()
		for _, e := range q {
			if e.g.enter() {
				e.fn(e.ev)
				e.g.exit()
			}
		}
		t.evMu.Lock()
	}
	t.draining = false
	t.evMu.Unlock()
}

func gidHex(g [16]byte) string { return hex.EncodeToString(g[:]) }

// guard tracks the callbacks of one endpoint in progress, so that Close
// waits for them and no new one starts after it.
type guard struct {
	mu     sync.Mutex
	cond   *sync.Cond
	closed bool
	n      int
}

func (g *guard) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *guard) exit() {
	g.mu.Lock()
	g.n--
	if g.n == 0 && g.cond != nil {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// close stops new callbacks and waits for those in progress.
func (g *guard) close() {
	g.mu.Lock()
	g.closed = true
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	for g.n > 0 {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// sample is one received or locally published sample, valid only during
// the dispatch that carries it.
type sample struct {
	key        string
	payload    []byte
	attachment []byte
	ts         *wire.Timestamp
	src        *wire.SourceInfo
	face       *session.Face // the face it came from (nil: a local publisher)
}

// subscriber is a local zenoh subscriber: a topic subscription, or the
// heartbeat subscriber of a transient-local one.
type subscriber struct {
	key    string
	handle func(sample) // by value, so that a sample stays on its caller's stack
	adv    *advSub      // a transient-local subscription's
}

func (t *Transport) addSubscriberLocked(s *subscriber) {
	if keyexpr.IsWild(s.key) {
		t.wsubs = append(append([]*subscriber(nil), t.wsubs...), s)
		return
	}
	t.subs[s.key] = append(append([]*subscriber(nil), t.subs[s.key]...), s)
}

func (t *Transport) removeSubscriberLocked(s *subscriber) {
	del := func(l []*subscriber) []*subscriber {
		out := make([]*subscriber, 0, len(l))
		for _, x := range l {
			if x != s {
				out = append(out, x)
			}
		}
		return out
	}
	if keyexpr.IsWild(s.key) {
		t.wsubs = del(t.wsubs)
		return
	}
	if l := del(t.subs[s.key]); len(l) > 0 {
		t.subs[s.key] = l
	} else {
		delete(t.subs, s.key)
	}
}

// dispatch hands a sample to the local subscribers whose key matches.
func (t *Transport) dispatch(sm *sample) {
	t.mu.Lock()
	exact := t.subs[sm.key]
	var more []*subscriber
	wild := keyexpr.IsWild(sm.key)
	if wild {
		exact = nil
		for k, l := range t.subs {
			if keyexpr.Intersects(k, sm.key) {
				more = append(more, l...)
			}
		}
	}
	for _, s := range t.wsubs {
		if keyexpr.Intersects(s.key, sm.key) {
			more = append(more, s)
		}
	}
	t.mu.Unlock()
	for _, s := range exact {
		s.handle(*sm)
	}
	for _, s := range more {
		s.handle(*sm)
	}
}

// handler is the transport's session.Handler.
type handler struct{ t *Transport }

func (h handler) FaceUp(f *session.Face) {
	<-h.t.ready
	h.t.cfg.Logf("zenoh: %v up", f)
	if f.WhatAmI != wire.Router {
		return
	}
	t := h.t
	t.mu.Lock()
	if t.routers++; t.routers == 1 {
		select {
		case <-t.routerCh:
		default:
			close(t.routerCh)
		}
	}
	t.mu.Unlock()
}

func (h handler) FaceDown(f *session.Face, err error) {
	h.t.cfg.Logf("zenoh: %v down: %v", f, err)
	if f.WhatAmI != wire.Router {
		return
	}
	h.t.mu.Lock()
	h.t.routers--
	h.t.mu.Unlock()
}

func (h handler) Push(f *session.Face, key string, m *wire.Push, reliable bool) {
	put, ok := m.Body.(*wire.Put)
	if !ok {
		return // a DEL: nothing in ROS
	}
	ts := put.Timestamp
	if ts == nil {
		ts = m.Timestamp
	}
	h.t.dispatch(&sample{key: key, payload: put.Payload, attachment: put.Attachment, ts: ts, src: put.SourceInfo, face: f})
}

func (h handler) Request(f *session.Face, key string, m *wire.Request) {
	<-h.t.ready
	h.t.onRemoteQuery(f, key, m)
}

func (h handler) Response(rid uint32, f *session.Face, key string, m *wire.Response) {
	h.t.onResponse(rid, key, m)
}

func (h handler) ResponseFinal(rid uint32) { h.t.onResponseFinal(rid) }

func (h handler) Declared(f *session.Face, d session.Decl) {
	if d.Kind != session.KindToken {
		return
	}
	var face uint64
	if f != nil {
		face = f.ID
	}
	h.t.onToken(declSrc{face, d.ID}, d.Key, d.Undeclare)
}

func (h handler) InterestFinal(uint32) {}
