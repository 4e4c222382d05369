package rtps

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

func TestConfigFromEnv(t *testing.T) {
	cases := []struct {
		env   map[string]string
		ok    bool
		dom   int
		rng   udp.Range
		peers []string
	}{
		{map[string]string{}, true, 0, udp.RangeLocalhost, nil},
		{map[string]string{"ROS_DOMAIN_ID": "7"}, true, 7, udp.RangeLocalhost, nil},
		{map[string]string{"ROS_DOMAIN_ID": " 232 "}, true, 232, udp.RangeLocalhost, nil},
		{map[string]string{"ROS_DOMAIN_ID": "233"}, false, 0, 0, nil},
		{map[string]string{"ROS_DOMAIN_ID": "x"}, false, 0, 0, nil},
		{map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, true, 0, udp.RangeSubnet, nil},
		{map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF", "ROS_STATIC_PEERS": "127.0.0.1;localhost"}, true, 0, udp.RangeOff, []string{"127.0.0.1", "localhost"}},
		{map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}, true, 0, udp.RangeLocalhost, nil},
		{map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "WAN"}, false, 0, 0, nil},
	}
	for _, c := range cases {
		cfg, err := configFromEnv(func(k string) string { return c.env[k] })
		if (err == nil) != c.ok {
			t.Errorf("%v: err %v", c.env, err)
			continue
		}
		if c.ok && (cfg.DomainID != c.dom || cfg.Range != c.rng || !slices.Equal(cfg.StaticPeers, c.peers)) {
			t.Errorf("%v: got %+v", c.env, cfg)
		}
	}
}

// recordNet wraps a MemNetwork and records every destination.
func recordDsts(nw *udp.MemNetwork) func() []netip.Addr {
	var mu sync.Mutex
	seen := map[netip.Addr]bool{}
	nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
		mu.Lock()
		seen[dst.Addr()] = true
		mu.Unlock()
		return false
	}
	return func() []netip.Addr {
		mu.Lock()
		defer mu.Unlock()
		var out []netip.Addr
		for a := range seen {
			out = append(out, a)
		}
		return out
	}
}

func TestRangeOffAndStaticPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		// OFF without peers: silent, and nobody finds anybody.
		a := newMem(t, nw, func(c *Config) { c.Range = udp.RangeOff })
		b := newMem(t, nw, func(c *Config) { c.Range = udp.RangeOff })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if a.Stats().Sent != 0 || b.Stats().Sent != 0 {
			t.Fatalf("OFF sent %d / %d datagrams", a.Stats().Sent, b.Stats().Sent)
		}
		if len(a.RemoteParticipants()) != 0 {
			t.Fatal("OFF discovered")
		}
		a.Close()
		b.Close()
		// OFF with a static peer on one side: both find each other (the
		// other answers the SPDP it receives).
		a = newMem(t, nw, func(c *Config) { c.Range = udp.RangeOff; c.StaticPeers = []string{"127.0.0.1"} })
		defer a.Close()
		b = newMem(t, nw, func(c *Config) { c.Range = udp.RangeOff })
		defer b.Close()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if len(a.RemoteParticipants()) != 1 || len(b.RemoteParticipants()) != 1 {
			t.Fatalf("static peers: %v %v", a.RemoteParticipants(), b.RemoteParticipants())
		}
	})
}

// TestLocalhostFilter: a peer that advertises non-loopback locators gets
// nothing from a LOCALHOST participant; every datagram goes to 127.0.0.1
// or the SPDP group.
func TestLocalhostFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		dsts := recordDsts(nw)
		a := newMem(t, nw, nil)
		defer a.Close()
		mustPub(t, a, "/chatter", reliable, nil)
		// A fake remote participant on 10.1.2.3.
		var fake wire.GuidPrefix
		copy(fake[:], "\x01\x10remoteremot")
		far := wire.LocatorUDPv4([4]byte{10, 1, 2, 3}, 7410)
		pd := wire.ParticipantData{GuidPrefix: fake, VendorID: wire.VendorEclipse, BuiltinEndpoints: 0x3f,
			LeaseDuration: wire.Duration{Seconds: 30}, MetatrafficUnicastLocators: []wire.Locator{far},
			DefaultUnicastLocators: []wire.Locator{far}}
		payload, _ := pd.Encode(nil)
		var bld wire.Builder
		bld.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: fake})
		bld.Data(&wire.Data{WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: payload})
		a.handleDatagram(bld.Bytes(), netip.MustParseAddrPort("10.1.2.3:7410"))
		// It answers (SEDP), so it is confirmed and matched: SEDP and
		// announcements would go to it too.
		bld.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: fake})
		bld.Heartbeat(&wire.Heartbeat{WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: 0, Count: 1})
		a.handleDatagram(bld.Bytes(), netip.MustParseAddrPort("10.1.2.3:7410"))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if len(a.RemoteParticipants()) != 1 {
			t.Fatal("fake participant not recorded")
		}
		if a.Stats().Filtered == 0 {
			t.Fatal("nothing filtered")
		}
		for _, d := range dsts() {
			if !d.IsLoopback() && d != udp.SPDPGroup {
				t.Fatalf("sent to %v", d)
			}
		}
	})
}

func TestGraphSample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		p := mustPub(t, a, "/chatter", reliable, nil).(*Publisher)
		in := &inbox{t: t}
		s, err := a.NewSubscription(rmw.NodeInfo{Name: "listener", Namespace: "/ns"}, "/chatter", strType, reliable, in.deliver, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		b := a.graphSampleLocked()
		a.mu.Unlock()
		var info rmw_dds_common.ParticipantEntitiesInfo // Jazzy's, the default until a peer says otherwise
		if err := msg.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		pg := info.Gid.GUID()
		if wire.GUIDFromBytes(pg) != (wire.GUID{Prefix: a.prefix, Entity: wire.EntityIDParticipant}) {
			t.Fatalf("participant gid %x", pg)
		}
		if len(info.NodeEntitiesInfoSeq) != 2 {
			t.Fatalf("nodes %+v", info.NodeEntitiesInfoSeq)
		}
		n0, n1 := info.NodeEntitiesInfoSeq[0], info.NodeEntitiesInfoSeq[1]
		if n0.NodeNamespace != "/" || n0.NodeName != "talker" || len(n0.WriterGidSeq) != 1 || len(n0.ReaderGidSeq) != 0 ||
			n0.WriterGidSeq[0].GUID() != p.GID() {
			t.Fatalf("node 0 %+v", n0)
		}
		if n1.NodeNamespace != "/ns" || n1.NodeName != "listener" || len(n1.ReaderGidSeq) != 1 ||
			n1.ReaderGidSeq[0].GUID() != s.(*Subscription).GID() {
			t.Fatalf("node 1 %+v", n1)
		}
		// In the Humble layout the same nodes go out with 24-byte gids.
		a.mu.Lock()
		a.cfg.GidSize = rmw_dds_common.GidSizeHumble
		hb := a.graphSampleLocked()
		a.cfg.GidSize = rmw_dds_common.GidSizeJazzy
		a.mu.Unlock()
		var h humble.ParticipantEntitiesInfo
		if err := msg.Unmarshal(hb, &h); err != nil {
			t.Fatal(err)
		}
		if len(hb) != len(b)+8*(1+1+1) || !reflect.DeepEqual(h.ToCurrent(), &info) {
			t.Fatalf("Humble sample (%d bytes, Jazzy %d) %+v", len(hb), len(b), h)
		}
		// The graph writer is reliable, transient-local, keep last 1 and
		// republishes on change.
		g := a.graph
		if g.ed.TopicName != DiscoveryTopic || g.ed.TypeName != DiscoveryType ||
			g.ed.Durability != wire.DurabilityTransientLocal || g.ed.History.Depth != 1 ||
			g.ed.Reliability.Kind != wire.ReliabilityReliable {
			t.Fatalf("graph endpoint %+v", g.ed)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		before := g.w.LastSN()
		s.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		if g.w.LastSN() != before+1 {
			t.Fatalf("graph not republished: %d -> %d", before, g.w.LastSN())
		}
		if a.Stats().Publishers != 1 {
			t.Fatalf("internal writer counted: %d", a.Stats().Publishers)
		}
	})
}

// TestSubnetInNamespace runs the SUBNET range (multicast discovery) only
// inside a namespace whose only interface is lo with multicast on.
func TestSubnetInNamespace(t *testing.T) {
	ifs, _ := net.Interfaces()
	for _, ifi := range ifs {
		if ifi.Name != "lo" {
			t.Skip("SUBNET is exercised only in a loopback-only namespace (interop/netns)")
		}
	}
	if !udp.InterfaceHasMulticast("lo") {
		t.Skip("lo has no multicast")
	}
	mk := func() *Transport {
		tr, err := New(Config{DomainID: testDomain, Range: udp.RangeSubnet})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b := mk(), mk()
	defer a.Close()
	defer b.Close()
	if a.mc == nil {
		t.Fatal("no multicast socket")
	}
	in := &inbox{t: t}
	pub := mustPub(t, a, "/chatter", reliable, nil)
	mustSub(t, b, "/chatter", reliable, in)
	waitUntil(t, "match", 10*time.Second, func() bool { return pub.MatchedSubscriptions() == 1 })
	pub.Publish(str("subnet"))
	waitUntil(t, "data", 10*time.Second, func() bool { return len(in.got()) == 1 })
}

// TestBadStaticPeersWarn: ROS_STATIC_PEERS entries that cannot be parsed
// are ignored with a warning (Warnf, not the debug Logf) naming each one;
// the good entries still work.
func TestBadStaticPeersWarn(t *testing.T) {
	cfg, err := configFromEnv(func(k string) string {
		if k == "ROS_STATIC_PEERS" {
			return "127.0.0.1; 10.0.0.1:7400 ;fe80::1;bad_host!"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var warnings []string
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, func(c *Config) {
			c.Range = udp.RangeOff
			c.StaticPeers = cfg.StaticPeers
			c.Warnf = func(format string, args ...any) {
				mu.Lock()
				warnings = append(warnings, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
		})
		defer a.Close()
		b := newMem(t, nw, func(c *Config) { c.Range = udp.RangeOff })
		defer b.Close()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(warnings) != 3 {
			t.Fatalf("warnings %q", warnings)
		}
		for i, bad := range []string{"10.0.0.1:7400", "fe80::1", "bad_host!"} {
			if !strings.Contains(warnings[i], fmt.Sprintf("%q", bad)) || !strings.Contains(warnings[i], "ROS_STATIC_PEERS") {
				t.Errorf("warning %q does not name %q", warnings[i], bad)
			}
		}
		if len(a.RemoteParticipants()) != 1 {
			t.Fatal("the good static peer was lost")
		}
	})
}
