package dynamic_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/dynamic"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"

	_ "github.com/nros-go/nros/internal/fixture/testmsgs/example_interfaces"
	_ "github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	_ "github.com/nros-go/nros/msg/geometry_msgs"
	_ "github.com/nros-go/nros/msg/nav_msgs"
	_ "github.com/nros-go/nros/msg/rcl_interfaces"
	_ "github.com/nros-go/nros/msg/rosgraph_msgs"
	_ "github.com/nros-go/nros/msg/sensor_msgs"
	_ "github.com/nros-go/nros/msg/std_msgs"
	_ "github.com/nros-go/nros/msg/tf2_msgs"
)

func registry(t testing.TB) *dynamic.Registry {
	t.Helper()
	r := dynamic.NewRegistry()
	text, err := os.ReadFile("testdata/test_msgs.msg.Arrays.ros2msg")
	if err != nil {
		t.Fatal(err)
	}
	// The definitions rosbag2 stored for test_msgs/msg/Arrays (with
	// BasicTypes, Constants and Defaults appended).
	if err := r.AddConcatenated("test_msgs/msg/Arrays", string(text)); err != nil {
		t.Fatal(err)
	}
	// As rosbag2 stores a service's definition.
	if err := r.AddService("example_interfaces/srv/AddTwoInts", []byte("int64 a\nint64 b\n---\nint64 sum\n")); err != nil {
		t.Fatal(err)
	}
	return r
}

func sampleType(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".cdr")
	base = base[strings.IndexByte(base, '_')+1:]
	if strings.HasPrefix(base, "test_") {
		base = base[strings.IndexByte(base, '_')+1:]
	}
	base = base[:strings.LastIndexByte(base, '_')]
	if parts := strings.Split(base, "."); len(parts) == 3 { // pkg.srv.Name
		return strings.Join(parts, "/")
	}
	pkg, name, _ := strings.Cut(base, ".")
	return pkg + "/msg/" + name
}

// TestBagSamplesMatchGenerated decodes every recorded sample both with the
// generated type and dynamically: the YAML and the re-encoded bytes agree.
func TestBagSamplesMatchGenerated(t *testing.T) {
	r := registry(t)
	files, _ := filepath.Glob("../testdata/bags/*.cdr")
	if len(files) < 30 {
		t.Fatalf("%d samples", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := sampleType(f)
		gen, ok := msg.New(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if err := msg.Unmarshal(data, gen); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		typ, err := r.Type(name)
		if err != nil {
			t.Fatal(err)
		}
		dyn := typ.New()
		if err := msg.Unmarshal(data, dyn); err != nil {
			t.Fatalf("%s: dynamic: %v", f, err)
		}
		full := msg.YAMLOptions{}
		if a, b := msg.FormatYAML(gen, full), msg.FormatYAML(dyn, full); a != b {
			t.Errorf("%s: YAML differs\ngenerated:\n%s\ndynamic:\n%s", f, a, b)
		}
		a := msg.Marshal(gen, true, nil)
		b, err := msg.MarshalChecked(dyn, true, nil)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: dynamic encoding differs (%v)\n% x\n% x", f, err, a, b)
		}
	}
}

func TestTypeNames(t *testing.T) {
	r := dynamic.NewRegistry()
	for _, n := range []string{"sensor_msgs/msg/Imu", "sensor_msgs/Imu", "sensor_msgs::msg::dds_::Imu_"} {
		typ, err := r.Type(n)
		if err != nil || typ.Name() != "sensor_msgs/msg/Imu" {
			t.Errorf("%s: %v %v", n, typ, err)
		}
	}
	if _, err := r.Type("nope_msgs/msg/X"); err == nil || !strings.Contains(err.Error(), "no definition of nope_msgs/X") {
		t.Errorf("unknown type: %v", err)
	}
	if err := r.AddMessage("p/msg/A", []byte("B b\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddMessage("p/msg/B", []byte("A[] a\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Type("p/msg/A"); err == nil || !strings.Contains(err.Error(), "contains itself") {
		t.Errorf("recursive type: %v", err)
	}
	if err := r.AddConcatenated("p/msg/C", "int32 x\n====\nnot a header\n"); err == nil {
		t.Error("bad separator accepted")
	}
}

func TestEncodeChecks(t *testing.T) {
	r := dynamic.NewRegistry()
	typ, err := r.Type("rcl_interfaces/msg/ParameterDescriptor")
	if err != nil {
		t.Fatal(err)
	}
	m := typ.New()
	if v, _ := m.Get("name"); v != "" {
		t.Fatalf("zero name %#v", v)
	}
	rng, _ := r.Type("rcl_interfaces/msg/FloatingPointRange")
	m.Values[6] = []*dynamic.Message{rng.New(), rng.New()} // floating_point_range is [<=1]
	if _, err := msg.MarshalChecked(m, true, nil); !errors.Is(err, cdr.ErrTooLong) {
		t.Errorf("over bound: %v", err)
	}
	m = typ.New()
	m.Values[0] = 42 // name is a string
	if _, err := msg.MarshalChecked(m, true, nil); !errors.Is(err, cdr.ErrInvalid) {
		t.Errorf("wrong Go type: %v", err)
	}
	m = typ.New()
	m.Values[6] = []float64{1}
	if _, err := msg.MarshalChecked(m, true, nil); !errors.Is(err, cdr.ErrInvalid) {
		t.Errorf("wrong slice type: %v", err)
	}
	imu, _ := r.Type("sensor_msgs/msg/Imu")
	m = imu.New()
	m.Values[2] = make([]float64, 8) // orientation_covariance is float64[9]
	if _, err := msg.MarshalChecked(m, true, nil); !errors.Is(err, cdr.ErrInvalid) {
		t.Errorf("short fixed array: %v", err)
	}
	// A lying sequence count is refused before allocating.
	odom, _ := r.Type("tf2_msgs/msg/TFMessage")
	if err := msg.Unmarshal([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x0f}, odom.New()); !errors.Is(err, cdr.ErrTooLong) {
		t.Errorf("lying count: %v", err)
	}
}

func FuzzDynamicDecode(f *testing.F) {
	r := registry(f)
	files, _ := filepath.Glob("../testdata/bags/*.cdr")
	var types []*dynamic.Type
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
		typ, err := r.Type(sampleType(file))
		if err != nil {
			f.Fatal(err)
		}
		types = append(types, typ)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range types {
			m := typ.New()
			if msg.Unmarshal(data, m) != nil {
				continue
			}
			enc, err := msg.MarshalChecked(m, true, nil)
			if err != nil {
				t.Fatalf("%s: decoded value does not encode: %v", typ.Name(), err)
			}
			again := typ.New()
			if err := msg.Unmarshal(enc, again); err != nil {
				t.Fatalf("%s: re-encoded sample does not decode: %v", typ.Name(), err)
			}
			if b := msg.Marshal(again, true, nil); !bytes.Equal(b, enc) {
				t.Fatalf("%s: encoding not stable", typ.Name())
			}
			_ = msg.ToYAML(m)
		}
	})
}

func TestLoadDir(t *testing.T) {
	r := dynamic.NewRegistry()
	if err := r.Load("../../internal/idl/gen/testdata/interfaces"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"test_msgs/msg/MultiNested", "test_msgs/srv/Arrays_Event", "test_msgs/action/Fibonacci_SendGoal_Request",
		"example_interfaces/srv/AddTwoInts_Response"} {
		typ, err := r.Type(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if typ.Name() != n {
			t.Errorf("%s: name %s", n, typ.Name())
		}
	}
	if err := r.Load(t.TempDir()); err == nil {
		t.Error("an empty folder loads")
	}
}

// The generated rmw_dds_common codecs (Jazzy's, and Humble's in
// rmw_dds_common/humble) agree with a codec driven by the Humble and Jazzy
// definitions written out here.
func TestRmwDDSCommonMatchesDefinitions(t *testing.T) {
	for _, c := range []struct {
		size int
		gid  string
	}{{rmw_dds_common.GidSizeHumble, "char[24] data\n"}, {rmw_dds_common.GidSizeJazzy, "char[16] data\n"}} {
		r := dynamic.NewRegistry()
		for name, def := range map[string]string{
			"rmw_dds_common/msg/Gid":                     c.gid,
			"rmw_dds_common/msg/NodeEntitiesInfo":        "string<=256 node_namespace\nstring<=256 node_name\nGid[] reader_gid_seq\nGid[] writer_gid_seq\n",
			"rmw_dds_common/msg/ParticipantEntitiesInfo": "Gid gid\nNodeEntitiesInfo[] node_entities_info_seq\n",
		} {
			if err := r.AddMessage(name, []byte(def)); err != nil {
				t.Fatal(err)
			}
		}
		g := func(b byte) rmw_dds_common.Gid {
			var u [16]byte
			for i := range u {
				u[i] = b + byte(i)
			}
			return rmw_dds_common.GidFromGUID(u)
		}
		info := &rmw_dds_common.ParticipantEntitiesInfo{Gid: g(1),
			NodeEntitiesInfoSeq: []rmw_dds_common.NodeEntitiesInfo{
				{NodeNamespace: "/", NodeName: "talker", ReaderGidSeq: []rmw_dds_common.Gid{g(2)}, WriterGidSeq: []rmw_dds_common.Gid{g(3), g(4)}},
				{NodeNamespace: "/ns", NodeName: "x"},
			}}
		var m0 msg.Message = info
		if c.size == rmw_dds_common.GidSizeHumble {
			m0 = humble.FromCurrent(info)
		}
		data := msg.Marshal(m0, true, nil)
		typ, err := r.Type("rmw_dds_common/msg/ParticipantEntitiesInfo")
		if err != nil {
			t.Fatal(err)
		}
		m := typ.New()
		if err := msg.Unmarshal(data, m); err != nil {
			t.Fatalf("gid %d: %v", c.size, err)
		}
		if again := msg.Marshal(m, true, nil); !bytes.Equal(again, data) {
			t.Errorf("gid %d: the definitions encode differently\n% x\n% x", c.size, data, again)
		}
		nodes, _ := m.Get("node_entities_info_seq")
		if ns := nodes.([]*dynamic.Message); len(ns) != 2 {
			t.Errorf("gid %d: %d nodes", c.size, len(ns))
		} else if name, _ := ns[0].Get("node_name"); name != "talker" {
			t.Errorf("gid %d: node %v", c.size, name)
		}
	}
}
