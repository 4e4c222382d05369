package msg_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

func TestDDSTypeName(t *testing.T) {
	tests := []struct {
		ros, dds string
		ok       bool
	}{
		{"std_msgs/msg/String", "std_msgs::msg::dds_::String_", true},
		{"rosgraph_msgs/msg/Clock", "rosgraph_msgs::msg::dds_::Clock_", true},
		{"rcl_interfaces/srv/SetParameters_Request", "rcl_interfaces::srv::dds_::SetParameters_Request_", true},
		{"example_interfaces/action/Fibonacci_SendGoal_Request", "example_interfaces::action::dds_::Fibonacci_SendGoal_Request_", true},
		{"nros_bench/msg/Payload", "nros_bench::msg::dds_::Payload_", true},
		{"std_msgs/String", "", false},
		{"std_msgs/foo/String", "", false},
		{"/msg/String", "", false},
		{"std_msgs/msg/", "", false},
		{"std msgs/msg/String", "", false},
		{"std_msgs/msg/String/x", "", false},
		{"std_msgs/msg/9String", "", false},
	}
	for _, tc := range tests {
		got, err := msg.DDSTypeName(tc.ros)
		if (err == nil) != tc.ok || got != tc.dds {
			t.Errorf("DDSTypeName(%q) = %q, %v", tc.ros, got, err)
		}
		if !tc.ok {
			continue
		}
		back, err := msg.ROSTypeName(tc.dds)
		if err != nil || back != tc.ros {
			t.Errorf("ROSTypeName(%q) = %q, %v", tc.dds, back, err)
		}
	}
	for _, bad := range []string{"std_msgs::msg::String_", "std_msgs::msg::dds_::String", "std_msgs::foo::dds_::String_",
		"::msg::dds_::String_", "std_msgs::msg::dds_::_", "a::b::c::d::e", "String"} {
		if got, err := msg.ROSTypeName(bad); err == nil {
			t.Errorf("ROSTypeName(%q) = %q, want error", bad, got)
		}
	}
}

func TestRegistry(t *testing.T) {
	want := []string{
		"builtin_interfaces/msg/Duration", "builtin_interfaces/msg/Time", "nros_bench/msg/Payload",
		"rmw_dds_common/msg/Gid", "rmw_dds_common/msg/NodeEntitiesInfo", "rmw_dds_common/msg/ParticipantEntitiesInfo",
		"rosgraph_msgs/msg/Clock", "std_msgs/msg/Empty", "std_msgs/msg/Header", "std_msgs/msg/String",
	}
	types := msg.Types()
	for _, w := range want {
		if !slices.Contains(types, w) {
			t.Errorf("Types() lacks %s", w)
		}
		m, ok := msg.New(w)
		if !ok || m.TypeName() != w {
			t.Errorf("New(%q) = %v, %v", w, m, ok)
		}
		dds, _ := msg.DDSTypeName(w)
		if m, ok := msg.New(dds); !ok || m.TypeName() != w {
			t.Errorf("New(%q) = %v, %v", dds, m, ok)
		}
	}
	if !slices.IsSorted(types) {
		t.Error("Types() not sorted")
	}
	if m, ok := msg.New("std_msgs/String"); !ok || m.TypeName() != "std_msgs/msg/String" {
		t.Errorf("short form: %v %v", m, ok)
	}
	if _, ok := msg.New("no_pkg/msg/Nope"); ok {
		t.Error("New of unknown type succeeded")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("duplicate Register did not panic")
			}
		}()
		msg.Register("std_msgs/msg/String", func() msg.Message { return new(std_msgs.String) })
	}()
}

// noYAML has no YAMLFields: it is rendered by reflection.
type noYAML struct {
	FrameID     string
	StampNs     int64
	Stamp       builtin_interfaces.Time
	Values      []float64
	HTTPServers []string
	hidden      int // unexported: not rendered
}

func (*noYAML) TypeName() string                { return "test_msgs/msg/NoYAML" }
func (*noYAML) MarshalCDR(*cdr.Encoder)         {}
func (*noYAML) UnmarshalCDR(*cdr.Decoder) error { return nil }

func TestToYAML(t *testing.T) {
	info := talkerInfo()
	info.NodeEntitiesInfoSeq = append(info.NodeEntitiesInfoSeq, rmw_dds_common.NodeEntitiesInfo{NodeNamespace: "/", NodeName: "_hidden"})
	tests := []struct {
		name string
		m    msg.Message
		want string
	}{
		{"String", &std_msgs.String{Data: "hello"}, "data: hello\n"},
		{"String empty", &std_msgs.String{}, "data: ''\n"},
		{"String number", &std_msgs.String{Data: "42"}, "data: '42'\n"},
		{"String float", &std_msgs.String{Data: "1.5"}, "data: '1.5'\n"},
		{"String bool", &std_msgs.String{Data: "true"}, "data: 'true'\n"},
		{"String yes", &std_msgs.String{Data: "Yes"}, "data: 'Yes'\n"},
		{"String null", &std_msgs.String{Data: "null"}, "data: 'null'\n"},
		{"String colon space", &std_msgs.String{Data: "a: b"}, "data: 'a: b'\n"},
		{"String colon", &std_msgs.String{Data: "a:b"}, "data: a:b\n"},
		{"String hash", &std_msgs.String{Data: "a #b"}, "data: 'a #b'\n"},
		{"String leading dash", &std_msgs.String{Data: "- x"}, "data: '- x'\n"},
		{"String quote", &std_msgs.String{Data: "it's"}, "data: it's\n"},
		{"String leading quote", &std_msgs.String{Data: "'q'"}, "data: '''q'''\n"},
		{"String leading space", &std_msgs.String{Data: " x"}, "data: ' x'\n"},
		{"String hello world", &std_msgs.String{Data: "Hello World: 1"}, "data: 'Hello World: 1'\n"},
		{"String words", &std_msgs.String{Data: "Hello World 1"}, "data: Hello World 1\n"},
		{"String unicode", &std_msgs.String{Data: "héllo ✓"}, "data: héllo ✓\n"},
		{"String tab", &std_msgs.String{Data: "a\tb"}, "data: \"a\\tb\"\n"},
		{"String NUL-free control", &std_msgs.String{Data: "a\x01"}, "data: \"a\\x01\"\n"},
		{"String newline", &std_msgs.String{Data: "a\nb"}, "data: 'a\n\n  b'\n"},
		{"String document marker", &std_msgs.String{Data: "---"}, "data: '---'\n"},
		{"Clock", &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 100, Nanosec: 5}},
			"clock:\n  sec: 100\n  nanosec: 5\n"},
		{"Header", &std_msgs.Header{Stamp: builtin_interfaces.Time{Sec: -1}, FrameID: "map"},
			"stamp:\n  sec: -1\n  nanosec: 0\nframe_id: map\n"},
		{"Empty", &std_msgs.Empty{}, "{}\n"},
		{"Payload", &nros_bench.Payload{StampNs: 7, Data: []byte{1, 255}}, "stamp_ns: 7\ndata:\n- 1\n- 255\n"},
		{"Payload no data", &nros_bench.Payload{StampNs: 7}, "stamp_ns: 7\ndata: []\n"},
		{"Gid", &rmw_dds_common.Gid{}, "data:\n" + strings.Repeat("- 0\n", 16)},
		{"Gid Humble", &humble.Gid{}, "data:\n" + strings.Repeat("- 0\n", 24)},
		{"reflection fallback", &noYAML{FrameID: "x", StampNs: 3, Values: []float64{1, 0.1, 1e-5, 1e16, -2.5e20}, hidden: 7},
			"frame_id: x\nstamp_ns: 3\nstamp:\n  sec: 0\n  nanosec: 0\nvalues:\n- 1.0\n- 0.1\n- 1.0e-05\n- 1.0e+16\n- -2.5e+20\nhttp_servers: []\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := msg.ToYAML(tc.m); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	got := msg.ToYAML(info)
	for _, frag := range []string{
		"gid:\n  data:\n  - 1\n  - 16\n",
		"node_entities_info_seq:\n- node_namespace: /\n  node_name: talker\n  reader_gid_seq:\n  - data:\n    - 1\n    - 16\n",
		"- node_namespace: /\n  node_name: _hidden\n  reader_gid_seq: []\n  writer_gid_seq: []\n",
	} {
		if !strings.Contains(got, frag) {
			t.Errorf("ParticipantEntitiesInfo YAML lacks\n%s\nin\n%s", frag, got)
		}
	}
}

func TestYAMLTruncation(t *testing.T) {
	long := strings.Repeat("a", 130)
	got := msg.ToYAML(&std_msgs.String{Data: long})
	if want := "data: " + strings.Repeat("a", 128) + "...\n"; got != want {
		t.Fatalf("string truncation: %q", got)
	}
	got = msg.FormatYAML(&std_msgs.String{Data: long}, msg.YAMLOptions{})
	if want := "data: " + long + "\n"; got != want {
		t.Fatalf("full length: %q", got)
	}
	p := &nros_bench.Payload{Data: make([]byte, 200)}
	got = msg.ToYAML(p)
	if n := strings.Count(got, "- 0\n"); n != 128 || !strings.HasSuffix(got, "- 0\n- '...'\n") {
		t.Fatalf("array truncation: %d elements, tail %q", n, got[len(got)-20:])
	}
	got = msg.FormatYAML(p, msg.YAMLOptions{TruncateLength: 3})
	if want := "stamp_ns: 0\ndata:\n- 0\n- 0\n- 0\n- '...'\n"; got != want {
		t.Fatalf("truncate 3: %q", got)
	}
}

func TestFormatYAMLFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {1e-4, "0.0001"}, {1e-5, "1.0e-05"},
		{1.5e-7, "1.5e-07"}, {123456789012345.0, "123456789012345.0"}, {1e15, "1000000000000000.0"},
		{1e16, "1.0e+16"}, {1.2345e100, "1.2345e+100"}, {float64(float32(0.1)), "0.10000000149011612"},
		{3.14159, "3.14159"},
	}
	for _, tc := range tests {
		if got := msg.FormatYAMLFloat(tc.f); got != tc.want {
			t.Errorf("FormatYAMLFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}
