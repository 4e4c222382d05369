package zenoh

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// maxPending bounds the requests a server keeps unanswered; past it the
// oldest is ended without a reply (Stats.Evicted).
const maxPending = 1 << 14

type reqKey struct {
	gid [16]byte
	seq int64
}

// Server is a service server: a complete queryable on the service's key
// and an SS token, as rmw_zenoh declares them. Requests are keyed by the
// client's gid and sequence number from the query's attachment; a
// duplicate is dropped.
type Server struct {
	t      *Transport
	key    string
	node   rmw.NodeInfo
	ge     *gEntity
	tokID  uint32
	declID uint32
	qbl    *queryable
	handle func(rmw.Request)
	g      guard
	closed atomic.Bool

	mu      sync.Mutex
	pending map[reqKey]*query
	order   []reqKey
}

func (s *Server) guardOf() *guard { return &s.g }

func (t *Transport) serviceSpec(node rmw.NodeInfo, kind ros.Kind, service, reqType string, qos rmw.QoS, opts rmw.EndpointOptions) (endpointSpec, string, error) {
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return endpointSpec{}, "", err
	}
	if _, _, err := rmw.ServiceTopics(service); err != nil {
		return endpointSpec{}, "", err
	}
	return t.spec(node, kind, service, rmw.ServiceTypeName(reqType), opts.TypeHash, qos)
}

// NewServiceServer creates a server; handle is called for every request.
func (t *Transport) NewServiceServer(node rmw.NodeInfo, service, reqType, respType string, qos rmw.QoS, handle func(rmw.Request), opts rmw.EndpointOptions) (rmw.ServiceServer, error) {
	sp, key, err := t.serviceSpec(node, ros.KindService, service, reqType, qos, opts)
	if err != nil {
		return nil, err
	}
	s := &Server{t: t, key: key, node: sp.node, handle: handle, pending: map[reqKey]*query{}}
	s.qbl = &queryable{key: key, complete: ros.ServiceQueryableComplete, handle: s.onQuery}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	// The queryable before the token, as rmw_zenoh declares them: a peer
	// learns of both in that order on one link, so a client that saw the
	// server in the graph (the token) asks a session that already knows
	// where to send the query. The other way round a request sent at once
	// found no queryable, ended with no reply, and the call hung.
	if s.declID, err = t.sess.DeclareQueryable(key, ros.ServiceQueryableComplete); err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("zenoh: queryable: %w", err)
	}
	ge, tokID, err := t.newEndpointLocked(sp, &s.g, opts.OnEvent)
	if err != nil {
		_ = t.sess.UndeclareQueryable(s.declID)
		t.mu.Unlock()
		return nil, err
	}
	s.ge, s.tokID = ge, tokID
	t.addQueryableLocked(s.qbl)
	t.eps[s] = struct{}{}
	t.mu.Unlock()
	t.drainEvents()
	return s, nil
}

func (s *Server) onQuery(q *query) {
	t := s.t
	att, _, err := ros.ParseAttachment(q.attachment)
	if err != nil {
		t.Stats.BadAttachment.Add(1)
		t.cfg.Logf("zenoh: request on %q dropped: %v", q.key, err)
		t.finishQuery(q)
		return
	}
	k := reqKey{att.GID, att.Seq}
	var evicted *query
	s.mu.Lock()
	if _, dup := s.pending[k]; dup || s.closed.Load() {
		s.mu.Unlock()
		t.finishQuery(q)
		return
	}
	s.pending[k] = q
	s.order = append(s.order, k)
	if len(s.pending) > maxPending {
		for len(s.order) > 0 {
			old := s.order[0]
			s.order = s.order[1:]
			if p := s.pending[old]; p != nil {
				delete(s.pending, old)
				evicted = p
				break
			}
		}
	}
	if len(s.order) > 2*maxPending {
		s.compactLocked()
	}
	s.mu.Unlock()
	if evicted != nil {
		t.Stats.Evicted.Add(1)
		t.finishQuery(evicted)
	}
	if !s.g.enter() {
		s.take(k)
		t.finishQuery(q)
		return
	}
	s.handle(rmw.Request{Data: q.payload, ID: rmw.RequestID{Writer: att.GID, Seq: att.Seq}})
	s.g.exit()
}

func (s *Server) compactLocked() {
	keep := s.order[:0]
	for _, k := range s.order {
		if s.pending[k] != nil {
			keep = append(keep, k)
		}
	}
	s.order = keep
}

func (s *Server) take(k reqKey) *query {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.pending[k]
	delete(s.pending, k)
	return q
}

// SendResponse answers request id: one reply on the server's key with
// the request's sequence number and client gid in its attachment, then
// the end of the query.
func (s *Server) SendResponse(id rmw.RequestID, data []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	q := s.take(reqKey{id.Writer, id.Seq})
	if q == nil {
		return fmt.Errorf("zenoh: service %s: no pending request %d of client %x", s.ge.ent.Topic, id.Seq, id.Writer)
	}
	t := s.t
	att := ros.ReplyAttachment(ros.RequestID{Seq: id.Seq, GID: id.Writer}, t.cfg.WallNow())
	t.reply(q, s.key, &wire.Put{Timestamp: t.stamp(), Attachment: att.Bytes(), Payload: data})
	t.finishQuery(q)
	return nil
}

// Close undeclares the server; the requests it had not answered end
// without a reply.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	t := s.t
	t.mu.Lock()
	t.removeQueryableLocked(s.qbl)
	if !t.closed {
		_ = t.sess.UndeclareQueryable(s.declID)
	}
	t.closeEndpointLocked(s.ge, s.tokID, s.node)
	delete(t.eps, s)
	t.mu.Unlock()
	s.g.close()
	s.mu.Lock()
	left := s.pending
	s.pending = map[reqKey]*query{}
	s.order = nil
	s.mu.Unlock()
	if !t.isClosed() {
		for _, q := range left {
			t.finishQuery(q)
		}
	}
	t.drainEvents()
	return nil
}

// Client is a service client: an SC token, and a query on the service's
// key per request (target all complete, no consolidation, rmw_zenoh's
// timeout), carrying the client's sequence number and gid.
type Client struct {
	t       *Transport
	key     string
	node    rmw.NodeInfo
	ge      *gEntity
	tokID   uint32
	deliver func(rmw.Response)
	g       guard
	closed  atomic.Bool
	timeout time.Duration

	mu  sync.Mutex
	seq int64
}

func (c *Client) guardOf() *guard { return &c.g }

// NewServiceClient creates a client; deliver is called for every reply to
// one of its requests.
func (t *Transport) NewServiceClient(node rmw.NodeInfo, service, reqType, respType string, qos rmw.QoS, deliver func(rmw.Response), opts rmw.EndpointOptions) (rmw.ServiceClient, error) {
	sp, key, err := t.serviceSpec(node, ros.KindClient, service, reqType, qos, opts)
	if err != nil {
		return nil, err
	}
	c := &Client{t: t, key: key, node: sp.node, deliver: deliver}
	d, infinite := ros.ClientQueryTimeout(key, t.qTimeout)
	if infinite {
		d = infiniteQueryTimeout
	}
	c.timeout = d
	t.mu.Lock()
	ge, tokID, err := t.newEndpointLocked(sp, &c.g, opts.OnEvent)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	c.ge, c.tokID = ge, tokID
	t.eps[c] = struct{}{}
	t.mu.Unlock()
	t.drainEvents()
	return c, nil
}

// SendRequest queries the servers with data and returns the request's
// sequence number (from 1).
func (c *Client) SendRequest(data []byte) (int64, error) {
	if c.closed.Load() {
		return 0, ErrClosed
	}
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	t := c.t
	att := ros.Attachment{Seq: seq, Timestamp: t.cfg.WallNow(), GID: c.ge.gid}.Bytes()
	o := &outQuery{onReply: c.onReply}
	if err := t.query(c.key, "", data, att, wire.TargetAllComplete, c.timeout, o); err != nil {
		return 0, err
	}
	return seq, nil
}

// onReply delivers a reply: its sequence number is the request's, read
// from its attachment as rmw_zenoh reads it.
func (c *Client) onReply(key string, put *wire.Put) {
	att, _, err := ros.ParseAttachment(put.Attachment)
	if err != nil {
		c.t.Stats.BadAttachment.Add(1)
		c.t.cfg.Logf("zenoh: reply on %q dropped: %v", key, err)
		return
	}
	if att.GID != c.ge.gid {
		return // another client's (a router's duplicate): not ours
	}
	if !c.g.enter() {
		return
	}
	c.deliver(rmw.Response{Data: put.Payload, Seq: att.Seq})
	c.g.exit()
}

// ServiceAvailable reports whether a server of the service's name and
// type is in the graph (rmw_zenoh's service_server_is_available).
func (c *Client) ServiceAvailable() bool {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return !c.closed.Load() && c.t.serverExistsLocked(svcIndex(c.ge.ent))
}

// GID returns the client's gid.
func (c *Client) GID() [16]byte { return c.ge.gid }

// Close undeclares the client; once it returns no deliver or OnEvent call
// of it runs.
func (c *Client) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	t := c.t
	t.mu.Lock()
	t.closeEndpointLocked(c.ge, c.tokID, c.node)
	delete(t.eps, c)
	t.mu.Unlock()
	c.g.close()
	t.drainEvents()
	return nil
}
