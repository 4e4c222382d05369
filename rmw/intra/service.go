package intra

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/rmw"
)

// Services: a client and a server match when their service names, request
// and response type names are equal and their QoS are compatible both ways
// (the client's request writer against the server's request reader, the
// server's response writer against the client's response reader). A request
// is handed to every matched server, synchronously on the goroutine that
// calls SendRequest; a response goes to the one client that sent the
// request, synchronously on the goroutine that calls SendResponse. The
// bytes are the caller's, valid only during the call. Matching changes are
// reported through OnEvent as for topics.

var (
	_ rmw.ServiceTransport = (*Transport)(nil)
	_ rmw.ServiceServer    = (*ServiceServer)(nil)
	_ rmw.ServiceClient    = (*ServiceClient)(nil)
)

// svcRegistry is the transport's services, guarded by Transport.mu.
type svcRegistry struct {
	servers map[string][]*ServiceServer
	clients map[string][]*ServiceClient
	byGID   map[[16]byte]*ServiceClient
}

// svcGate counts the callbacks of one service endpoint in progress so that
// Close can wait for them (see Subscription.invoke for the ordering).
type svcGate struct {
	closed   atomic.Bool
	inflight atomic.Int32
	mu       sync.Mutex
	idle     *sync.Cond
}

func newGate() *svcGate {
	g := &svcGate{}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// invoke runs fn unless the gate is closed.
func (g *svcGate) invoke(fn func()) {
	g.inflight.Add(1)
	defer func() {
		g.inflight.Add(-1)
		if g.closed.Load() {
			g.mu.Lock()
			g.idle.Broadcast()
			g.mu.Unlock()
		}
	}()
	if g.closed.Load() {
		return
	}
	tok := gating.Enter()
	defer gating.Leave(tok)
	fn()
}

// wait returns once no more calls run than the caller is itself inside.
func (g *svcGate) wait() {
	if g.inflight.Load() == 0 {
		return
	}
	own := int32(gating.Count())
	g.mu.Lock()
	for g.inflight.Load() > own {
		g.idle.Wait()
	}
	g.mu.Unlock()
}

// ServiceServer is the intra implementation of rmw.ServiceServer.
type ServiceServer struct {
	t        *Transport
	node     rmw.NodeInfo
	name     string
	reqType  string
	respType string
	qos      rmw.QoS
	gid      [16]byte
	handle   func(rmw.Request)
	onEvent  func(rmw.Event)
	gate     *svcGate
}

// ServiceClient is the intra implementation of rmw.ServiceClient.
type ServiceClient struct {
	t        *Transport
	node     rmw.NodeInfo
	name     string
	reqType  string
	respType string
	qos      rmw.QoS
	gid      [16]byte
	deliver  func(rmw.Response)
	onEvent  func(rmw.Event)
	gate     *svcGate
	seq      atomic.Int64
}

func (t *Transport) svcLocked() *svcRegistry {
	if t.svc.servers == nil {
		t.svc = svcRegistry{servers: map[string][]*ServiceServer{}, clients: map[string][]*ServiceClient{}, byGID: map[[16]byte]*ServiceClient{}}
	}
	return &t.svc
}

// svcMatch reports whether c and s match, and if not why.
func svcMatch(c *ServiceClient, s *ServiceServer) string {
	if c.reqType != s.reqType || c.respType != s.respType {
		return PolicyType
	}
	if p := rmw.Incompatibility(c.qos, s.qos); p != "" {
		return p
	}
	return rmw.Incompatibility(s.qos, c.qos)
}

func checkService(name, reqType, respType string) error {
	if _, _, err := rmw.ServiceTopics(name); err != nil {
		return err
	}
	if reqType == "" || respType == "" {
		return fmt.Errorf("intra: empty type name for service %q", name)
	}
	return nil
}

// NewServiceServer creates a server on service name.
func (t *Transport) NewServiceServer(node rmw.NodeInfo, name, reqType, respType string, qos rmw.QoS, handle func(rmw.Request), opts rmw.EndpointOptions) (rmw.ServiceServer, error) {
	if err := checkService(name, reqType, respType); err != nil {
		return nil, err
	}
	if handle == nil {
		return nil, fmt.Errorf("intra: nil handler for service %q", name)
	}
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return nil, err
	}
	s := &ServiceServer{t: t, node: node, name: name, reqType: reqType, respType: respType, qos: qos.Normalize(),
		handle: handle, onEvent: opts.OnEvent, gate: newGate()}
	var evs []pendingEvent
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	s.gid = t.newGID(0x04)
	r := t.svcLocked()
	r.servers[name] = append(r.servers[name], s)
	for _, c := range r.clients[name] {
		evs = append(evs, svcEvents(c, s)...)
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	return s, nil
}

// svcEvents returns the events of a client and a server that just met.
func svcEvents(c *ServiceClient, s *ServiceServer) []pendingEvent {
	if p := svcMatch(c, s); p != "" {
		return []pendingEvent{
			{&c.gate.closed, c.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: p, Remote: gidString(s.gid)}},
			{&s.gate.closed, s.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: p, Remote: gidString(c.gid)}},
		}
	}
	return []pendingEvent{
		{&c.gate.closed, c.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(s.gid)}},
		{&s.gate.closed, s.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(c.gid)}},
	}
}

// NewServiceClient creates a client of service name.
func (t *Transport) NewServiceClient(node rmw.NodeInfo, name, reqType, respType string, qos rmw.QoS, deliver func(rmw.Response), opts rmw.EndpointOptions) (rmw.ServiceClient, error) {
	if err := checkService(name, reqType, respType); err != nil {
		return nil, err
	}
	if deliver == nil {
		return nil, fmt.Errorf("intra: nil deliver function for service %q", name)
	}
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return nil, err
	}
	c := &ServiceClient{t: t, node: node, name: name, reqType: reqType, respType: respType, qos: qos.Normalize(),
		deliver: deliver, onEvent: opts.OnEvent, gate: newGate()}
	var evs []pendingEvent
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	c.gid = t.newGID(0x03)
	r := t.svcLocked()
	r.clients[name] = append(r.clients[name], c)
	r.byGID[c.gid] = c
	for _, s := range r.servers[name] {
		evs = append(evs, svcEvents(c, s)...)
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	return c, nil
}

// GID returns the server's unique identifier.
func (s *ServiceServer) GID() [16]byte { return s.gid }

// SendResponse hands data to the client that sent request id, on the
// calling goroutine. A response to a client that is gone is dropped
// silently, as on a network.
func (s *ServiceServer) SendResponse(id rmw.RequestID, data []byte) error {
	t := s.t
	if s.gate.closed.Load() {
		return ErrClosed
	}
	t.mu.Lock()
	c := t.svc.byGID[id.Writer]
	t.mu.Unlock()
	if c == nil || c.name != s.name || svcMatch(c, s) != "" {
		return nil
	}
	c.gate.invoke(func() { c.deliver(rmw.Response{Data: data, Seq: id.Seq}) })
	return nil
}

// Close unregisters the server; matched clients get EventUnmatched. Once it
// returns no handle or OnEvent call of the server is running or will start
// (a Close from inside one does not wait for its caller).
func (s *ServiceServer) Close() error {
	t := s.t
	t.mu.Lock()
	if s.gate.closed.Load() {
		t.mu.Unlock()
		return nil
	}
	s.gate.closed.Store(true)
	var evs []pendingEvent
	if t.svc.servers != nil {
		t.svc.servers[s.name] = remove(t.svc.servers[s.name], s)
		if len(t.svc.servers[s.name]) == 0 {
			delete(t.svc.servers, s.name)
		}
		for _, c := range t.svc.clients[s.name] {
			if svcMatch(c, s) == "" {
				evs = append(evs, pendingEvent{&c.gate.closed, c.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(s.gid)}})
			}
		}
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	s.gate.wait()
	t.waitEvents(&s.gate.closed)
	return nil
}

// GID returns the client's unique identifier (the RequestID.Writer of its
// requests).
func (c *ServiceClient) GID() [16]byte { return c.gid }

// SendRequest hands data to every matched server, on the calling
// goroutine, and returns the request's sequence number.
func (c *ServiceClient) SendRequest(data []byte) (int64, error) {
	t := c.t
	if c.gate.closed.Load() {
		return 0, ErrClosed
	}
	seq := c.seq.Add(1)
	t.mu.Lock()
	var to []*ServiceServer
	for _, s := range t.svc.servers[c.name] {
		if svcMatch(c, s) == "" {
			to = append(to, s)
		}
	}
	t.mu.Unlock()
	id := rmw.RequestID{Writer: c.gid, Seq: seq, Origin: c.gid}
	for _, s := range to {
		s.gate.invoke(func() { s.handle(rmw.Request{Data: data, ID: id}) })
	}
	return seq, nil
}

// ServiceAvailable reports whether a matched server exists.
func (c *ServiceClient) ServiceAvailable() bool {
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.gate.closed.Load() {
		return false
	}
	for _, s := range t.svc.servers[c.name] {
		if svcMatch(c, s) == "" {
			return true
		}
	}
	return false
}

// Close unregisters the client; matched servers get EventUnmatched. Once it
// returns no deliver or OnEvent call of the client is running or will
// start (a Close from inside one does not wait for its caller).
func (c *ServiceClient) Close() error {
	t := c.t
	t.mu.Lock()
	if c.gate.closed.Load() {
		t.mu.Unlock()
		return nil
	}
	c.gate.closed.Store(true)
	var evs []pendingEvent
	if t.svc.clients != nil {
		t.svc.clients[c.name] = remove(t.svc.clients[c.name], c)
		if len(t.svc.clients[c.name]) == 0 {
			delete(t.svc.clients, c.name)
		}
		delete(t.svc.byGID, c.gid)
		for _, s := range t.svc.servers[c.name] {
			if svcMatch(c, s) == "" {
				evs = append(evs, pendingEvent{&s.gate.closed, s.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(c.gid)}})
			}
		}
	}
	t.queueEvents(evs)
	t.mu.Unlock()
	t.drainEvents()
	c.gate.wait()
	t.waitEvents(&c.gate.closed)
	return nil
}

// closeServicesLocked closes every service endpoint (Transport.Close, t.mu
// held) and returns their gates to wait for once t.mu is released.
func (t *Transport) closeServicesLocked() []*svcGate {
	var gates []*svcGate
	for _, ss := range t.svc.servers {
		for _, s := range ss {
			s.gate.closed.Store(true)
			gates = append(gates, s.gate)
		}
	}
	for _, cs := range t.svc.clients {
		for _, c := range cs {
			c.gate.closed.Store(true)
			gates = append(gates, c.gate)
		}
	}
	t.svc = svcRegistry{}
	return gates
}

// Services lists the services with open servers or clients, sorted by
// name then type.
func (t *Transport) Services() []rmw.ServiceInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []rmw.ServiceInfo
	for name, ss := range t.svc.servers {
		for _, s := range ss {
			out = rmw.AddServiceEndpoint(out, name, rmw.ServiceTypeName(s.reqType), s.node, true)
		}
	}
	for name, cs := range t.svc.clients {
		for _, c := range cs {
			out = rmw.AddServiceEndpoint(out, name, rmw.ServiceTypeName(c.reqType), c.node, false)
		}
	}
	rmw.SortServices(out)
	return out
}
