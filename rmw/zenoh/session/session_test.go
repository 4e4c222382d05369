package session

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// rec records handler calls as strings.
type rec struct {
	mu     sync.Mutex
	ev     []string
	pushes []*wire.Put
	faces  []*Face
	reqs   []struct {
		f   *Face
		rid uint32
	}
}

func (r *rec) add(format string, args ...any) {
	r.mu.Lock()
	r.ev = append(r.ev, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *rec) FaceUp(f *Face) {
	r.mu.Lock()
	r.faces = append(r.faces, f)
	r.mu.Unlock()
	r.add("up %v", f.WhatAmI)
}
func (r *rec) FaceDown(f *Face, err error) { r.add("down %v", f.WhatAmI) }
func (r *rec) Push(f *Face, key string, m *wire.Push, reliable bool) {
	if put, ok := m.Body.(*wire.Put); ok {
		c := put.Clone()
		r.mu.Lock()
		r.pushes = append(r.pushes, c)
		r.mu.Unlock()
		r.add("put %s %d", key, len(put.Payload))
		return
	}
	r.add("del %s", key)
}
func (r *rec) Request(f *Face, key string, m *wire.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, struct {
		f   *Face
		rid uint32
	}{f, m.ID})
	r.mu.Unlock()
	r.add("request %s %s", key, m.Query.Parameters)
}
func (r *rec) Response(rid uint32, f *Face, key string, m *wire.Response) {
	switch b := m.Body.(type) {
	case *wire.Reply:
		r.add("reply %d %s %s", rid, key, b.Body.(*wire.Put).Payload)
	case *wire.Err:
		r.add("err %d %s", rid, b.Payload)
	}
}
func (r *rec) ResponseFinal(rid uint32) { r.add("final %d", rid) }
func (r *rec) Declared(f *Face, d Decl) {
	s := fmt.Sprintf("%v %s", d.Kind, d.Key)
	if d.Undeclare {
		s = "un" + s
	}
	if d.Interest {
		s += fmt.Sprintf(" (interest %d)", d.InterestID)
	}
	r.add("%s", s)
}
func (r *rec) InterestFinal(id uint32) { r.add("interest final %d", id) }

func (r *rec) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.ev
	r.ev = nil
	return ev
}

func (r *rec) expect(t *testing.T, want ...string) {
	t.Helper()
	synctest.Wait()
	got := r.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// expectSet is expect without order.
func (r *rec) expectSet(t *testing.T, want ...string) {
	t.Helper()
	synctest.Wait()
	got := r.take()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func open(t *testing.T, mode wire.WhatAmI, h Handler, mod ...func(*Config)) *Session {
	t.Helper()
	c := Config{Mode: mode}
	for _, m := range mod {
		m(&c)
	}
	s, err := Open(c, h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pair connects a (initiator) to b over an in-memory pipe.
func pair(t *testing.T, a, b *Session, mtu int) {
	t.Helper()
	la, lb := link.Pipe(mtu)
	errc := make(chan error, 1)
	go func() { _, err := b.Attach(lb, false); errc <- err }()
	_, err := a.Attach(la, true)
	if err2 := <-errc; err == nil {
		err = err2
	}
	if err != nil {
		t.Logf("pair: %v", err)
	}
}

func TestPeersPubSub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra, rb := &rec{}, &rec{}
		a, b := open(t, wire.Peer, ra), open(t, wire.Peer, rb)
		tok, _ := a.DeclareToken("@ros2_lv/0/a/NN")
		pair(t, a, b, 0)
		ra.expect(t, "up peer")
		rb.expect(t, "up peer", "token @ros2_lv/0/a/NN")
		sub, err := b.DeclareSubscriber("0/chatter/**")
		if err != nil {
			t.Fatal(err)
		}
		ra.expect(t, "subscriber 0/chatter/**")
		if !a.Matching("0/chatter/x") || a.Matching("0/clock") {
			t.Error("Matching")
		}
		att := bytes.Repeat([]byte{1}, 33)
		if n := a.Put("0/chatter/x", &wire.Put{Attachment: att, Payload: []byte("hi")}, PutOptions{}); n != 1 {
			t.Errorf("put went to %d faces", n)
		}
		if n := a.Put("0/clock", &wire.Put{Payload: []byte("no")}, PutOptions{}); n != 0 {
			t.Errorf("unmatched put went to %d faces", n)
		}
		a.Put("0/chatter/y", &wire.Del{}, PutOptions{BestEffort: true})
		rb.expect(t, "put 0/chatter/x 2", "del 0/chatter/y")
		if !bytes.Equal(rb.pushes[0].Attachment, att) {
			t.Errorf("attachment %x", rb.pushes[0].Attachment)
		}
		b.UndeclareSubscriber(sub)
		ra.expect(t, "unsubscriber 0/chatter/**")
		a.UndeclareToken(tok)
		rb.expect(t, "untoken @ros2_lv/0/a/NN")
		tok2, _ := a.DeclareToken("@ros2_lv/0/a/MP")
		_ = tok2
		rb.expect(t, "token @ros2_lv/0/a/MP")
		a.Close()
		rb.expect(t, "untoken @ros2_lv/0/a/MP", "down peer")
		ra.expect(t, "down peer")
		b.Close()
	})
}

func TestQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra := &rec{}
		var b *Session
		rb := &replier{rec: rec{}, s: &b}
		a := open(t, wire.Peer, ra)
		b = open(t, wire.Peer, rb)
		pair(t, a, b, 0)
		synctest.Wait()
		ra.take()
		rb.take()
		// nobody answers: final at once
		rid, _ := a.Request("svc/x", &wire.Query{}, RequestOptions{})
		ra.expect(t, fmt.Sprintf("final %d", rid))
		b.DeclareQueryable("svc/**", true)
		ra.expect(t, "queryable svc/**")
		rid, _ = a.Request("svc/x", &wire.Query{Parameters: "p=1"}, RequestOptions{})
		rb.expect(t, "request svc/x p=1")
		ra.expect(t, fmt.Sprintf("reply %d svc/x answer", rid), fmt.Sprintf("final %d", rid))
		// a queryable that never finishes: the request times out
		rb.silent = true
		rid, _ = a.Request("svc/y", &wire.Query{}, RequestOptions{Timeout: 3 * time.Second})
		rb.expect(t, "request svc/y ")
		ra.expect(t)
		time.Sleep(3 * time.Second)
		ra.expect(t, fmt.Sprintf("final %d", rid))
		a.Close()
		b.Close()
	})
}

// replier answers every request with "answer".
type replier struct {
	rec
	s      **Session
	silent bool
}

func (r *replier) Request(f *Face, key string, m *wire.Request) {
	r.rec.Request(f, key, m)
	if r.silent {
		return
	}
	(*r.s).Reply(f, m.ID, key, &wire.Reply{Body: &wire.Put{Payload: []byte("answer")}}, wire.QoS{})
	(*r.s).ReplyFinal(f, m.ID)
}

func TestFragmentedPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra, rb := &rec{}, &rec{}
		a := open(t, wire.Peer, ra, func(c *Config) { c.BatchSize = 1024 })
		b := open(t, wire.Peer, rb)
		pair(t, a, b, 0)
		b.DeclareSubscriber("big")
		synctest.Wait()
		rb.take()
		payload := bytes.Repeat([]byte("0123456789"), 10000)
		a.Put("big", &wire.Put{Payload: payload}, PutOptions{})
		rb.expect(t, "put big 100000")
		if !bytes.Equal(rb.pushes[0].Payload, payload) {
			t.Error("payload differs")
		}
		a.Close()
		b.Close()
	})
}

// rawPeer is a hand-driven zenoh node on the other end of a pipe.
type rawPeer struct {
	t    *testing.T
	l    link.Link
	p    Params
	tx   *Tx
	rx   *Rx
	mu   sync.Mutex
	msgs []wire.NetworkMessage
	raw  []wire.TransportMessage
	done chan struct{}
}

func newRawPeer(t *testing.T, s *Session, lc LinkConfig) *rawPeer {
	t.Helper()
	la, lb := link.Pipe(0)
	go s.Attach(lb, false)
	h, b, err := NewInitiator(lc)
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
	r := &rawPeer{t: t, l: la, p: h.Params(), tx: NewTx(h.Params()), rx: NewRx(h.Params(), 0), done: make(chan struct{})}
	go r.read()
	return r
}

func (r *rawPeer) read() {
	defer close(r.done)
	for {
		buf := make([]byte, link.MaxBatch)
		n, err := r.l.ReadBatch(buf)
		if err != nil {
			return
		}
		_ = wire.DecodeBatch(buf[:n], func(m wire.TransportMessage) error {
			r.mu.Lock()
			r.raw = append(r.raw, m)
			r.mu.Unlock()
			return nil
		})
		err = r.rx.Batch(buf[:n], func(m wire.NetworkMessage, _ bool) {
			if p, ok := m.(*wire.Push); ok {
				m = p.Clone() // the Rx reuses it
			}
			r.mu.Lock()
			r.msgs = append(r.msgs, m)
			r.mu.Unlock()
		})
		if err != nil {
			return
		}
	}
}

func (r *rawPeer) send(ms ...wire.NetworkMessage) {
	r.t.Helper()
	for _, m := range ms {
		if err := r.tx.Push(m, true); err != nil {
			r.t.Fatal(err)
		}
	}
	for _, b := range r.tx.Take() {
		if err := r.l.WriteBatch(b.B); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rawPeer) takeMsgs() []wire.NetworkMessage {
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.msgs
	r.msgs = nil
	return m
}

func (r *rawPeer) takeRaw() []wire.TransportMessage {
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.raw
	r.raw = nil
	return m
}

func describe(ms []wire.NetworkMessage) []string {
	var out []string
	for _, m := range ms {
		switch m := m.(type) {
		case *wire.Declare:
			s := fmt.Sprintf("%T", m.Body)
			switch b := m.Body.(type) {
			case *wire.DeclareToken:
				s += " " + b.WireExpr.Suffix
			case *wire.DeclareSubscriber:
				s += " " + b.WireExpr.Suffix
			case *wire.DeclareQueryable:
				s += " " + b.WireExpr.Suffix
			}
			if m.HasInterestID {
				s += fmt.Sprintf(" i=%d", m.InterestID)
			}
			out = append(out, strings.TrimPrefix(s, "*wire."))
		case *wire.Interest:
			out = append(out, fmt.Sprintf("Interest %v %d", m.Mode, m.ID))
		case *wire.Push:
			out = append(out, "Push "+m.WireExpr.Suffix)
		default:
			out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", m), "*wire."))
		}
	}
	return out
}

func lc(w wire.WhatAmI) LinkConfig {
	return LinkConfig{ZID: wire.RandomZenohID(), WhatAmI: w, BatchSize: 2048, Resolution: wire.DefaultResolution,
		Lease: 10 * time.Second, Patch: wire.PatchCurrent}
}

// TestPeerWire checks what a peer session sends on the wire: its initial
// declarations with interest id 0 and DeclareFinal(0), answers to
// interests (as zlivewatch sends them), pushes only on a matching
// subscriber declared in the sender's key mapping (as zenoh-pico does).
func TestPeerWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rec{}
		s := open(t, wire.Peer, r)
		s.DeclareToken("@ros2_lv/0/me/0/0/NN/%/%/gonode")
		s.DeclareSubscriber("0/chatter/*")
		p := newRawPeer(t, s, lc(wire.Peer))
		got := describe(p.takeMsgs())
		sort.Strings(got[:2])
		if strings.Join(got, "|") != "DeclareSubscriber 0/chatter/* i=0|DeclareToken @ros2_lv/0/me/0/0/NN/%/%/gonode i=0|DeclareFinal i=0" {
			t.Errorf("initial: %v", got)
		}
		// zlivewatch: key expr 1 = @ros2_lv/0/**, a liveliness subscriber
		// (current+future interest on it) and a liveliness get (current).
		p.send(&wire.Declare{Body: &wire.DeclareKeyExpr{ID: 1, WireExpr: wire.WireExpr{Suffix: "@ros2_lv/0/**"}}},
			&wire.Interest{ID: 1, Mode: wire.InterestCurrentFuture, Options: wire.InterestKeyExprs | wire.InterestTokens,
				WireExpr: &wire.WireExpr{Scope: 1, SenderMapping: true}},
			&wire.Interest{ID: 2, Mode: wire.InterestCurrent, Options: wire.InterestKeyExprs | wire.InterestTokens,
				WireExpr: &wire.WireExpr{Suffix: "@ros2_lv/0/**"}})
		got = describe(p.takeMsgs())
		want := "DeclareToken @ros2_lv/0/me/0/0/NN/%/%/gonode i=1|DeclareFinal i=1|DeclareToken @ros2_lv/0/me/0/0/NN/%/%/gonode i=2|DeclareFinal i=2"
		if strings.Join(got, "|") != want {
			t.Errorf("interest answers: %v", got)
		}
		// a future token goes out (peers get everything)
		s.DeclareToken("@ros2_lv/0/me/0/1/MP/x")
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != "DeclareToken @ros2_lv/0/me/0/1/MP/x" {
			t.Errorf("future token: %v", got)
		}
		// pico's subscriber: key expr 3 then subscriber 3 on it (sender mapping)
		p.send(&wire.Declare{Body: &wire.DeclareKeyExpr{ID: 3, WireExpr: wire.WireExpr{Suffix: "0/clock/rosgraph_msgs::msg::dds_::Clock_/*"}}},
			&wire.Declare{Body: &wire.DeclareSubscriber{ID: 3, WireExpr: wire.WireExpr{Scope: 3, SenderMapping: true}}})
		r.expect(t, "up peer", "subscriber 0/clock/rosgraph_msgs::msg::dds_::Clock_/*")
		if !s.Matching("0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x") {
			t.Fatal("pico's subscriber not seen")
		}
		s.Put("0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x", &wire.Put{Payload: []byte{0, 1, 0, 0}}, PutOptions{})
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != "Push 0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x" {
			t.Errorf("push: %v", got)
		}
		// pico's PUSH in its own mapping reaches the handler with the full key
		p.send(&wire.Push{WireExpr: wire.WireExpr{Scope: 3, SenderMapping: true}, Body: &wire.Put{Payload: []byte{1}}})
		p.send(&wire.Push{WireExpr: wire.WireExpr{Scope: 9, SenderMapping: true}, Body: &wire.Put{Payload: []byte{1}}})
		r.expect(t, "put 0/clock/rosgraph_msgs::msg::dds_::Clock_/* 1")
		if s.Stats.UnknownScope.Load() != 1 {
			t.Errorf("unknown scope not counted: %d", s.Stats.UnknownScope.Load())
		}
		// the peer's CLOSE takes the face down
		p.l.WriteBatch([]byte{0x23, 0x00})
		r.expect(t, "unsubscriber 0/clock/rosgraph_msgs::msg::dds_::Clock_/*", "down peer")
		s.Close()
		p.l.Close()
	})
}

// TestClientInterests: a client (zenoh-pico's publisher in client mode
// asks with an aggregate interest on its key) gets one declaration on its
// own key while a local subscriber matches, and only what it asked for.
func TestClientInterests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := open(t, wire.Peer, &rec{})
		sub, _ := s.DeclareSubscriber("0/clock/**")
		s.DeclareToken("@ros2_lv/0/me")
		p := newRawPeer(t, s, lc(wire.Client))
		if got := p.takeMsgs(); len(got) != 0 {
			t.Errorf("a client got declarations unasked: %v", describe(got))
		}
		key := "0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x"
		p.send(&wire.Interest{ID: 4, Mode: wire.InterestCurrentFuture,
			Options:  wire.InterestKeyExprs | wire.InterestSubscribers | wire.InterestAggregate,
			WireExpr: &wire.WireExpr{Suffix: key}})
		got := p.takeMsgs()
		if d := describe(got); strings.Join(d, "|") != "DeclareSubscriber "+key+" i=4|DeclareFinal i=4" {
			t.Fatalf("aggregate answer: %v", d)
		}
		aggID := got[0].(*wire.Declare).Body.(*wire.DeclareSubscriber).ID
		s.UndeclareSubscriber(sub)
		got = p.takeMsgs()
		if len(got) != 1 || got[0].(*wire.Declare).Body.(*wire.UndeclareSubscriber).ID != aggID {
			t.Fatalf("aggregate undeclared: %v", describe(got))
		}
		s.DeclareSubscriber("**")
		s.DeclareSubscriber("0/**")
		if d := describe(p.takeMsgs()); strings.Join(d, "|") != "DeclareSubscriber "+key {
			t.Errorf("aggregate declared again: %v", d)
		}
		s.DeclareToken("@ros2_lv/0/other")
		if got := p.takeMsgs(); len(got) != 0 {
			t.Errorf("token sent to a client that did not ask: %v", describe(got))
		}
		// a plain future interest on tokens
		p.send(&wire.Interest{ID: 5, Mode: wire.InterestFuture, Options: wire.InterestTokens,
			WireExpr: &wire.WireExpr{Suffix: "@ros2_lv/**"}})
		if got := p.takeMsgs(); len(got) != 0 {
			t.Errorf("a future interest got answers: %v", describe(got))
		}
		s.DeclareToken("@ros2_lv/0/third")
		s.DeclareToken("@other/x")
		if d := describe(p.takeMsgs()); strings.Join(d, "|") != "DeclareToken @ros2_lv/0/third" {
			t.Errorf("future tokens: %v", d)
		}
		s.Close()
		p.l.Close()
	})
}

// TestLease: keep-alives go out when idle; a silent remote expires.
func TestLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rec{}
		s := open(t, wire.Peer, r, func(c *Config) { c.Lease = 4 * time.Second })
		c := lc(wire.Peer)
		c.Lease = 3 * time.Second
		p := newRawPeer(t, s, c)
		p.takeRaw()
		r.take()
		time.Sleep(2500 * time.Millisecond)
		ka := 0
		for _, m := range p.takeRaw() {
			if _, ok := m.(*wire.KeepAlive); ok {
				ka++
			}
		}
		if ka != 2 { // at 1 s and 2 s (lease 4 s / 4)
			t.Errorf("%d keep-alives in 2.5 s", ka)
		}
		r.expect(t)
		// the raw peer keeps quiet: after its 3 s lease the session closes
		// (checked every second: at 4 s)
		time.Sleep(2 * time.Second)
		raw := p.takeRaw()
		last, ok := raw[len(raw)-1].(*wire.Close)
		if !ok || last.Reason != wire.CloseExpired || !last.Session {
			t.Errorf("last message %#v", raw[len(raw)-1])
		}
		r.expect(t, "down peer")
		s.Close()
		p.l.Close()
	})
}

// TestGarbage: garbage batches are dropped, the face stays up.
func TestGarbage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rec{}
		s := open(t, wire.Peer, r)
		s.DeclareSubscriber("a")
		p := newRawPeer(t, s, lc(wire.Peer))
		p.takeMsgs()
		r.take()
		for _, g := range [][]byte{{0xff, 0x00}, {0x25}, {0x25, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x1d, 0x00}, {0x25, 0x80}, {}, bytes.Repeat([]byte{0x1d}, 100)} {
			p.l.WriteBatch(g)
		}
		p.send(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{Payload: []byte("ok")}})
		r.expect(t, "put a 2")
		s.Close()
		p.l.Close()
	})
}

// TestClientMode: a client sends to its router whatever the declarations,
// and asks it for declarations with interests.
func TestClientMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rec{}
		s := open(t, wire.Client, r)
		s.DeclareToken("@ros2_lv/0/me")
		p := newRawPeer(t, s, lc(wire.Router))
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != "DeclareToken @ros2_lv/0/me" {
			t.Errorf("initial: %v", got)
		}
		s.Put("x", &wire.Put{Payload: []byte{1}}, PutOptions{})
		id, err := s.DeclareInterest(wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != fmt.Sprintf("Push x|Interest current %d", id) {
			t.Errorf("sent: %v", got)
		}
		r.take()
		p.send(&wire.Declare{HasInterestID: true, InterestID: id, Body: &wire.DeclareToken{ID: 7, WireExpr: wire.WireExpr{Suffix: "@ros2_lv/0/other"}}},
			&wire.Declare{HasInterestID: true, InterestID: id, Body: &wire.DeclareFinal{}})
		r.expect(t, fmt.Sprintf("token @ros2_lv/0/other (interest %d)", id), fmt.Sprintf("interest final %d", id))
		// an interest the router never finalizes times out
		id, _ = s.DeclareInterest(wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
		time.Sleep(10 * time.Second)
		r.expect(t, fmt.Sprintf("interest final %d", id))
		s.Close()
		p.l.Close()
	})
}

// TestLivelinessGetPeer: in peer mode a liveliness get is answered from
// the tokens peers pushed.
func TestLivelinessGetPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra, rb := &rec{}, &rec{}
		a, b := open(t, wire.Peer, ra), open(t, wire.Peer, rb)
		a.DeclareToken("@ros2_lv/0/a")
		a.DeclareToken("@ros2_lv/1/a")
		pair(t, a, b, 0)
		synctest.Wait()
		rb.take()
		id, _ := b.DeclareInterest(wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
		rb.expect(t, fmt.Sprintf("token @ros2_lv/0/a (interest %d)", id), fmt.Sprintf("interest final %d", id))
		a.Close()
		b.Close()
	})
}

func TestReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra, rb := &rec{}, &rec{}
		a := open(t, wire.Peer, ra, func(c *Config) { c.Listen = []string{"mem/reconnect"} })
		b := open(t, wire.Peer, rb, func(c *Config) { c.Connect = []string{"mem/reconnect"} })
		ra.expect(t, "up peer")
		rb.expect(t, "up peer")
		for _, f := range a.Faces() {
			f.Close()
		}
		// b dials again at once (a face that was up resets the backoff)
		ra.expectSet(t, "down peer", "up peer")
		rb.expectSet(t, "down peer", "up peer")
		// the listener goes away: b retries with backoff 1 s, 2 s, 4 s, 4 s
		a.Close()
		rb.expect(t, "down peer")
		time.Sleep(7 * time.Second)
		a2 := open(t, wire.Peer, ra, func(c *Config) { c.Listen = []string{"mem/reconnect"} })
		time.Sleep(4 * time.Second)
		rb.expect(t, "up peer")
		a2.Close()
		b.Close()
	})
}

func TestDuplicateAndSelf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ra, rb := &rec{}, &rec{}
		a, b := open(t, wire.Peer, ra), open(t, wire.Peer, rb)
		pair(t, a, b, 0)
		synctest.Wait()
		first := a.Faces()[0]
		// a second link opened by the same node replaces the first
		pair(t, a, b, 0)
		synctest.Wait()
		if fa, fb := a.Faces(), b.Faces(); len(fa) != 1 || len(fb) != 1 || fa[0] == first {
			t.Errorf("faces after a reconnection: %v %v", fa, fb)
		}
		// a link from the other side loses against the one opened by the
		// smaller zid, on both sides
		keep := a.Faces()[0]
		if zidLess(b.ZID(), a.ZID()) {
			keep = nil
		}
		pair(t, b, a, 0)
		synctest.Wait()
		fa, fb := a.Faces(), b.Faces()
		if len(fa) != 1 || len(fb) != 1 || (keep != nil && fa[0] != keep) || (keep == nil && fa[0].Params.InitiatorSide) {
			t.Errorf("faces after a crossed link: %v %v", fa, fb)
		}
		if fa[0].Params.InitiatorSide == fb[0].Params.InitiatorSide {
			t.Error("the two sides kept different links")
		}
		la, lb := link.Pipe(0)
		go a.Attach(lb, false)
		_, err := a.Attach(la, true)
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Reason != wire.CloseConnectionToSelf {
			t.Errorf("self: %v", err)
		}
		a.Close()
		b.Close()
	})
}

func TestConfigErrors(t *testing.T) {
	if _, err := Open(Config{Mode: wire.WhatAmI(3)}, nil); err == nil {
		t.Error("mode 3 accepted")
	}
	if _, err := Open(Config{Connect: []string{"quic/1.2.3.4:5"}}, nil); err == nil {
		t.Error("bad endpoint accepted")
	}
	s := open(t, wire.Peer, nil)
	defer s.Close()
	if _, err := s.DeclareSubscriber("a//b"); err == nil {
		t.Error("invalid key declared")
	}
}

// router records what a routing Handler gets on top of rec.
type router struct{ rec }

func (r *router) Interest(f *Face, key string, m *wire.Interest) {
	r.add("interest %d %v %q", m.ID, m.Mode, key)
}
func (r *router) RoutedResponse(f *Face, key string, m *wire.Response) {
	r.add("routed response %d %q", m.RequestID, key)
}
func (r *router) RoutedResponseFinal(f *Face, rid uint32) { r.add("routed final %d", rid) }

// TestRoutingHook: a Handler implementing Routing gets every interest with
// its key resolved (the session answers none itself, except DeclareFinal
// for a key that does not resolve), and the responses to requests the
// session did not issue; its own requests are answered as before.
func TestRoutingHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &router{}
		s := open(t, wire.Router, r)
		s.DeclareToken("@ros2_lv/0/own") // a router's own entity: not used to answer
		p := newRawPeer(t, s, lc(wire.Client))
		if p.p.RemoteWhatAmI != wire.Router {
			t.Errorf("the session says it is a %v", p.p.RemoteWhatAmI)
		}
		p.takeMsgs()
		r.take()
		p.send(&wire.Declare{Body: &wire.DeclareKeyExpr{ID: 1, WireExpr: wire.WireExpr{Suffix: "@ros2_lv/0"}}},
			&wire.Interest{ID: 5, Mode: wire.InterestCurrentFuture, Options: wire.InterestTokens,
				WireExpr: &wire.WireExpr{Scope: 1, Suffix: "/**", SenderMapping: true}},
			&wire.Interest{ID: 6, Mode: wire.InterestCurrent, Options: wire.InterestTokens,
				WireExpr: &wire.WireExpr{Scope: 9, Suffix: "/**", SenderMapping: true}},
			&wire.Interest{ID: 7, Mode: wire.InterestCurrent, Options: wire.InterestSubscribers},
			&wire.Interest{ID: 5, Mode: wire.InterestFinal},
		)
		r.expect(t, `interest 5 current+future "@ros2_lv/0/**"`, `interest 7 current ""`, `interest 5 final ""`)
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != "DeclareFinal i=6" {
			t.Errorf("the session sent %v", got)
		}
		if s.Stats.UnknownScope.Load() != 1 {
			t.Errorf("unknown scope %d", s.Stats.UnknownScope.Load())
		}
		// responses and finals to requests it did not issue
		p.send(&wire.Response{RequestID: 77, WireExpr: wire.WireExpr{Suffix: "a/b"}, Body: &wire.Reply{Body: &wire.Put{}}},
			&wire.Response{RequestID: 77, Body: &wire.Err{Payload: []byte("Timeout")}},
			&wire.ResponseFinal{RequestID: 77})
		r.expect(t, `routed response 77 "a/b"`, `routed response 77 ""`, "routed final 77")
		// its own request
		p.send(&wire.Declare{Body: &wire.DeclareQueryable{ID: 1, WireExpr: wire.WireExpr{Suffix: "a/**"}}})
		r.expect(t, "queryable a/**")
		rid, _ := s.Request("a/b", &wire.Query{}, RequestOptions{})
		p.takeMsgs()
		p.send(&wire.Response{RequestID: rid, Body: &wire.Err{Payload: []byte("Timeout")}}, &wire.ResponseFinal{RequestID: rid})
		r.expect(t, fmt.Sprintf("err %d Timeout", rid), fmt.Sprintf("final %d", rid))
		s.Close()
		p.l.Close()
	})
}

// TestPeerSendsToRouter: a peer sends its publications and queries to the
// routers it is linked to (a zenoh router declares its subscribers and
// queryables to a peer only when asked), as zenoh peers do.
func TestPeerSendsToRouter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rec{}
		s := open(t, wire.Peer, r)
		p := newRawPeer(t, s, lc(wire.Router))
		p.takeMsgs()
		if n := s.Put("0/chatter", &wire.Put{Payload: []byte("hi")}, PutOptions{}); n != 1 {
			t.Errorf("put went to %d faces", n)
		}
		rid, _ := s.Request("svc/x", &wire.Query{}, RequestOptions{})
		if got := describe(p.takeMsgs()); strings.Join(got, "|") != "Push 0/chatter|Request" {
			t.Errorf("sent %v", got)
		}
		if s.Matching("0/chatter") {
			t.Error("Matching without a subscriber declared by the router")
		}
		p.send(&wire.ResponseFinal{RequestID: rid})
		r.expect(t, "up router", fmt.Sprintf("final %d", rid))
		// once the router finalized a subscriber interest covering a key,
		// its declarations tell
		id, _ := s.DeclareInterest(wire.InterestCurrentFuture, wire.InterestSubscribers, "0/chatter/**")
		p.takeMsgs()
		p.send(&wire.Declare{HasInterestID: true, InterestID: id, Body: &wire.DeclareFinal{}})
		r.expect(t, fmt.Sprintf("interest final %d", id))
		if n := s.Put("0/chatter/a", &wire.Put{}, PutOptions{}); n != 0 {
			t.Errorf("put with no subscriber declared went to %d faces", n)
		}
		if n := s.Put("0/other", &wire.Put{}, PutOptions{}); n != 1 {
			t.Errorf("put on a key the interest does not cover went to %d faces", n)
		}
		p.send(&wire.Declare{Body: &wire.DeclareSubscriber{ID: 1, WireExpr: wire.WireExpr{Suffix: "0/chatter/a"}}})
		r.expect(t, "subscriber 0/chatter/a")
		if n := s.Put("0/chatter/a", &wire.Put{}, PutOptions{}); n != 1 {
			t.Errorf("put with a subscriber declared went to %d faces", n)
		}
		s.UndeclareInterest(id)
		if n := s.Put("0/chatter/b", &wire.Put{}, PutOptions{}); n != 1 {
			t.Errorf("put after the interest ended went to %d faces", n)
		}
		s.Close()
		p.l.Close()
	})
}
