package rmw_test

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/zenoh"
	"github.com/nros-go/nros/rmw/zenoh/config"
)

// The conformance of every transport to rmw's contract, one table over
// transports: each case gets two transports that see each other (the same
// one twice for an in-process transport) and checks what the layers above
// rely on. Everything runs in a synctest bubble on in-memory networks: no
// socket, virtual time.

type transportCase struct {
	name string
	// pair returns two transports that see each other; both are closed
	// by the test's cleanup.
	pair func(t *testing.T) (a, b rmw.Transport)
	// incompatible: the transport reports (and refuses) a best-effort
	// writer to a reliable reader; zenoh (as rmw_zenoh) delivers and
	// reports nothing.
	incompatible bool
}

var memSeq atomic.Int64

// zenohMemConfig is a zenoh transport configuration with no socket: it
// listens on mem/<listen> when listen is set, connects to mem/<connect>
// when connect is set.
func zenohMemConfig(listen, connect string) zenoh.Config {
	zc := config.Default()
	l, c := []config.Endpoint{}, []config.Endpoint{}
	if listen != "" {
		l = append(l, config.Endpoint{Protocol: "mem", Address: listen})
	}
	if connect != "" {
		c = append(c, config.Endpoint{Protocol: "mem", Address: connect})
	}
	zc.Listen.Endpoints = config.Unique(l)
	zc.Connect.Endpoints = config.Unique(c)
	return zenoh.Config{Zenoh: zc, Logf: func(string, ...any) {}}
}

func mustClose(t *testing.T, c interface{ Close() error }) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

var transportCases = []transportCase{
	{name: "intra", incompatible: true, pair: func(t *testing.T) (rmw.Transport, rmw.Transport) {
		tr := intra.New()
		mustClose(t, tr)
		return tr, tr
	}},
	{name: "rtps", incompatible: true, pair: func(t *testing.T) (rmw.Transport, rmw.Transport) {
		nw := udp.NewMemNetwork()
		cfg := rtps.Config{Network: nw, ProbeParticipants: 4, MaxParticipantID: 4, Logf: func(string, ...any) {}}
		a, err := rtps.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, a)
		b, err := rtps.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, b)
		return a, b
	}},
	{name: "zenoh", pair: func(t *testing.T) (rmw.Transport, rmw.Transport) {
		name := fmt.Sprintf("conformance-%d", memSeq.Add(1))
		a, err := zenoh.New(zenohMemConfig(name, ""))
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, a)
		b, err := zenoh.New(zenohMemConfig("", name))
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, b)
		return a, b
	}},
	{name: "zenoh-local", pair: func(t *testing.T) (rmw.Transport, rmw.Transport) {
		a, err := zenoh.New(zenohMemConfig("", ""))
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, a)
		return a, a
	}},
}

func forTransports(t *testing.T, f func(t *testing.T, tc transportCase, a, b rmw.Transport)) {
	for _, tc := range transportCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := tc.pair(t)
				f(t, tc, a, b)
			})
		})
	}
}

const (
	strType = "std_msgs/msg/String"
	strHash = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
	svcReq  = "std_srvs/srv/SetBool_Request"
	svcResp = "std_srvs/srv/SetBool_Response"
	svcHash = "RIHS01_34f5a7b31b6a1c1e5a3b30a7a0e9b5f3b2c10a4d9e9e6b1c4d4e2c33f1f0a9e1"
)

var (
	nodeA = rmw.NodeInfo{Name: "alice", Namespace: "/", Enclave: "/"}
	nodeB = rmw.NodeInfo{Name: "bob", Namespace: "/ns", Enclave: "/"}
)

// cdrString is a std_msgs/String sample: encapsulation header and string.
func cdrString(s string) []byte {
	b := []byte{0, 1, 0, 0}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)+1))
	b = append(append(b, s...), 0)
	for len(b)%4 != 0 { // DDS pads samples to 4 bytes
		b = append(b, 0)
	}
	return b
}

// cdrText is the string of a cdrString sample.
func cdrText(b []byte) string {
	n := binary.LittleEndian.Uint32(b[4:])
	return string(b[8 : 8+n-1])
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type inbox struct {
	mu   sync.Mutex
	got  []rmw.Sample
	evs  []rmw.Event
	resp []rmw.Response
}

func (b *inbox) deliver(s rmw.Sample) {
	b.mu.Lock()
	s.Data = append([]byte(nil), s.Data...)
	b.got = append(b.got, s)
	b.mu.Unlock()
}

func (b *inbox) event(e rmw.Event) { b.mu.Lock(); b.evs = append(b.evs, e); b.mu.Unlock() }

func (b *inbox) samples() []rmw.Sample {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]rmw.Sample(nil), b.got...)
}

func (b *inbox) events() []rmw.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]rmw.Event(nil), b.evs...)
}

func countKind(evs []rmw.Event, k rmw.EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

var reliable10 = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}

// Pub/sub: a publisher on one transport reaches a subscription on the
// other in order, with the writer's timestamp and the GID the graph shows;
// both see the match.
func TestConformancePubSub(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		var in, pubEv inbox
		sub, err := b.NewSubscription(nodeB, "/chatter", strType, reliable10, in.deliver,
			rmw.EndpointOptions{TypeHash: strHash, OnEvent: in.event})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := a.NewPublisher(nodeA, "/chatter", strType, reliable10, rmw.EndpointOptions{TypeHash: strHash, OnEvent: pubEv.event})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the match", func() bool { return pub.MatchedSubscriptions() == 1 && sub.MatchedPublishers() == 1 })
		waitUntil(t, "matched events", func() bool {
			return countKind(in.events(), rmw.EventMatched) == 1 && countKind(pubEv.events(), rmw.EventMatched) == 1
		})
		for i := range 10 {
			if err := pub.Publish(cdrString(fmt.Sprint("hello ", i))); err != nil {
				t.Fatal(err)
			}
		}
		waitUntil(t, "10 samples", func() bool { return len(in.samples()) == 10 })
		var pubGID [16]byte
		for _, e := range b.Endpoints("/chatter") {
			if e.Publisher {
				pubGID = e.GID
			}
		}
		if pubGID == ([16]byte{}) {
			t.Fatalf("the subscriber's graph has no publisher on /chatter: %+v", b.Endpoints("/chatter"))
		}
		for i, s := range in.samples() {
			if string(s.Data) != string(cdrString(fmt.Sprint("hello ", i))) {
				t.Fatalf("sample %d: %q", i, s.Data)
			}
			if s.SourceTimestamp == 0 || s.PublisherGID != pubGID {
				t.Fatalf("sample %d: timestamp %d gid %x, want the graph's %x", i, s.SourceTimestamp, s.PublisherGID, pubGID)
			}
		}
		// the publisher goes: the subscription is told
		if err := pub.Close(); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the unmatched event", func() bool { return countKind(in.events(), rmw.EventUnmatched) == 1 })
		waitUntil(t, "no publisher matched", func() bool { return sub.MatchedPublishers() == 0 })
		if err := pub.Publish(cdrString("late")); err == nil {
			t.Error("Publish after Close succeeded")
		}
	})
}

// A best-effort writer and a reliable reader: DDS refuses the pair and
// says why; zenoh (rmw_zenoh) delivers and says nothing.
func TestConformanceIncompatibleQoS(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		var in inbox
		if _, err := b.NewSubscription(nodeB, "/qos", strType, reliable10, in.deliver, rmw.EndpointOptions{TypeHash: strHash, OnEvent: in.event}); err != nil {
			t.Fatal(err)
		}
		be := reliable10
		be.Reliability = rmw.BestEffort
		pub, err := a.NewPublisher(nodeA, "/qos", strType, be, rmw.EndpointOptions{TypeHash: strHash})
		if err != nil {
			t.Fatal(err)
		}
		if tc.incompatible {
			waitUntil(t, "the incompatible-QoS event", func() bool { return countKind(in.events(), rmw.EventIncompatibleQoS) > 0 })
			for _, e := range in.events() {
				if e.Kind == rmw.EventIncompatibleQoS && e.Policy != "RELIABILITY" {
					t.Fatalf("policy %q", e.Policy)
				}
			}
			return
		}
		waitUntil(t, "the matched event", func() bool { return countKind(in.events(), rmw.EventMatched) == 1 })
		waitUntil(t, "a sample", func() bool { _ = pub.Publish(cdrString("x")); return len(in.samples()) > 0 })
		if n := countKind(in.events(), rmw.EventIncompatibleQoS); n != 0 {
			t.Fatalf("%d incompatible-QoS events", n)
		}
		if pub.MatchedSubscriptions() != 0 {
			t.Fatalf("MatchedSubscriptions counts an incompatible reader: %d", pub.MatchedSubscriptions())
		}
	})
}

// Transient local: a subscription that joins late gets the newest Depth
// samples, oldest first, then the live ones, each once.
func TestConformanceTransientLocalLateJoiner(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		tl := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 5}
		pub, err := a.NewPublisher(nodeA, "/latched", strType, tl, rmw.EndpointOptions{TypeHash: strHash})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if err := pub.Publish(cdrString(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		var in inbox
		if _, err := b.NewSubscription(nodeB, "/latched", strType, tl, in.deliver, rmw.EndpointOptions{TypeHash: strHash}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the history", func() bool { return len(in.samples()) >= 5 })
		if err := pub.Publish(cdrString("8")); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the live sample", func() bool { return len(in.samples()) >= 6 })
		time.Sleep(2 * time.Second)
		var got []string
		for _, s := range in.samples() {
			got = append(got, cdrText(s.Data))
		}
		if fmt.Sprint(got) != "[3 4 5 6 7 8]" {
			t.Fatalf("late joiner got %v, want [3 4 5 6 7 8]", got)
		}
		// a volatile subscription gets no history
		var vol inbox
		if _, err := b.NewSubscription(nodeB, "/latched", strType, reliable10, vol.deliver, rmw.EndpointOptions{TypeHash: strHash}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if n := len(vol.samples()); n != 0 {
			t.Fatalf("a volatile subscription got %d samples of history", n)
		}
	})
}

// Services: a client on one transport calls a server on the other; each
// response comes back to the request it answers, the server sees the
// client's id, and availability follows the server.
func TestConformanceServices(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		var srv rmw.ServiceServer
		var mu sync.Mutex
		var ids []rmw.RequestID
		srv, err := a.NewServiceServer(nodeA, "/set", svcReq, svcResp, rmw.ServicesDefaultQoS, func(r rmw.Request) {
			mu.Lock()
			ids = append(ids, r.ID)
			mu.Unlock()
			data := append(append([]byte(nil), r.Data...), 'R', 0, 0, 0)
			id := r.ID
			go srv.SendResponse(id, data) // a server answers later, from any goroutine
		}, rmw.EndpointOptions{TypeHash: svcHash})
		if err != nil {
			t.Fatal(err)
		}
		var cl inbox
		client, err := b.NewServiceClient(nodeB, "/set", svcReq, svcResp, rmw.ServicesDefaultQoS, func(r rmw.Response) {
			cl.mu.Lock()
			r.Data = append([]byte(nil), r.Data...)
			cl.resp = append(cl.resp, r)
			cl.mu.Unlock()
		}, rmw.EndpointOptions{TypeHash: svcHash, OnEvent: cl.event})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the service", client.ServiceAvailable)
		want := map[int64]string{}
		for i := range 3 {
			req := []byte{0, 1, 0, 0, byte(i), 0, 0, 0}
			seq, err := client.SendRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			want[seq] = string(append(req, 'R', 0, 0, 0))
		}
		waitUntil(t, "3 responses", func() bool { cl.mu.Lock(); defer cl.mu.Unlock(); return len(cl.resp) == 3 })
		cl.mu.Lock()
		for _, r := range cl.resp {
			if want[r.Seq] != string(r.Data) {
				t.Errorf("response to %d: %q, want %q", r.Seq, r.Data, want[r.Seq])
			}
		}
		cl.mu.Unlock()
		mu.Lock()
		if len(ids) != 3 || ids[0].Writer != ids[2].Writer || ids[0].Seq == ids[1].Seq {
			t.Errorf("request ids %+v", ids)
		}
		mu.Unlock()
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the service to go", func() bool { return !client.ServiceAvailable() })
		if tc.name != "rtps" { // rtps raises no client events
			waitUntil(t, "client events", func() bool {
				return countKind(cl.events(), rmw.EventMatched) >= 1 && countKind(cl.events(), rmw.EventUnmatched) >= 1
			})
		}
	})
}

// The graph: both nodes, their endpoints with the right flags and types,
// the services, and a change signal.
func TestConformanceGraph(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		changed := b.GraphChanged()
		if _, err := a.NewPublisher(nodeA, "/g", strType, reliable10, rmw.EndpointOptions{TypeHash: strHash}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.NewSubscription(nodeB, "/g", strType, reliable10, func(rmw.Sample) {}, rmw.EndpointOptions{TypeHash: strHash}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.NewServiceServer(nodeA, "/svc", svcReq, svcResp, rmw.ServicesDefaultQoS, func(rmw.Request) {}, rmw.EndpointOptions{TypeHash: svcHash}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatal("GraphChanged did not fire")
		}
		waitUntil(t, "both endpoints in b's graph, with their nodes", func() bool {
			eps := b.Endpoints("/g")
			return len(eps) == 2 && eps[0].Node.Name != "" && eps[1].Node.Name != ""
		})
		for _, e := range b.Endpoints("/g") {
			if e.Type != strType || e.Topic != "/g" {
				t.Errorf("endpoint %+v", e)
			}
			wantLocal := !e.Publisher || tc.name == "intra" || tc.name == "zenoh-local"
			if e.Local != wantLocal {
				t.Errorf("endpoint %+v: Local %v", e, e.Local)
			}
			wantNode := nodeB
			if e.Publisher {
				wantNode = nodeA
			}
			if e.Node.Name != wantNode.Name || e.Node.Namespace != wantNode.Namespace {
				t.Errorf("endpoint %+v: node %+v", e, e.Node)
			}
			if e.QoS.Reliability != rmw.Reliable || e.QoS.Depth != 10 {
				t.Errorf("endpoint %+v: QoS", e)
			}
		}
		waitUntil(t, "both nodes", func() bool {
			n := 0
			for _, x := range b.Nodes() {
				if x.Name == "alice" && x.Namespace == "/" || x.Name == "bob" && x.Namespace == "/ns" {
					n++
				}
			}
			return n == 2
		})
		waitUntil(t, "the service", func() bool {
			for _, s := range b.Services() {
				if s.Name == "/svc" && s.Type == "std_srvs/srv/SetBool" && len(s.ServerNodes) == 1 && s.ServerNodes[0].Name == "alice" {
					return true
				}
			}
			return false
		})
		topics := rmw.Topics(b)
		found := false
		for _, ti := range topics {
			if ti.Name == "/g" && ti.Type == strType && ti.Publishers == 1 && ti.Subscriptions == 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("topics %+v", topics)
		}
	})
}

// Close: once a subscription's Close returns, deliver is not called; once
// a transport's Close returns, nothing of it is.
func TestConformanceClose(t *testing.T) {
	forTransports(t, func(t *testing.T, tc transportCase, a, b rmw.Transport) {
		var closed atomic.Bool
		var after atomic.Int32
		var n atomic.Int32
		sub, err := b.NewSubscription(nodeB, "/c", strType, reliable10, func(rmw.Sample) {
			n.Add(1)
			if closed.Load() {
				after.Add(1)
			}
		}, rmw.EndpointOptions{TypeHash: strHash})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := a.NewPublisher(nodeA, "/c", strType, reliable10, rmw.EndpointOptions{TypeHash: strHash})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the match", func() bool { return pub.MatchedSubscriptions() == 1 })
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = pub.Publish(cdrString("x"))
				time.Sleep(time.Millisecond)
			}
		}()
		waitUntil(t, "samples", func() bool { return n.Load() > 5 })
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		closed.Store(true)
		time.Sleep(100 * time.Millisecond)
		close(stop)
		wg.Wait()
		if after.Load() != 0 {
			t.Fatalf("%d deliveries after Close returned", after.Load())
		}
		if err := sub.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("second transport Close: %v", err)
		}
	})
}
