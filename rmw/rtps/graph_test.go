package rtps

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

func TestGraphQueries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		pub := mustPub(t, a, "/chatter", bestEffort, nil) // node /talker
		if _, err := b.NewSubscription(rmw.NodeInfo{Name: "listener", Namespace: "/ns"}, "/chatter", strType, bestEffort,
			func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.NewPublisher(rmw.NodeInfo{Name: "listener", Namespace: "/ns"}, "/clock", "rosgraph_msgs/msg/Clock", bestEffort,
			rmw.EndpointOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		want := []rmw.TopicInfo{
			{Name: "/chatter", Type: "std_msgs/msg/String", Publishers: 1, Subscriptions: 1},
			{Name: "/clock", Type: "rosgraph_msgs/msg/Clock", Publishers: 1},
		}
		for _, tr := range []*Transport{a, b} {
			if got := tr.Topics(); !slices.Equal(got, want) {
				t.Fatalf("topics %+v", got)
			}
			wantNodes := []rmw.NodeInfo{{Name: "talker", Namespace: "/"}, {Name: "listener", Namespace: "/ns"}}
			if got := tr.Nodes(); !slices.Equal(got, wantNodes) {
				t.Fatalf("nodes %+v", got)
			}
		}
		eps := b.Endpoints("/chatter")
		if len(eps) != 2 || !eps[0].Publisher || eps[0].Local || eps[0].GID != pub.(*Publisher).GID() ||
			eps[0].Node != (rmw.NodeInfo{Name: "talker", Namespace: "/"}) || eps[0].QoS.Reliability != rmw.BestEffort ||
			eps[1].Publisher || !eps[1].Local {
			t.Fatalf("endpoints %+v", eps)
		}
		// Internal graph endpoints are not counted.
		if st := a.Stats(); st.Publishers != 1 || st.Subscriptions != 0 || st.BadGraphSamples != 0 {
			t.Fatalf("stats %+v", st)
		}
		// A participant that leaves takes its nodes and endpoints along.
		b.Close()
		synctest.Wait()
		if got := a.Nodes(); len(got) != 1 {
			t.Fatalf("nodes after close %+v", got)
		}
		if got := a.Topics(); len(got) != 1 || got[0].Subscriptions != 0 {
			t.Fatalf("topics after close %+v", got)
		}
	})
}

// TestStashedHeartbeat: a HEARTBEAT that arrives before the writer's SEDP
// announcement is replayed once the writer matches, so the reader asks for
// the writer's history at once (as Fast DDS heartbeats only every 3 s).
func TestStashedHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, func(c *Config) { c.Multicast = MulticastOff; c.ProbeParticipants = 1 })
		defer a.Close()
		in := &inbox{t: t}
		mustSub(t, a, "/late", latched, in)
		// The fake peer listens here.
		peer, err := nw.ListenUnicast(9999)
		if err != nil {
			t.Fatal(err)
		}
		defer peer.Close()
		var fake wire.GuidPrefix
		copy(fake[:], "\x01\x0ffakefakefa")
		loc := wire.LoopbackUDPv4(9999)
		hdr := wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEProsima, Prefix: fake}
		send := func(build func(b *wire.Builder)) {
			var b wire.Builder
			b.Reset(nil, hdr)
			build(&b)
			peer.WriteTo(b.Bytes(), a.MetaAddr())
		}
		pd := wire.ParticipantData{GuidPrefix: fake, VendorID: wire.VendorEProsima, BuiltinEndpoints: 0x3f,
			LeaseDuration: wire.Duration{Seconds: 30}, MetatrafficUnicastLocators: []wire.Locator{loc}, DefaultUnicastLocators: []wire.Locator{loc}}
		spdp, _ := pd.Encode(nil)
		send(func(b *wire.Builder) {
			b.Data(&wire.Data{WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: spdp})
		})
		w := wire.GUID{Prefix: fake, Entity: wire.NewEntityID(0x42, wire.EntityKindWriterNoKey)}
		// The writer's HEARTBEAT first (history SN 1..1) ...
		send(func(b *wire.Builder) {
			b.Heartbeat(&wire.Heartbeat{WriterID: w.Entity, FirstSN: 1, LastSN: 1, Count: 1})
		})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		// ... then its SEDP announcement (reliable: DATA + HEARTBEAT).
		ed := wire.NewEndpointData(true)
		ed.EndpointGUID = w
		ed.TopicName, ed.TypeName = "rt/late", "std_msgs::msg::dds_::String_"
		ed.Durability = wire.DurabilityTransientLocal
		sedp, _ := ed.Encode(nil)
		send(func(b *wire.Builder) {
			b.Data(&wire.Data{WriterID: wire.EntityIDSEDPPublicationsWriter, WriterSN: 1, SerializedPayload: sedp})
			b.Heartbeat(&wire.Heartbeat{WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: 1, Count: 1})
		})
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		// Expect an ACKNACK from our reader asking for SN 1 of w.
		got := false
		buf := make([]byte, 65536)
		for !got {
			done := make(chan struct{})
			var n int
			go func() { n, _, _ = peer.ReadFrom(buf); close(done) }()
			synctest.Wait()
			select {
			case <-done:
			default:
				peer.Close()
				<-done
				t.Fatal("no ACKNACK for the stashed HEARTBEAT")
			}
			var r wire.Reader
			if r.Reset(buf[:n]) != nil {
				continue
			}
			for {
				sm, err := r.Next()
				if err != nil || sm == nil {
					break
				}
				if sm.ID == wire.SubmsgAckNack && sm.AckNack.WriterID == w.Entity && sm.AckNack.ReaderSNState.Contains(1) {
					got = true
				}
			}
		}
	})
}

// TestGraphTypeHash: an endpoint announces the hash its options carry (or,
// without one, the bundled hash of its type), each endpoint of a service
// that of its own message type, and the graph reports what the endpoints
// announced, local and remote.
func TestGraphTypeHash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		node := rmw.NodeInfo{Name: "n", Namespace: "/"}
		if _, err := a.NewPublisher(node, "/hashed", strType, bestEffort, rmw.EndpointOptions{TypeHash: testHash('1')}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.NewPublisher(node, "/unknown", "nosuch_msgs/msg/T", bestEffort, rmw.EndpointOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.NewSubscription(node, "/hashed", strType, bestEffort, func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
			t.Fatal(err)
		}
		srv, err := a.NewServiceServer(node, "/svc", "std_srvs/srv/SetBool_Request", "std_srvs/srv/SetBool_Response", rmw.ServicesDefaultQoS,
			func(rmw.Request) {}, rmw.EndpointOptions{TypeHash: testHash('2'), RequestTypeHash: testHash('3'), ResponseTypeHash: testHash('4')})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"RIHS01_xyz", "RIHS01_" + strings.Repeat("A", 64), "typehash;"} {
			if _, err := a.NewPublisher(node, "/bad", strType, bestEffort, rmw.EndpointOptions{TypeHash: bad}); err == nil {
				t.Fatalf("publisher with type hash %q made", bad)
			}
			if _, err := a.NewServiceClient(node, "/bad", "std_srvs/srv/SetBool_Request", "std_srvs/srv/SetBool_Response", rmw.ServicesDefaultQoS,
				func(rmw.Response) {}, rmw.EndpointOptions{ResponseTypeHash: bad}); err == nil {
				t.Fatalf("client with type hash %q made", bad)
			}
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if !rmw.DiscoversPeers(a) {
			t.Fatal("the DDS graph fills in through discovery")
		}
		stringHash := announcedTypeHash(endpointUserData(nil, "std_msgs::msg::dds_::String_", ""))
		if stringHash == "" {
			t.Fatal("no bundled hash of std_msgs/msg/String")
		}
		for _, tr := range []*Transport{a, b} {
			eps := tr.Endpoints("/hashed")
			if len(eps) != 2 || eps[0].TypeHash != testHash('1') || eps[1].TypeHash != stringHash {
				t.Fatalf("endpoints %+v", eps)
			}
			if eps := tr.Endpoints("/unknown"); len(eps) != 1 || eps[0].TypeHash != "" {
				t.Fatalf("endpoints %+v", eps)
			}
		}
		s := srv.(*ServiceServer)
		for _, c := range []struct {
			ud   []byte
			hash string
		}{{s.req.ed.UserData, testHash('3')}, {s.resp.ed.UserData, testHash('4')}} {
			if announcedTypeHash(c.ud) != c.hash {
				t.Fatalf("service endpoint USER_DATA %q, want hash %s", c.ud, c.hash)
			}
			if id, ok := wire.UserDataValue(c.ud, "serviceid"); !ok || id != s.idTag {
				t.Fatalf("service endpoint USER_DATA %q lost its serviceid", c.ud)
			}
		}
	})
}
