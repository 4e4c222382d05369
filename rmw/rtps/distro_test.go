package rtps

import (
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

func TestGidSizeForDistro(t *testing.T) {
	for d, want := range map[string]int{"humble": 24, "Humble": 24, "foxy": 24, "iron": 16, "jazzy": 16, "rolling": 16, "": 0, "nosuch": 0} {
		if got := GidSizeForDistro(d); got != want {
			t.Errorf("%q: %d, want %d", d, got, want)
		}
	}
	c, err := configFromEnv(func(k string) string {
		if k == "ROS_DISTRO" {
			return "jazzy"
		}
		return ""
	})
	if err != nil || c.GidSize != 16 {
		t.Fatalf("ROS_DISTRO=jazzy: %d %v", c.GidSize, err)
	}
}

// Both layouts are read whatever the transport writes, and a sample that
// parses one way only says which.
func TestDecodeGraphBothLayouts(t *testing.T) {
	for _, size := range []int{rmw_dds_common.GidSizeHumble, rmw_dds_common.GidSizeJazzy} {
		info := rmw_dds_common.ParticipantEntitiesInfo{
			Gid: rmw_dds_common.GidFromGUID([16]byte{1, 2, 3}),
			NodeEntitiesInfoSeq: []rmw_dds_common.NodeEntitiesInfo{{NodeNamespace: "/", NodeName: "n",
				ReaderGidSeq: []rmw_dds_common.Gid{rmw_dds_common.GidFromGUID([16]byte{9})}}}}
		data := marshalGraph(&info, size)
		for _, pref := range []int{rmw_dds_common.GidSizeHumble, rmw_dds_common.GidSizeJazzy} {
			got, only := decodeGraph(data, pref)
			if got == nil || len(got.NodeEntitiesInfoSeq) != 1 || got.NodeEntitiesInfoSeq[0].NodeName != "n" ||
				len(got.NodeEntitiesInfoSeq[0].ReaderGidSeq) != 1 {
				t.Fatalf("size %d read as %d first: %+v", size, pref, got)
			}
			if only != size {
				t.Fatalf("size %d: only %d", size, only)
			}
			if !reflect.DeepEqual(got, &info) {
				t.Fatalf("size %d read as %d first: %+v, want %+v", size, pref, got, &info)
			}
		}
	}
	if got, _ := decodeGraph([]byte{0, 1, 0, 0, 1}, 24); got != nil {
		t.Fatal("garbage decoded")
	}
}

// A transport whose layout is not pinned adopts its peer's; a pinned one
// keeps its own and still reads the peer.
func TestGidLayoutLearned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		jazzy := newMem(t, nw, func(c *Config) { c.GidSize = rmw_dds_common.GidSizeJazzy })
		defer jazzy.Close()
		learner := newMem(t, nw, nil)
		defer learner.Close()
		echoServer(t, jazzy, "/a")
		echoServer(t, learner, "/b")
		time.Sleep(3 * time.Second)
		synctest.Wait()
		learner.mu.Lock()
		size := learner.cfg.GidSize
		learner.mu.Unlock()
		if size != rmw_dds_common.GidSizeJazzy {
			t.Fatalf("learner writes %d-byte gids", size)
		}
		for _, tr := range []*Transport{jazzy, learner} {
			if n := tr.Nodes(); len(n) != 1 {
				t.Fatalf("nodes %+v", n)
			}
			for _, s := range tr.Services() {
				if len(s.ServerNodes) != 1 || s.ServerNodes[0].Name != node.Name {
					t.Fatalf("services %+v (stats %+v)", tr.Services(), tr.Stats())
				}
			}
		}
	})
}

// FuzzDecodeGraph: ros_discovery_info samples from outside decode in one
// layout, the other, or neither, never panicking.
func FuzzDecodeGraph(f *testing.F) {
	for _, size := range []int{rmw_dds_common.GidSizeHumble, rmw_dds_common.GidSizeJazzy} {
		info := rmw_dds_common.ParticipantEntitiesInfo{
			NodeEntitiesInfoSeq: []rmw_dds_common.NodeEntitiesInfo{{NodeNamespace: "/", NodeName: "n",
				WriterGidSeq: []rmw_dds_common.Gid{{}}}}}
		f.Add(marshalGraph(&info, size))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, only := decodeGraph(b, rmw_dds_common.GidSizeHumble)
		if info == nil && only != 0 {
			t.Fatal("a layout without a message")
		}
	})
}

func TestGraphChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		ch := a.GraphChanged()
		b := newMem(t, nw, nil)
		defer b.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-ch: // b discovered
		default:
			t.Fatal("no change when a participant appeared")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		ch = a.GraphChanged()
		echoServer(t, b, "/s")
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("no change when a remote server appeared")
		}
		ch = a.GraphChanged()
		p := mustPub(t, a, "/c", reliable, nil)
		synctest.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("no change when a local publisher appeared")
		}
		p.Close()
	})
}

func TestEndpointTypeHash(t *testing.T) {
	ud := endpointUserData([]byte("clientid=1.2;"), "std_msgs::msg::dds_::String_", "")
	if string(ud) != "clientid=1.2;typehash=RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18;" {
		t.Fatalf("%q", ud)
	}
	if v, ok := wire.UserDataValue(ud, "clientid"); !ok || v != "1.2" {
		t.Fatalf("clientid %q", v)
	}
	if ud := endpointUserData(nil, "nosuch::msg::dds_::T_", ""); ud != nil {
		t.Fatalf("%q for an unknown type", ud)
	}
	// A hash the endpoint's options carry wins over the bundled one, and
	// serves types nros-go does not ship.
	for _, ddsType := range []string{"std_msgs::msg::dds_::String_", "nosuch::msg::dds_::T_"} {
		ud := endpointUserData([]byte("serviceid=3.4;"), ddsType, testHash('a'))
		if string(ud) != "serviceid=3.4;typehash="+testHash('a')+";" {
			t.Fatalf("%s: %q", ddsType, ud)
		}
	}
}

// testHash is a well-formed RIHS01 hash of 64 times c.
func testHash(c byte) string { return "RIHS01_" + strings.Repeat(string(c), 64) }
