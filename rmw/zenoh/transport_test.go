package zenoh

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

const (
	hashString = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
	hashAdd    = "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
	zidListen  = "aac3178e146ba6f1fc6e6a4085e77f21"
)

var memSeq atomic.Int64

func memName(t *testing.T) string { return fmt.Sprintf("%s-%d", t.Name(), memSeq.Add(1)) }

// memConfig is a configuration with no socket: listen on mem/listen and
// connect to mem/connect when they are set.
func memConfig(listen, connect string) Config {
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
	return Config{Zenoh: zc, WallNow: func() int64 { return 1_700_000_000_123_456_789 }}
}

func newT(t *testing.T, cfg Config) *Transport {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// observer is a bare zenoh peer that records what a transport declares
// and puts.
type observer struct {
	session.NopHandler
	mu      sync.Mutex
	tokens  []string
	gone    []string
	pushes  []*sample
	replies []*wire.Put
	finals  int
	decls   []string // kinds, in the order declared
	s       *session.Session
}

func (o *observer) Declared(_ *session.Face, d session.Decl) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !d.Undeclare {
		o.decls = append(o.decls, d.Kind.String())
	}
	if d.Kind != session.KindToken {
		return
	}
	if d.Undeclare {
		o.gone = append(o.gone, d.Key)
	} else {
		o.tokens = append(o.tokens, d.Key)
	}
}

func (o *observer) Push(_ *session.Face, key string, m *wire.Push, _ bool) {
	put := m.Body.(*wire.Put).Clone() // the session reuses it
	o.mu.Lock()
	o.pushes = append(o.pushes, &sample{key: key, payload: put.Payload, attachment: put.Attachment, ts: put.Timestamp, src: put.SourceInfo})
	o.mu.Unlock()
}

func (o *observer) Response(_ uint32, _ *session.Face, _ string, m *wire.Response) {
	if r, ok := m.Body.(*wire.Reply); ok {
		p := r.Body.(*wire.Put)
		o.mu.Lock()
		o.replies = append(o.replies, &wire.Put{Payload: slices.Clone(p.Payload), Attachment: slices.Clone(p.Attachment)})
		o.mu.Unlock()
	}
}

func (o *observer) ResponseFinal(uint32) { o.mu.Lock(); o.finals++; o.mu.Unlock() }

func (o *observer) hasToken(tok string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Contains(o.tokens, tok)
}

func openObserver(t *testing.T, listen string) *observer {
	t.Helper()
	o := &observer{}
	s, err := session.Open(session.Config{Mode: wire.Peer, Listen: []string{"mem/" + listen}}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.s = s
	t.Cleanup(func() { s.Close() })
	return o
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var default10 = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}

// The tokens a transport declares are rmw_zenoh's, byte for byte, with ids
// drawn from one counter (node first), and its samples carry the 33-byte
// attachment with the gid of the publisher's token.
func TestTokensAndAttachmentsOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		o := openObserver(t, name)
		cfg := memConfig("", name)
		cfg.Zenoh.ID = zidListen
		tr := newT(t, cfg)
		if tr.ZID() != zidListen {
			t.Fatalf("zid %s", tr.ZID())
		}
		node := rmw.NodeInfo{Name: "talker", Namespace: "/"}
		pub, err := tr.NewPublisher(node, "/chatter", "std_msgs/msg/String", rmw.QoS{Depth: 7}, rmw.EndpointOptions{TypeHash: hashString})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := tr.NewServiceServer(node, "/add_two_ints", "example_interfaces/srv/AddTwoInts_Request", "example_interfaces/srv/AddTwoInts_Response",
			default10, func(rmw.Request) {}, rmw.EndpointOptions{TypeHash: hashAdd})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"@ros2_lv/0/" + zidListen + "/0/0/NN/%/%/talker",
			"@ros2_lv/0/" + zidListen + "/0/1/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/" + hashString + "/::,7:,:,:,,",
			"@ros2_lv/0/" + zidListen + "/0/2/SS/%/%/talker/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/" + hashAdd + "/::,10:,:,:,,",
		}
		for _, w := range want {
			eventually(t, "token "+w, func() bool { return o.hasToken(w) })
		}
		if got := pub.(*Publisher).Token(); got != want[1] {
			t.Fatalf("publisher token %s", got)
		}
		// a subscriber on the observer makes the transport put to it
		if _, err := o.s.DeclareSubscriber("0/chatter/std_msgs::msg::dds_::String_/" + hashString); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a sample", func() bool {
			_ = pub.Publish([]byte{0, 1, 0, 0, 1, 0, 0, 0, 0})
			o.mu.Lock()
			defer o.mu.Unlock()
			return len(o.pushes) >= 2
		})
		o.mu.Lock()
		p0, p1 := o.pushes[0], o.pushes[1]
		o.mu.Unlock()
		for i, p := range []*sample{p0, p1} {
			a, layout, err := ros.ParseAttachment(p.attachment)
			if err != nil || layout != ros.LayoutCurrent || len(p.attachment) != ros.AttachmentSize {
				t.Fatalf("attachment %x: %v", p.attachment, err)
			}
			if a.GID != ros.TokenGID(want[1]) || a.Timestamp != 1_700_000_000_123_456_789 {
				t.Fatalf("attachment %+v", a)
			}
			if p.ts == nil || p.ts.ID != tr.zid {
				t.Fatalf("no zenoh timestamp of the session (rmw_zenoh's config timestamps): %+v", p.ts)
			}
			if i == 1 && a.Seq <= 1 {
				t.Fatalf("sequence numbers do not go up: %d", a.Seq)
			}
		}
		// a query to the service with rmw_zenoh's attachment gets one reply
		// with the request's id and the end of the query
		client := ros.Attachment{Seq: 7, Timestamp: 1, GID: [16]byte{1, 2, 3}}
		handled := make(chan rmw.RequestID, 1)
		srv.Close()
		srv, err = tr.NewServiceServer(node, "/add_two_ints", "example_interfaces/srv/AddTwoInts_Request", "example_interfaces/srv/AddTwoInts_Response",
			default10, func(r rmw.Request) { handled <- r.ID }, rmw.EndpointOptions{TypeHash: hashAdd})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		key := "0/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/" + hashAdd
		if _, err := o.s.Request(key, &wire.Query{Consolidation: wire.ConsolidationNone, Attachment: client.Bytes(),
			Body: &wire.QueryBody{Payload: []byte{0, 1, 0, 0}}}, session.RequestOptions{Target: wire.TargetAllComplete}); err != nil {
			t.Fatal(err)
		}
		id := <-handled
		if id.Seq != 7 || id.Writer != client.GID {
			t.Fatalf("request id %+v", id)
		}
		if err := srv.SendResponse(id, []byte{0, 1, 0, 0, 42}); err != nil {
			t.Fatal(err)
		}
		if err := srv.SendResponse(id, []byte{0, 1, 0, 0, 42}); err == nil {
			t.Fatal("a second response to the same request was sent")
		}
		eventually(t, "the reply and its final", func() bool { o.mu.Lock(); defer o.mu.Unlock(); return o.finals == 1 })
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.replies) != 1 {
			t.Fatalf("%d replies", len(o.replies))
		}
		ra, _, err := ros.ParseAttachment(o.replies[0].Attachment)
		if err != nil || ra.Seq != 7 || ra.GID != client.GID || string(o.replies[0].Payload) != "\x00\x01\x00\x00\x2a" {
			t.Fatalf("reply %+v %v", ra, err)
		}
	})
}

// On Humble the type-hash field is TypeHashNotSupported in keys and
// tokens, whatever hash the type has.
func TestHumbleKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := memConfig("", "")
		cfg.Distro = ros.DistroHumble
		tr := newT(t, cfg)
		var got atomic.Int32
		sub, err := tr.NewSubscription(rmw.NodeInfo{Name: "l"}, "/chatter", "std_msgs/msg/String", default10,
			func(rmw.Sample) { got.Add(1) }, rmw.EndpointOptions{TypeHash: hashString})
		if err != nil {
			t.Fatal(err)
		}
		s := sub.(*Subscription)
		if s.key != "0/chatter/std_msgs::msg::dds_::String_/TypeHashNotSupported" || !strings.Contains(s.Token(), "/TypeHashNotSupported/") {
			t.Fatalf("key %s token %s", s.key, s.Token())
		}
	})
}

// A sample without rmw_zenoh's attachment is dropped and counted, as
// rmw_zenoh drops it.
func TestSampleWithoutAttachmentDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		o := openObserver(t, name)
		tr := newT(t, memConfig("", name))
		var got atomic.Int32
		key := "0/chatter/std_msgs::msg::dds_::String_/" + hashString
		if _, err := tr.NewSubscription(rmw.NodeInfo{Name: "l"}, "/chatter", "std_msgs/msg/String", default10,
			func(rmw.Sample) { got.Add(1) }, rmw.EndpointOptions{TypeHash: hashString}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the subscriber on the observer", func() bool { return o.s.Matching(key) })
		good := ros.Attachment{Seq: 1, Timestamp: 5, GID: [16]byte{9}}.Bytes()
		for _, att := range [][]byte{nil, {1, 2, 3}, good} {
			o.s.Put(key, &wire.Put{Payload: []byte{0, 1, 0, 0}, Attachment: att}, session.PutOptions{})
		}
		eventually(t, "the good sample", func() bool { return got.Load() == 1 })
		synctest.Wait()
		if got.Load() != 1 || tr.Stats.BadAttachment.Load() != 2 {
			t.Fatalf("delivered %d, counted %d bad", got.Load(), tr.Stats.BadAttachment.Load())
		}
	})
}

// The graph learns a peer's tokens, also malformed ones counted apart,
// and forgets them when the peer goes.
func TestGraphFromPeerTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		o := openObserver(t, name)
		tr := newT(t, memConfig("", name))
		changed := tr.GraphChanged()
		pico := []string{
			"@ros2_lv/0/f00d/0/0/NN/%/%/zclockpub",
			"@ros2_lv/0/f00d/0/1/MP/%/%/zclockpub/%clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564/2::,1:,:,:,,",
			"@ros2_lv/0/f00d/0/2/SS/%/%/zclockpub/%zclockpub%get_parameters/rcl_interfaces::srv::dds_::GetParameters_/TypeHashNotSupported/::,1000:,:,:,,",
			"@ros2_lv/0/f00d/0/3/XX/%/%/bad",
			"@ros2_lv/1/f00d/0/0/NN/%/%/otherdomain",
		}
		var ids []uint32
		for _, k := range pico {
			id, err := o.s.DeclareToken(k)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		<-changed
		eventually(t, "the peer's publisher", func() bool { return len(tr.Endpoints("/clock")) == 1 })
		synctest.Wait() // every token handled, the bad one declared after it too
		e := tr.Endpoints("/clock")[0]
		if e.Type != "rosgraph_msgs/msg/Clock" || !e.Publisher || e.Local || e.Node.Name != "zclockpub" ||
			e.QoS.Reliability != rmw.BestEffort || e.QoS.Depth != 1 || e.GID != ros.TokenGID(pico[1]) {
			t.Fatalf("endpoint %+v", e)
		}
		if n := tr.Nodes(); len(n) != 1 || n[0].Name != "zclockpub" {
			t.Fatalf("nodes %+v", n)
		}
		if s := tr.Services(); len(s) != 1 || s[0].Name != "/zclockpub/get_parameters" || s[0].Type != "rcl_interfaces/srv/GetParameters" {
			t.Fatalf("services %+v", s)
		}
		if tr.Stats.BadToken.Load() != 1 {
			t.Fatalf("bad tokens %d", tr.Stats.BadToken.Load())
		}
		if err := o.s.UndeclareToken(ids[1]); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the publisher to go", func() bool { return len(tr.Endpoints("/clock")) == 0 })
		o.s.Close()
		eventually(t, "the node to go", func() bool { return len(tr.Nodes()) == 0 })
	})
}

// A client's configuration without a router fails to open, naming it; a
// peer opens and warns as rmw_zenoh does while no router answers.
func TestNoRouter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := memConfig("", "nobody-"+memName(t))
		cfg.Zenoh.Mode = config.ModeClient
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "no router") {
			t.Fatalf("client without router: %v", err)
		}
		var mu sync.Mutex
		var warns []string
		cfg = memConfig("", "nobody-"+memName(t))
		cfg.RouterCheckAttempts = 2
		cfg.Warnf = func(f string, a ...any) { mu.Lock(); warns = append(warns, fmt.Sprintf(f, a...)); mu.Unlock() }
		tr := newT(t, cfg)
		time.Sleep(3 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		if len(warns) != 3 || warns[0] != config.NoRouterWarning || warns[2] != config.NoRouterGiveUp(2) {
			t.Fatalf("warnings %q", warns)
		}
		_ = tr
	})
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	noFile := func(string) ([]byte, error) { return nil, errors.New("no file") }
	c, err := configFromEnv(env(map[string]string{"ROS_DOMAIN_ID": "7", "ROS_DISTRO": "humble"}), noFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Domain != 7 || c.Distro != ros.DistroHumble || c.RouterCheckAttempts != 1 || c.Zenoh.Mode != config.ModePeer {
		t.Fatalf("%+v", c)
	}
	if eps := c.Zenoh.ConnectEndpoints(); len(eps) != 1 || eps[0].String() != "tcp/localhost:7447" {
		t.Fatalf("connect %v", eps)
	}
	c, err = configFromEnv(env(map[string]string{config.EnvOverride: `mode="client";connect/endpoints=["tcp/127.0.0.1:7448"]`,
		config.EnvRouterCheckAttempts: "-1"}), noFile)
	if err != nil || c.Zenoh.Mode != config.ModeClient || c.RouterCheckAttempts != 0 {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []map[string]string{
		{"ROS_DOMAIN_ID": "x"},
		{config.EnvOverride: `transport/link/tx/batch_size="big"`},
		{config.EnvOverride: `no/such/key=1`},
		{config.EnvSessionConfig: "/nonexistent.json5"},
	} {
		if _, err := configFromEnv(env(bad), noFile); err == nil {
			t.Errorf("%v: no error", bad)
		} else if k := slices.Collect(func(yield func(string) bool) {
			for k := range bad {
				yield(k)
			}
		}); !strings.Contains(err.Error(), strings.SplitN(bad[k[0]], "=", 2)[0]) && !strings.Contains(err.Error(), k[0]) {
			t.Errorf("%v: error %q names neither the variable nor the key", bad, err)
		}
	}
	if _, err := New(Config{Zenoh: &config.Config{Mode: config.ModeRouter}}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("router mode: %v", err)
	}
}

// The parameters of a history query come from outside: no input makes the
// cache panic or answer out of its range.
func FuzzCacheQueryParams(f *testing.F) {
	for _, s := range []string{"_max=3", "_sn=2..4", "_sn=..", "_sn=5", "_max=0;_sn=1..", "_time=[..]", ";;=", "_sn=4294967295..0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		tr := &Transport{cfg: Config{WallNow: func() int64 { return 0 }}}
		a := &advPub{t: tr, cfg: ros.AdvancedPublisher{CacheDepth: 4, Sequenced: true}}
		for range 6 {
			a.record(&wire.Put{Payload: []byte{1}})
		}
		var n int
		o := &outQuery{onReply: func(string, *wire.Put) { n++ }}
		o.pending.Store(1)
		a.onQuery(&query{params: params, out: o})
		if n > 4 {
			t.Fatalf("%d replies from a cache of 4", n)
		}
	})
}

// A reliable transient-local subscription that misses samples (here: its
// subscriber is taken away for a while) gets them back from the
// publisher's cache when the next sample shows the gap, or the publisher's
// heartbeat does, in order, each once, as zenoh-ext's sample-miss recovery
// does.
func TestTransientLocalRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		a := newT(t, memConfig(name, ""))
		b := newT(t, memConfig("", name))
		synctest.Wait()
		tl := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 10}
		pub, err := a.NewPublisher(rmw.NodeInfo{Name: "p"}, "/tl", "std_msgs/msg/String", tl, rmw.EndpointOptions{TypeHash: hashString})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got []byte
		sub, err := b.NewSubscription(rmw.NodeInfo{Name: "s"}, "/tl", "std_msgs/msg/String", tl, func(s rmw.Sample) {
			mu.Lock()
			got = append(got, s.Data[4])
			mu.Unlock()
		}, rmw.EndpointOptions{TypeHash: hashString})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		send := func(i byte) {
			if err := pub.Publish([]byte{0, 1, 0, 0, i}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		for i := range byte(3) {
			send(i)
		}
		s := sub.(*Subscription)
		b.mu.Lock()
		b.removeSubscriberLocked(s.sub) // the next samples are lost on the way
		b.mu.Unlock()
		for i := byte(3); i < 6; i++ {
			send(i)
		}
		b.mu.Lock()
		b.addSubscriberLocked(s.sub)
		b.mu.Unlock()
		send(6)
		time.Sleep(time.Second)
		mu.Lock()
		if fmt.Sprint(got) != "[0 1 2 3 4 5 6]" {
			t.Fatalf("delivered %v, want 0..6 in order, each once", got)
		}
		mu.Unlock()
		// the last samples lost, nothing after them: the heartbeat tells
		b.mu.Lock()
		b.removeSubscriberLocked(s.sub)
		b.mu.Unlock()
		send(7)
		send(8)
		b.mu.Lock()
		b.addSubscriberLocked(s.sub)
		b.mu.Unlock()
		time.Sleep(2 * ros.HeartbeatPeriod)
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(got) != "[0 1 2 3 4 5 6 7 8]" {
			t.Fatalf("delivered %v, want 7 and 8 recovered on the heartbeat", got)
		}
	})
}

// A subscription that knows no type hash (a dynamically typed one: nros
// bag record, topic echo, clock monitor) hears the type's publishers
// whatever hash they carry (a Jazzy rmw_zenoh node's RIHS01 one, a hashless
// one's TypeHashNotSupported), local and remote: its key has '*' for the
// hash. Its token still says TypeHashNotSupported.
func TestHashlessSubscriptionHearsAnyHash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		a := newT(t, memConfig(name, ""))
		b := newT(t, memConfig("", name))
		var got atomic.Int32
		sub, err := b.NewSubscription(rmw.NodeInfo{Name: "rec"}, "/chatter", "std_msgs/msg/String", default10,
			func(rmw.Sample) { got.Add(1) }, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s := sub.(*Subscription); s.key != "0/chatter/std_msgs::msg::dds_::String_/*" || !strings.Contains(s.Token(), "/TypeHashNotSupported/") {
			t.Fatalf("key %s token %s", s.key, s.Token())
		}
		var pubs []rmw.Publisher
		for _, p := range []struct {
			tr   *Transport
			hash string
		}{{a, hashString}, {a, ""}, {b, hashString}} {
			pub, err := p.tr.NewPublisher(rmw.NodeInfo{Name: "talker"}, "/chatter", "std_msgs/msg/String", default10, rmw.EndpointOptions{TypeHash: p.hash})
			if err != nil {
				t.Fatal(err)
			}
			pubs = append(pubs, pub)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		for _, pub := range pubs {
			if err := pub.Publish([]byte{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := got.Load(); n != 3 {
			t.Fatalf("the hashless subscription heard %d of 3 samples", n)
		}
	})
}

// A service server declares its queryable before its SS token, as
// rmw_zenoh does: a peer that saw the token in the graph and queries at
// once must already know where the queryable is, or its query ends at once
// with no reply (a call that never returns; seen as lost calls in
// TestServiceSoakConcurrentCallers/zenoh).
func TestServerQueryableBeforeToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		o := openObserver(t, name)
		tr := newT(t, memConfig("", name))
		synctest.Wait()
		o.mu.Lock()
		o.decls = nil
		o.mu.Unlock()
		node := rmw.NodeInfo{Name: "adder", Namespace: "/"}
		if _, err := tr.NewServiceServer(node, "/add_two_ints", "example_interfaces/srv/AddTwoInts_Request", "example_interfaces/srv/AddTwoInts_Response",
			default10, func(rmw.Request) {}, rmw.EndpointOptions{TypeHash: hashAdd}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		o.mu.Lock()
		defer o.mu.Unlock()
		// the node's token and the queryable (the node's is declared with
		// its first endpoint), the server's token last
		if q := slices.Index(o.decls, "queryable"); len(o.decls) != 3 || q < 0 || o.decls[2] != "token" {
			t.Fatalf("declared %v, want the queryable before the server's token", o.decls)
		}
	})
}

// manualClock is a Clock that moves only when the test says.
type manualClock struct {
	mu    sync.Mutex
	now   int64
	waits map[*struct{}]manualWait
}

type manualWait struct {
	at int64
	ch chan struct{}
}

func (c *manualClock) Now() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *manualClock) After(d time.Duration) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waits == nil {
		c.waits = map[*struct{}]manualWait{}
	}
	k, ch := new(struct{}), make(chan struct{})
	c.waits[k] = manualWait{c.now + int64(d), ch}
	return ch, func() { c.mu.Lock(); delete(c.waits, k); c.mu.Unlock() }
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += int64(d)
	for k, w := range c.waits {
		if w.at <= c.now {
			close(w.ch)
			delete(c.waits, k)
		}
	}
}

// The session runs on Config.Clock too: a query that a peer's queryable
// never ends is given up when the transport's clock passes its timeout,
// not the runtime's (so a harness that owns time steps it).
func TestSessionRunsOnConfigClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName(t)
		o := openObserver(t, name) // its queryable never answers
		if _, err := o.s.DeclareQueryable("svc/**", true); err != nil {
			t.Fatal(err)
		}
		clk := &manualClock{}
		cfg := memConfig("", name)
		cfg.Clock = clk
		tr := newT(t, cfg)
		synctest.Wait()
		var ended atomic.Bool
		if err := tr.query("svc/x", "", nil, nil, wire.TargetAllComplete, time.Second, &outQuery{onFinal: func() { ended.Store(true) }}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if ended.Load() {
			t.Fatal("the query timed out on the runtime's clock")
		}
		clk.advance(time.Second)
		synctest.Wait()
		if !ended.Load() {
			t.Fatal("the query did not time out when the transport's clock passed its timeout")
		}
	})
}
