// Package intra is the in-process transport of nros-go: publishers and
// subscriptions in one process exchange serialized samples by direct function
// call, with no network and no copies on the hot path.
//
// # Matching
//
// A publisher and a subscription match when their fully qualified topic names
// are equal, their type names are equal, and rmw.Incompatibility(writer QoS,
// reader QoS) is "". A pair that shares a topic name but fails either test is
// never matched; both endpoints receive an rmw.EventIncompatibleQoS event whose
// Policy names the reason (a QoS policy name such as "RELIABILITY", or
// PolicyType for differing type names), and the pair is counted in
// (*Transport).Stats. Matching and unmatching are reported as EventMatched and
// EventUnmatched. Event.Remote is the other endpoint's GID in hex.
//
// Events are dispatched in the order the graph changed, with no transport
// lock held, so an OnEvent function may call the transport. Usually they run
// on the goroutine whose call caused them, before that call returns; when
// several goroutines change the graph at once, one of them may dispatch the
// others' events. Closing the transport raises no events.
//
// # Delivery
//
// Publish calls the deliver function of every matched subscription
// synchronously, on the publishing goroutine (for intra that goroutine is the
// transport goroutine). The Sample's Data is the caller's slice: it is valid
// only during the deliver call and must not be modified; a deliver function
// that keeps the bytes copies them. Successive Publish calls on one publisher
// from one goroutine are delivered in order; Publish calls made concurrently on
// one publisher are delivered in an unspecified order, and deliver may be
// called concurrently when several goroutines publish to the same
// subscription. A deliver function may publish (on any topic, even its own)
// and may create or close endpoints: no transport lock is held while it runs.
//
// # Close
//
// Once Subscription.Close returns, no deliver or OnEvent call of the
// subscription is running or will start; once Publisher.Close returns, no
// OnEvent call of the publisher is; once Transport.Close returns, no callback
// of any of its endpoints is. Close marks the endpoint closed first (so no
// new call starts), then waits for the calls in progress on other
// goroutines. Events of a closed endpoint that were still queued are
// dropped.
//
// A Close called from inside a callback, on the goroutine running it, cannot
// wait for that callback. Close counts the deliver calls of intra
// subscriptions that the calling goroutine is inside (internal/goid), k:
// it returns once at most k deliver calls of the closed subscription are in
// progress (exactly the waiting it can do when those k calls are deliveries
// to that subscription, as when a deliver closes its own subscription). A
// Close on a goroutine that is running an intra OnEvent function does not
// wait for the OnEvent in progress. In every case no new callback of the
// closed endpoint starts after Close returns, and the calling callback
// finishes when it returns.
//
// # Durability
//
// A TransientLocal publisher keeps its last Depth samples (KeepLast) or its
// last KeepAllLimit samples (KeepAll). When a TransientLocal subscription
// matches it later, those samples are replayed to the subscription, oldest
// first, before any newer sample; the replay is limited to the subscription's
// own history (its Depth for KeepLast) and skips samples older than the
// publisher's Lifespan, measured on the monotonic clock (WithSteady), never
// on the system clock. The replay runs on the goroutine that creates the
// subscription, before NewSubscription returns. Volatile subscriptions never
// receive history. Deadline and liveliness take part in matching only.
package intra

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/goid"
	"github.com/nros-go/nros/rmw"
)

// PolicyType is the Event.Policy of an rmw.EventIncompatibleQoS event raised
// because a publisher and a subscription on one topic name use different type
// names (rmw.PolicyType).
const PolicyType = rmw.PolicyType

// KeepAllLimit bounds the history a TransientLocal, KeepAll publisher keeps:
// only its newest KeepAllLimit samples are stored for late joiners.
const KeepAllLimit = 1000

// ErrClosed is returned by operations on a closed transport or endpoint.
var ErrClosed = errors.New("intra: closed")

// Option configures a Transport made by New.
type Option func(*Transport)

// WithNow sets the source of SourceTimestamp (ns since the UNIX epoch). The
// default reads the system clock. Lifespan is not measured on it (see
// WithSteady).
func WithNow(now func() int64) Option {
	return func(t *Transport) { t.now = now }
}

// WithSteady sets the monotonic clock (ns from any origin, never going
// back) on which the Lifespan of stored samples is measured. The default
// is the process's monotonic clock, so stepping the system clock neither
// expires nor revives samples.
func WithSteady(now func() int64) Option {
	return func(t *Transport) { t.steady = now }
}

// processPrefix makes GIDs unique across processes; transportSeq across
// transports in one process.
var (
	processPrefix [8]byte
	transportSeq  atomic.Uint32
)

func init() {
	if _, err := rand.Read(processPrefix[:]); err != nil {
		binary.BigEndian.PutUint64(processPrefix[:], uint64(clock.DefaultSystem()))
	}
}

// Transport is an in-process rmw.Transport. The zero value is not usable;
// make one with New. Several independent transports may coexist: endpoints of
// different transports never match.
type Transport struct {
	now    func() int64 // wall clock: SourceTimestamp
	steady func() int64 // monotonic clock: lifespan
	// defaults says that now and steady are both the real clocks: one
	// reading gives both (clock.DefaultReadings).
	defaults bool
	id       uint32

	mu        sync.Mutex // guards everything below and every endpoint's match lists
	closed    bool
	topics    map[string]*topic
	entitySeq uint32
	retired   counters // totals of closed publishers
	incompQoS uint64
	incompTyp uint64
	svc       svcRegistry     // services (service.go)
	graph     rmw.GraphSignal // closed at the next graph change (graphwatch.go)

	evMu     sync.Mutex // guards evq and draining; taken after mu, never held during OnEvent
	evq      []pendingEvent
	draining bool

	// evRunning is the closed flag of the endpoint whose OnEvent is
	// running (events run one at a time), or nil; Close waits on evDone
	// (with evMu) until it no longer names the endpoint it closes.
	evRunning atomic.Pointer[atomic.Bool]
	evWaiters atomic.Int32
	evDone    *sync.Cond
}

type counters struct{ published, delivered uint64 }

type topic struct {
	name string
	pubs []*Publisher
	subs []*Subscription
}

// New returns an empty, independent transport.
func New(opts ...Option) *Transport {
	t := &Transport{
		id:     transportSeq.Add(1),
		topics: make(map[string]*topic),
	}
	t.evDone = sync.NewCond(&t.evMu)
	for _, o := range opts {
		o(t)
	}
	t.defaults = t.now == nil && t.steady == nil
	if t.now == nil {
		t.now = func() int64 { return int64(clock.DefaultSystem()) }
	}
	if t.steady == nil {
		t.steady = func() int64 { return int64(clock.DefaultSteady()) }
	}
	return t
}

var (
	defaultOnce sync.Once
	defaultT    *Transport
)

// Default returns the process-wide shared transport, created on first use.
// Closing it makes it unusable for the rest of the process.
func Default() *Transport {
	defaultOnce.Do(func() { defaultT = New() })
	return defaultT
}

var _ rmw.Transport = (*Transport)(nil)

// stamps reads the wall clock (ns since the UNIX epoch) and the monotonic
// clock together: with the default clocks, from one reading.
func (t *Transport) stamps() (wall, mono int64) {
	if t.defaults {
		w, m := clock.DefaultReadings()
		return int64(w), int64(m)
	}
	return t.now(), t.steady()
}

// newGID builds a DDS-style GUID: 8 bytes per process, 4 per transport, a
// 3-byte entity counter and the RTPS entity kind (0x03 writer, 0x04 reader,
// both without key). Called with t.mu held.
func (t *Transport) newGID(kind byte) [16]byte {
	t.entitySeq++
	var g [16]byte
	copy(g[:8], processPrefix[:])
	binary.BigEndian.PutUint32(g[8:12], t.id)
	binary.BigEndian.PutUint32(g[12:16], t.entitySeq<<8|uint32(kind))
	return g
}

func gidString(g [16]byte) string { return hex.EncodeToString(g[:]) }

func validate(topicName, typeName string) error {
	if !strings.HasPrefix(topicName, "/") {
		return fmt.Errorf("intra: topic %q is not a fully qualified name", topicName)
	}
	if typeName == "" {
		return fmt.Errorf("intra: empty type name for topic %q", topicName)
	}
	return nil
}

// pendingEvent is an event to dispatch once t.mu is released. gate is the
// closed flag of the endpoint whose OnEvent fn is: a closed endpoint's
// events are dropped.
type pendingEvent struct {
	gate *atomic.Bool
	fn   func(rmw.Event)
	ev   rmw.Event
}

// queueEvents appends evs to the transport's event queue, so that events are
// dispatched in the order the graph changed. Called with t.mu held.
func (t *Transport) queueEvents(evs []pendingEvent) {
	t.notifyGraphLocked() // every graph change queues (perhaps no) events
	if len(evs) == 0 {
		return
	}
	t.evMu.Lock()
	t.evq = append(t.evq, evs...)
	t.evMu.Unlock()
}

// drainEvents dispatches queued events unless another goroutine (or an
// enclosing call on this one) is already doing so; that one then dispatches
// them. No transport lock is held while an OnEvent function runs, so it may
// use the transport.
func (t *Transport) drainEvents() {
	t.evMu.Lock()
	if t.draining {
		t.evMu.Unlock()
		return
	}
	t.draining = true
	done := false
	defer func() {
		if !done { // an OnEvent panicked: let later calls dispatch again
			t.evRunning.Store(nil)
			t.evMu.Lock()
			t.draining = false
			t.evDone.Broadcast()
			t.evMu.Unlock()
		}
	}()
	for len(t.evq) > 0 {
		batch := t.evq
		t.evq = nil
		t.evMu.Unlock()
		for i := range batch {
			t.runEvent(&batch[i])
		}
		t.evMu.Lock()
	}
	t.draining = false
	done = true
	t.evMu.Unlock()
}

// runEvent calls one OnEvent function unless its endpoint is closed. It
// names the endpoint in evRunning before it reads the closed flag, and
// Close sets the flag before it reads evRunning (both sequentially
// consistent): either Close sees the call and waits for it, or the call
// sees the flag and is dropped.
func (t *Transport) runEvent(e *pendingEvent) {
	if e.fn == nil {
		return
	}
	t.evRunning.Store(e.gate)
	if !e.gate.Load() {
		tok := eventing.Enter()
		defer eventing.Leave(tok)
		e.fn(e.ev)
	}
	t.evRunning.Store(nil)
	if t.evWaiters.Load() > 0 {
		t.evMu.Lock()
		t.evDone.Broadcast()
		t.evMu.Unlock()
	}
}

// waitEvents returns once no OnEvent of the endpoint whose closed flag is
// gate (of any endpoint when gate is nil) is running, the flag(s) being set
// already. A goroutine that is itself running an OnEvent of an intra
// transport does not wait: that call may be its caller.
func (t *Transport) waitEvents(gate *atomic.Bool) {
	busy := func() bool {
		r := t.evRunning.Load()
		return r != nil && (gate == nil || r == gate)
	}
	if !busy() || eventing.Has() {
		return
	}
	t.evWaiters.Add(1)
	t.evMu.Lock()
	for busy() {
		t.evDone.Wait()
	}
	t.evMu.Unlock()
	t.evWaiters.Add(-1)
}

// pair decides whether p and s match; if not, it records the reason and
// queues incompatibility events for both. Called with t.mu held.
func (t *Transport) pair(p *Publisher, s *Subscription, evs *[]pendingEvent) bool {
	policy := ""
	if p.typeName != s.typeName {
		policy = PolicyType
		t.incompTyp++
	} else if policy = rmw.Incompatibility(p.qos, s.qos); policy != "" {
		t.incompQoS++
	}
	if policy == "" {
		*evs = append(*evs,
			pendingEvent{&p.closed, p.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(s.gid)}},
			pendingEvent{&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(p.gid)}})
		return true
	}
	*evs = append(*evs,
		pendingEvent{&p.closed, p.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: policy, Remote: gidString(s.gid)}},
		pendingEvent{&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: policy, Remote: gidString(p.gid)}})
	return false
}

func (t *Transport) topicLocked(name string) *topic {
	tp := t.topics[name]
	if tp == nil {
		tp = &topic{name: name}
		t.topics[name] = tp
	}
	return tp
}

// NewPublisher creates a publisher on topic. The returned value is a
// *Publisher.
func (t *Transport) NewPublisher(node rmw.NodeInfo, topicName, typeName string, qos rmw.QoS, opts rmw.EndpointOptions) (rmw.Publisher, error) {
	if err := validate(topicName, typeName); err != nil {
		return nil, err
	}
	if err := rmw.CheckTypeHash(opts.TypeHash); err != nil {
		return nil, err
	}
	qos = qos.Normalize()
	p := &Publisher{t: t, node: node, topic: topicName, typeName: typeName, typeHash: opts.TypeHash, qos: qos, onEvent: opts.OnEvent}
	if qos.Durability == rmw.TransientLocal {
		p.histCap = qos.Depth
		if qos.History == rmw.KeepAll || p.histCap > KeepAllLimit {
			p.histCap = KeepAllLimit
		}
	}
	var evs []pendingEvent
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	p.gid = t.newGID(0x03)
	tp := t.topicLocked(topicName)
	tp.pubs = append(tp.pubs, p)
	var links []*link
	for _, s := range tp.subs {
		if t.pair(p, s, &evs) {
			links = append(links, &link{sub: s, pub: p})
			s.pubs = append(s.pubs, p)
		}
	}
	p.links = links
	p.storeSnapshot()
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	return p, nil
}

// NewSubscription creates a subscription on topic. deliver is called for every
// sample of every matched publisher (see the package documentation for the
// delivery rules). History of matching TransientLocal publishers is replayed
// before NewSubscription returns. The returned value is a *Subscription.
func (t *Transport) NewSubscription(node rmw.NodeInfo, topicName, typeName string, qos rmw.QoS, deliver func(rmw.Sample), opts rmw.EndpointOptions) (rmw.Subscription, error) {
	if err := validate(topicName, typeName); err != nil {
		return nil, err
	}
	if deliver == nil {
		return nil, fmt.Errorf("intra: nil deliver function for topic %q", topicName)
	}
	if err := rmw.CheckTypeHash(opts.TypeHash); err != nil {
		return nil, err
	}
	qos = qos.Normalize()
	s := &Subscription{t: t, node: node, topic: topicName, typeName: typeName, typeHash: opts.TypeHash, qos: qos, deliver: deliver, onEvent: opts.OnEvent}
	s.idle = sync.NewCond(&s.idleMu)
	type replay struct {
		l    *link
		hist []rmw.Sample
	}
	var (
		evs     []pendingEvent
		replays []replay
	)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	s.gid = t.newGID(0x04)
	tp := t.topicLocked(topicName)
	tp.subs = append(tp.subs, s)
	for _, p := range tp.pubs {
		if !t.pair(p, s, &evs) {
			continue
		}
		s.pubs = append(s.pubs, p)
		l := &link{sub: s, pub: p}
		p.histMu.Lock()
		if p.histCap > 0 && qos.Durability == rmw.TransientLocal {
			if h := p.historyFor(qos); len(h) > 0 {
				l.replaying.Store(true)
				replays = append(replays, replay{l, h})
			}
		}
		p.links = append(p.links[:len(p.links):len(p.links)], l)
		p.storeSnapshot()
		p.histMu.Unlock()
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	for _, r := range replays {
		r.l.replay(r.hist)
	}
	return s, nil
}

// Close closes every endpoint of the transport. Further Publish calls and
// endpoint creations fail with ErrClosed. No events are raised. Once Close
// returns, no deliver or OnEvent call of the transport's endpoints is
// running or will start (with the exception for a Close from inside a
// callback that the package documentation describes). Close is idempotent
// and always returns nil.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	var subs []*Subscription
	for _, tp := range t.topics {
		for _, p := range tp.pubs {
			p.closeLocked()
		}
		for _, s := range tp.subs {
			s.closed.Store(true)
			s.pubs = nil
			subs = append(subs, s)
		}
	}
	t.topics = map[string]*topic{}
	gates := t.closeServicesLocked()
	t.mu.Unlock()
	for _, s := range subs {
		s.waitDeliveries()
	}
	for _, g := range gates {
		g.wait()
	}
	t.waitEvents(nil)
	return nil
}

// Stats are counters of a transport since it was made.
type Stats struct {
	Publishers    int // open publishers
	Subscriptions int // open subscriptions
	// Published counts successful Publish calls; Delivered counts deliver
	// calls (history replays included). A Publish racing with the Close of
	// its publisher may go uncounted.
	Published, Delivered uint64
	// IncompatibleQoS counts publisher/subscription pairs refused for a QoS
	// policy; IncompatibleType pairs refused for differing type names. Each
	// pair is counted once, when the later of the two is created.
	IncompatibleQoS, IncompatibleType uint64
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := Stats{
		Published:        t.retired.published,
		Delivered:        t.retired.delivered,
		IncompatibleQoS:  t.incompQoS,
		IncompatibleType: t.incompTyp,
	}
	for _, tp := range t.topics {
		st.Publishers += len(tp.pubs)
		st.Subscriptions += len(tp.subs)
		for _, p := range tp.pubs {
			st.Published += p.published.Load()
			st.Delivered += p.delivered.Load()
		}
	}
	return st
}

// link is one matched (publisher, subscription) pair as seen by Publish.
type link struct {
	sub *Subscription
	pub *Publisher
	// replaying is set while transient-local history is being replayed to
	// sub; Publish then queues samples in pending instead of delivering.
	replaying atomic.Bool
	mu        sync.Mutex
	pending   []rmw.Sample
}

// replay delivers hist, then whatever Publish queued meanwhile, then switches
// the link to direct delivery.
func (l *link) replay(hist []rmw.Sample) {
	batch := hist
	for {
		for _, smp := range batch {
			if !l.sub.invoke(smp) {
				break
			}
			l.pub.delivered.Add(1)
		}
		l.mu.Lock()
		if len(l.pending) == 0 || l.sub.closed.Load() {
			l.pending = nil
			l.replaying.Store(false)
			l.mu.Unlock()
			return
		}
		batch, l.pending = l.pending, nil
		l.mu.Unlock()
	}
}

// Publisher is the intra implementation of rmw.Publisher.
type Publisher struct {
	t        *Transport
	node     rmw.NodeInfo
	topic    string
	typeName string
	typeHash string // as EndpointOptions gave it, for the graph
	qos      rmw.QoS
	gid      [16]byte
	onEvent  func(rmw.Event)

	closed    atomic.Bool
	snap      atomic.Pointer[[]*link] // immutable; replaced under t.mu (+histMu)
	links     []*link                 // guarded by t.mu; the source of snap
	published atomic.Uint64
	delivered atomic.Uint64

	// histMu orders history appends against snapshot changes, so that a
	// late-joining subscription sees each sample exactly once, either in its
	// replay or live. Only TransientLocal publishers take it in Publish.
	histMu  sync.Mutex
	histCap int         // 0: no history kept
	hist    []histEntry // ring of up to histCap samples
	histPos int         // index of the oldest sample once full
}

// histEntry is a stored sample and when it was published on the
// transport's monotonic clock (for Lifespan).
type histEntry struct {
	smp rmw.Sample
	at  int64
}

var _ rmw.Publisher = (*Publisher)(nil)

// GID returns the publisher's unique identifier, as found in
// Sample.PublisherGID.
func (p *Publisher) GID() [16]byte { return p.gid }

// storeSnapshot publishes p.links to Publish. Called with t.mu held.
func (p *Publisher) storeSnapshot() {
	s := p.links
	p.snap.Store(&s)
}

// historyFor returns the stored samples a reader with qos should get,
// oldest first. Called with histMu held.
func (p *Publisher) historyFor(qos rmw.QoS) []rmw.Sample {
	n := len(p.hist)
	out := make([]rmw.Sample, 0, n)
	cut := int64(math.MinInt64)
	if p.qos.Lifespan > 0 {
		// On the monotonic clock: stepping the system clock neither
		// expires nor revives samples.
		cut = p.t.steady() - int64(p.qos.Lifespan)
	}
	for i := 0; i < n; i++ {
		if e := p.hist[(p.histPos+i)%n]; e.at >= cut {
			out = append(out, e.smp)
		}
	}
	if qos.History == rmw.KeepLast && len(out) > qos.Depth {
		out = out[len(out)-qos.Depth:]
	}
	return out
}

// Publish delivers data to every matched subscription before returning. data
// is not retained (TransientLocal publishers store a copy).
func (p *Publisher) Publish(data []byte) error {
	if p.closed.Load() {
		return ErrClosed
	}
	var wall, mono int64
	if p.histCap > 0 {
		wall, mono = p.t.stamps()
	} else {
		wall = p.t.now()
	}
	smp := rmw.Sample{Data: data, SourceTimestamp: wall, PublisherGID: p.gid}
	var links []*link
	if p.histCap > 0 {
		p.histMu.Lock()
		if p.closed.Load() {
			p.histMu.Unlock()
			return ErrClosed
		}
		stored := histEntry{smp: smp, at: mono}
		stored.smp.Data = append([]byte(nil), data...)
		if len(p.hist) < p.histCap {
			p.hist = append(p.hist, stored)
		} else {
			p.hist[p.histPos] = stored
			p.histPos = (p.histPos + 1) % p.histCap
		}
		links = *p.snap.Load()
		p.histMu.Unlock()
	} else {
		links = *p.snap.Load()
	}
	p.published.Add(1)
	var n uint64
	for _, l := range links {
		if l.sub.closed.Load() {
			continue
		}
		if l.replaying.Load() && l.enqueue(smp) {
			continue
		}
		if l.sub.invoke(smp) {
			n++
		}
	}
	if n > 0 {
		p.delivered.Add(n)
	}
	return nil
}

// enqueue queues a copy of smp if the link is still replaying.
func (l *link) enqueue(smp rmw.Sample) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.replaying.Load() {
		return false
	}
	smp.Data = append([]byte(nil), smp.Data...)
	l.pending = append(l.pending, smp)
	return true
}

// MatchedSubscriptions returns how many subscriptions are matched.
func (p *Publisher) MatchedSubscriptions() int {
	if p.closed.Load() {
		return 0
	}
	return len(*p.snap.Load())
}

// Close unmatches the publisher (matched subscriptions get EventUnmatched)
// and makes further Publish calls fail with ErrClosed. Once it returns, no
// OnEvent call of the publisher is running or will start (but see the
// package documentation for a Close from inside a callback). It is
// idempotent.
func (p *Publisher) Close() error {
	t := p.t
	var evs []pendingEvent
	t.mu.Lock()
	if p.closed.Load() {
		t.mu.Unlock()
		return nil
	}
	for _, l := range p.links {
		s := l.sub
		s.pubs = remove(s.pubs, p)
		evs = append(evs, pendingEvent{&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(p.gid)}})
	}
	p.closeLocked()
	if tp := t.topics[p.topic]; tp != nil {
		tp.pubs = remove(tp.pubs, p)
		t.dropIfEmpty(tp)
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	t.waitEvents(&p.closed)
	return nil
}

// closeLocked marks p closed and retires its counters. Called with t.mu held.
func (p *Publisher) closeLocked() {
	p.histMu.Lock()
	p.closed.Store(true)
	p.links = nil
	p.storeSnapshot()
	p.hist = nil
	p.histMu.Unlock()
	p.t.retired.published += p.published.Load()
	p.t.retired.delivered += p.delivered.Load()
}

func (t *Transport) dropIfEmpty(tp *topic) {
	if len(tp.pubs) == 0 && len(tp.subs) == 0 {
		delete(t.topics, tp.name)
	}
}

// remove returns xs without x, never modifying the original backing array
// (snapshots may share it).
func remove[T comparable](xs []T, x T) []T {
	out := make([]T, 0, len(xs))
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// Subscription is the intra implementation of rmw.Subscription.
type Subscription struct {
	t        *Transport
	node     rmw.NodeInfo
	topic    string
	typeName string
	typeHash string // as EndpointOptions gave it, for the graph
	qos      rmw.QoS
	gid      [16]byte
	deliver  func(rmw.Sample)
	onEvent  func(rmw.Event)

	closed atomic.Bool
	pubs   []*Publisher // matched publishers, guarded by t.mu

	// inflight counts deliver calls in progress; Close waits on idle
	// (with idleMu) for them.
	inflight atomic.Int32
	idleMu   sync.Mutex
	idle     *sync.Cond
}

// invoke calls deliver unless s is closed and reports whether it did. It
// counts itself in inflight before it reads the closed flag, and Close sets
// the flag before it reads inflight (both sequentially consistent): either
// Close sees the call and waits for it, or the call sees the flag.
func (s *Subscription) invoke(smp rmw.Sample) bool {
	s.inflight.Add(1)
	defer s.leave()
	if s.closed.Load() {
		return false
	}
	tok := delivering.Enter()
	defer delivering.Leave(tok)
	s.deliver(smp)
	return true
}

func (s *Subscription) leave() {
	s.inflight.Add(-1)
	if s.closed.Load() {
		s.idleMu.Lock()
		s.idle.Broadcast()
		s.idleMu.Unlock()
	}
}

// waitDeliveries returns once at most as many deliver calls of s run as
// the calling goroutine is itself inside (Close from inside a deliver
// cannot wait for its caller); s is closed already.
func (s *Subscription) waitDeliveries() {
	if s.inflight.Load() == 0 {
		return
	}
	own := int32(delivering.Count())
	s.idleMu.Lock()
	for s.inflight.Load() > own {
		s.idle.Wait()
	}
	s.idleMu.Unlock()
}

// Goroutines inside a callback of any intra transport: a deliver function
// (delivering), an OnEvent function (eventing), a service or client
// handler (gating, service.go). A Close from inside one does not wait for
// the calls it is itself in. The count is of the caller's calls of any
// endpoint, not only of the one closing (as when this was read from the
// stack): a Close inside another endpoint's callback does not wait for a
// call that may be waiting for that callback.
var delivering, eventing, gating goid.Set

var _ rmw.Subscription = (*Subscription)(nil)

// GID returns the subscription's unique identifier.
func (s *Subscription) GID() [16]byte { return s.gid }

// MatchedPublishers returns how many publishers are matched.
func (s *Subscription) MatchedPublishers() int {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	return len(s.pubs)
}

// Close unmatches the subscription (matched publishers get EventUnmatched).
// Once Close returns, no deliver or OnEvent call of the subscription is
// running or will start: Close waits for deliver calls that Publish calls on
// other goroutines are making (but see the package documentation for a
// Close from inside a callback). It is idempotent.
func (s *Subscription) Close() error {
	t := s.t
	var evs []pendingEvent
	t.mu.Lock()
	if s.closed.Load() {
		t.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	for _, p := range s.pubs {
		p.histMu.Lock()
		links := make([]*link, 0, len(p.links))
		for _, l := range p.links {
			if l.sub != s {
				links = append(links, l)
			}
		}
		p.links = links
		p.storeSnapshot()
		p.histMu.Unlock()
		evs = append(evs, pendingEvent{&p.closed, p.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(s.gid)}})
	}
	s.pubs = nil
	if tp := t.topics[s.topic]; tp != nil {
		tp.subs = remove(tp.subs, s)
		t.dropIfEmpty(tp)
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	s.waitDeliveries()
	t.waitEvents(&s.closed)
	return nil
}
