package rtps

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

var (
	reliable   = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	bestEffort = rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	latched    = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 5}
	node       = rmw.NodeInfo{Name: "talker", Namespace: "/"}
)

const strType = "std_msgs/msg/String"

func str(s string) []byte {
	return msg.Marshal(&std_msgs.String{Data: s}, true, nil)
}

// inbox collects delivered samples and events.
type inbox struct {
	mu     sync.Mutex
	data   []string
	gids   [][16]byte
	events []rmw.Event
	t      *testing.T
}

func (b *inbox) deliver(s rmw.Sample) {
	var m std_msgs.String
	if err := msg.Unmarshal(s.Data, &m); err != nil {
		b.t.Errorf("bad sample %x: %v", s.Data, err)
	}
	b.mu.Lock()
	b.data = append(b.data, m.Data)
	b.gids = append(b.gids, s.PublisherGID)
	b.mu.Unlock()
}

func (b *inbox) onEvent(e rmw.Event) {
	b.mu.Lock()
	b.events = append(b.events, e)
	b.mu.Unlock()
}

func (b *inbox) got() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.data)
}

func (b *inbox) count(k rmw.EventKind) (n int, policies []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e.Kind == k {
			n++
			policies = append(policies, e.Policy)
		}
	}
	return
}

func seq(prefix string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func newMem(t *testing.T, nw *udp.MemNetwork, mod func(*Config)) *Transport {
	t.Helper()
	cfg := Config{Network: nw, ProbeParticipants: 4, MaxParticipantID: 4}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func mustPub(t *testing.T, tr *Transport, topic string, q rmw.QoS, b *inbox) rmw.Publisher {
	t.Helper()
	var opts rmw.EndpointOptions
	if b != nil {
		opts.OnEvent = b.onEvent
	}
	p, err := tr.NewPublisher(node, topic, strType, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSub(t *testing.T, tr *Transport, topic string, q rmw.QoS, b *inbox) rmw.Subscription {
	t.Helper()
	s, err := tr.NewSubscription(rmw.NodeInfo{Name: "listener", Namespace: "/"}, topic, strType, q, b.deliver, rmw.EndpointOptions{OnEvent: b.onEvent})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDiscoveryAndReliableData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		if a.ParticipantID() != 0 || b.ParticipantID() != 1 {
			t.Fatalf("participant ids %d %d", a.ParticipantID(), b.ParticipantID())
		}
		in := &inbox{t: t}
		pev := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, pev)
		sub := mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if len(a.RemoteParticipants()) != 1 || len(b.RemoteParticipants()) != 1 {
			t.Fatalf("participants: %v / %v", a.RemoteParticipants(), b.RemoteParticipants())
		}
		if pub.MatchedSubscriptions() != 1 || sub.MatchedPublishers() != 1 {
			t.Fatalf("matched %d %d", pub.MatchedSubscriptions(), sub.MatchedPublishers())
		}
		for _, s := range seq("hello ", 20) {
			if err := pub.Publish(str(s)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, seq("hello ", 20)) {
			t.Fatalf("got %q", got)
		}
		if in.gids[0] != pub.(*Publisher).GID() {
			t.Fatal("publisher gid")
		}
		if n, _ := in.count(rmw.EventMatched); n != 1 {
			t.Fatalf("sub matched events %d", n)
		}
		if n, _ := pev.count(rmw.EventMatched); n != 1 {
			t.Fatalf("pub matched events %d", n)
		}
		// Closing the subscription unmatches it remotely.
		sub.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		if pub.MatchedSubscriptions() != 0 {
			t.Fatal("still matched after remote close")
		}
		if n, _ := pev.count(rmw.EventUnmatched); n != 1 {
			t.Fatalf("pub unmatched events %d", n)
		}
	})
}

func TestReliableUnderLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(1, 2))
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			return rng.IntN(100) < 30 // lose 30% of datagrams, discovery included
		}
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		in := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", rmw.QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 100}, nil)
		mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for _, s := range seq("m", 50) {
			pub.Publish(str(s))
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, seq("m", 50)) {
			t.Fatalf("got %d samples %q\nA %+v\nB %+v", len(got), got, a.Stats(), b.Stats())
		}
	})
}

func TestBestEffortAndIncompatible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		inBE := &inbox{t: t}
		inRel := &inbox{t: t}
		pev := &inbox{t: t}
		pub := mustPub(t, a, "/clock_like", bestEffort, pev)
		mustSub(t, b, "/clock_like", bestEffort, inBE)
		subRel := mustSub(t, b, "/clock_like", reliable, inRel)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if pub.MatchedSubscriptions() != 1 || subRel.MatchedPublishers() != 0 {
			t.Fatalf("matched %d / %d", pub.MatchedSubscriptions(), subRel.MatchedPublishers())
		}
		for _, s := range seq("be", 5) {
			pub.Publish(str(s))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := inBE.got(); !slices.Equal(got, seq("be", 5)) {
			t.Fatalf("best effort got %q", got)
		}
		if len(inRel.got()) != 0 {
			t.Fatal("incompatible reader got data")
		}
		n, pol := inRel.count(rmw.EventIncompatibleQoS)
		if n != 1 || pol[0] != "RELIABILITY" {
			t.Fatalf("reader incompatible events %d %q", n, pol)
		}
		n, pol = pev.count(rmw.EventIncompatibleQoS)
		if n != 1 || pol[0] != "RELIABILITY" {
			t.Fatalf("writer incompatible events %d %q", n, pol)
		}
		if a.Stats().IncompatibleQoS != 1 || b.Stats().IncompatibleQoS != 1 {
			t.Fatalf("counted %d %d", a.Stats().IncompatibleQoS, b.Stats().IncompatibleQoS)
		}
		// Type mismatch is reported too.
		inT := &inbox{t: t}
		if _, err := b.NewSubscription(node, "/clock_like", "std_msgs/msg/Int32", bestEffort, inT.deliver, rmw.EndpointOptions{OnEvent: inT.onEvent}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n, pol := inT.count(rmw.EventIncompatibleQoS); n != 1 || pol[0] != "TYPE" {
			t.Fatalf("type mismatch events %d %q", n, pol)
		}
	})
}

func TestTransientLocalLateJoiner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		pub := mustPub(t, a, "/latched", latched, nil)
		for _, s := range seq("old", 8) {
			pub.Publish(str(s))
		}
		// A local late joiner gets the last 5 at once.
		inLocal := &inbox{t: t}
		mustSub(t, a, "/latched", latched, inLocal)
		if got := inLocal.got(); !slices.Equal(got, seq("old", 8)[3:]) {
			t.Fatalf("local late joiner got %q", got)
		}
		// A remote one after discovery.
		b := newMem(t, nw, nil)
		defer b.Close()
		in := &inbox{t: t}
		mustSub(t, b, "/latched", latched, in)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, seq("old", 8)[3:]) {
			t.Fatalf("remote late joiner got %q", got)
		}
		pub.Publish(str("new"))
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); got[len(got)-1] != "new" || len(got) != 6 {
			t.Fatalf("after new: %q", got)
		}
		if got := inLocal.got(); got[len(got)-1] != "new" || len(got) != 6 {
			t.Fatalf("local after new: %q", got)
		}
		// A volatile remote subscriber gets nothing old.
		inV := &inbox{t: t}
		mustSub(t, b, "/latched", reliable, inV)
		time.Sleep(time.Second)
		synctest.Wait()
		if len(inV.got()) != 0 {
			t.Fatalf("volatile got %q", inV.got())
		}
	})
}

func TestLocalDeliveryNoSocket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, func(c *Config) { c.Multicast = MulticastOff; c.ProbeParticipants = 1 })
		defer a.Close()
		in := &inbox{t: t}
		mustSub(t, a, "/local", reliable, in)
		pub := mustPub(t, a, "/local", reliable, nil)
		before := a.Stats().Sent
		pub.Publish(str("direct"))
		// Delivered before Publish returns, without a datagram.
		if got := in.got(); !slices.Equal(got, []string{"direct"}) {
			t.Fatalf("got %q", got)
		}
		if a.Stats().Sent != before {
			t.Fatal("local delivery used the network")
		}
		if pub.MatchedSubscriptions() != 1 {
			t.Fatal("local match")
		}
	})
}

func TestNames(t *testing.T) {
	nw := udp.NewMemNetwork()
	synctest.Test(t, func(t *testing.T) {
		a := newMem(t, nw, nil)
		defer a.Close()
		if _, err := a.NewPublisher(node, "chatter", strType, reliable, rmw.EndpointOptions{}); err == nil {
			t.Fatal("relative topic accepted")
		}
		if _, err := a.NewPublisher(node, "/x", "bogus", reliable, rmw.EndpointOptions{}); err == nil {
			t.Fatal("bad type accepted")
		}
		p := mustPub(t, a, "/ns/chatter", reliable, nil).(*Publisher)
		if p.ed.TopicName != "rt/ns/chatter" || p.ed.TypeName != "std_msgs::msg::dds_::String_" {
			t.Fatalf("names %q %q", p.ed.TopicName, p.ed.TypeName)
		}
		if p.guid.Entity.Kind() != wire.EntityKindWriterNoKey {
			t.Fatalf("kind %x", p.guid.Entity.Kind())
		}
		s := mustSub(t, a, "/ns/chatter", reliable, &inbox{t: t}).(*Subscription)
		if s.guid.Entity.Kind() != wire.EntityKindReaderNoKey {
			t.Fatalf("kind %x", s.guid.Entity.Kind())
		}
		if a.prefix[0] != Vendor[0] || a.prefix[1] != Vendor[1] {
			t.Fatal("prefix")
		}
		a.Close()
		if _, err := a.NewPublisher(node, "/x", strType, reliable, rmw.EndpointOptions{}); err != ErrClosed {
			t.Fatalf("after close: %v", err)
		}
		if err := p.Publish(str("x")); err == nil {
			t.Fatal("publish after close")
		}
	})
}

// TestEventCallbackReentrant: an OnEvent function may call the transport.
func TestEventCallbackReentrant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		var pub rmw.Publisher
		var extra rmw.Publisher
		var seen []rmw.EventKind
		onEvent := func(e rmw.Event) {
			seen = append(seen, e.Kind)
			if e.Kind == rmw.EventMatched && extra == nil {
				_ = pub.MatchedSubscriptions()
				var err error
				extra, err = a.NewPublisher(node, "/reentrant", strType, reliable, rmw.EndpointOptions{})
				if err != nil {
					t.Error(err)
				}
			}
		}
		pub = mustPub(t, a, "/reentrant", reliable, nil)
		if _, err := a.NewSubscription(node, "/reentrant", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{OnEvent: onEvent}); err != nil {
			t.Fatal(err)
		}
		if extra == nil || len(seen) != 2 || seen[0] != rmw.EventMatched || seen[1] != rmw.EventMatched {
			t.Fatalf("events %v", seen)
		}
	})
}

// TestDeliverMayPublish: a deliver function may publish (an echo server
// without a goroutine of its own), and may close its own subscription.
func TestDeliverMayPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		ping := mustPub(t, a, "/ping", reliable, nil)
		pong := mustPub(t, b, "/pong", reliable, nil)
		var sub rmw.Subscription
		n := 0
		sub, err := b.NewSubscription(node, "/ping", strType, reliable, func(s rmw.Sample) {
			if err := pong.Publish(s.Data); err != nil {
				t.Error(err)
			}
			if n++; n == 5 {
				sub.Close()
			}
		}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		in := &inbox{t: t}
		mustSub(t, a, "/pong", reliable, in)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		for _, s := range seq("p", 8) {
			ping.Publish(str(s))
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, seq("p", 5)) {
			t.Fatalf("echoed %q", got)
		}
	})
}

// TestManyParticipants: five participants on one network, each publishing
// and subscribing on one topic, all see each other.
func TestManyParticipants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		const n = 5
		var trs []*Transport
		var pubs []rmw.Publisher
		var ins []*inbox
		for i := 0; i < n; i++ {
			tr := newMem(t, nw, func(c *Config) { c.ProbeParticipants = 8; c.MaxParticipantID = 8 })
			defer tr.Close()
			if tr.ParticipantID() != i {
				t.Fatalf("participant %d got id %d", i, tr.ParticipantID())
			}
			trs = append(trs, tr)
			in := &inbox{t: t}
			ins = append(ins, in)
			mustSub(t, tr, "/all", reliable, in)
			pubs = append(pubs, mustPub(t, tr, "/all", reliable, nil))
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for i, p := range pubs {
			if p.MatchedSubscriptions() != n {
				t.Fatalf("publisher %d matched %d", i, p.MatchedSubscriptions())
			}
			p.Publish(str(fmt.Sprint(i)))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		for i, in := range ins {
			got := in.got()
			slices.Sort(got)
			if !slices.Equal(got, []string{"0", "1", "2", "3", "4"}) {
				t.Fatalf("participant %d got %q", i, got)
			}
		}
		if got := trs[0].RemoteParticipants(); len(got) != n-1 {
			t.Fatalf("participants %v", got)
		}
	})
}

// TestParticipantsBeyondIDs: when every participant id is taken, a
// participant binds any free ports (ParticipantID -1), as Cyclone does
// without a participant index, and still discovers and is discovered (the
// 33rd idle node on a host failed to start).
func TestParticipantsBeyondIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		const n = 4
		var pubs []rmw.Publisher
		for i := 0; i < n; i++ {
			tr := newMem(t, nw, func(c *Config) { c.ProbeParticipants = 2; c.MaxParticipantID = 1 })
			defer tr.Close()
			if want := min(i, 2); (want < 2 && tr.ParticipantID() != want) || (want == 2 && tr.ParticipantID() != -1) {
				t.Fatalf("participant %d got id %d", i, tr.ParticipantID())
			}
			in := &inbox{t: t}
			mustSub(t, tr, "/all", reliable, in)
			pubs = append(pubs, mustPub(t, tr, "/all", reliable, nil))
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for i, p := range pubs {
			if p.MatchedSubscriptions() != n {
				t.Fatalf("publisher %d matched %d", i, p.MatchedSubscriptions())
			}
		}
	})
}
