package router

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/hlc"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// describe renders a network message the way the tests expect them.
func describe(m wire.NetworkMessage) string {
	we := func(w wire.WireExpr) string { return w.String() }
	ext := func(w *wire.WireExpr) string {
		if w == nil {
			return ""
		}
		return " " + w.String()
	}
	switch m := m.(type) {
	case *wire.Declare:
		var s string
		switch b := m.Body.(type) {
		case *wire.DeclareSubscriber:
			s = fmt.Sprintf("DeclSub %d %s", b.ID, we(b.WireExpr))
		case *wire.UndeclareSubscriber:
			s = fmt.Sprintf("UndeclSub %d%s", b.ID, ext(b.WireExpr))
		case *wire.DeclareQueryable:
			s = fmt.Sprintf("DeclQbl %d %s complete=%v dist=%d", b.ID, we(b.WireExpr), b.Complete, b.Distance)
		case *wire.UndeclareQueryable:
			s = fmt.Sprintf("UndeclQbl %d%s", b.ID, ext(b.WireExpr))
		case *wire.DeclareToken:
			s = fmt.Sprintf("DeclTok %d %s", b.ID, we(b.WireExpr))
		case *wire.UndeclareToken:
			s = fmt.Sprintf("UndeclTok %d%s", b.ID, ext(b.WireExpr))
		case *wire.DeclareFinal:
			s = "Final"
		default:
			s = fmt.Sprintf("%T", b)
		}
		if m.HasInterestID {
			s += fmt.Sprintf(" i=%d", m.InterestID)
		}
		if m.QoS != wire.QoSDeclare {
			s += " BADQOS"
		}
		return s
	case *wire.Push:
		switch b := m.Body.(type) {
		case *wire.Put:
			return fmt.Sprintf("Put %s %s", we(m.WireExpr), b.Payload)
		case *wire.Del:
			return "Del " + we(m.WireExpr)
		}
	case *wire.Request:
		return fmt.Sprintf("Request %d %s target=%d", m.ID, we(m.WireExpr), m.Target)
	case *wire.Response:
		s := fmt.Sprintf("Response %d %s", m.RequestID, we(m.WireExpr))
		switch b := m.Body.(type) {
		case *wire.Reply:
			if p, ok := b.Body.(*wire.Put); ok {
				s += " " + string(p.Payload)
			}
		case *wire.Err:
			s += " err " + string(b.Payload)
		}
		if m.ResponderID != nil {
			s += " from " + m.ResponderID.ZID.String()
		}
		return s
	case *wire.ResponseFinal:
		return fmt.Sprintf("ResponseFinal %d", m.RequestID)
	}
	return fmt.Sprintf("%T", m)
}

// recPort records what the router sends to a face.
type recPort struct {
	mu   sync.Mutex
	msgs []string
	down bool
}

func (p *recPort) Send(m wire.NetworkMessage, reliable bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	if _, err := wire.AppendNetwork(nil, m); err != nil {
		p.msgs = append(p.msgs, "UNENCODABLE "+err.Error())
	}
	p.msgs = append(p.msgs, describe(m))
	return true
}

func (p *recPort) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.msgs
	p.msgs = nil
	return m
}

type tface struct {
	t    *testing.T
	tb   *tables
	id   uint64
	zid  wire.ZenohID
	port *recPort
}

func zidOf(n byte) wire.ZenohID {
	z, _ := wire.NewZenohID([]byte{n})
	return z
}

func newTables4Test() *tables { return newTables(10*time.Second, &Stats{}) }

func addFace(t *testing.T, tb *tables, id uint64, w wire.WhatAmI) *tface {
	p := &recPort{}
	tb.faceUp(id, zidOf(byte(id)), w, p, wire.Bits32)
	return &tface{t: t, tb: tb, id: id, zid: zidOf(byte(id)), port: p}
}

func (f *tface) expect(want ...string) {
	f.t.Helper()
	got := f.port.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		f.t.Errorf("face %d got:\n  %s\nwant:\n  %s", f.id, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func (f *tface) decl(k session.DeclKind, id uint32, key string) {
	f.tb.declared(f.id, session.Decl{Kind: k, ID: id, Key: key})
}

func (f *tface) qbl(id uint32, key string, complete bool) {
	f.tb.declared(f.id, session.Decl{Kind: session.KindQueryable, ID: id, Key: key, Complete: complete})
}

func (f *tface) undecl(k session.DeclKind, id uint32) {
	f.tb.declared(f.id, session.Decl{Kind: k, ID: id, Undeclare: true})
}

func (f *tface) interest(id uint32, mode wire.InterestMode, opts wire.InterestOptions, key string) {
	m := &wire.Interest{ID: id, Mode: mode, Options: opts}
	if key != "" {
		m.WireExpr = &wire.WireExpr{Suffix: key}
	}
	f.tb.interest(f.id, key, m)
}

const (
	sub = session.KindSubscriber
	tok = session.KindToken
)

// A client's subscriber interest (as a zenoh publisher asks): the current
// subscribers of the other faces with the interest id, DeclareFinal, then
// one declaration per key under the router's ids while any face has it.
func TestSubscriberInterest(t *testing.T) {
	tb := newTables4Test()
	a, b, c := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Client), addFace(t, tb, 3, wire.Peer)
	a.decl(sub, 5, "0/chatter/x")
	a.decl(sub, 6, "0/other")
	b.decl(sub, 9, "0/chatter/b") // its own: never declared back to it
	b.interest(7, wire.InterestCurrentFuture, wire.InterestKeyExprs|wire.InterestSubscribers, "0/chatter/**")
	b.expect("DeclSub 1 0/chatter/x i=7", "Final i=7")
	c.decl(sub, 1, "0/chatter/x") // same key: nothing new for b
	c.decl(sub, 2, "0/chatter/y")
	b.expect("DeclSub 2 0/chatter/y")
	a.undecl(sub, 5)
	b.expect()
	c.undecl(sub, 1)
	b.expect("UndeclSub 1 0/chatter/x")
	// the other faces asked nothing: they were told nothing
	a.expect()
	c.expect()
	// interest final: the face is forgotten silently, then told nothing
	b.interest(7, wire.InterestFinal, 0, "")
	c.undecl(sub, 2)
	a.decl(sub, 10, "0/chatter/z")
	b.expect()
	// a current-only interest: answers under id 0, nothing later
	b.interest(8, wire.InterestCurrent, wire.InterestSubscribers, "")
	b.expect("DeclSub 0 0/chatter/z i=8", "DeclSub 0 0/other i=8", "Final i=8")
	a.decl(sub, 11, "0/chatter/w")
	b.expect()
}

// zenoh-pico publishers in client mode ask with an aggregate interest:
// one declaration on the interest's key while anything matches it.
func TestAggregateInterest(t *testing.T) {
	tb := newTables4Test()
	pub, s1, s2 := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Client), addFace(t, tb, 3, wire.Peer)
	const key = "0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x"
	opts := wire.InterestKeyExprs | wire.InterestSubscribers | wire.InterestAggregate
	pub.interest(3, wire.InterestCurrentFuture, opts, key)
	pub.expect("Final i=3")
	s1.decl(sub, 1, "0/clock/*/*")
	pub.expect("DeclSub 1 " + key)
	s2.decl(sub, 1, key)
	s1.undecl(sub, 1)
	pub.expect()
	s2.undecl(sub, 1)
	pub.expect("UndeclSub 1 " + key)
	// answered at once when something matches; same id again
	s2.decl(sub, 4, "0/**")
	pub.expect("DeclSub 2 " + key)
	pub.interest(4, wire.InterestCurrentFuture, opts, "0/clock/x")
	pub.expect("DeclSub 3 0/clock/x i=4", "Final i=4")
	// a peer's aggregate is served plainly (zenoh: not supported for peers)
	s1.interest(1, wire.InterestCurrentFuture, opts, "0/**")
	s1.expect("DeclSub 1 0/** i=1", "Final i=1")
}

// Liveliness: gets (current token interests) and liveliness subscribers
// (future ones), with the ids zenoh-pico needs, and a face leaving.
func TestTokens(t *testing.T) {
	tb := newTables4Test()
	a, w, b := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Client), addFace(t, tb, 3, wire.Peer)
	a.decl(tok, 1, "@ros2_lv/0/a/NN")
	b.decl(tok, 1, "@ros2_lv/0/b/NN")
	b.decl(tok, 2, "@ros2_lv/1/b/NN")
	// a get: id 0 for tokens not declared to the face
	w.interest(1, wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
	w.expect("DeclTok 0 @ros2_lv/0/a/NN i=1", "DeclTok 0 @ros2_lv/0/b/NN i=1", "Final i=1")
	// a liveliness subscriber with history
	w.interest(2, wire.InterestCurrentFuture, wire.InterestKeyExprs|wire.InterestTokens, "@ros2_lv/0/**")
	w.expect("DeclTok 1 @ros2_lv/0/a/NN i=2", "DeclTok 2 @ros2_lv/0/b/NN i=2", "Final i=2")
	// a get now answers under the ids the face knows them by
	w.interest(3, wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
	w.expect("DeclTok 1 @ros2_lv/0/a/NN i=3", "DeclTok 2 @ros2_lv/0/b/NN i=3", "Final i=3")
	a.decl(tok, 2, "@ros2_lv/0/a/MP")
	w.expect("DeclTok 3 @ros2_lv/0/a/MP")
	a.undecl(tok, 2)
	w.expect("UndeclTok 3 @ros2_lv/0/a/MP")
	// a face going away: its tokens go
	tb.faceDown(b.id)
	w.expect("UndeclTok 2 @ros2_lv/0/b/NN")
	// a future-only liveliness subscriber is told when a token it never
	// heard of ends (fresh id, key in the extension)
	x := addFace(t, tb, 4, wire.Client)
	x.interest(1, wire.InterestFuture, wire.InterestTokens, "@ros2_lv/**")
	x.expect()
	a.undecl(tok, 1)
	w.expect("UndeclTok 1 @ros2_lv/0/a/NN")
	x.expect("UndeclTok 1 @ros2_lv/0/a/NN")
	a.expect()
}

func TestPushRouting(t *testing.T) {
	tb := newTables4Test()
	a, b, c := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Peer), addFace(t, tb, 3, wire.Client)
	a.decl(sub, 1, "0/chatter/**")
	b.decl(sub, 1, "0/chatter/x")
	push := func(f *tface, key, payload string) {
		tb.push(f.id, key, &wire.Push{WireExpr: wire.WireExpr{Suffix: key}, QoS: wire.QoSPush, Body: &wire.Put{Payload: []byte(payload)}}, true)
	}
	push(c, "0/chatter/x", "1")
	push(a, "0/chatter/x", "2") // never back to the sender
	push(c, "0/chatter/y", "3")
	push(c, "0/nothing", "4")
	a.expect("Put 0/chatter/x 1", "Put 0/chatter/y 3")
	b.expect("Put 0/chatter/x 1", "Put 0/chatter/x 2")
	c.expect()
	b.undecl(sub, 1)
	push(c, "0/chatter/x", "5")
	b.expect()
	a.expect("Put 0/chatter/x 5")
	if n := tb.stats.PushesNoRoute.Load(); n != 1 {
		t.Errorf("no-route pushes %d", n)
	}
}

func TestQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTables4Test()
		full, part, q := addFace(t, tb, 1, wire.Peer), addFace(t, tb, 2, wire.Client), addFace(t, tb, 3, wire.Client)
		full.qbl(1, "svc/**", true)
		part.qbl(1, "svc/x", false)
		req := func(rid uint32, key string, target wire.QueryTarget, timeout time.Duration) {
			tb.request(q.id, key, &wire.Request{ID: rid, WireExpr: wire.WireExpr{Suffix: key}, QoS: wire.QoSRequest,
				Target: target, Timeout: timeout, Query: &wire.Query{}})
		}
		reply := func(f *tface, rid uint32, key, payload string) {
			tb.response(f.id, key, &wire.Response{RequestID: rid, WireExpr: wire.WireExpr{Suffix: key}, QoS: wire.QoSResponse,
				Body: &wire.Reply{Body: &wire.Put{Payload: []byte(payload)}}})
		}
		// nobody: final at once
		req(40, "other", wire.TargetAll, 0)
		q.expect("ResponseFinal 40")
		// best matching: the complete one only
		req(41, "svc/x", wire.TargetBestMatching, 0)
		full.expect("Request 1 svc/x target=0")
		part.expect()
		reply(full, 1, "svc/x", "a")
		tb.responseFinal(full.id, 1)
		q.expect("Response 41 svc/x a", "ResponseFinal 41")
		// all: both, each under its own id; one final after both
		req(42, "svc/x", wire.TargetAll, 0)
		full.expect("Request 2 svc/x target=1")
		part.expect("Request 1 svc/x target=1")
		reply(part, 1, "svc/x", "b")
		tb.responseFinal(part.id, 1)
		q.expect("Response 42 svc/x b")
		reply(full, 2, "svc/x", "c")
		tb.responseFinal(full.id, 2)
		q.expect("Response 42 svc/x c", "ResponseFinal 42")
		// all complete
		req(43, "svc/x", wire.TargetAllComplete, 0)
		full.expect("Request 3 svc/x target=2")
		part.expect()
		tb.responseFinal(full.id, 3)
		q.expect("ResponseFinal 43")
		// a face that never answers: zenoh's timeout error, then the final
		req(44, "svc/x", wire.TargetAll, time.Second)
		full.expect("Request 4 svc/x target=1")
		part.expect("Request 2 svc/x target=1")
		tb.responseFinal(full.id, 4)
		q.expect()
		time.Sleep(time.Second)
		synctest.Wait()
		q.expect("Response 44  err Timeout from 2", "ResponseFinal 44")
		tb.responseFinal(part.id, 2) // too late
		reply(part, 2, "svc/x", "late")
		q.expect()
		// a face going away finalizes what it had
		req(45, "svc/x", wire.TargetAll, 0)
		full.expect("Request 5 svc/x target=1")
		part.expect("Request 3 svc/x target=1")
		tb.faceDown(part.id)
		tb.responseFinal(full.id, 5)
		q.expect("ResponseFinal 45")
		// the default timeout applies to requests without one
		req(46, "svc/y", wire.TargetAll, 0)
		full.expect("Request 6 svc/y target=1")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		q.expect("Response 46  err Timeout from 1", "ResponseFinal 46")
		if n := tb.stats.QueryTimeouts.Load(); n != 2 {
			t.Errorf("timeouts %d", n)
		}
		tb.close()
	})
}

// Queryables declared to an interested face carry the merged info of the
// other faces' queryables on the key, and are declared again when it
// changes; an aggregate is complete when a complete queryable includes it.
func TestQueryableInfo(t *testing.T) {
	tb := newTables4Test()
	a, b, d := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Client), addFace(t, tb, 3, wire.Client)
	d.interest(1, wire.InterestFuture, wire.InterestQueryables, "")
	a.qbl(1, "q/x", false)
	d.expect("DeclQbl 1 q/x complete=false dist=0")
	b.qbl(1, "q/x", true)
	d.expect("DeclQbl 1 q/x complete=true dist=0")
	b.undecl(session.KindQueryable, 1)
	d.expect("DeclQbl 1 q/x complete=false dist=0")
	a.undecl(session.KindQueryable, 1)
	d.expect("UndeclQbl 1 q/x")
	// aggregate (a pico querier): complete only when a complete queryable
	// includes the aggregate key
	d.interest(1, wire.InterestFinal, 0, "")
	agg := wire.InterestQueryables | wire.InterestAggregate
	d.interest(2, wire.InterestCurrentFuture, agg, "q/a/b")
	d.expect("Final i=2")
	a.qbl(2, "q/*/b", false)
	d.expect("DeclQbl 2 q/a/b complete=false dist=0")
	b.qbl(2, "q/a/*/c", true) // does not intersect q/a/b
	d.expect()
	b.qbl(3, "q/**", true)
	d.expect("DeclQbl 2 q/a/b complete=true dist=0")
}

// A face going down undeclares everything it declared to the faces that
// knew it, and its interests end.
func TestFaceDown(t *testing.T) {
	tb := newTables4Test()
	a, b := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Peer)
	b.interest(1, wire.InterestCurrentFuture, wire.InterestSubscribers|wire.InterestQueryables|wire.InterestTokens, "")
	b.expect("Final i=1")
	a.interest(1, wire.InterestCurrentFuture, wire.InterestAll, "")
	a.expect("Final i=1")
	a.decl(sub, 1, "k/s")
	a.qbl(2, "k/q", true)
	a.decl(tok, 3, "k/t")
	b.expect("DeclSub 1 k/s", "DeclQbl 2 k/q complete=true dist=0", "DeclTok 3 k/t")
	a.port.down = true
	tb.faceDown(a.id)
	got := b.port.take()
	want := map[string]bool{"UndeclSub 1 k/s": true, "UndeclQbl 2 k/q": true, "UndeclTok 3 k/t": true}
	if len(got) != 3 || !want[got[0]] || !want[got[1]] || !want[got[2]] {
		t.Errorf("after face down: %v", got)
	}
	b.decl(sub, 1, "k/s")
	if len(tb.faces) != 1 {
		t.Errorf("faces %d", len(tb.faces))
	}
}

// A face's interests are bounded: past the limit a future interest is
// answered (current part, DeclareFinal) but not kept.
func TestInterestLimit(t *testing.T) {
	tb := newTables4Test()
	a := addFace(t, tb, 1, wire.Client)
	for i := range maxInterests {
		a.interest(uint32(i+1), wire.InterestFuture, wire.InterestTokens, "")
	}
	a.interest(maxInterests+1, wire.InterestCurrentFuture, wire.InterestTokens, "")
	a.expect("Final i=65537")
	if tb.stats.Overflow.Load() != 1 || len(tb.faces[1].interests) != maxInterests {
		t.Errorf("overflow %d, interests %d", tb.stats.Overflow.Load(), len(tb.faces[1].interests))
	}
}

// With timestamping on, the router stamps the puts that come without a
// timestamp with its clock and follows those that come with one; one too
// far ahead is restamped (or dropped with DropFutureTimestamp).
func TestTimestamping(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for _, drop := range []bool{false, true} {
		tb := newTables4Test()
		tb.hlc = hlc.New(zidOf(99), func() time.Time { return now }, 0)
		tb.dropFuture = drop
		a, b := addFace(t, tb, 1, wire.Client), addFace(t, tb, 2, wire.Client)
		var got []*wire.Timestamp
		tb.faces[2].out = portFunc(func(m wire.NetworkMessage) {
			got = append(got, m.(*wire.Push).Body.(*wire.Put).Timestamp)
		})
		b.decl(sub, 1, "k")
		put := func(ts *wire.Timestamp) {
			tb.push(a.id, "k", &wire.Push{WireExpr: wire.WireExpr{Suffix: "k"}, Body: &wire.Put{Timestamp: ts}}, true)
		}
		put(nil)
		own := wire.Timestamp{Time: hlc.NTP64(now.Add(100 * time.Millisecond)), ID: zidOf(1)}
		put(&own)
		put(&wire.Timestamp{Time: hlc.NTP64(now.Add(time.Hour)), ID: zidOf(1)})
		want := 3
		if drop {
			want = 2
		}
		if len(got) != want || got[0] == nil || got[0].Time != hlc.NTP64(now) || got[0].ID != zidOf(99) || *got[1] != own {
			t.Fatalf("drop=%v: timestamps %v", drop, got)
		}
		if !drop && (got[2].ID != zidOf(99) || got[2].Time <= own.Time) {
			t.Errorf("future timestamp replaced by %+v", got[2])
		}
		if tb.stats.FutureStamps.Load() != 1 {
			t.Errorf("future stamps %d", tb.stats.FutureStamps.Load())
		}
	}
}

type portFunc func(m wire.NetworkMessage)

func (f portFunc) Send(m wire.NetworkMessage, _ bool) bool { f(m); return true }
