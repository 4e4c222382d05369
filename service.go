package nros

import (
	"context"
	"errors"
	"fmt"
	"github.com/nros-go/nros/internal/bufpool"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/rosargs"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
)

// ServicesQoS is rclcpp's default service QoS (rmw_qos_profile_services_default):
// reliable, volatile, keep last 10.
func ServicesQoS() QoS { return rmw.ServicesDefaultQoS }

// ErrServiceClosed is returned by a closed service, client or responder.
var ErrServiceClosed = errors.New("nros: service endpoint is closed")

// ServiceOption configures a service server or client.
type ServiceOption func(*serviceConfig)

type serviceConfig struct {
	qos     QoS
	qosSet  bool
	onEvent func(rmw.Event)
}

// WithServiceQoS replaces the default service QoS (ServicesQoS).
func WithServiceQoS(q QoS) ServiceOption {
	return func(c *serviceConfig) { c.qos, c.qosSet = q, true }
}

// WithServiceEvents receives the endpoints' events (matched, unmatched,
// incompatible QoS). It runs on a transport goroutine and must not block.
func WithServiceEvents(fn func(rmw.Event)) ServiceOption {
	return func(c *serviceConfig) { c.onEvent = fn }
}

func serviceOptions(opts []ServiceOption) (serviceConfig, error) {
	cfg := serviceConfig{qos: ServicesQoS()}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg, validateQoS(cfg.qos)
}

// ResolveServiceName expands a service name for the node (relative names go
// under its namespace, "~" is the node) and applies the command line's
// remap rules for services.
func (n *Node) ResolveServiceName(name string) (string, error) { return n.resolveService(name) }

func (n *Node) resolveService(name string) (string, error) {
	fq, err := rosargs.ExpandTopicName(name, n.name, n.namespace)
	if err != nil {
		return "", fmt.Errorf("nros: service %q: %w", name, err)
	}
	out, err := n.args.RemapService(fq, n.name, n.namespace)
	if err != nil {
		return "", fmt.Errorf("nros: service %q: %w", name, err)
	}
	return out, nil
}

// serviceEndpoint is what a service and a client both start from: the
// options, the node's request/reply transport and the resolved name.
func (n *Node) serviceEndpoint(name string, opts []ServiceOption) (serviceConfig, rmw.ServiceTransport, string, error) {
	if n == nil {
		return serviceConfig{}, nil, "", ErrNilNode
	}
	cfg, err := serviceOptions(opts)
	if err != nil {
		return cfg, nil, "", err
	}
	resolved, err := n.resolveService(name)
	return cfg, n.ctx.Transport(), resolved, err
}

var serviceIDs atomic.Uint64

// serviceBacklog is the least number of requests a service keeps waiting
// for its handler, whatever its QoS depth: 32 callers sending at once to
// a keep last 10 service must not lose 22 requests (rclcpp's DDS readers
// take requests as they come; a request dropped here leaves its caller
// waiting until its deadline).
const serviceBacklog = 1000

// Service answers requests of type Req with responses of type Resp. Its
// handler runs on the goroutine that spins the node's executor, one request
// at a time.
//
// Requests are queued as received and decoded on the executor's goroutine
// before the handler (one that does not decode is dropped and counted in
// Dropped). Every queued request has a caller waiting for its response, so
// the queue keeps up to max(N, serviceBacklog) requests for a keep last N
// history (N alone announced on the wire): only beyond that is the oldest
// waiting request dropped (and counted in Lost).
type Service[Req, Resp any] struct {
	id       uint64
	node     *Node
	name     string
	srv      rmw.ServiceServer
	handle   func(*Service[Req, Resp], *Req, *Responder[Resp])
	limit    int
	encode   func(*Resp) ([]byte, error)
	decode   func([]byte) (*Req, error)
	ctx      context.Context
	cancel   context.CancelFunc
	closing  atomic.Bool
	decoding bool // execute is decoding (panic reports say "decode")

	mu        sync.Mutex
	queue     []pendingRequest[Req]
	scheduled bool
	exec      *Executor
	closed    bool

	received, dropped, lost, answered atomic.Uint64
}

type pendingRequest[Req any] struct {
	data *[]byte // the request, decoded by execute (bufpool.go)
	id   rmw.RequestID
}

// Responder sends the response to one request, once, from any goroutine:
// a deferred service (NewDeferredService) keeps it to answer later.
type Responder[Resp any] struct {
	srv  serviceSender[Resp]
	id   rmw.RequestID
	sent atomic.Bool
}

type serviceSender[Resp any] interface {
	sendResponse(id rmw.RequestID, r *Resp) error
}

// ErrAlreadyResponded is returned by a second Responder.Send.
var ErrAlreadyResponded = errors.New("nros: response already sent")

// Send serializes resp and sends it to the client that made the request.
// It may be called from any goroutine, once.
func (r *Responder[Resp]) Send(resp *Resp) error {
	if resp == nil {
		return errors.New("nros: nil response")
	}
	if !r.sent.CompareAndSwap(false, true) {
		return ErrAlreadyResponded
	}
	return r.srv.sendResponse(r.id, resp)
}

// NewService creates a service server named name (resolved against the
// node's namespace and remapped by the command line) whose handler
// computes the response of each request on the executor goroutine. ctx is
// cancelled when the service is closed. A handler that returns an error
// (or a nil response) sends no response: the error is logged and the
// client's call runs into its deadline, as an exception in an rclcpp
// callback would leave it.
func NewService[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](n *Node, name string, handler func(ctx context.Context, req *Req) (*Resp, error), opts ...ServiceOption) (*Service[Req, Resp], error) {
	if handler == nil {
		return nil, errors.New("nros: service handler is nil")
	}
	return newService[Req, Resp, PReq, PResp](n, name, func(s *Service[Req, Resp], req *Req, r *Responder[Resp]) {
		resp, err := handler(s.ctx, req)
		if err == nil && resp == nil {
			err = errors.New("nil response")
		}
		if err != nil {
			s.node.log.Error("service handler failed: no response sent", "service", s.name, "error", err)
			return
		}
		if err := r.Send(resp); err != nil && !s.closing.Load() {
			s.node.log.Warn("service response not sent", "service", s.name, "error", err)
		}
	}, opts)
}

// NewDeferredService is NewService for handlers that answer later: the
// handler (on the executor goroutine) receives the request and a Responder
// whose Send it calls, then or later, from any goroutine.
func NewDeferredService[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](n *Node, name string, handler func(req *Req, r *Responder[Resp]), opts ...ServiceOption) (*Service[Req, Resp], error) {
	if handler == nil {
		return nil, errors.New("nros: service handler is nil")
	}
	return newService[Req, Resp, PReq, PResp](n, name, func(_ *Service[Req, Resp], req *Req, r *Responder[Resp]) { handler(req, r) }, opts)
}

func newService[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](n *Node, name string, handler func(*Service[Req, Resp], *Req, *Responder[Resp]), opts []ServiceOption) (*Service[Req, Resp], error) {
	cfg, st, resolved, err := n.serviceEndpoint(name, opts)
	if err != nil {
		return nil, err
	}
	q := cfg.qos.Normalize()
	limit := max(q.Depth, serviceBacklog)
	if q.History == rmw.KeepAll {
		limit = keepAllCap
	}
	s := &Service[Req, Resp]{id: serviceIDs.Add(1), node: n, name: resolved, handle: handler, limit: limit,
		encode: func(r *Resp) ([]byte, error) { return msg.MarshalChecked(PResp(r), true, nil) },
		decode: func(b []byte) (*Req, error) {
			v := new(Req)
			return v, msg.Unmarshal(b, PReq(v))
		}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	srv, err := st.NewServiceServer(n.info(), resolved, PReq(new(Req)).TypeName(), PResp(new(Resp)).TypeName(),
		cfg.qos, s.deliver, serviceTypeHashes(n.eventOptions(resolved, "service", nil, cfg.onEvent), PReq(new(Req)), PResp(new(Resp))))
	if err != nil {
		s.cancel()
		return nil, err
	}
	s.srv = srv
	if err := n.addEntity(s); err != nil {
		s.cancel()
		srv.Close()
		return nil, err
	}
	return s, nil
}

// Name returns the resolved service name.
func (s *Service[Req, Resp]) Name() string { return s.name }

// Received counts the requests received and queued (Dropped counts those
// that then did not decode).
func (s *Service[Req, Resp]) Received() uint64 { return s.received.Load() }

// Dropped counts requests that did not decode.
func (s *Service[Req, Resp]) Dropped() uint64 { return s.dropped.Load() }

// Lost counts queued requests dropped by the history before the handler
// could take them.
func (s *Service[Req, Resp]) Lost() uint64 { return s.lost.Load() }

// Answered counts the responses sent.
func (s *Service[Req, Resp]) Answered() uint64 { return s.answered.Load() }

// svcRunner is a Service as the executor sees it (an exec.Entity). Its
// methods are not the Service's, so a user cannot run handlers outside the
// executor.
type svcRunner[Req, Resp any] Service[Req, Resp]

// Execute runs one request (exec.Entity).
func (r *svcRunner[Req, Resp]) Execute() bool { return (*Service[Req, Resp])(r).execute() }

// Identity names the service in panic reports (exec.Entity).
func (r *svcRunner[Req, Resp]) Identity() (string, uint64, string) {
	return (*Service[Req, Resp])(r).identity()
}

// identity names the service in panic reports.
func (s *Service[Req, Resp]) identity() (string, uint64, string) {
	if s.decoding {
		return "decode", s.id, s.name
	}
	return "service", s.id, s.name
}

// Close stops the service; requests waiting are discarded and Responders
// of requests in progress fail. Safe to call twice.
func (s *Service[Req, Resp]) Close() error {
	s.node.removeEntity(s)
	return s.close()
}

func (s *Service[Req, Resp]) sendResponse(id rmw.RequestID, r *Resp) error {
	if s.closing.Load() {
		return ErrServiceClosed
	}
	data, err := s.encode(r)
	if err != nil {
		return err
	}
	if err := s.srv.SendResponse(id, data); err != nil {
		return err
	}
	s.answered.Add(1)
	return nil
}

// deliver runs on the transport goroutine: it only queues a copy of the
// request and wakes the executor.
func (s *Service[Req, Resp]) deliver(r rmw.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.received.Add(1)
	if len(s.queue) >= s.limit {
		bufpool.Put(s.queue[0].data)
		s.queue[0] = pendingRequest[Req]{}
		s.queue = s.queue[1:]
		s.lost.Add(1)
	}
	s.queue = append(s.queue, pendingRequest[Req]{data: bufpool.Copy(r.Data), id: r.ID})
	e := s.exec
	sched := e != nil && !s.scheduled
	if sched {
		s.scheduled = true
	}
	s.mu.Unlock()
	if sched {
		e.schedule((*svcRunner[Req, Resp])(s))
	}
}

// decodeRequest decodes on the executor's goroutine; a panic in the
// request type's UnmarshalCDR counts it as dropped and goes on to the
// executor's panic policy (kind "decode").
func (s *Service[Req, Resp]) decodeRequest(b []byte) (v *Req, err error) {
	s.decoding = true
	defer func() {
		if p := recover(); p != nil {
			s.dropped.Add(1)
			panic(p)
		}
		s.decoding = false
	}()
	return s.decode(b)
}

// execute runs on the executor goroutine: one request per pass.
func (s *Service[Req, Resp]) execute() bool {
	s.mu.Lock()
	if len(s.queue) == 0 || s.closed {
		s.scheduled = false
		s.mu.Unlock()
		return false
	}
	p := s.queue[0]
	s.queue[0] = pendingRequest[Req]{}
	s.queue = s.queue[1:]
	more := len(s.queue) > 0
	if !more {
		s.scheduled = false
	}
	s.mu.Unlock()
	req, err := s.decodeRequest(*p.data)
	bufpool.Put(p.data)
	if err != nil {
		s.dropped.Add(1)
		return more
	}
	s.handle(s, req, &Responder[Resp]{srv: s, id: p.id})
	return more
}

func (s *Service[Req, Resp]) attach(e *Executor) {
	s.mu.Lock()
	s.exec = e
	sched := len(s.queue) > 0 && !s.scheduled
	if sched {
		s.scheduled = true
	}
	s.mu.Unlock()
	if sched {
		e.schedule((*svcRunner[Req, Resp])(s))
	}
}

func (s *Service[Req, Resp]) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.closing.Store(true)
	for _, p := range s.queue {
		bufpool.Put(p.data)
	}
	s.queue = nil
	s.mu.Unlock()
	s.cancel()
	return s.srv.Close()
}

// Client calls a service. Its methods are safe for concurrent use from any
// goroutine. Call blocks its caller: calling it from a callback of the
// executor that runs the server's node waits until ctx ends.
type Client[Req, Resp any] struct {
	node   *Node
	name   string
	cl     rmw.ServiceClient
	encode func(*Req) ([]byte, error)
	decode func([]byte) (*Resp, error)

	sendMu sync.Mutex // orders SendRequest and registration

	mu       sync.Mutex
	pending  map[int64]chan []byte // responses, decoded by Call
	early    map[int64][]byte      // responses that beat their registration
	maxReg   int64
	changed  chan struct{} // closed and replaced on every graph event
	closedCh chan struct{} // closed by Close
	closed   bool

	dropped atomic.Uint64
}

// maxEarly bounds the responses kept for requests not registered yet.
const maxEarly = 64

// NewClient creates a client of service name (resolved against the node's
// namespace and remapped by the command line).
func NewClient[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](n *Node, name string, opts ...ServiceOption) (*Client[Req, Resp], error) {
	cfg, st, resolved, err := n.serviceEndpoint(name, opts)
	if err != nil {
		return nil, err
	}
	c := &Client[Req, Resp]{node: n, name: resolved, pending: map[int64]chan []byte{}, early: map[int64][]byte{},
		changed: make(chan struct{}),
		encode:  func(r *Req) ([]byte, error) { return msg.MarshalChecked(PReq(r), true, nil) },
		decode: func(b []byte) (*Resp, error) {
			v := new(Resp)
			return v, msg.Unmarshal(b, PResp(v))
		}}
	eo := n.eventOptions(resolved, "client", func(rmw.Event) { c.notify() }, cfg.onEvent)
	cl, err := st.NewServiceClient(n.info(), resolved, PReq(new(Req)).TypeName(), PResp(new(Resp)).TypeName(),
		cfg.qos, c.deliver, serviceTypeHashes(eo, PReq(new(Req)), PResp(new(Resp))))
	if err != nil {
		return nil, err
	}
	c.cl = cl
	if err := n.addEntity(c); err != nil {
		cl.Close()
		return nil, err
	}
	return c, nil
}

// Name returns the resolved service name.
func (c *Client[Req, Resp]) Name() string { return c.name }

// Dropped counts responses that did not decode.
func (c *Client[Req, Resp]) Dropped() uint64 { return c.dropped.Load() }

// ServiceIsReady reports whether a server is matched.
func (c *Client[Req, Resp]) ServiceIsReady() bool { return c.cl.ServiceAvailable() }

// notify wakes WaitForService calls (a transport goroutine, on events).
func (c *Client[Req, Resp]) notify() {
	c.mu.Lock()
	if !c.closed {
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.mu.Unlock()
}

// availabilityPoll is how often WaitForService looks again between graph
// events: a transport can become ready without one (an acknowledgement).
const availabilityPoll = 20 * time.Millisecond

// WaitForService returns nil once a server is matched, or ctx's error.
func (c *Client[Req, Resp]) WaitForService(ctx context.Context) error {
	var poll *pollTimer
	defer func() { poll.stop() }()
	for {
		c.mu.Lock()
		ch, closed := c.changed, c.closed
		c.mu.Unlock()
		if closed {
			return ErrServiceClosed
		}
		if c.cl.ServiceAvailable() {
			return nil
		}
		if poll == nil {
			poll = c.node.ctx.newPollTimer()
		}
		select {
		case <-ch:
		case <-poll.c:
			poll.rearm()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pollTimer signals c every availabilityPoll of the context's steady time
// (its clock sources' timers, which a harness such as simtest steps).
type pollTimer struct {
	c chan struct{}
	a *clock.Alarm
}

// newPollTimer starts a pollTimer on c's clock sources.
func (c *Context) newPollTimer() *pollTimer {
	p := &pollTimer{c: make(chan struct{}, 1)}
	p.a = c.src.NewAlarm(p.c)
	p.a.Set(availabilityPoll)
	return p
}

// rearm schedules the next signal, after one was taken.
func (p *pollTimer) rearm() { p.a.Set(availabilityPoll) }

// stop cancels the pending signal (nothing when p is nil).
func (p *pollTimer) stop() {
	if p != nil {
		p.a.Stop()
	}
}

// Call waits for a server (WaitForService), sends req and waits for the
// response. When ctx ends first it returns ctx's error and forgets the
// request (a late response is dropped); nothing is left behind.
func (c *Client[Req, Resp]) Call(ctx context.Context, req *Req) (*Resp, error) {
	if req == nil {
		return nil, errors.New("nros: nil request")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := c.encode(req)
	if err != nil {
		return nil, err
	}
	if err := c.WaitForService(ctx); err != nil {
		return nil, err
	}
	ch := make(chan []byte, 1)
	c.sendMu.Lock()
	seq, err := c.cl.SendRequest(data)
	if err != nil {
		c.sendMu.Unlock()
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.sendMu.Unlock()
		return nil, ErrServiceClosed
	}
	c.maxReg = seq
	if r, ok := c.early[seq]; ok {
		delete(c.early, seq)
		ch <- r
	} else {
		c.pending[seq] = ch
	}
	for s := range c.early { // older than every request still to register
		if s <= seq {
			delete(c.early, s)
		}
	}
	done := c.changedClosed()
	c.mu.Unlock()
	c.sendMu.Unlock()
	select {
	case b := <-ch:
		return c.decodeResponse(b)
	case <-done:
		c.forget(seq)
		return nil, ErrServiceClosed
	case <-ctx.Done():
		c.forget(seq)
		return nil, ctx.Err()
	}
}

// changedClosed returns a channel closed when the client closes (c.mu held).
func (c *Client[Req, Resp]) changedClosed() <-chan struct{} {
	if c.closedCh == nil {
		c.closedCh = make(chan struct{})
	}
	return c.closedCh
}

func (c *Client[Req, Resp]) forget(seq int64) {
	c.mu.Lock()
	delete(c.pending, seq)
	c.mu.Unlock()
}

// Pending returns the number of calls waiting for a response.
func (c *Client[Req, Resp]) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// deliver runs on the transport goroutine: it hands a copy of the response
// to the waiting Call, which decodes it on its own goroutine.
func (c *Client[Req, Resp]) deliver(r rmw.Response) {
	v := slices.Clone(r.Data)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.pending[r.Seq]; ok {
		delete(c.pending, r.Seq)
		ch <- v
		return
	}
	if r.Seq > c.maxReg && len(c.early) < maxEarly && !c.closed {
		c.early[r.Seq] = v
	}
}

// decodeResponse decodes a response on the calling goroutine; one that does
// not decode (or whose UnmarshalCDR panics) is counted as dropped and is
// the call's error.
func (c *Client[Req, Resp]) decodeResponse(b []byte) (v *Resp, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("nros: decoding a response of %s panicked: %v", c.name, p)
		}
		if err != nil {
			c.dropped.Add(1)
		}
	}()
	v, err = c.decode(b)
	if err != nil {
		return nil, fmt.Errorf("nros: a response of %s does not decode: %w", c.name, err)
	}
	return v, nil
}

// Close releases the client; calls in progress return ErrServiceClosed.
// Safe to call twice.
func (c *Client[Req, Resp]) Close() error {
	c.node.removeEntity(c)
	return c.close()
}

func (c *Client[Req, Resp]) attach(*Executor) {}

func (c *Client[Req, Resp]) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.changed)
	if c.closedCh == nil {
		c.closedCh = make(chan struct{})
	}
	close(c.closedCh)
	c.pending, c.early = map[int64]chan []byte{}, map[int64][]byte{}
	c.mu.Unlock()
	return c.cl.Close()
}
