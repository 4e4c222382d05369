package zenoh

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// endpointSpec is what every endpoint of a node is made of.
type endpointSpec struct {
	node    rmw.NodeInfo
	kind    ros.Kind
	topic   string // fully qualified name
	ddsType string
	hash    string // type-hash field
	profile ros.Profile
}

// newEndpointLocked draws the endpoint's id, declares its liveliness
// token and adds it to the graph (t.mu held).
func (t *Transport) newEndpointLocked(sp endpointSpec, g *guard, onEvent func(rmw.Event)) (*gEntity, uint32, error) {
	if t.closed {
		return nil, 0, ErrClosed
	}
	ln, err := t.acquireNodeLocked(sp.node)
	if err != nil {
		return nil, 0, err
	}
	ent := ros.EndpointEntity(ln.ent, sp.kind, t.nextID, sp.topic, sp.ddsType, sp.hash, sp.profile)
	tok, err := ent.Token()
	if err != nil {
		t.releaseNodeLocked(sp.node)
		return nil, 0, fmt.Errorf("zenoh: %s %s: %w", sp.kind, sp.topic, err)
	}
	t.nextID++
	id, err := t.sess.DeclareToken(tok)
	if err != nil {
		t.releaseNodeLocked(sp.node)
		return nil, 0, fmt.Errorf("zenoh: %s token: %w", sp.kind, err)
	}
	ge := &gEntity{ent: &ent, token: tok, gid: ros.TokenGID(tok), local: true, g: g, onEvent: onEvent}
	if isTopic(sp.kind) {
		ge.key, _ = ent.TopicKey()
		ge.info, _ = ent.EndpointInfo()
	}
	t.graphAddLocked(ge)
	return ge, id, nil
}

// closeEndpointLocked undeclares the endpoint's token and removes it from
// the graph (t.mu held).
func (t *Transport) closeEndpointLocked(ge *gEntity, tokID uint32, node rmw.NodeInfo) {
	if !t.closed {
		_ = t.sess.UndeclareToken(tokID)
	}
	t.graphRemoveLocked(ge.token)
	t.releaseNodeLocked(node)
}

func (t *Transport) spec(node rmw.NodeInfo, kind ros.Kind, topic, rosType, rihs string, qos rmw.QoS) (endpointSpec, string, error) {
	dds, err := ros.DDSTypeName(rosType)
	if err != nil {
		return endpointSpec{}, "", fmt.Errorf("zenoh: %w", err)
	}
	sp := endpointSpec{node: normNode(node), kind: kind, topic: topic, ddsType: dds,
		hash: t.cfg.Distro.TypeHash(rihs), profile: ros.ProfileFromQoS(qos)}
	key, err := ros.TopicKey(t.cfg.Domain, topic, dds, sp.hash)
	if err != nil {
		return endpointSpec{}, "", fmt.Errorf("zenoh: %w", err)
	}
	return sp, key, nil
}

// Publisher is a ROS publisher: puts on the topic's data key with
// rmw_zenoh's attachment, and for transient-local QoS a publication cache
// (advanced.go).
type Publisher struct {
	t      *Transport
	key    string
	node   rmw.NodeInfo
	ge     *gEntity
	tokID  uint32
	opts   session.PutOptions
	g      guard
	closed atomic.Bool

	mu  sync.Mutex // orders puts: sequence numbers, the cache
	seq int64
	adv *advPub
}

func (p *Publisher) guardOf() *guard { return &p.g }

// NewPublisher creates a publisher. Its type hash is opts.TypeHash (or
// TypeHashNotSupported on Humble); its reliability and congestion control
// are rmw_zenoh's for qos.
func (t *Transport) NewPublisher(node rmw.NodeInfo, topic, typeName string, qos rmw.QoS, opts rmw.EndpointOptions) (rmw.Publisher, error) {
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return nil, err
	}
	sp, key, err := t.spec(node, ros.KindPublisher, topic, typeName, opts.TypeHash, qos)
	if err != nil {
		return nil, err
	}
	p := &Publisher{t: t, key: key, node: sp.node}
	cc := wire.Drop
	if sp.profile.CongestionBlock() {
		cc = wire.Block
	}
	p.opts = session.PutOptions{QoS: wire.MakeQoS(wire.PriorityData, cc, false), BestEffort: !sp.profile.ReliableTransport()}
	t.mu.Lock()
	ge, tokID, err := t.newEndpointLocked(sp, &p.g, opts.OnEvent)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	p.ge, p.tokID = ge, tokID
	if a := ros.AdvancedPublisherFor(sp.profile); a.Cache {
		p.adv, err = t.newAdvPubLocked(key, a)
		if err != nil {
			t.closeEndpointLocked(ge, tokID, sp.node)
			t.mu.Unlock()
			return nil, err
		}
	}
	t.eps[p] = struct{}{}
	t.mu.Unlock()
	if p.adv != nil && p.adv.cfg.Heartbeat {
		t.wg.Add(1)
		go p.heartbeats()
	}
	t.drainEvents()
	return p, nil
}

// Publish puts data on the topic for the other nodes and delivers it to
// this transport's subscriptions.
func (p *Publisher) Publish(data []byte) error {
	t := p.t
	if p.closed.Load() || t.isClosed() {
		return ErrClosed
	}
	p.mu.Lock()
	p.seq++
	att := ros.Attachment{Seq: p.seq, Timestamp: t.cfg.WallNow(), GID: p.ge.gid}.Bytes()
	put := &wire.Put{Timestamp: t.stamp(), Attachment: att, Payload: data}
	if p.adv != nil {
		p.adv.record(put)
	}
	t.sess.Put(p.key, put, p.opts)
	p.mu.Unlock()
	// zenoh delivers to the session's own subscribers; the session here
	// does not, so the transport does
	t.dispatch(&sample{key: p.key, payload: data, attachment: att, ts: put.Timestamp, src: put.SourceInfo})
	return nil
}

// MatchedSubscriptions counts the subscriptions on the topic and type
// with a compatible QoS, as rmw_zenoh does.
func (p *Publisher) MatchedSubscriptions() int {
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	if p.closed.Load() {
		return 0
	}
	return p.t.matchedLocked(p.ge)
}

// GID returns the publisher's gid (rmw_zenoh's: XXH3-128 of its token).
func (p *Publisher) GID() [16]byte { return p.ge.gid }

// Token returns the publisher's liveliness token.
func (p *Publisher) Token() string { return p.ge.token }

// Close undeclares the publisher; once it returns no OnEvent call of it
// runs.
func (p *Publisher) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	t := p.t
	t.mu.Lock()
	t.closeEndpointLocked(p.ge, p.tokID, p.node)
	if p.adv != nil {
		t.closeAdvPubLocked(p.adv)
	}
	delete(t.eps, p)
	t.mu.Unlock()
	if p.adv != nil {
		p.adv.stopHeartbeat()
	}
	p.g.close()
	t.drainEvents()
	return nil
}

// Subscription is a ROS subscription: a zenoh subscriber on the topic's
// data key (and, for transient-local QoS, the advanced subscriber's
// history queries, advanced.go). Samples without rmw_zenoh's attachment
// are dropped, as rmw_zenoh drops them (Stats.BadAttachment).
type Subscription struct {
	t       *Transport
	key     string
	node    rmw.NodeInfo
	ge      *gEntity
	tokID   uint32
	declID  uint32
	sub     *subscriber
	deliver func(rmw.Sample)
	g       guard
	closed  atomic.Bool
	adv     *advSub
	feed    *feed // with rmw.EndpointOptions.Feed (feed.go)
}

func (s *Subscription) guardOf() *guard { return &s.g }

// NewSubscription creates a subscription; deliver is called for every
// sample, on the goroutine that received it (a face's reader, or the
// publisher's goroutine for a publisher of this transport).
func (t *Transport) NewSubscription(node rmw.NodeInfo, topic, typeName string, qos rmw.QoS, deliver func(rmw.Sample), opts rmw.EndpointOptions) (rmw.Subscription, error) {
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return nil, err
	}
	sp, key, err := t.spec(node, ros.KindSubscription, topic, typeName, opts.TypeHash, qos)
	if err != nil {
		return nil, err
	}
	if opts.TypeHash == "" {
		// No hash known (a dynamically typed subscription: bag record,
		// topic echo): hear the type's publishers whatever hash their
		// distro puts in the key. The token keeps TypeHashNotSupported.
		key = key[:strings.LastIndexByte(key, '/')+1] + "*"
	}
	s := &Subscription{t: t, key: key, node: sp.node, deliver: deliver}
	if opts.Feed {
		s.feed = &feed{}
		s.feed.checkReady = s.feed.readyUnlessClosed
	}
	a := ros.AdvancedSubscriberFor(sp.profile)
	if a.History {
		s.adv = newAdvSub(s, a)
	}
	s.sub = &subscriber{key: key, handle: s.handle, adv: s.adv}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	// The subscriber before the token, as a service's queryable: a remote
	// publisher learns of both in that order on one link, so one that saw
	// the subscription in the graph (the token) and publishes at once
	// already routes to it. The other way round what it published in
	// between was dropped.
	if s.declID, err = t.sess.DeclareSubscriber(key); err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("zenoh: subscriber: %w", err)
	}
	ge, tokID, err := t.newEndpointLocked(sp, &s.g, opts.OnEvent)
	if err != nil {
		_ = t.sess.UndeclareSubscriber(s.declID)
		t.mu.Unlock()
		return nil, err
	}
	s.ge, s.tokID = ge, tokID
	t.addSubscriberLocked(s.sub)
	if s.adv != nil {
		if err := s.adv.startLocked(); err != nil {
			t.mu.Unlock()
			s.Close()
			return nil, err
		}
	}
	t.eps[s] = struct{}{}
	t.mu.Unlock()
	if s.adv != nil {
		s.adv.queryHistory()
	}
	t.drainEvents()
	if s.feed != nil {
		return fedSubscription{s}, nil
	}
	return s, nil
}

// handle takes one sample for this subscription.
func (s *Subscription) handle(sm sample) {
	if s.feed != nil && sm.face != nil && s.feed.last.Load() != sm.face {
		s.feed.last.Store(sm.face)
	}
	att, _, err := ros.ParseAttachment(sm.attachment)
	if err != nil {
		s.t.Stats.BadAttachment.Add(1)
		s.t.cfg.Logf("zenoh: sample on %q dropped: %v", sm.key, err)
		return
	}
	if s.adv != nil {
		s.adv.handle(sm, att)
		return
	}
	s.emit(sm.payload, att)
}

func (s *Subscription) emit(payload []byte, att ros.Attachment) {
	if !s.g.enter() {
		return
	}
	s.deliver(rmw.Sample{Data: payload, SourceTimestamp: att.Timestamp, PublisherGID: att.GID})
	s.g.exit()
}

// MatchedPublishers counts the publishers on the topic and type with a
// compatible QoS, as rmw_zenoh does.
func (s *Subscription) MatchedPublishers() int {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if s.closed.Load() {
		return 0
	}
	return s.t.matchedLocked(s.ge)
}

// GID returns the subscription's gid.
func (s *Subscription) GID() [16]byte { return s.ge.gid }

// Token returns the subscription's liveliness token.
func (s *Subscription) Token() string { return s.ge.token }

// Close undeclares the subscription; once it returns no deliver or
// OnEvent call of it runs.
func (s *Subscription) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	t := s.t
	t.mu.Lock()
	t.removeSubscriberLocked(s.sub)
	if !t.closed {
		_ = t.sess.UndeclareSubscriber(s.declID)
	}
	if s.adv != nil {
		s.adv.closeLocked()
	}
	t.closeEndpointLocked(s.ge, s.tokID, s.node)
	delete(t.eps, s)
	t.mu.Unlock()
	s.g.close()
	if s.feed != nil {
		s.feed.close()
	}
	t.drainEvents()
	return nil
}
