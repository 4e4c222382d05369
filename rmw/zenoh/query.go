package zenoh

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/keyexpr"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Queries, local and remote. The session sends this transport's queries to
// the faces that can answer and hands it the queries of other nodes; it
// serves neither to this transport's own queryables, so the transport does:
// a query goes to the session and to every local queryable whose key
// intersects it (and that the target admits), and a local queryable's
// replies go straight to the querier.

// queryable is a local queryable: a service server or a publication cache.
// handle must end every query it is given with done, once, after its
// replies.
type queryable struct {
	key      string
	complete bool
	handle   func(*query)
}

// query is one query as a queryable sees it.
type query struct {
	key, params string
	payload     []byte // valid only during handle
	attachment  []byte // valid only during handle
	// remote: the face and request id to answer, and how many local
	// queryables still have to finish before RESPONSE_FINAL
	face *session.Face
	rid  uint32
	rq   *remoteQuery
	// local: the querier of this transport
	out *outQuery
}

type remoteQuery struct{ pending atomic.Int32 }

// outQuery is one query of this transport in flight: its replies go to
// onReply (from any goroutine, possibly concurrently), and onFinal runs
// once when the session and every local queryable are done with it.
type outQuery struct {
	onReply func(key string, put *wire.Put)
	onFinal func()
	pending atomic.Int32
	once    sync.Once
}

func (o *outQuery) finish() {
	if o.pending.Add(-1) == 0 && o.onFinal != nil {
		o.once.Do(o.onFinal)
	}
}

func targets(q *queryable, target wire.QueryTarget) bool {
	return target != wire.TargetAllComplete || q.complete
}

func (t *Transport) addQueryableLocked(q *queryable) {
	t.qbls = append(append([]*queryable(nil), t.qbls...), q)
}

func (t *Transport) removeQueryableLocked(q *queryable) {
	out := make([]*queryable, 0, len(t.qbls))
	for _, x := range t.qbls {
		if x != q {
			out = append(out, x)
		}
	}
	t.qbls = out
}

// query sends a query to the session and to the local queryables.
func (t *Transport) query(key, params string, payload, attachment []byte, target wire.QueryTarget, timeout time.Duration, o *outQuery) error {
	q := &wire.Query{Consolidation: wire.ConsolidationNone, Parameters: params, Attachment: attachment}
	if payload != nil {
		q.Body = &wire.QueryBody{Payload: payload}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	var local []*queryable
	for _, qb := range t.qbls {
		if targets(qb, target) && keyexpr.Intersects(qb.key, key) {
			local = append(local, qb)
		}
	}
	o.pending.Store(int32(len(local)) + 1)
	// under t.mu, so that a response cannot arrive before the request is known
	rid, err := t.sess.Request(key, q, session.RequestOptions{Target: target, Timeout: timeout})
	if err != nil {
		o.pending.Add(-1)
	} else {
		t.requests[rid] = o
	}
	t.mu.Unlock()
	for _, qb := range local {
		qb.handle(&query{key: key, params: params, payload: payload, attachment: attachment, out: o})
	}
	if err != nil && len(local) == 0 {
		return err
	}
	return nil
}

// reply answers q with a sample on key.
func (t *Transport) reply(q *query, key string, put *wire.Put) {
	if q.out != nil {
		if q.out.onReply != nil {
			q.out.onReply(key, put)
		}
		return
	}
	t.sess.Reply(q.face, q.rid, key, &wire.Reply{Body: put}, wire.QoS{})
}

// done ends a queryable's part of q.
func (t *Transport) finishQuery(q *query) {
	if q.out != nil {
		q.out.finish()
		return
	}
	if q.rq.pending.Add(-1) == 0 {
		t.sess.ReplyFinal(q.face, q.rid)
	}
}

// onRemoteQuery hands a query from f to the matching local queryables.
func (t *Transport) onRemoteQuery(f *session.Face, key string, m *wire.Request) {
	t.mu.Lock()
	var local []*queryable
	if !t.closed {
		for _, qb := range t.qbls {
			if targets(qb, m.Target) && keyexpr.Intersects(qb.key, key) {
				local = append(local, qb)
			}
		}
	}
	t.mu.Unlock()
	if len(local) == 0 {
		t.sess.ReplyFinal(f, m.ID)
		return
	}
	rq := &remoteQuery{}
	rq.pending.Store(int32(len(local)))
	var params string
	var payload, att []byte
	if m.Query != nil {
		params, att = m.Query.Parameters, m.Query.Attachment
		if m.Query.Body != nil {
			payload = m.Query.Body.Payload
		}
	}
	for _, qb := range local {
		qb.handle(&query{key: key, params: params, payload: payload, attachment: att, face: f, rid: m.ID, rq: rq})
	}
}

func (t *Transport) onResponse(rid uint32, key string, m *wire.Response) {
	t.mu.Lock()
	o := t.requests[rid]
	t.mu.Unlock()
	if o == nil {
		return
	}
	switch b := m.Body.(type) {
	case *wire.Reply:
		if put, ok := b.Body.(*wire.Put); ok && o.onReply != nil {
			o.onReply(key, put)
		}
	case *wire.Err:
		t.Stats.ErrReplies.Add(1)
		t.cfg.Logf("zenoh: error reply to query %d on %q: %q", rid, key, b.Payload)
	}
}

func (t *Transport) onResponseFinal(rid uint32) {
	t.mu.Lock()
	o := t.requests[rid]
	delete(t.requests, rid)
	t.mu.Unlock()
	if o != nil {
		o.finish()
	}
}
