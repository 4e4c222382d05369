package nros

import (
	"errors"
	"fmt"
	"github.com/nros-go/nros/internal/bufpool"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/exec"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
)

// MessagePtr is the constraint of the message type parameters: *T must be
// a ROS message (implement msg.Message). It makes NewPublisher[int] a
// compile error; callers name T only (nros.NewPublisher[std_msgs.String])
// and Go infers the pointer type.
type MessagePtr[T any] interface {
	*T
	msg.Message
}

// Publisher publishes messages of type T on one topic.
type Publisher[T any] struct {
	node      *Node
	topic     string
	typeName  string
	pub       rmw.Publisher
	asMsg     func(*T) msg.Message
	bigEndian bool
	closed    atomic.Bool
}

// encodeBuffers are the publishers' serialization buffers: one per Publish
// in flight, so that no lock is held while the transport (which may deliver
// in process, into user code) runs.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// maxPooledBuffer bounds the buffers kept for reuse.
const maxPooledBuffer = 1 << 20

// PublisherOption configures a publisher: WithBigEndian, or an
// EndpointOption.
type PublisherOption interface {
	applyToPublisher(*endpointConfig)
}

// SubscriptionOption configures a subscription: WithMaxAge,
// WithDroppedHandler, or an EndpointOption.
type SubscriptionOption interface {
	applyToSubscription(*endpointConfig)
}

// EndpointOption configures publishers and subscriptions alike
// (WithEndpointEvents): it is both a PublisherOption and a
// SubscriptionOption.
type EndpointOption interface {
	PublisherOption
	SubscriptionOption
}

// The three kinds of options, each a function on the configuration.
type (
	publisherOption    func(*endpointConfig)
	subscriptionOption func(*endpointConfig)
	endpointOption     func(*endpointConfig)
)

func (o publisherOption) applyToPublisher(c *endpointConfig)       { o(c) }
func (o subscriptionOption) applyToSubscription(c *endpointConfig) { o(c) }
func (o endpointOption) applyToPublisher(c *endpointConfig)        { o(c) }
func (o endpointOption) applyToSubscription(c *endpointConfig)     { o(c) }

type endpointConfig struct {
	onEvent   func(rmw.Event)
	maxAge    time.Duration
	onAge     func(AgeViolation)
	bigEndian bool
	onDropped func(error)
}

// WithEndpointEvents receives the endpoint's events (matched, unmatched,
// incompatible QoS naming the policy), for a publisher, subscription,
// service or client. The transport queues each event; the node's executor
// calls fn with it, like any callback (events that come before the node
// joins an executor wait for it, up to 1024).
func WithEndpointEvents(fn func(rmw.Event)) EndpointOption {
	return endpointOption(func(c *endpointConfig) { c.onEvent = fn })
}

// WithBigEndian makes a publisher encode big-endian CDR (little-endian is
// the default and what ROS 2 sends).
func WithBigEndian() PublisherOption {
	return publisherOption(func(c *endpointConfig) { c.bigEndian = true })
}

// NewPublisher creates a publisher of T on topic (resolved against the
// node's namespace and remapped by the command line).
func NewPublisher[T any, PT MessagePtr[T]](n *Node, topic string, qos QoS, opts ...PublisherOption) (*Publisher[T], error) {
	if n == nil {
		return nil, ErrNilNode
	}
	m := PT(new(T))
	var cfg endpointConfig
	for _, o := range opts {
		o.applyToPublisher(&cfg)
	}
	resolved, err := n.resolveTopic(topic)
	if err != nil {
		return nil, err
	}
	if err := validateQoS(qos); err != nil {
		return nil, err
	}
	eo := n.eventOptions(resolved, "publisher", nil, cfg.onEvent)
	eo.TypeHash = messageTypeHash(m)
	pub, err := n.ctx.Transport().NewPublisher(n.info(), resolved, m.TypeName(), qos, eo)
	if err != nil {
		return nil, err
	}
	p := &Publisher[T]{node: n, topic: resolved, typeName: m.TypeName(), pub: pub, bigEndian: cfg.bigEndian,
		asMsg: func(v *T) msg.Message { return PT(v) }}
	if err := n.addEntity(p); err != nil {
		pub.Close()
		return nil, err
	}
	return p, nil
}

// Topic returns the resolved topic name.
func (p *Publisher[T]) Topic() string { return p.topic }

// Publish serializes m and sends it. It is safe for concurrent use and
// holds no lock while the transport runs.
func (p *Publisher[T]) Publish(m *T) error {
	if p.closed.Load() {
		return errors.New("nros: publisher is closed")
	}
	if m == nil {
		return errors.New("nros: Publish of a nil message")
	}
	bp := encodeBuffers.Get().(*[]byte)
	buf, err := msg.MarshalChecked(p.asMsg(m), !p.bigEndian, (*bp)[:0])
	if err == nil {
		err = p.pub.Publish(buf)
	} // else a string or sequence over its bound: nothing is sent
	if cap(buf) <= maxPooledBuffer {
		*bp = buf[:0]
		encodeBuffers.Put(bp)
	}
	return err
}

// MatchedSubscriptions returns how many subscriptions are matched.
func (p *Publisher[T]) MatchedSubscriptions() int { return p.pub.MatchedSubscriptions() }

// Close closes the publisher. It is safe to call twice.
func (p *Publisher[T]) Close() error {
	p.node.removeEntity(p)
	return p.close()
}

func (p *Publisher[T]) attach(*Executor) {}
func (p *Publisher[T]) close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	return p.pub.Close()
}

// eventOptions makes the endpoint options whose OnEvent logs incompatible
// QoS, runs internal (nros's own, quick, on the transport's goroutine) and
// queues user for the node's executor.
func (n *Node) eventOptions(topic, kind string, internal, user func(rmw.Event)) rmw.EndpointOptions {
	var calls *userCalls
	if user != nil {
		calls = n.userCalls()
	}
	return rmw.EndpointOptions{OnEvent: func(ev rmw.Event) {
		if ev.Kind == rmw.EventIncompatibleQoS {
			n.log.Warn("incompatible QoS: no match", "topic", topic, "endpoint", kind, "policy", ev.Policy, "remote", ev.Remote)
		}
		if internal != nil {
			internal(ev)
		}
		if user != nil {
			calls.add(userCall{kind: "event", name: topic, fn: func() { user(ev) }})
		}
	}}
}

// recoverOffLoopValue reports a panic value v recovered off the executor
// (an action server's Execute, on its goroutine) through the node's
// executor's panic policy (PanicStop makes its Spin return it) instead of
// killing the process. A node with no executor yet logs it.
func (n *Node) recoverOffLoopValue(kind string, id uint64, name string, v any) {
	p := exec.PanicReport{Kind: kind, ID: id, Name: name, Value: v, Stack: debug.Stack()}
	n.mu.Lock()
	e := n.exec
	n.mu.Unlock()
	if e != nil {
		e.loop.Report(p)
		return
	}
	n.log.Error("callback panicked on a transport goroutine", "kind", kind, "id", id, "name", name, "panic", fmt.Sprint(v))
}

func validateQoS(q QoS) error {
	if q.History != rmw.KeepAll && q.Depth < 0 {
		return fmt.Errorf("nros: QoS depth %d is negative", q.Depth)
	}
	if q.Deadline < 0 || q.Lifespan < 0 || q.LivelinessLeaseDuration < 0 {
		return errors.New("nros: QoS durations must not be negative")
	}
	return nil
}

// AgeViolation reports a message older than its subscription's max age.
type AgeViolation struct {
	Topic  string
	Age    time.Duration // epoch clock now minus header.stamp
	MaxAge time.Duration
	// Count is the subscription's total number of late messages so far.
	Count uint64
}

// Stamped is implemented by messages with a std_msgs/Header; the age
// monitor reads their stamp.
type Stamped interface {
	StampHeader() *std_msgs.Header
}

// WithMaxAge turns on the age monitor for a subscription: a message whose
// header.stamp is older than max by the executor's epoch clock (see
// Executor.SetEpochClock; system time by default) is counted, and reported
// once per episode (until a message arrives in time again) to onViolation,
// or logged as a warning when onViolation is nil. Messages without a header
// and stamps with sec <= 0 (unstamped) are not checked.
//
// The epoch clock is not ROS time: under simulation, stamps taken from
// node.Clock().Now() are simulated times, and the ages computed against the
// epoch clock are meaningless (usually enormous). Stamp from the epoch clock,
// or leave the age rule off for that topic while simulating.
func WithMaxAge(max time.Duration, onViolation func(AgeViolation)) SubscriptionOption {
	return subscriptionOption(func(c *endpointConfig) { c.maxAge, c.onAge = max, onViolation })
}

// WithDroppedHandler is called for every received sample that cannot be
// decoded, with the reason, on the executor's goroutine, which decodes
// samples before their callback. Such samples are dropped and counted
// either way.
func WithDroppedHandler(fn func(error)) SubscriptionOption {
	return subscriptionOption(func(c *endpointConfig) { c.onDropped = fn })
}

var subIDs atomic.Uint64

// Subscription calls a function for every message of type T that arrives on
// a topic, on the goroutine that spins the node's executor.
//
// Messages are decoded on the transport's goroutine (a sample that does not
// decode is dropped and counted) and queued by the QoS history: keep-last
// keeps the newest depth messages and counts the ones it overwrites;
// keep-all queues up to a large bound.
type Subscription[T any] struct {
	id    uint64
	node  *Node
	topic string
	cb    func(*T)
	cfg   endpointConfig
	sub   rmw.Subscription
	limit int
	// keepAll refuses the newest message when the queue is at its bound;
	// keep-last (whatever its depth) overwrites the oldest.
	keepAll bool
	asMsg   func(*T) msg.Message
	phase   string // what execute runs besides the callback: "decode", "dropped" (panic reports say so)

	mu        sync.Mutex
	queue     []*[]byte // ring of received samples, decoded by execute
	head, n   int
	scheduled bool
	exec      *Executor
	closed    bool

	received, dropped, lost atomic.Uint64
	lateCount               atomic.Uint64
	late                    bool // in a late episode (executor goroutine only)
}

// NewSubscription subscribes cb to topic.
func NewSubscription[T any, PT MessagePtr[T]](n *Node, topic string, qos QoS, cb func(*T), opts ...SubscriptionOption) (*Subscription[T], error) {
	if n == nil {
		return nil, ErrNilNode
	}
	m := PT(new(T))
	if cb == nil {
		return nil, errors.New("nros: subscription callback is nil")
	}
	var cfg endpointConfig
	for _, o := range opts {
		o.applyToSubscription(&cfg)
	}
	if cfg.maxAge < 0 {
		return nil, fmt.Errorf("nros: max age %v is negative", cfg.maxAge)
	}
	resolved, err := n.resolveTopic(topic)
	if err != nil {
		return nil, err
	}
	if err := validateQoS(qos); err != nil {
		return nil, err
	}
	q := qos.Normalize()
	limit := q.Depth
	keepAll := q.History == rmw.KeepAll
	if keepAll {
		limit = keepAllCap
	}
	s := &Subscription[T]{id: subIDs.Add(1), node: n, topic: resolved, cb: cb, cfg: cfg, limit: limit, keepAll: keepAll,
		asMsg: func(v *T) msg.Message { return PT(v) }}
	s.queue = make([]*[]byte, min(limit, 64))
	eo := n.eventOptions(resolved, "subscription", nil, cfg.onEvent)
	eo.TypeHash = messageTypeHash(m)
	sub, err := n.ctx.Transport().NewSubscription(n.info(), resolved, m.TypeName(), qos, s.deliver, eo)
	if err != nil {
		return nil, err
	}
	s.sub = sub
	if err := n.addEntity(s); err != nil {
		sub.Close()
		return nil, err
	}
	return s, nil
}

// Topic returns the resolved topic name.
func (s *Subscription[T]) Topic() string { return s.topic }

// Received counts the samples received and queued (Dropped counts those
// that then did not decode).
func (s *Subscription[T]) Received() uint64 { return s.received.Load() }

// Dropped counts samples that did not decode (the executor decodes them).
func (s *Subscription[T]) Dropped() uint64 { return s.dropped.Load() }

// Lost counts queued messages overwritten by newer ones (keep-last) or
// refused by a full keep-all queue before the callback could take them.
func (s *Subscription[T]) Lost() uint64 { return s.lost.Load() }

// AgeViolations counts messages older than WithMaxAge allows.
func (s *Subscription[T]) AgeViolations() uint64 { return s.lateCount.Load() }

// MatchedPublishers returns how many publishers are matched.
func (s *Subscription[T]) MatchedPublishers() int { return s.sub.MatchedPublishers() }

// Close unsubscribes. Queued messages are discarded. Safe to call twice.
func (s *Subscription[T]) Close() error {
	s.node.removeEntity(s)
	return s.close()
}

// subRunner is a Subscription as the executor sees it (an exec.Entity). Its
// methods are not the Subscription's, so a user cannot run callbacks
// outside the executor.
type subRunner[T any] Subscription[T]

// Execute runs one message (exec.Entity).
func (r *subRunner[T]) Execute() bool { return (*Subscription[T])(r).execute() }

// Identity names the subscription in panic reports (exec.Entity).
func (r *subRunner[T]) Identity() (string, uint64, string) {
	return (*Subscription[T])(r).identity()
}

// identity names the subscription in panic reports.
func (s *Subscription[T]) identity() (string, uint64, string) {
	if s.phase != "" {
		return s.phase, s.id, s.topic
	}
	return "subscription", s.id, s.topic
}

// deliver runs on the transport goroutine: it only queues a copy of the
// sample and wakes the executor, which decodes it (execute).
func (s *Subscription[T]) deliver(smp rmw.Sample) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	// The sample waits for the executor as bytes (smp.Data is only lent for
	// this call); the executor decodes it, so a type's UnmarshalCDR runs on
	// the goroutine that spins.
	v := bufpool.Copy(smp.Data)
	s.received.Add(1)
	if s.n == s.limit {
		if s.keepAll {
			// keep-all at its bound: refuse the newest, never lose queued data silently
			s.lost.Add(1)
			s.mu.Unlock()
			bufpool.Put(v)
			return
		}
		// keep-last: overwrite the oldest
		bufpool.Put(s.queue[s.head])
		s.queue[s.head] = nil
		s.head = (s.head + 1) % len(s.queue)
		s.n--
		s.lost.Add(1)
	}
	if s.n == len(s.queue) {
		s.grow()
	}
	s.queue[(s.head+s.n)%len(s.queue)] = v
	s.n++
	e := s.exec
	sched := e != nil && !s.scheduled
	if sched {
		s.scheduled = true
	}
	s.mu.Unlock()
	if sched {
		e.schedule((*subRunner[T])(s))
	}
}

func (s *Subscription[T]) grow() {
	size := min(max(2*len(s.queue), 1), s.limit)
	q := make([]*[]byte, size)
	for i := 0; i < s.n; i++ {
		q[i] = s.queue[(s.head+i)%len(s.queue)]
	}
	s.queue, s.head = q, 0
}

// decode unmarshals one sample on the executor's goroutine; a panic in the
// message's UnmarshalCDR counts the sample as dropped and goes on to the
// executor's panic policy (reported with kind "decode").
func (s *Subscription[T]) decode(data []byte) (v *T, err error) {
	s.phase = "decode"
	defer func() {
		if r := recover(); r != nil {
			s.dropped.Add(1)
			panic(r)
		}
		s.phase = ""
	}()
	v = new(T)
	if err := msg.Unmarshal(data, s.asMsg(v)); err != nil {
		return nil, err
	}
	return v, nil
}

// execute runs on the executor goroutine: one message per pass.
func (s *Subscription[T]) execute() bool {
	s.mu.Lock()
	e := s.exec
	if s.n == 0 || s.closed {
		s.scheduled = false
		s.mu.Unlock()
		return false
	}
	buf := s.queue[s.head]
	s.queue[s.head] = nil
	s.head = (s.head + 1) % len(s.queue)
	s.n--
	more := s.n > 0
	if !more {
		s.scheduled = false
	}
	s.mu.Unlock()
	v, err := s.decode(*buf)
	bufpool.Put(buf)
	if err != nil {
		s.dropped.Add(1)
		if h := s.cfg.onDropped; h != nil {
			s.phase = "dropped"
			h(err)
			s.phase = ""
		}
		return more
	}
	if s.cfg.maxAge > 0 {
		s.checkAge(e, v)
	}
	s.cb(v)
	return more
}

// checkAge applies the max-age rule against the executor's epoch clock.
func (s *Subscription[T]) checkAge(e *Executor, v *T) {
	var h *std_msgs.Header
	switch x := any(v).(type) {
	case Stamped:
		h = x.StampHeader()
	case *std_msgs.Header:
		h = x
	default:
		return
	}
	if h.Stamp.Sec <= 0 {
		return // unstamped
	}
	stampUs := int64(h.Stamp.Sec)*1e6 + int64(h.Stamp.Nanosec)/1e3
	age := time.Duration(e.epochNowUs()-stampUs) * time.Microsecond
	if age <= s.cfg.maxAge {
		s.late = false // recovered: the next violation is a new episode
		return
	}
	count := s.lateCount.Add(1)
	if s.late {
		return
	}
	s.late = true
	viol := AgeViolation{Topic: s.topic, Age: age, MaxAge: s.cfg.maxAge, Count: count}
	if s.cfg.onAge != nil {
		s.cfg.onAge(viol)
		return
	}
	s.node.log.Warn("message older than its max age", "topic", s.topic, "age", age, "max_age", s.cfg.maxAge)
}

func (s *Subscription[T]) attach(e *Executor) {
	s.mu.Lock()
	s.exec = e
	sched := s.n > 0 && !s.scheduled
	if sched {
		s.scheduled = true
	}
	s.mu.Unlock()
	if sched {
		e.schedule((*subRunner[T])(s))
	}
}

func (s *Subscription[T]) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for i := range s.n {
		bufpool.Put(s.queue[(s.head+i)%len(s.queue)])
	}
	clear(s.queue)
	s.n = 0
	s.mu.Unlock()
	return s.sub.Close()
}
