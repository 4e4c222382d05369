package ros

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

const (
	hashString = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
	hashAdd    = "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
	hashClock  = "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564"
)

// tokenVectors are tokens rmw_zenoh declares, from its docs/design.md
// (demo_nodes_cpp listener, talker with depth 7, add_two_ints server and
// client) and from the shared zenoh-pico peers (zros.h), with their gids
// as libxxhash 0.8.1's XXH3_128bits gives them (low64, high64 LE).
var tokenVectors = []struct {
	name  string
	build func() Entity
	token string
	gid   string
}{
	{
		name: "listener node",
		build: func() Entity {
			return NodeEntity(0, "aac3178e146ba6f1fc6e6a4085e77f21", 0, rmw.NodeInfo{Name: "listener", Namespace: "/", Enclave: "/"})
		},
		token: "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener",
		gid:   "5bd72f4daf53c0bb00c7394e7fc19547",
	},
	{
		name: "listener subscription",
		build: func() Entity {
			n := NodeEntity(0, "aac3178e146ba6f1fc6e6a4085e77f21", 0, rmw.NodeInfo{Name: "listener", Namespace: "/"})
			return EndpointEntity(n, KindSubscription, 10, "/chatter", "std_msgs::msg::dds_::String_", hashString,
				ProfileFromQoS(rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}))
		},
		token: "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/" + hashString + "/::,10:,:,:,,",
		gid:   "f15f21d2fafc22891bb0db868309bfcb",
	},
	{
		name: "talker publisher depth 7",
		build: func() Entity {
			n := NodeEntity(0, "8b20917502ee955ac4476e0266340d5c", 0, rmw.NodeInfo{Name: "talker", Namespace: "/"})
			return EndpointEntity(n, KindPublisher, 10, "/chatter", "std_msgs::msg::dds_::String_", hashString,
				ProfileFromQoS(rmw.QoS{Depth: 7}))
		},
		token: "@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/" + hashString + "/::,7:,:,:,,",
		gid:   "eb85fa883b7846dc448a4501890ad062",
	},
	{
		name: "add_two_ints server",
		build: func() Entity {
			n := NodeEntity(0, "f9980ee0495eaafb3e38f0d19e2eae12", 0, rmw.NodeInfo{Name: "add_two_ints_server", Namespace: "/"})
			return EndpointEntity(n, KindService, 10, "/add_two_ints", "example_interfaces::srv::dds_::AddTwoInts_", hashAdd,
				ProfileFromQoS(rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}))
		},
		token: "@ros2_lv/0/f9980ee0495eaafb3e38f0d19e2eae12/0/10/SS/%/%/add_two_ints_server/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/" + hashAdd + "/::,10:,:,:,,",
		gid:   "d47771a4e2405c092088d4552a3b7b13",
	},
	{
		name: "add_two_ints client",
		build: func() Entity {
			n := NodeEntity(0, "e1dc8d1b45ae8717fce78689cc655685", 0, rmw.NodeInfo{Name: "add_two_ints_client", Namespace: "/"})
			return EndpointEntity(n, KindClient, 10, "/add_two_ints", "example_interfaces::srv::dds_::AddTwoInts_", hashAdd,
				ProfileFromQoS(rmw.QoS{Depth: 10}))
		},
		token: "@ros2_lv/0/e1dc8d1b45ae8717fce78689cc655685/0/10/SC/%/%/add_two_ints_client/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/" + hashAdd + "/::,10:,:,:,,",
		gid:   "26970b3b2b7cf4e3c6219b0549875e8c",
	},
	{
		name: "humble clock publisher in a namespace",
		build: func() Entity {
			n := NodeEntity(7, "1234abcd", 3, rmw.NodeInfo{Name: "clockpub", Namespace: "/robot1/arm"})
			return EndpointEntity(n, KindPublisher, 5, "/clock", "rosgraph_msgs::msg::dds_::Clock_", DistroHumble.TypeHash(hashClock),
				ProfileFromQoS(rmw.QoS{Reliability: rmw.BestEffort, Depth: 1}))
		},
		token: "@ros2_lv/7/1234abcd/3/5/MP/%/%robot1%arm/clockpub/%clock/rosgraph_msgs::msg::dds_::Clock_/TypeHashNotSupported/2::,1:,:,:,,",
		gid:   "71839f10a404348cb1b825c2d8618c38",
	},
	{
		name: "zros.h zclockpub (ZR_QOS_CLOCK)",
		build: func() Entity {
			n := NodeEntity(0, "f00d", 0, rmw.NodeInfo{Name: "zclockpub", Namespace: "/"})
			return EndpointEntity(n, KindPublisher, 1, "/clock", "rosgraph_msgs::msg::dds_::Clock_", DistroJazzy.TypeHash(hashClock),
				ProfileFromQoS(rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}))
		},
		token: "@ros2_lv/0/f00d/0/1/MP/%/%/zclockpub/%clock/rosgraph_msgs::msg::dds_::Clock_/" + hashClock + "/2::,1:,:,:,,",
		gid:   "7f976ccdf910d29768d4c61aec05dc9a",
	},
}

func TestTokenVectors(t *testing.T) {
	for _, v := range tokenVectors {
		t.Run(v.name, func(t *testing.T) {
			e := v.build()
			tok, err := e.Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok != v.token {
				t.Fatalf("token\n got %s\nwant %s", tok, v.token)
			}
			gid, err := e.GID()
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(gid[:]); got != v.gid {
				t.Errorf("gid %s, want %s", got, v.gid)
			}
			// and back: the parse rebuilds the same token and gid
			p, err := ParseToken(v.token)
			if err != nil {
				t.Fatal(err)
			}
			if *p != e {
				t.Errorf("parse\n got %+v\nwant %+v", *p, e)
			}
			if g2, _ := p.GID(); g2 != gid {
				t.Errorf("gid of parsed token differs")
			}
		})
	}
}

func TestParseTokenGraph(t *testing.T) {
	e, err := ParseToken(tokenVectors[2].token)
	if err != nil {
		t.Fatal(err)
	}
	info, err := e.EndpointInfo()
	if err != nil {
		t.Fatal(err)
	}
	want := rmw.EndpointInfo{
		Topic: "/chatter", Type: "std_msgs/msg/String", TypeHash: hashString,
		Node: rmw.NodeInfo{Name: "talker", Namespace: "/", Enclave: "/"}, Publisher: true,
		QoS: rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 7, Liveliness: rmw.LivelinessAutomatic},
	}
	want.GID = info.GID
	if info != want {
		t.Errorf("EndpointInfo\n got %+v\nwant %+v", info, want)
	}
	if hex.EncodeToString(info.GID[:]) != tokenVectors[2].gid {
		t.Error("gid")
	}
	key, err := e.TopicKey()
	if err != nil || key != "0/chatter/std_msgs::msg::dds_::String_/"+hashString {
		t.Errorf("TopicKey = %q, %v", key, err)
	}
	h, _ := ParseToken(tokenVectors[5].token)
	hi, _ := h.EndpointInfo()
	if hi.TypeHash != "" || hi.Type != "rosgraph_msgs/msg/Clock" || hi.Node.Namespace != "/robot1/arm" || hi.QoS.Reliability != rmw.BestEffort || hi.QoS.Depth != 1 {
		t.Errorf("humble EndpointInfo %+v", hi)
	}
	srv, _ := ParseToken(tokenVectors[3].token)
	if _, err := srv.EndpointInfo(); err == nil {
		t.Error("EndpointInfo of a service server should fail")
	}
	if ROSTypeName(srv.Type) != "example_interfaces/srv/AddTwoInts" {
		t.Error(ROSTypeName(srv.Type))
	}
}

func TestParseTokenTolerates(t *testing.T) {
	base := "@ros2_lv/0/f00d/0/1/MP/%/%/n/%t/pkg::msg::dds_::T_/TypeHashNotSupported/"
	for _, tc := range []struct {
		tok, rebuilt string
	}{
		// explicit defaults are read and written back empty, as rmw_zenoh rebuilds
		{base + "1:2:1,42:9223372036,854775807:9223372036,854775807:1,9223372036,854775807", base + "::,:,:,:,,"},
		// extra groups and chunks are ignored
		{base + "::,10:,:,:,,:x", base + "::,10:,:,:,,"},
		{base + "::,10:,:,:,,/other/chunks", base + "::,10:,:,:,,"},
		// the backends chunk of rmw_zenoh 0.10+ is kept
		{base + "::,10:,:,:,,/backends:cpu:", base + "::,10:,:,:,,/backends:cpu:"},
		// a node token with more chunks
		{"@ros2_lv/3/f00d/1/1/NN/%/%ns/n/extra", "@ros2_lv/3/f00d/1/1/NN/%/%ns/n"},
	} {
		e, err := ParseToken(tc.tok)
		if err != nil {
			t.Errorf("%s: %v", tc.tok, err)
			continue
		}
		got, err := e.Token()
		if err != nil || got != tc.rebuilt {
			t.Errorf("%s: rebuilt %q, %v; want %q", tc.tok, got, err, tc.rebuilt)
		}
	}
}

func TestParseTokenErrors(t *testing.T) {
	good := "@ros2_lv/0/f00d/0/1/MP/%/%/n/%t/pkg::msg::dds_::T_/TypeHashNotSupported/::,10:,:,:,,"
	for _, tc := range []struct{ tok, want string }{
		{"", "chunks"},
		{"@ros2_lv/0/f00d/0/0/NN/%/%", "chunks"},
		{"@ros2_lv/0/f00d/0/0/NN/%//n", "chunk 7 is empty"},
		{"@ros2_lv/0/f00d/0/0/NN/%/%/n/", "empty"},
		{"@ros2/0/f00d/0/0/NN/%/%/n", "admin space"},
		{"@ros2_lv/0/f00d/0/0/XX/%/%/n", "entity kind"},
		{"@ros2_lv/x/f00d/0/0/NN/%/%/n", "domain"},
		{"@ros2_lv/-1/f00d/0/0/NN/%/%/n", "domain"},
		{"@ros2_lv/99999999999/f00d/0/0/NN/%/%/n", "domain"},
		{"@ros2_lv/0/f00d/0/1/MP/%/%/n/%t/T_/TypeHashNotSupported", "needs 13 chunks"},
		{strings.Replace(good, "::,10:,:,:,,", "::,10:,:", 1), "groups"},
		{strings.Replace(good, "::,10:,:,:,,", "9::,10:,:,:,,", 1), "reliability"},
		{strings.Replace(good, "::,10:,:,:,,", ":5:,10:,:,:,,", 1), "durability"},
		{strings.Replace(good, "::,10:,:,:,,", "::4,10:,:,:,,", 1), "history"},
		{strings.Replace(good, "::,10:,:,:,,", "::,-1:,:,:,,", 1), "depth"},
		{strings.Replace(good, "::,10:,:,:,,", "::,+1:,:,:,,", 1), "depth"},
		{strings.Replace(good, "::,10:,:,:,,", "::,18446744073709551616:,:,:,,", 1), "out of range"},
		{strings.Replace(good, "::,10:,:,:,,", "::,:x,:,:,,", 1), "deadline seconds"},
		{strings.Replace(good, "::,10:,:,:,,", "::,:,:,:2,,", 1), "liveliness"},
		{strings.Replace(good, "::,10:,:,:,,", "::,:,:,:,,y", 1), "lease nanoseconds"},
		{strings.Replace(good, "::,10:,:,:,,", "::10:,:,:,,", 1), "want history"},
	} {
		_, err := ParseToken(tc.tok)
		if err == nil {
			t.Errorf("%q: no error", tc.tok)
			continue
		}
		if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.tok, err, tc.want)
		}
	}
}

func TestTokenRefusesWhatRMWZenohCannotDeclare(t *testing.T) {
	n := NodeEntity(0, "f00d", 0, rmw.NodeInfo{Name: "n"})
	if tok, err := n.Token(); err != nil || tok != "@ros2_lv/0/f00d/0/0/NN/%/%/n" {
		t.Fatalf("empty namespace and enclave read as \"/\": %q %v", tok, err)
	}
	for _, mod := range []func(*Entity){
		func(e *Entity) { e.Node = "" },
		func(e *Entity) { e.ZID = "" },
		func(e *Entity) { e.Node = "a*b" },
		func(e *Entity) { e.Namespace = "/a?b" },
		func(e *Entity) { e.Kind = 0 },
		func(e *Entity) { e.Kind = KindPublisher; e.Topic = "/t"; e.Type = "T_" }, // no hash
		func(e *Entity) { e.Kind = KindPublisher; e.Topic = "/t"; e.Type = "T#"; e.TypeHash = "h" },
	} {
		e := n
		mod(&e)
		if tok, err := e.Token(); err == nil {
			t.Errorf("%+v: token %q, want an error", e, tok)
		}
	}
}

func TestProfileString(t *testing.T) {
	for _, tc := range []struct {
		q    rmw.QoS
		want string
	}{
		{rmw.QoS{}, "::,:,:,:,,"},
		{rmw.QoS{Reliability: rmw.BestEffort, Depth: 1}, "2::,1:,:,:,,"},                       // ClockQoS
		{rmw.QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 10}, "::,10:,:,:,,"}, // rclcpp default
		{rmw.QoS{Durability: rmw.TransientLocal, Depth: 1}, ":1:,1:,:,:,,"},                    // /tf_static-like
		{rmw.QoS{History: rmw.KeepAll}, "::2,:,:,:,,"},                                         // keep all, depth 0 -> 42
		{rmw.QoS{Depth: 42}, "::,:,:,:,,"},                                                     // 42 is the default
		{rmw.QoS{Deadline: 1500 * time.Millisecond}, "::,:1,500000000:,:,,"},                   // 1.5 s
		{rmw.QoS{Lifespan: 2 * time.Second}, "::,:,:2,0:,,"},                                   // ns 0 differs from the default's
		{rmw.QoS{Liveliness: rmw.LivelinessManualByTopic, LivelinessLeaseDuration: time.Second}, "::,:,:,:3,1,0"},
	} {
		p := ProfileFromQoS(tc.q)
		if got := p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.q, got, tc.want)
		}
		back, err := ParseProfile(p.String())
		if err != nil || back != p {
			t.Errorf("%+v: parse back %+v, %v", tc.q, back, err)
		}
	}
	// the rmw.QoS view of a parsed profile
	p, _ := ParseProfile("2:1:2,5:1,0:,:3,,7")
	q := p.QoS()
	want := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.TransientLocal, History: rmw.KeepAll, Depth: 5,
		Deadline: time.Second, Liveliness: rmw.LivelinessManualByTopic, LivelinessLeaseDuration: 9223372036*time.Second + 7}
	if q != want {
		t.Errorf("QoS() = %+v, want %+v", q, want)
	}
	if got := (Profile{Deadline: Time{Sec: 1 << 63}}).QoS().Deadline; got != 0 {
		t.Errorf("huge deadline = %v, want 0 (infinite)", got)
	}
}

func TestCongestionAndAdvanced(t *testing.T) {
	for _, tc := range []struct {
		q        rmw.QoS
		block    bool
		cache    bool
		hb       bool
		recovery bool
	}{
		{rmw.QoS{}, false, false, false, false},
		{rmw.QoS{History: rmw.KeepAll}, true, false, false, false},
		{rmw.QoS{History: rmw.KeepAll, Reliability: rmw.BestEffort}, false, false, false, false},
		{rmw.QoS{Durability: rmw.TransientLocal, Depth: 1}, false, true, true, true},
		{rmw.QoS{Durability: rmw.TransientLocal, Reliability: rmw.BestEffort, Depth: 1}, false, true, false, false},
	} {
		p := ProfileFromQoS(tc.q)
		a := AdvancedPublisherFor(p)
		s := AdvancedSubscriberFor(p)
		if a.CongestionBlock != tc.block || a.Cache != tc.cache || a.Detection != tc.cache || a.Heartbeat != tc.hb || a.Sequenced != tc.hb ||
			s.History != tc.cache || s.Detection != tc.cache || s.Recovery != tc.recovery {
			t.Errorf("%+v: publisher %+v subscriber %+v", tc.q, a, s)
		}
		if tc.cache && (a.CacheDepth != 1 || s.MaxSamples != 1) {
			t.Errorf("%+v: depth %d/%d", tc.q, a.CacheDepth, s.MaxSamples)
		}
	}
}

func TestAdvancedKeys(t *testing.T) {
	key := "0/tf_static/tf2_msgs::msg::dds_::TFMessage_/RIHS01_x"
	pk := AdvPublisherKey(key, "f00d", 12, true)
	if pk != key+"/@adv/pub/f00d/12/_" {
		t.Error(pk)
	}
	if u := AdvPublisherKey(key, "f00d", 12, false); u != key+"/@adv/pub/f00d/uhlc/_" {
		t.Error(u)
	}
	if s := AdvSubscriberToken(key, "beef", 3); s != key+"/@adv/sub/beef/3/_" {
		t.Error(s)
	}
	if AdvHistoryQueryKey(key) != key+"/@adv/**" || AdvPublishersKey(key) != key+"/@adv/pub/**" {
		t.Error("query keys")
	}
	a, b := uint32(4), uint32(9)
	if AdvMaxParam(42) != "_max=42" || AdvSNRangeParam(&a, &b) != "_sn=4..9" || AdvSNRangeParam(&a, nil) != "_sn=4.." || AdvSNRangeParam(nil, nil) != "_sn=.." {
		t.Error("params")
	}
	tok, err := ParseAdvKey(pk)
	if err != nil || tok != (AdvToken{Key: key, Publisher: true, ZID: "f00d", EID: 12, Sequenced: true, Meta: "_"}) {
		t.Errorf("%+v %v", tok, err)
	}
	tok, err = ParseAdvKey(key + "/@adv/sub/beef/uhlc/m/x")
	if err != nil || tok != (AdvToken{Key: key, ZID: "beef", Meta: "m/x"}) {
		t.Errorf("%+v %v", tok, err)
	}
	for _, bad := range []string{key, key + "/@adv/pub/f00d", key + "/@adv/xx/f00d/1/_", key + "/@adv/pub/f00d/-1/_", "@adv/pub/a/1/_"} {
		if _, err := ParseAdvKey(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	hb := HeartbeatPayload(0x01020304)
	if hex.EncodeToString(hb) != "04030201" {
		t.Error(hb)
	}
	if v, err := ParseHeartbeat(hb); err != nil || v != 0x01020304 {
		t.Error(v, err)
	}
	if _, err := ParseHeartbeat(hb[:3]); err == nil {
		t.Error("short heartbeat")
	}
	if LegacyCacheKey("f00d", key) != "f00d/"+key || LegacyHistoryQueryKey(key) != "*/"+key {
		t.Error("legacy keys")
	}
}

func TestKeysAndNames(t *testing.T) {
	for _, tc := range []struct {
		domain          uint32
		name, ros, hash string
		want            string
	}{
		{0, "/chatter", "std_msgs/msg/String", hashString, "0/chatter/std_msgs::msg::dds_::String_/" + hashString},
		{0, "/robot1/chatter", "std_msgs/msg/String", hashString, "0/robot1/chatter/std_msgs::msg::dds_::String_/" + hashString},
		{2, "/add_two_ints", "example_interfaces/srv/AddTwoInts", hashAdd, "2/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/" + hashAdd},
		{0, "/clock", "rosgraph_msgs/msg/Clock", TypeHashNotSupported, "0/clock/rosgraph_msgs::msg::dds_::Clock_/TypeHashNotSupported"},
		{0, "/fib/_action/send_goal", "pkg/action/Fibonacci_SendGoal", TypeHashNotSupported, "0/fib/_action/send_goal/pkg::action::dds_::Fibonacci_SendGoal_/TypeHashNotSupported"},
	} {
		dds, err := DDSTypeName(tc.ros)
		if err != nil {
			t.Fatal(err)
		}
		if ROSTypeName(dds) != tc.ros {
			t.Errorf("ROSTypeName(%q) = %q", dds, ROSTypeName(dds))
		}
		k, err := TopicKey(tc.domain, tc.name, dds, tc.hash)
		if err != nil || k != tc.want {
			t.Errorf("TopicKey = %q, %v; want %q", k, err, tc.want)
		}
	}
	for _, bad := range []string{"", "String", "std_msgs//String", "std_msgs/msg/Str*ng"} {
		if _, err := DDSTypeName(bad); err == nil {
			t.Errorf("DDSTypeName(%q): no error", bad)
		}
	}
	for _, bad := range []string{"/", "", "/a//b", "/a*"} {
		if _, err := TopicKey(0, bad, "T_", "h"); err == nil {
			t.Errorf("TopicKey(%q): no error", bad)
		}
	}
	if ROSTypeName("plain") != "plain" || ROSTypeName("x_") != "x_" {
		t.Error("ROSTypeName of a non-ROS name")
	}
	if st, ok := ServiceTypeFromRequest("example_interfaces::srv::dds_::AddTwoInts_Request_"); !ok || st != "example_interfaces::srv::dds_::AddTwoInts_" {
		t.Error(st)
	}
	if d, ok := DistroForName("Humble"); !ok || d != DistroHumble || d.TypeHash(hashString) != TypeHashNotSupported {
		t.Error("humble")
	}
	if d, ok := DistroForName("jazzy"); !ok || d != DistroJazzy || d.TypeHash(hashString) != hashString || d.TypeHash("") != TypeHashNotSupported {
		t.Error("jazzy")
	}
	if _, ok := DistroForName(""); ok {
		t.Error("empty distro")
	}
	if !ValidTypeHash(hashString) || !ValidTypeHash(TypeHashNotSupported) || ValidTypeHash("RIHS01_xyz") || ValidTypeHash(strings.ToUpper(hashString)) {
		t.Error("ValidTypeHash")
	}
	if LivelinessKeyAll(3) != "@ros2_lv/3/**" {
		t.Error(LivelinessKeyAll(3))
	}
	if d, inf := ClientQueryTimeout("0/fib/_action/get_result/pkg::action::dds_::Fibonacci_GetResult_/h", 10*time.Second); !inf || d != 0 {
		t.Error("get_result timeout")
	}
	if d, inf := ClientQueryTimeout("0/fib/_action/send_goal/pkg::action::dds_::Fibonacci_SendGoal_/h", 10*time.Second); inf || d != 10*time.Second {
		t.Error("send_goal timeout")
	}
}

func TestZID(t *testing.T) {
	for _, tc := range []struct {
		id   [16]byte
		want string
	}{
		{[16]byte{0x21, 0x7f, 0xe7, 0x85}, "85e77f21"},
		{[16]byte{0x01}, "1"},
		{[16]byte{0x0d, 0xf0, 0x0}, "f00d"},
		{[16]byte{0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a}, "a000000000000000000000000000010"},
		{[16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xff}, "ff0f0e0d0c0b0a090807060504030201"},
	} {
		if got := FormatZID(tc.id); got != tc.want {
			t.Errorf("FormatZID(%x) = %q, want %q", tc.id, got, tc.want)
		}
		id, n, err := ParseZID(tc.want)
		if err != nil || id != tc.id || n != (len(tc.want)+1)/2 {
			t.Errorf("ParseZID(%q) = %x %d %v", tc.want, id, n, err)
		}
	}
	for _, bad := range []string{"", "0", "0f", "F00D", "xyz", strings.Repeat("f", 33)} {
		if _, _, err := ParseZID(bad); err == nil {
			t.Errorf("ParseZID(%q): no error", bad)
		}
	}
}
