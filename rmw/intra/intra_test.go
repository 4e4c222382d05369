package intra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

var node = rmw.NodeInfo{Name: "n", Namespace: "/", Enclave: "/"}

const strType = "std_msgs/msg/String"

// recorder collects samples and events safely.
type recorder struct {
	mu     sync.Mutex
	data   [][]byte
	stamps []int64
	gids   [][16]byte
	events []rmw.Event
}

func (r *recorder) deliver(s rmw.Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = append(r.data, append([]byte(nil), s.Data...))
	r.stamps = append(r.stamps, s.SourceTimestamp)
	r.gids = append(r.gids, s.PublisherGID)
}

func (r *recorder) event(e rmw.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) opts() rmw.EndpointOptions { return rmw.EndpointOptions{OnEvent: r.event} }

func (r *recorder) seqs() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, len(r.data))
	for i, d := range r.data {
		out[i] = int(binary.BigEndian.Uint32(d))
	}
	return out
}

func (r *recorder) kinds() []rmw.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]rmw.Event, len(r.events))
	for i, e := range r.events {
		out[i] = rmw.Event{Kind: e.Kind, Policy: e.Policy}
	}
	return out
}

func msg(i int) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, uint32(i))
	return b
}

func seq(from, to int) []int {
	out := []int{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func mustPub(t testing.TB, tr *Transport, topic, typ string, q rmw.QoS, r *recorder) *Publisher {
	t.Helper()
	var o rmw.EndpointOptions
	if r != nil {
		o = r.opts()
	}
	p, err := tr.NewPublisher(node, topic, typ, q, o)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Publisher)
}

func mustSub(t testing.TB, tr *Transport, topic, typ string, q rmw.QoS, r *recorder) *Subscription {
	t.Helper()
	s, err := tr.NewSubscription(node, topic, typ, q, r.deliver, r.opts())
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Subscription)
}

var (
	reliable   = rmw.QoS{Reliability: rmw.Reliable, Depth: 10}
	bestEffort = rmw.QoS{Reliability: rmw.BestEffort, Depth: 10}
	tlocal     = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, Depth: 10}
)

func TestMatching(t *testing.T) {
	with := func(q rmw.QoS, f func(*rmw.QoS)) rmw.QoS { f(&q); return q }
	cases := []struct {
		name             string
		pubType, subType string
		pubQoS, subQoS   rmw.QoS
		policy           string // "" when they must match
	}{
		{"defaults", strType, strType, rmw.QoS{}, rmw.QoS{}, ""},
		{"reliable-reliable", strType, strType, reliable, reliable, ""},
		{"reliable-besteffort", strType, strType, reliable, bestEffort, ""},
		{"besteffort-reliable", strType, strType, bestEffort, reliable, "RELIABILITY"},
		{"tl-volatile", strType, strType, tlocal, reliable, ""},
		{"volatile-tl", strType, strType, reliable, tlocal, "DURABILITY"},
		{"deadline-longer", strType, strType, with(reliable, func(q *rmw.QoS) { q.Deadline = 2 * time.Second }),
			with(reliable, func(q *rmw.QoS) { q.Deadline = time.Second }), "DEADLINE"},
		{"deadline-infinite-writer", strType, strType, reliable,
			with(reliable, func(q *rmw.QoS) { q.Deadline = time.Second }), "DEADLINE"},
		{"deadline-shorter", strType, strType, with(reliable, func(q *rmw.QoS) { q.Deadline = time.Second }),
			with(reliable, func(q *rmw.QoS) { q.Deadline = 2 * time.Second }), ""},
		{"liveliness-kind", strType, strType, reliable,
			with(reliable, func(q *rmw.QoS) { q.Liveliness = rmw.LivelinessManualByTopic }), "LIVELINESS"},
		{"liveliness-lease", strType, strType, with(reliable, func(q *rmw.QoS) { q.LivelinessLeaseDuration = 3 * time.Second }),
			with(reliable, func(q *rmw.QoS) { q.LivelinessLeaseDuration = time.Second }), "LIVELINESS"},
		{"type-mismatch", strType, "std_msgs/msg/Int32", reliable, reliable, PolicyType},
		{"type-mismatch-before-qos", strType, "std_msgs/msg/Int32", bestEffort, reliable, PolicyType},
	}
	for _, c := range cases {
		for _, pubFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/pubFirst=%v", c.name, pubFirst), func(t *testing.T) {
				tr := New()
				defer tr.Close()
				var pr, sr recorder
				var p *Publisher
				var s *Subscription
				if pubFirst {
					p = mustPub(t, tr, "/t", c.pubType, c.pubQoS, &pr)
					s = mustSub(t, tr, "/t", c.subType, c.subQoS, &sr)
				} else {
					s = mustSub(t, tr, "/t", c.subType, c.subQoS, &sr)
					p = mustPub(t, tr, "/t", c.pubType, c.pubQoS, &pr)
				}
				if err := p.Publish(msg(7)); err != nil {
					t.Fatal(err)
				}
				st := tr.Stats()
				if c.policy == "" {
					want := []rmw.Event{{Kind: rmw.EventMatched}}
					if !reflect.DeepEqual(pr.kinds(), want) || !reflect.DeepEqual(sr.kinds(), want) {
						t.Fatalf("events pub %v sub %v, want %v", pr.kinds(), sr.kinds(), want)
					}
					if pr.events[0].Remote != gidString(s.GID()) || sr.events[0].Remote != gidString(p.GID()) {
						t.Fatalf("remote names wrong: %+v %+v", pr.events, sr.events)
					}
					if p.MatchedSubscriptions() != 1 || s.MatchedPublishers() != 1 {
						t.Fatal("matched counts not 1")
					}
					if got := sr.seqs(); !reflect.DeepEqual(got, []int{7}) {
						t.Fatalf("delivered %v", got)
					}
					if st.IncompatibleQoS+st.IncompatibleType != 0 {
						t.Fatalf("stats %+v", st)
					}
					return
				}
				want := []rmw.Event{{Kind: rmw.EventIncompatibleQoS, Policy: c.policy}}
				if !reflect.DeepEqual(pr.kinds(), want) || !reflect.DeepEqual(sr.kinds(), want) {
					t.Fatalf("events pub %v sub %v, want %v", pr.kinds(), sr.kinds(), want)
				}
				if p.MatchedSubscriptions() != 0 || s.MatchedPublishers() != 0 {
					t.Fatal("incompatible pair counted as matched")
				}
				if len(sr.seqs()) != 0 {
					t.Fatal("incompatible subscription received data")
				}
				wantQ, wantT := uint64(1), uint64(0)
				if c.policy == PolicyType {
					wantQ, wantT = 0, 1
				}
				if st.IncompatibleQoS != wantQ || st.IncompatibleType != wantT {
					t.Fatalf("stats %+v", st)
				}
			})
		}
	}
}

func TestDifferentTopicsAndTransportsDoNotMatch(t *testing.T) {
	a, b := New(), New()
	defer a.Close()
	defer b.Close()
	var r recorder
	mustSub(t, a, "/x", strType, reliable, &r)
	p1 := mustPub(t, a, "/y", strType, reliable, nil)
	p2 := mustPub(t, b, "/x", strType, reliable, nil)
	p1.Publish(msg(1))
	p2.Publish(msg(2))
	if len(r.seqs()) != 0 || len(r.kinds()) != 0 {
		t.Fatalf("unexpected delivery/events: %v %v", r.seqs(), r.kinds())
	}
	if p1.GID() == p2.GID() {
		t.Fatal("GIDs collide across transports")
	}
}

func TestValidation(t *testing.T) {
	tr := New()
	defer tr.Close()
	if _, err := tr.NewPublisher(node, "chatter", strType, reliable, rmw.EndpointOptions{}); err == nil {
		t.Error("relative topic accepted")
	}
	if _, err := tr.NewPublisher(node, "/chatter", "", reliable, rmw.EndpointOptions{}); err == nil {
		t.Error("empty type accepted")
	}
	if _, err := tr.NewSubscription(node, "/chatter", strType, reliable, nil, rmw.EndpointOptions{}); err == nil {
		t.Error("nil deliver accepted")
	}
}

func TestTransientLocalHistory(t *testing.T) {
	keepAll := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepAll}
	tl := func(depth int) rmw.QoS {
		return rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: depth}
	}
	cases := []struct {
		name      string
		pubQoS    rmw.QoS
		subQoS    rmw.QoS
		published int
		want      []int // replayed history
	}{
		{"depth1", tl(1), keepAll, 5, []int{5}},
		{"depth3", tl(3), keepAll, 5, []int{3, 4, 5}},
		{"depth3-fewer", tl(3), keepAll, 2, []int{1, 2}},
		{"depth3-none", tl(3), keepAll, 0, []int{}},
		{"keepall", keepAll, keepAll, 50, seq(1, 50)},
		{"keepall-capped", keepAll, keepAll, KeepAllLimit + 7, seq(8, KeepAllLimit+7)},
		{"huge-depth-capped", tl(1 << 30), keepAll, KeepAllLimit + 1, seq(2, KeepAllLimit+1)},
		{"reader-depth-limits", tl(5), tl(2), 5, []int{4, 5}},
		{"volatile-reader", tl(5), reliable, 5, []int{}},
		{"besteffort-tl-reader", tl(2), rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.TransientLocal, Depth: 5}, 3, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New()
			defer tr.Close()
			p := mustPub(t, tr, "/latched", strType, c.pubQoS, nil)
			for i := 1; i <= c.published; i++ {
				p.Publish(msg(i))
			}
			var r recorder
			mustSub(t, tr, "/latched", strType, c.subQoS, &r)
			if got := r.seqs(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("replayed %v, want %v", got, c.want)
			}
			p.Publish(msg(1_000_000))
			got := r.seqs()
			if got[len(got)-1] != 1_000_000 || len(got) != len(c.want)+1 {
				t.Fatalf("live sample not delivered after history: %v", got)
			}
		})
	}
}

func TestTransientLocalLifespan(t *testing.T) {
	wall, steady := int64(1000), int64(0)
	tr := New(WithNow(func() int64 { return wall }), WithSteady(func() int64 { return steady }))
	defer tr.Close()
	q := tlocal
	q.Lifespan = 10 * time.Nanosecond
	p := mustPub(t, tr, "/l", strType, q, nil)
	for i := 1; i <= 5; i++ {
		p.Publish(msg(i))
		wall += 5
		steady += 5
	}
	// Published at steady 0..20, now 25: samples older than 15 are expired.
	join := func() *recorder {
		var r recorder
		s := mustSub(t, tr, "/l", strType, tlocal, &r)
		s.Close()
		return &r
	}
	r := join()
	if got := r.seqs(); !reflect.DeepEqual(got, []int{4, 5}) {
		t.Fatalf("got %v", got)
	}
	if !reflect.DeepEqual(r.stamps, []int64{1015, 1020}) {
		t.Fatalf("stamps %v", r.stamps)
	}
	// Stepping the system clock an hour forward expires nothing, and
	// two hours back revives nothing: lifespan is on the monotonic clock.
	wall += int64(time.Hour)
	if got := join().seqs(); !reflect.DeepEqual(got, []int{4, 5}) {
		t.Fatalf("after a forward step of the system clock: got %v", got)
	}
	wall -= int64(2 * time.Hour)
	if got := join().seqs(); !reflect.DeepEqual(got, []int{4, 5}) {
		t.Fatalf("after a backward step of the system clock: got %v", got)
	}
	steady += 1
	if got := join().seqs(); !reflect.DeepEqual(got, []int{5}) {
		t.Fatalf("monotonic time passing: got %v", got)
	}
}

// A late joiner whose deliver publishes on the very publisher being replayed
// must see the whole history first, then its own samples, without deadlock.
func TestReplayBeforeNewSamples(t *testing.T) {
	tr := New()
	defer tr.Close()
	p := mustPub(t, tr, "/r", strType, tlocal, nil)
	for i := 1; i <= 3; i++ {
		p.Publish(msg(i))
	}
	var r recorder
	deliver := func(s rmw.Sample) {
		r.deliver(s)
		if v := binary.BigEndian.Uint32(s.Data); v <= 3 {
			p.Publish(msg(int(v) + 100))
		}
	}
	if _, err := tr.NewSubscription(node, "/r", strType, tlocal, deliver, rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []int{1, 2, 3, 101, 102, 103}
	if got := r.seqs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if st := tr.Stats(); st.Published != 6 || st.Delivered != 6 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOrderingAndStamps(t *testing.T) {
	now := int64(0)
	tr := New(WithNow(func() int64 { now++; return now }))
	defer tr.Close()
	var r1, r2 recorder
	mustSub(t, tr, "/o", strType, reliable, &r1)
	mustSub(t, tr, "/o", strType, bestEffort, &r2)
	p := mustPub(t, tr, "/o", strType, reliable, nil)
	p2 := mustPub(t, tr, "/o", strType, reliable, nil)
	for i := 0; i < 1000; i++ {
		p.Publish(msg(i))
	}
	p2.Publish(msg(5000))
	want := append(seq(0, 999), 5000)
	if !reflect.DeepEqual(r1.seqs(), want) || !reflect.DeepEqual(r2.seqs(), want) {
		t.Fatal("out of order")
	}
	for i := 1; i < len(r1.stamps); i++ {
		if r1.stamps[i] <= r1.stamps[i-1] {
			t.Fatal("stamps not increasing")
		}
	}
	if r1.gids[0] != p.GID() || r1.gids[1000] != p2.GID() || p.GID() == p2.GID() {
		t.Fatal("publisher GIDs wrong")
	}
	if p.GID()[15] != 0x03 {
		t.Fatalf("writer entity kind %x", p.GID()[15])
	}
}

func TestDefaultStampIsSystemTime(t *testing.T) {
	tr := New()
	defer tr.Close()
	var r recorder
	mustSub(t, tr, "/s", strType, reliable, &r)
	p := mustPub(t, tr, "/s", strType, reliable, nil)
	before := time.Now().UnixNano()
	p.Publish(msg(1))
	after := time.Now().UnixNano()
	if r.stamps[0] < before || r.stamps[0] > after {
		t.Fatalf("stamp %d outside [%d,%d]", r.stamps[0], before, after)
	}
}

func TestCloseSemantics(t *testing.T) {
	tr := New()
	var pr, sr, sr2 recorder
	p := mustPub(t, tr, "/c", strType, reliable, &pr)
	s := mustSub(t, tr, "/c", strType, reliable, &sr)
	s2 := mustSub(t, tr, "/c", strType, reliable, &sr2)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	p.Publish(msg(1))
	if len(sr.seqs()) != 0 || !reflect.DeepEqual(sr2.seqs(), []int{1}) {
		t.Fatal("closed subscription still delivered / other lost")
	}
	wantPub := []rmw.Event{{Kind: rmw.EventMatched}, {Kind: rmw.EventMatched}, {Kind: rmw.EventUnmatched}}
	if !reflect.DeepEqual(pr.kinds(), wantPub) || p.MatchedSubscriptions() != 1 {
		t.Fatalf("publisher events %v matched %d", pr.kinds(), p.MatchedSubscriptions())
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := p.Publish(msg(2)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: %v", err)
	}
	if !reflect.DeepEqual(sr2.kinds(), []rmw.Event{{Kind: rmw.EventMatched}, {Kind: rmw.EventUnmatched}}) || s2.MatchedPublishers() != 0 {
		t.Fatalf("subscription events %v", sr2.kinds())
	}
	if got := tr.Topics(); len(got) != 1 || got[0].Subscriptions != 1 || got[0].Publishers != 0 {
		t.Fatalf("topics %+v", got)
	}

	p3 := mustPub(t, tr, "/c", strType, tlocal, nil)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal("second transport Close:", err)
	}
	if err := p3.Publish(msg(3)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after transport Close: %v", err)
	}
	if err := p3.Close(); err != nil || s2.Close() != nil {
		t.Fatal("endpoint Close after transport Close failed")
	}
	if _, err := tr.NewPublisher(node, "/c", strType, reliable, rmw.EndpointOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewPublisher after Close: %v", err)
	}
	if _, err := tr.NewSubscription(node, "/c", strType, reliable, sr.deliver, rmw.EndpointOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewSubscription after Close: %v", err)
	}
	if len(tr.Topics()) != 0 || p3.MatchedSubscriptions() != 0 {
		t.Fatal("graph not empty after Close")
	}
}

// A deliver func that publishes on other topics (and on its own, bounded)
// runs to completion.
func TestCallbackChain(t *testing.T) {
	tr := New()
	defer tr.Close()
	pb := mustPub(t, tr, "/b", strType, reliable, nil)
	pc := mustPub(t, tr, "/c", strType, tlocal, nil)
	pa := mustPub(t, tr, "/a", strType, reliable, nil)
	var rc recorder
	var hops int
	tr.NewSubscription(node, "/a", strType, reliable, func(s rmw.Sample) {
		hops++
		pb.Publish(s.Data)
		if hops < 5 {
			pa.Publish(s.Data) // re-enter the publisher that is delivering
		}
	}, rmw.EndpointOptions{})
	tr.NewSubscription(node, "/b", strType, reliable, func(s rmw.Sample) {
		pc.Publish(s.Data)
		// creating endpoints from a callback must not deadlock either
		x, err := tr.NewSubscription(node, "/c", strType, tlocal, func(rmw.Sample) {}, rmw.EndpointOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		x.Close()
	}, rmw.EndpointOptions{})
	mustSub(t, tr, "/c", strType, reliable, &rc)
	done := make(chan struct{})
	go func() { pa.Publish(msg(9)); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("callback chain deadlocked")
	}
	if got := rc.seqs(); !reflect.DeepEqual(got, []int{9, 9, 9, 9, 9}) {
		t.Fatalf("got %v", got)
	}
}

func TestEventCallbackMayUseTransport(t *testing.T) {
	tr := New()
	defer tr.Close()
	var once sync.Once
	_, err := tr.NewPublisher(node, "/e", strType, reliable, rmw.EndpointOptions{OnEvent: func(rmw.Event) {
		once.Do(func() { tr.Topics(); tr.Stats() })
	}})
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	mustSub(t, tr, "/e", strType, reliable, &r)
}

// Under concurrent creation and closing, each subscription sees, per remote,
// Matched then Unmatched, and its net count equals MatchedPublishers.
func TestEventOrderUnderConcurrency(t *testing.T) {
	tr := New()
	defer tr.Close()
	var mu sync.Mutex
	state := map[string]rmw.EventKind{}
	net := 0
	bad := ""
	s, err := tr.NewSubscription(node, "/ev", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{OnEvent: func(e rmw.Event) {
		mu.Lock()
		defer mu.Unlock()
		prev := state[e.Remote]
		switch {
		case e.Kind == rmw.EventMatched && prev == 0:
			net++
		case e.Kind == rmw.EventUnmatched && prev == rmw.EventMatched:
			net--
		default:
			bad = fmt.Sprintf("remote %s: %v after %v", e.Remote, e.Kind, prev)
		}
		state[e.Remote] = e.Kind
	}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				p, err := tr.NewPublisher(node, "/ev", strType, reliable, rmw.EndpointOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 != 0 {
					p.Close()
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if bad != "" {
		t.Fatal(bad)
	}
	if m := s.MatchedPublishers(); m != net || m != 4*34 {
		t.Fatalf("MatchedPublishers %d, net events %d", m, net)
	}
}

func TestTopicsAndEndpoints(t *testing.T) {
	tr := New()
	defer tr.Close()
	var r recorder
	mustPub(t, tr, "/b", strType, reliable, nil)
	mustPub(t, tr, "/a", strType, reliable, nil)
	mustSub(t, tr, "/a", strType, reliable, &r)
	mustSub(t, tr, "/a", strType, reliable, &r)
	mustSub(t, tr, "/a", "std_msgs/msg/Int32", reliable, &r)
	want := []rmw.TopicInfo{
		{Name: "/a", Type: strType, Publishers: 1, Subscriptions: 2},
		{Name: "/a", Type: "std_msgs/msg/Int32", Subscriptions: 1},
		{Name: "/b", Type: strType, Publishers: 1},
	}
	// sorted by name then type
	want[0], want[1] = want[1], want[0]
	if got := tr.Topics(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	eps := tr.Endpoints("/a")
	if len(eps) != 4 || !eps[0].Publisher || eps[1].Publisher || eps[0].QoS.History != rmw.KeepLast {
		t.Fatalf("endpoints %+v", eps)
	}
	if len(tr.Endpoints("")) != 5 {
		t.Fatal("all endpoints")
	}
	st := tr.Stats()
	if st.Publishers != 2 || st.Subscriptions != 3 || st.IncompatibleType != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDefault(t *testing.T) {
	d := Default()
	if d == nil || Default() != d {
		t.Fatal("Default not shared")
	}
	if Default() == New() {
		t.Fatal("New returned Default")
	}
}

// Concurrent publishing, subscribing and closing must be race-free and must
// not deadlock. Bounded in iterations.
func TestConcurrent(t *testing.T) {
	tr := New()
	var wg sync.WaitGroup
	const workers, iters = 4, 300
	pubs := make([]*Publisher, workers)
	for i := range pubs {
		q := reliable
		if i%2 == 0 {
			q = tlocal
		}
		pubs[i] = mustPub(t, tr, fmt.Sprintf("/t%d", i%2), strType, q, nil)
	}
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				pubs[w].Publish(msg(i))
			}
		}(w)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < iters/10; i++ {
				q := reliable
				if i%2 == 0 {
					q = tlocal
				}
				s, err := tr.NewSubscription(node, fmt.Sprintf("/t%d", w%2), strType, q, func(rmw.Sample) {}, rmw.EndpointOptions{OnEvent: func(rmw.Event) {}})
				if err != nil {
					t.Error(err)
					return
				}
				tr.Topics()
				s.Close()
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		pubs[1].Close()
		tr.Stats()
	}()
	wg.Wait()
	tr.Close()
	for _, p := range pubs {
		if err := p.Publish(msg(0)); !errors.Is(err, ErrClosed) {
			t.Fatal("publish after concurrent close succeeded")
		}
	}
}

// Per-writer order is kept for a late TL joiner while its writer publishes
// concurrently from one goroutine: history then live, no duplicates, no gaps.
func TestConcurrentLateJoinerOrder(t *testing.T) {
	for round := 0; round < 20; round++ {
		tr := New()
		q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepAll}
		p := mustPub(t, tr, "/j", strType, q, nil)
		const n = 500
		started := make(chan struct{})
		done := make(chan struct{})
		go func() {
			for i := 1; i <= n; i++ {
				if i == 50 {
					close(started)
				}
				p.Publish(msg(i))
			}
			close(done)
		}()
		<-started
		var r recorder
		mustSub(t, tr, "/j", strType, q, &r)
		<-done
		got := r.seqs()
		if !reflect.DeepEqual(got, seq(1, n)) {
			t.Fatalf("round %d: got %d samples, first %v", round, len(got), got[:min(10, len(got))])
		}
		tr.Close()
	}
}

func TestPublishDoesNotAllocate(t *testing.T) {
	tr := New()
	defer tr.Close()
	for i := 0; i < 3; i++ {
		tr.NewSubscription(node, "/z", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{})
	}
	p := mustPub(t, tr, "/z", strType, reliable, nil)
	data := make([]byte, 64)
	if a := testing.AllocsPerRun(1000, func() { p.Publish(data) }); a != 0 {
		t.Fatalf("Publish allocates %v per call", a)
	}
}

func benchPublish(b *testing.B, size, subs int) {
	tr := New()
	defer tr.Close()
	var sink byte
	for i := 0; i < subs; i++ {
		tr.NewSubscription(node, "/bench", strType, reliable, func(s rmw.Sample) { sink ^= s.Data[len(s.Data)-1] }, rmw.EndpointOptions{})
	}
	pi, _ := tr.NewPublisher(node, "/bench", strType, reliable, rmw.EndpointOptions{})
	p := pi.(*Publisher)
	data := make([]byte, size)
	b.SetBytes(int64(size * subs))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Publish(data)
	}
	_ = sink
}

// BenchmarkPublish measures publish→deliver latency (ns/op is the time of one
// Publish including all deliver calls) and throughput (MB/s delivered).
func BenchmarkPublish(b *testing.B) {
	for _, size := range []int{64, 64 << 10} {
		for _, subs := range []int{1, 4} {
			b.Run(fmt.Sprintf("size=%d/subs=%d", size, subs), func(b *testing.B) { benchPublish(b, size, subs) })
		}
	}
}

// BenchmarkPublishTransientLocal includes the history copy.
func BenchmarkPublishTransientLocal(b *testing.B) {
	for _, size := range []int{64, 64 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			tr := New()
			defer tr.Close()
			tr.NewSubscription(node, "/bench", strType, tlocal, func(rmw.Sample) {}, rmw.EndpointOptions{})
			pi, _ := tr.NewPublisher(node, "/bench", strType, rmw.QoS{Durability: rmw.TransientLocal, Depth: 1}, rmw.EndpointOptions{})
			data := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				pi.Publish(data)
			}
		})
	}
}

// BenchmarkPublishParallel measures throughput with several publishers, each
// on its own goroutine and topic.
func BenchmarkPublishParallel(b *testing.B) {
	tr := New()
	defer tr.Close()
	var mu sync.Mutex
	n := 0
	b.ReportAllocs()
	b.SetBytes(64)
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		topic := fmt.Sprintf("/p%d", n)
		n++
		mu.Unlock()
		tr.NewSubscription(node, topic, strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{})
		p, _ := tr.NewPublisher(node, topic, strType, reliable, rmw.EndpointOptions{})
		data := make([]byte, 64)
		for pb.Next() {
			p.Publish(data)
		}
	})
}
