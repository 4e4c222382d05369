package rtps

import (
	"fmt"
	"github.com/nros-go/nros/internal/bufpool"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// maxQueuedCallbacks bounds the remote samples waiting to be handed out
// (a deliver function that blocks would otherwise make them pile up).
const maxQueuedCallbacks = 1 << 16

// localHistoryLimit bounds the samples a transient-local KEEP_ALL publisher
// keeps for late-joining subscriptions of the same Transport.
const localHistoryLimit = 1000

// Publisher is the rtps implementation of rmw.Publisher.
type Publisher struct {
	t        *Transport
	guid     wire.GUID
	node     rmw.NodeInfo
	ed       wire.EndpointData
	qos      rmw.QoS
	w        *endpoint.Writer
	onEvent  func(rmw.Event)
	internal bool

	// cbClosed is set by Close: no OnEvent call of this publisher starts
	// once it is set (see Transport.waitCallbacks).
	cbClosed atomic.Bool

	// guarded by t.mu
	closed  bool
	remote  map[wire.GUID]bool // matched remote readers
	local   []*Subscription    // matched local subscriptions
	refused map[wire.GUID]bool // incompatible peers already reported
	hist    []rmw.Sample       // transient-local copies for local late joiners
	histCap int
	// server is the service server whose response writer this is
	// (service.go): its waiting responses go out when a reader matches.
	server *ServiceServer
}

var _ rmw.Publisher = (*Publisher)(nil)

// Subscription is the rtps implementation of rmw.Subscription.
type Subscription struct {
	t       *Transport
	guid    wire.GUID
	node    rmw.NodeInfo
	ed      wire.EndpointData
	qos     rmw.QoS
	r       *endpoint.Reader
	deliver func(rmw.Sample)
	onEvent func(rmw.Event)

	// closed is set by Close: no deliver or OnEvent call of this
	// subscription starts once it is set.
	closed   atomic.Bool
	internal bool
	remote   map[wire.GUID]bool // guarded by t.mu
	local    []*Publisher       // guarded by t.mu
	refused  map[wire.GUID]bool // guarded by t.mu
	// svc, if set, takes the remote samples of a service reader in place
	// of the plain path (service.go).
	svc func(*Subscription, endpoint.Sample)
	// svcDeliver, if set, takes the samples of a service reader (remote
	// and local) with their request identity, in place of deliver.
	svcDeliver func(rmw.Sample, rmw.RequestID)
	// feed is the socket of its own (opts.Feed; feed_linux.go), or nil.
	feed *feed
}

var _ rmw.Subscription = (*Subscription)(nil)

// GID returns the publisher's GUID as found in rmw.Sample.PublisherGID.
func (p *Publisher) GID() [16]byte { return p.guid.Bytes() }

// GID returns the subscription's GUID.
func (s *Subscription) GID() [16]byte { return s.guid.Bytes() }

// NewPublisher creates a writer on rt<topic> and announces it.
func (t *Transport) NewPublisher(node rmw.NodeInfo, topic, typeName string, qos rmw.QoS, opts rmw.EndpointOptions) (rmw.Publisher, error) {
	dt, dtype, err := names(topic, typeName)
	if err != nil {
		return nil, err
	}
	if err := rmw.CheckTypeHash(opts.TypeHash); err != nil {
		return nil, err
	}
	t.mu.Lock()
	p, err := t.newPublisherLocked(node, topic, dt, dtype, qos, opts, false)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	return p, nil
}

func (t *Transport) newPublisherLocked(node rmw.NodeInfo, rosTopic, ddsTopic, ddsType string, qos rmw.QoS, opts rmw.EndpointOptions, internal bool) (*Publisher, error) {
	if t.closed {
		return nil, ErrClosed
	}
	qos = qos.Normalize()
	guid := wire.GUID{Prefix: t.prefix, Entity: t.newEntityLocked(wire.EntityKindWriterNoKey)}
	ed := wire.NewEndpointData(true)
	ed.EndpointGUID = guid
	ed.TopicName, ed.TypeName = ddsTopic, ddsType
	ed.UserData, t.nextUserData = endpointUserData(t.nextUserData, ddsType, opts.TypeHash), nil
	discovery.SetQoS(&ed, qos, true)
	if t.sec != nil {
		if err := t.sec.checkLocal(&ed, true); err != nil {
			return nil, err
		}
	}
	wc := endpoint.WriterConfig{
		GUID:           guid,
		Participant:    endpoint.Participant{Vendor: Vendor, Version: wire.ProtocolVersion21},
		Reliable:       qos.Reliability == rmw.Reliable,
		TransientLocal: qos.Durability == rmw.TransientLocal,
		KeepAll:        qos.History == rmw.KeepAll,
		Depth:          qos.Depth,
		// One datagram per sample up to ~64 KB on UDP (the wire notes'
		// advice); Fast DDS accepts up to 65500.
		FragmentSize:   60000,
		MaxMessageSize: 64000,
	}
	if wc.Depth > 1<<20 {
		wc.Depth = 1 << 20
	}
	if t.nextService {
		// A service writer keeps svcHistory samples at least, whatever
		// depth it announces (service.go).
		wc.Depth = max(wc.Depth, svcHistory)
		wc.MaxHistoryBytes = svcHistoryBytes
	}
	t.nextService = false
	w, err := endpoint.NewWriter(wc, endpoint.OutputFunc(t.send))
	if err != nil {
		return nil, fmt.Errorf("rtps: writer for %s: %w", ddsTopic, err)
	}
	p := &Publisher{t: t, guid: guid, node: node, ed: ed, qos: qos, w: w, onEvent: opts.OnEvent,
		internal: internal, remote: map[wire.GUID]bool{}, refused: map[wire.GUID]bool{}}
	if qos.Durability == rmw.TransientLocal {
		p.histCap = qos.Depth
		if qos.History == rmw.KeepAll || p.histCap > localHistoryLimit {
			p.histCap = localHistoryLimit
		}
	}
	t.pubs[guid.Entity] = p
	now := t.cfg.Clock.Now()
	for _, s := range t.subs {
		if s.ed.TopicName == ddsTopic {
			t.pairLocal(p, s)
		}
	}
	t.secSyncTokensLocked(now)
	for _, e := range t.remR {
		if e.Data.TopicName == ddsTopic {
			t.pairRemoteReader(now, p, e)
		}
	}
	if err := t.disc.Announce(now, &p.ed); err != nil {
		t.cfg.Logf("rtps: announce %s: %v", ddsTopic, err)
	}
	return p, nil
}

// NewSubscription creates a reader on rt<topic> and announces it.
// Transient-local history of matching publishers of this Transport is
// delivered before it returns (unless another goroutine is handing out
// callbacks at that moment; it then delivers them, first); remote history
// arrives through the protocol.
func (t *Transport) NewSubscription(node rmw.NodeInfo, topic, typeName string, qos rmw.QoS, deliver func(rmw.Sample), opts rmw.EndpointOptions) (rmw.Subscription, error) {
	dt, dtype, err := names(topic, typeName)
	if err != nil {
		return nil, err
	}
	if err := rmw.CheckTypeHash(opts.TypeHash); err != nil {
		return nil, err
	}
	if deliver == nil {
		return nil, fmt.Errorf("rtps: nil deliver function for %q", topic)
	}
	t.mu.Lock()
	s, err := t.newSubscriptionLocked(node, dt, dtype, qos, deliver, opts, false)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	return s.public(), nil
}

func (t *Transport) newSubscriptionLocked(node rmw.NodeInfo, dt, dtype string, qos rmw.QoS, deliver func(rmw.Sample), opts rmw.EndpointOptions, internal bool) (*Subscription, error) {
	if t.closed {
		return nil, ErrClosed
	}
	qos = qos.Normalize()
	guid := wire.GUID{Prefix: t.prefix, Entity: t.newEntityLocked(wire.EntityKindReaderNoKey)}
	ed := wire.NewEndpointData(false)
	ed.EndpointGUID = guid
	ed.TopicName, ed.TypeName = dt, dtype
	ed.UserData, t.nextUserData = endpointUserData(t.nextUserData, dtype, opts.TypeHash), nil
	discovery.SetQoS(&ed, qos, false)
	if t.sec != nil {
		if err := t.sec.checkLocal(&ed, false); err != nil {
			return nil, err
		}
	}
	s := &Subscription{t: t, guid: guid, node: node, ed: ed, qos: qos, deliver: deliver, onEvent: opts.OnEvent,
		internal: internal, remote: map[wire.GUID]bool{}, refused: map[wire.GUID]bool{}}
	if opts.Feed && !internal && t.sec == nil {
		s.feed = t.newFeedLocked(s)
	}
	rc := endpoint.ReaderConfig{
		GUID:        guid,
		Participant: endpoint.Participant{Vendor: Vendor, Version: wire.ProtocolVersion21},
		Durable:     qos.Durability == rmw.TransientLocal,
	}
	if qos.History == rmw.KeepAll || qos.Depth > endpoint.DefaultWindow || t.nextService {
		// Deep readers buffer as far as a KEEP_ALL writer may run ahead
		// (endpoint.DefaultMaxSamples): with the default window one lost
		// datagram makes the reader drop everything past it, and the
		// writer resends the whole burst.
		rc.Window = 1024
	}
	t.nextService = false
	r, err := endpoint.NewReader(rc, endpoint.OutputFunc(t.send), s.remoteSample)
	if err != nil {
		return nil, fmt.Errorf("rtps: reader for %s: %w", dt, err)
	}
	s.r = r
	t.subs[guid.Entity] = s
	now := t.cfg.Clock.Now()
	for _, p := range t.pubs {
		if p.ed.TopicName == dt && t.pairLocal(p, s) && qos.Durability == rmw.TransientLocal {
			h := p.hist
			if qos.History == rmw.KeepLast && len(h) > qos.Depth {
				h = h[len(h)-qos.Depth:]
			}
			for _, smp := range h {
				t.st.Delivered++
				s.queueLocked(smp)
			}
		}
	}
	t.secSyncTokensLocked(now)
	for _, e := range t.remW {
		if e.Data.TopicName == dt {
			t.pairRemoteWriter(now, s, e)
		}
	}
	if err := t.disc.Announce(now, &s.ed); err != nil {
		t.cfg.Logf("rtps: announce %s: %v", dt, err)
	}
	return s, nil
}

// queueLocked queues smp (whose Data the caller no longer touches) for
// delivery to s once t.mu is released.
func (s *Subscription) queueLocked(smp rmw.Sample) {
	s.t.callbacks = append(s.t.callbacks, callback{gate: &s.closed, sub: s, smp: smp})
}

// remoteSample is the endpoint.Reader deliver callback (t.mu held): the
// sample is copied and queued, and handed out once t.mu is released.
func (s *Subscription) remoteSample(smp endpoint.Sample) {
	if smp.Payload == nil || smp.Key || s.closed.Load() {
		return
	}
	if sec := s.t.sec; sec != nil {
		var ok bool
		if smp.Payload, ok = sec.decodePayload(s.guid.Entity, smp.Writer, smp.Payload); !ok {
			return
		}
	}
	if s.svc != nil {
		s.svc(s, smp)
		return
	}
	ts := int64(0)
	if smp.HasSourceTimestamp {
		ts = smp.SourceTimestamp
	}
	if len(s.t.callbacks) >= maxQueuedCallbacks {
		// Some deliver or OnEvent function is stuck: do not hoard.
		s.t.st.DroppedSamples++
		return
	}
	s.t.st.Delivered++
	buf := bufpool.Copy(smp.Payload)
	s.t.callbacks = append(s.t.callbacks, callback{gate: &s.closed, sub: s, buf: buf,
		smp: rmw.Sample{Data: *buf, SourceTimestamp: ts, PublisherGID: smp.Writer.Bytes()}})
}

// pairLocal matches a publisher and a subscription of this Transport.
func (t *Transport) pairLocal(p *Publisher, s *Subscription) bool {
	if p.internal || s.internal {
		return false // the graph endpoints ignore their own participant
	}
	if pol := discovery.Incompatible(&p.ed, &s.ed); pol != "" {
		t.st.IncompatibleQoS++
		t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: pol, Remote: gidString(s.guid)})
		t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: pol, Remote: gidString(p.guid)})
		return false
	}
	p.local = append(p.local, s)
	s.local = append(s.local, p)
	t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(s.guid)})
	t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(p.guid)})
	t.flushResponsesLocked(t.cfg.Clock.Now(), p)
	return true
}

// pairRemoteReader (re)evaluates a local publisher against a remote reader.
func (t *Transport) pairRemoteReader(now int64, p *Publisher, e *discovery.Endpoint) {
	g := e.GUID()
	if pol := discovery.Incompatible(&p.ed, &e.Data); pol != "" {
		if p.remote[g] {
			delete(p.remote, g)
			p.w.UnmatchReader(g)
			t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(g)})
		}
		if !p.refused[g] {
			p.refused[g] = true
			t.st.IncompatibleQoS++
			t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: pol, Remote: gidString(g)})
		}
		return
	}
	delete(p.refused, g)
	if t.sec != nil && !t.sec.writerReady(p.guid.Entity, g) {
		return // secure.go: matched once the reader holds our keys
	}
	t.matchReaderLocked(now, p, e)
	if !p.remote[g] {
		p.remote[g] = true
		t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(g)})
		t.flushResponsesLocked(now, p)
	}
}

// matchReaderLocked adds or updates the reader proxy of e in p's writer.
func (t *Transport) matchReaderLocked(now int64, p *Publisher, e *discovery.Endpoint) {
	reliable := e.Data.Reliability.Kind == wire.ReliabilityReliable && p.qos.Reliability == rmw.Reliable
	tl := e.Data.Durability >= wire.DurabilityTransientLocal
	p.w.MatchReader(now, e.GUID(), e.Locators, reliable, tl)
}

// pairRemoteWriter (re)evaluates a local subscription against a remote
// writer.
func (t *Transport) pairRemoteWriter(now int64, s *Subscription, e *discovery.Endpoint) {
	g := e.GUID()
	if pol := discovery.Incompatible(&e.Data, &s.ed); pol != "" {
		if s.remote[g] {
			t.unrouteLocked(s, g)
			t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(g)})
		}
		if !s.refused[g] {
			s.refused[g] = true
			t.st.IncompatibleQoS++
			t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventIncompatibleQoS, Policy: pol, Remote: gidString(g)})
		}
		return
	}
	delete(s.refused, g)
	reliable := s.qos.Reliability == rmw.Reliable && e.Data.Reliability.Kind == wire.ReliabilityReliable
	s.r.MatchWriter(now, g, e.Locators, reliable)
	if !s.remote[g] {
		s.remote[g] = true
		t.route[g] = append(t.route[g], s)
		if reliable {
			t.replayHeartbeatLocked(now, s, g)
		}
		t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidString(g)})
	}
}

func (t *Transport) unrouteLocked(s *Subscription, g wire.GUID) {
	delete(s.remote, g)
	s.r.UnmatchWriter(g)
	rs := slices.DeleteFunc(slices.Clone(t.route[g]), func(x *Subscription) bool { return x == s })
	if len(rs) == 0 {
		delete(t.route, g)
	} else {
		t.route[g] = rs
	}
}

// listener receives discovery results (t.mu held).
type listener Transport

func (l *listener) ParticipantDiscovered(p *discovery.Participant) {
	t := (*Transport)(l)
	t.notifyGraphLocked()
	t.cfg.Logf("rtps: participant %v (vendor %v) discovered", p.Data.GuidPrefix, p.Data.VendorID)
	// A new peer should see our graph sample; transient-local takes care
	// of that once its reader matches.
}

func (l *listener) ParticipantLost(p *discovery.Participant, expired bool) {
	t := (*Transport)(l)
	if t.sec != nil {
		t.sec.forget(p.Data.GuidPrefix)
	}
	t.notifyGraphLocked()
	delete(t.remoteGraph, p.Data.GuidPrefix)
	t.cfg.Logf("rtps: participant %v lost (expired %v)", p.Data.GuidPrefix, expired)
}

func (l *listener) EndpointDiscovered(e *discovery.Endpoint) {
	t := (*Transport)(l)
	now := t.cfg.Clock.Now()
	if t.sec != nil {
		if !t.sec.admitRemote(e) {
			return
		}
	}
	t.notifyGraphLocked()
	g := e.GUID()
	if e.Writer {
		t.remW[g] = e
		t.secSyncTokensLocked(now)
		for _, s := range t.subs {
			if s.ed.TopicName == e.Data.TopicName {
				t.pairRemoteWriter(now, s, e)
			} else if s.remote[g] { // topic changed: impossible in DDS, but be safe
				t.unrouteLocked(s, g)
			}
		}
		return
	}
	t.remR[g] = e
	t.secSyncTokensLocked(now)
	for _, p := range t.pubs {
		if p.ed.TopicName == e.Data.TopicName {
			t.pairRemoteReader(now, p, e)
		} else if p.remote[g] {
			delete(p.remote, g)
			p.w.UnmatchReader(g)
		}
	}
}

func (l *listener) EndpointLost(e *discovery.Endpoint) {
	t := (*Transport)(l)
	t.notifyGraphLocked()
	g := e.GUID()
	t.secForgetRemoteLocked(g)
	if e.Writer {
		delete(t.remW, g)
		delete(t.stashedHB, g)
		for _, s := range t.route[g] {
			delete(s.remote, g)
			s.r.UnmatchWriter(g)
			t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(g)})
		}
		delete(t.route, g)
		for _, s := range t.subs {
			delete(s.refused, g)
		}
		return
	}
	delete(t.remR, g)
	t.acks.ForgetReader(g)
	for _, p := range t.pubs {
		if p.remote[g] {
			delete(p.remote, g)
			p.w.UnmatchReader(g)
			t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(g)})
		}
		delete(p.refused, g)
	}
}

// Publish sends data to every matched reader: remote ones through the
// writer, local ones through the callback queue, before Publish returns
// unless another goroutine is handing out callbacks (it then delivers
// them, in order). A KEEP_ALL
// reliable publisher whose history is full of unacknowledged samples waits
// up to 100 ms for acknowledgements, then fails.
func (p *Publisher) Publish(data []byte) error {
	t := p.t
	t.mu.Lock()
	if p.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	ts := t.cfg.WallNow()
	deadline := t.cfg.Clock.Now() + int64(maxBlocking)
	wireData, err := t.wirePayload(p, data)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	for {
		_, err := p.w.Write(t.cfg.Clock.Now(), wireData, ts)
		if err == nil {
			break
		}
		if err != endpoint.ErrWouldBlock || t.cfg.Clock.Now() > deadline || p.closed {
			t.mu.Unlock()
			return fmt.Errorf("rtps: publish on %s: %w", p.ed.TopicName, err)
		}
		// Woken by every received datagram and timer tick.
		waitCond(t, deadline)
	}
	t.st.Published++
	smp := rmw.Sample{Data: data, SourceTimestamp: ts, PublisherGID: p.guid.Bytes()}
	if p.histCap > 0 {
		if len(p.hist) >= p.histCap {
			p.hist = slices.Delete(p.hist, 0, len(p.hist)-p.histCap+1)
		}
		h := smp
		h.Data = slices.Clone(data)
		p.hist = append(p.hist, h)
	}
	switch len(p.local) {
	case 0:
	case 1: // the usual case: a pooled copy, returned after deliver
		t.st.Delivered++
		buf := bufpool.Copy(data)
		smp.Data = *buf
		t.callbacks = append(t.callbacks, callback{gate: &p.local[0].closed, sub: p.local[0], smp: smp, buf: buf})
	default: // one copy shared by every local subscription
		smp.Data = slices.Clone(data)
		for _, s := range p.local {
			t.st.Delivered++
			s.queueLocked(smp)
		}
	}
	kick := p.w.NextDeadline() < t.sleepUntil
	t.mu.Unlock()
	if kick {
		t.kick()
	}
	t.dispatch()
	return nil
}

// waitCond waits on t.ackCond (t.mu held) until it is broadcast or the
// transport's clock reaches deadline. Only a blocked writer waits (a full
// KEEP_ALL history, a response before its reader matched): a goroutine
// per wait broadcasts at the deadline.
func waitCond(t *Transport, deadline int64) {
	ch, stop := t.cfg.Clock.After(time.Duration(max(deadline-t.cfg.Clock.Now(), 0)))
	woken := make(chan struct{})
	go func() {
		select {
		case <-ch:
			t.mu.Lock()
			t.ackCond.Broadcast()
			t.mu.Unlock()
		case <-woken:
		}
	}()
	t.ackCond.Wait()
	close(woken)
	stop()
}

// writeLocked publishes an internal sample (the graph) to remote readers
// and local subscriptions (t.mu held; local delivery is skipped: nothing
// local subscribes to internal topics).
func (t *Transport) writeLocked(p *Publisher, data []byte) {
	wireData, err := t.wirePayload(p, data)
	if err != nil {
		t.cfg.Logf("rtps: %s: %v", p.ed.TopicName, err)
		return
	}
	if _, err := p.w.Write(t.cfg.Clock.Now(), wireData, t.cfg.WallNow()); err != nil {
		t.cfg.Logf("rtps: %s: %v", p.ed.TopicName, err)
	}
}

// MatchedSubscriptions returns the number of matched readers, remote and
// local.
func (p *Publisher) MatchedSubscriptions() int {
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	if p.closed {
		return 0
	}
	return len(p.remote) + len(p.local)
}

// Close retracts the publisher (SEDP dispose) and unmatches it. Once Close
// returns, no OnEvent call of the publisher is running or will start (see
// rmw.Publisher for a Close called from inside a callback). Idempotent.
func (p *Publisher) Close() error {
	t := p.t
	t.mu.Lock()
	if p.closed {
		t.mu.Unlock()
		return nil
	}
	p.closed = true
	p.cbClosed.Store(true)
	delete(t.pubs, p.guid.Entity)
	if t.sec != nil {
		t.sec.forgetLocal(p.guid)
	}
	_ = t.disc.Retract(t.cfg.Clock.Now(), p.guid)
	for _, s := range p.local {
		s.local = slices.DeleteFunc(slices.Clone(s.local), func(x *Publisher) bool { return x == p })
		t.queue(&s.closed, s.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(p.guid)})
	}
	p.local, p.hist = nil, nil
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	t.waitCallbacks(&p.cbClosed)
	return nil
}

// MatchedPublishers returns the number of matched writers, remote and
// local.
func (s *Subscription) MatchedPublishers() int {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if s.closed.Load() {
		return 0
	}
	return len(s.remote) + len(s.local)
}

// Close retracts the subscription and unmatches it. Once Close returns, no
// deliver or OnEvent call of the subscription is running or will start
// (see rmw.Subscription for a Close called from inside a callback).
// Idempotent.
func (s *Subscription) Close() error {
	t := s.t
	t.mu.Lock()
	if s.closed.Load() {
		t.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	delete(t.subs, s.guid.Entity)
	if t.sec != nil {
		t.sec.forgetLocal(s.guid)
	}
	_ = t.disc.Retract(t.cfg.Clock.Now(), s.guid)
	for g := range s.remote {
		t.unrouteLocked(s, g)
	}
	for _, p := range s.local {
		p.local = slices.DeleteFunc(slices.Clone(p.local), func(x *Subscription) bool { return x == s })
		t.queue(&p.cbClosed, p.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidString(s.guid)})
	}
	s.local = nil
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	if s.feed != nil {
		s.feed.close()
	}
	t.waitCallbacks(&s.closed)
	return nil
}
