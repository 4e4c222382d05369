package router

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// rec records a Go session's handler calls as strings; it answers
// requests when replies is set.
type rec struct {
	session.NopHandler
	mu      sync.Mutex
	ev      []string
	s       *session.Session
	replies string
}

func (r *rec) add(format string, args ...any) {
	r.mu.Lock()
	r.ev = append(r.ev, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *rec) FaceUp(f *session.Face)        { r.add("up %v", f.WhatAmI) }
func (r *rec) FaceDown(*session.Face, error) { r.add("down") }
func (r *rec) Push(f *session.Face, key string, m *wire.Push, _ bool) {
	switch b := m.Body.(type) {
	case *wire.Put:
		r.add("put %s %s att=%x", key, b.Payload, b.Attachment)
	case *wire.Del:
		r.add("del %s", key)
	}
}
func (r *rec) Request(f *session.Face, key string, m *wire.Request) {
	r.add("request %s %s", key, m.Query.Parameters)
	if r.replies != "" {
		r.s.Reply(f, m.ID, key, &wire.Reply{Body: &wire.Put{Payload: []byte(r.replies)}}, wire.QoS{})
		r.s.ReplyFinal(f, m.ID)
	}
}
func (r *rec) Response(rid uint32, f *session.Face, key string, m *wire.Response) {
	switch b := m.Body.(type) {
	case *wire.Reply:
		r.add("reply %s %s", key, b.Body.(*wire.Put).Payload)
	case *wire.Err:
		r.add("err %s", b.Payload)
	}
}
func (r *rec) ResponseFinal(rid uint32) { r.add("final") }
func (r *rec) Declared(f *session.Face, d session.Decl) {
	s := fmt.Sprintf("%v %s", d.Kind, d.Key)
	if d.Undeclare {
		s = "un" + s
	}
	if d.Interest {
		s += " (get)" // answers an interest of ours
	}
	r.add("%s", s)
}
func (r *rec) InterestFinal(id uint32) { r.add("interest final") }

func (r *rec) take() []string {
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.ev
	r.ev = nil
	return ev
}

func (r *rec) expect(t *testing.T, want ...string) {
	t.Helper()
	got := r.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func openRouter(t *testing.T) *Router {
	t.Helper()
	r, err := Open(Config{Listen: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// goSession opens a Go session in mode and links it to r over an
// in-memory pipe.
func goSession(t *testing.T, r *Router, mode wire.WhatAmI, h *rec) *session.Session {
	t.Helper()
	s, err := session.Open(session.Config{Mode: mode}, h)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	la, lb := link.Pipe(0)
	errc := make(chan error, 1)
	go func() { _, err := r.Attach(lb, false); errc <- err }()
	if _, err := s.Attach(la, true); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	h.take()
	return s
}

// TestGoRouterGo: Go clients and peers meet through the router: pub/sub
// both ways, liveliness tokens (get and subscriber) and a face leaving,
// queries with replies and finals, and a query nobody answers.
func TestGoRouterGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := openRouter(t)
		hs, hp, hw, hq := &rec{}, &rec{}, &rec{}, &rec{replies: "pong"}
		sub := goSession(t, r, wire.Client, hs)
		pub := goSession(t, r, wire.Peer, hp)
		watch := goSession(t, r, wire.Client, hw)
		srv := goSession(t, r, wire.Peer, hq)
		if _, err := sub.DeclareSubscriber("0/chatter/**"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		att := []byte{1, 2, 3}
		pub.Put("0/chatter/x", &wire.Put{Payload: []byte("from peer"), Attachment: att}, session.PutOptions{})
		hs.expect(t, "put 0/chatter/x from peer att=010203")
		watch.Put("0/chatter/y", &wire.Put{Payload: []byte("from client")}, session.PutOptions{})
		watch.Put("0/chatter/y", &wire.Del{}, session.PutOptions{})
		pub.Put("0/elsewhere", &wire.Put{Payload: []byte("nobody")}, session.PutOptions{})
		hs.expect(t, "put 0/chatter/y from client att=", "del 0/chatter/y")
		hp.expect(t)

		// liveliness: a get, then a liveliness subscriber
		sub.DeclareToken("@ros2_lv/0/sub/NN")
		pub.DeclareToken("@ros2_lv/0/pub/NN")
		synctest.Wait()
		if _, err := watch.DeclareInterest(wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**"); err != nil {
			t.Fatal(err)
		}
		hw.expect(t, "token @ros2_lv/0/pub/NN (get)", "token @ros2_lv/0/sub/NN (get)", "interest final")
		watch.DeclareInterest(wire.InterestCurrentFuture, wire.InterestTokens, "@ros2_lv/0/**")
		hw.expect(t, "token @ros2_lv/0/pub/NN (get)", "token @ros2_lv/0/sub/NN (get)", "interest final")
		tok, _ := srv.DeclareToken("@ros2_lv/0/srv/NN")
		hw.expect(t, "token @ros2_lv/0/srv/NN")
		srv.UndeclareToken(tok)
		hw.expect(t, "untoken @ros2_lv/0/srv/NN")

		// queries
		srv.DeclareQueryable("svc/**", true)
		synctest.Wait()
		sub.Request("svc/ping", &wire.Query{Parameters: "n=1"}, session.RequestOptions{})
		hq.expect(t, "request svc/ping n=1")
		hs.expect(t, "reply svc/ping pong", "final")
		sub.Request("nothing/here", &wire.Query{}, session.RequestOptions{})
		hs.expect(t, "final")

		// a face leaving: what it declared goes
		pub.Close()
		hw.expect(t, "untoken @ros2_lv/0/pub/NN")
		hp.expect(t, "down")
		if n := len(r.Faces()); n != 3 {
			t.Errorf("%d faces after one left", n)
		}
		r.Close()
		hs.expect(t, "down")
		sub.Close()
		watch.Close()
		srv.Close()
	})
}

// rawClient speaks the wire to the router directly, to check exactly what
// the router sends.
type rawClient struct {
	t    *testing.T
	l    link.Link
	p    session.Params
	tx   *session.Tx
	rx   *session.Rx
	mu   sync.Mutex
	msgs []string
}

func newRawClient(t *testing.T, r *Router, w wire.WhatAmI, zid byte) *rawClient {
	t.Helper()
	la, lb := link.Pipe(0)
	go r.Attach(lb, false)
	h, b, err := session.NewInitiator(session.LinkConfig{ZID: zidOf(zid), WhatAmI: w, BatchSize: 2048,
		Resolution: wire.DefaultResolution, Lease: 10 * time.Second, Patch: wire.PatchCurrent})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, link.MaxBatch)
	for !h.Done() {
		if err := la.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
		n, err := la.ReadBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		if b, _, err = h.Handle(buf[:n]); err != nil {
			t.Fatal(err)
		}
	}
	c := &rawClient{t: t, l: la, p: h.Params(), tx: session.NewTx(h.Params()), rx: session.NewRx(h.Params(), 0)}
	go func() {
		for {
			buf := make([]byte, link.MaxBatch)
			n, err := la.ReadBatch(buf)
			if err != nil {
				return
			}
			if c.rx.Batch(buf[:n], func(m wire.NetworkMessage, _ bool) {
				c.mu.Lock()
				c.msgs = append(c.msgs, describe(m))
				c.mu.Unlock()
			}) != nil {
				return
			}
		}
	}()
	synctest.Wait()
	return c
}

func (c *rawClient) send(ms ...wire.NetworkMessage) {
	c.t.Helper()
	for _, m := range ms {
		if err := c.tx.Push(m, true); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, b := range c.tx.Take() {
		if err := c.l.WriteBatch(b.B); err != nil {
			c.t.Fatal(err)
		}
	}
	synctest.Wait()
}

func (c *rawClient) expect(want ...string) {
	c.t.Helper()
	synctest.Wait()
	c.mu.Lock()
	got := c.msgs
	c.msgs = nil
	c.mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		c.t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestWire: the router says it is a router; each face's key-expression
// mappings resolve its own messages (the same id meaning different
// prefixes on two faces); keys are sent whole; an interest on a mapping
// the face never declared gets DeclareFinal and nothing else.
func TestWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := openRouter(t)
		a := newRawClient(t, r, wire.Client, 1)
		b := newRawClient(t, r, wire.Client, 2)
		if a.p.RemoteWhatAmI != wire.Router || a.p.RemoteZID != r.ZID() {
			t.Errorf("remote %v %v", a.p.RemoteWhatAmI, a.p.RemoteZID)
		}
		decl := func(body wire.Declaration) *wire.Declare { return &wire.Declare{QoS: wire.QoSDeclare, Body: body} }
		a.send(decl(&wire.DeclareKeyExpr{ID: 1, WireExpr: wire.WireExpr{Suffix: "0/chatter"}}),
			decl(&wire.DeclareSubscriber{ID: 3, WireExpr: wire.WireExpr{Scope: 1, Suffix: "/**", SenderMapping: true}}))
		b.send(decl(&wire.DeclareKeyExpr{ID: 1, WireExpr: wire.WireExpr{Suffix: "0/chatter/std_msgs"}}),
			&wire.Interest{ID: 9, Mode: wire.InterestCurrentFuture, Options: wire.InterestKeyExprs | wire.InterestSubscribers | wire.InterestAggregate,
				WireExpr: &wire.WireExpr{Scope: 1, SenderMapping: true}, QoS: wire.QoSDeclare},
			&wire.Interest{ID: 10, Mode: wire.InterestCurrent, Options: wire.InterestSubscribers,
				WireExpr: &wire.WireExpr{Scope: 7, Suffix: "x", SenderMapping: true}, QoS: wire.QoSDeclare})
		b.expect("DeclSub 1 0/chatter/std_msgs i=9", "Final i=9", "Final i=10")
		b.send(&wire.Push{WireExpr: wire.WireExpr{Scope: 1, Suffix: "/x", SenderMapping: true}, QoS: wire.QoSPush,
			Body: &wire.Put{Payload: []byte("hi")}})
		a.expect("Put 0/chatter/std_msgs/x hi")
		if n := r.SessionStats().UnknownScope.Load(); n != 1 {
			t.Errorf("unknown scope %d", n)
		}
		// the subscriber goes with its face
		a.l.Close()
		b.expect("UndeclSub 1 0/chatter/std_msgs")
		r.Close()
	})
}

// TestGarbageToRouter: garbage and truncated batches from a face are
// dropped (counted); the router goes on routing for the others, and a
// face whose link breaks is removed with what it declared.
func TestGarbageToRouter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := openRouter(t)
		hs, hp := &rec{}, &rec{}
		sub := goSession(t, r, wire.Client, hs)
		pub := goSession(t, r, wire.Client, hp)
		sub.DeclareSubscriber("k/**")
		synctest.Wait()
		bad := newRawClient(t, r, wire.Client, 9)
		good := []wire.NetworkMessage{
			&wire.Declare{QoS: wire.QoSDeclare, Body: &wire.DeclareToken{ID: 1, WireExpr: wire.WireExpr{Suffix: "k/token"}}},
			&wire.Push{WireExpr: wire.WireExpr{Suffix: "k/x"}, Body: &wire.Put{Payload: []byte("ok")}},
		}
		for _, m := range good {
			bad.tx.Push(m, true)
		}
		var valid []byte
		for _, b := range bad.tx.Take() {
			valid = append(valid, b.B...)
		}
		for _, b := range garbageBatches(valid, 500) {
			if err := bad.l.WriteBatch(b); err != nil {
				break
			}
		}
		synctest.Wait()
		pub.Put("k/y", &wire.Put{Payload: []byte("still")}, session.PutOptions{})
		got := hs.take()
		if !slices.Contains(got, "put k/y still att=") {
			t.Errorf("routing stopped after garbage: %v", got)
		}
		bad.l.Close()
		synctest.Wait()
		if n := len(r.Faces()); n != 2 {
			t.Errorf("%d faces", n)
		}
		r.Close()
		sub.Close()
		pub.Close()
	})
}

// garbageBatches derives n bad batches from a valid one: truncations,
// flipped bytes and random bytes (deterministic).
func garbageBatches(valid []byte, n int) [][]byte {
	var out [][]byte
	x := uint32(2463534242)
	rnd := func() uint32 { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x }
	for i := range n {
		var b []byte
		switch i % 3 {
		case 0:
			b = append([]byte(nil), valid[:int(rnd())%len(valid)]...)
		case 1:
			b = append([]byte(nil), valid...)
			for range 1 + rnd()%4 {
				b[int(rnd())%len(b)] ^= byte(rnd())
			}
		default:
			b = make([]byte, 1+rnd()%64)
			for j := range b {
				b[j] = byte(rnd())
			}
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// FromConfig: rmw_zenohd's router configuration as nros zenohd runs it.
func TestFromConfig(t *testing.T) {
	rc, err := FromConfig(config.DefaultRouter())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rc.Listen, ",") != DefaultListen || len(rc.Connect) != 0 || !rc.Timestamping ||
		rc.QueryTimeout != 600*time.Second || rc.Lease != 60*time.Second || rc.BatchSize != 65535 || rc.NoQoS {
		t.Errorf("%+v", rc)
	}
	c, err := config.ParseWithOverrides([]byte(`{mode: "router", id: "f00d", listen: {endpoints: []}}`), `connect/endpoints=["tcp/127.0.0.1:7448"]`)
	if err != nil {
		t.Fatal(err)
	}
	rc, err = FromConfig(c)
	if err != nil || rc.ZID.String() != "f00d" || rc.Listen == nil || len(rc.Listen) != 0 || strings.Join(rc.Connect, ",") != "tcp/127.0.0.1:7448" {
		t.Errorf("%+v %v", rc, err)
	}
	var ce *config.Error
	if _, err := FromConfig(config.Default()); !errors.As(err, &ce) || ce.Key != "mode" {
		t.Errorf("peer mode: %v", err)
	}
}
