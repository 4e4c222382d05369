package gen_test

import (
	"strings"
	"testing"

	"github.com/nros-go/nros/internal/idl/gen"
	"github.com/nros-go/nros/internal/idl/interfaces"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/dynamic"
	"github.com/nros-go/nros/msg/sensor_msgs"
	_ "github.com/nros-go/nros/msg/std_msgs"
)

// The definitions given to bags name every nested type once, in the
// rosbag2 layout, msg/dynamic (which reads such definitions from bags)
// understands them, and the generated types carry exactly the text
// Definition computes from the shipped interface files.
func TestMessageDefinition(t *testing.T) {
	set := interfaces.NewSet()
	if err := set.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	want, err := gen.Definition(set, set.Lookup("sensor_msgs", "Imu"))
	if err != nil {
		t.Fatal(err)
	}
	def, ok := msg.Definition("sensor_msgs/msg/Imu")
	if !ok || def != want || def != new(sensor_msgs.Imu).MessageDefinition() {
		t.Fatalf("generated definition of sensor_msgs/msg/Imu (found %v):\n%s\nwant:\n%s", ok, def, want)
	}
	for _, want := range []string{"MSG: std_msgs/Header", "MSG: builtin_interfaces/Time", "MSG: geometry_msgs/Quaternion", "MSG: geometry_msgs/Vector3"} {
		if strings.Count(def, want+"\n") != 1 {
			t.Fatalf("%q appears %d times in:\n%s", want, strings.Count(def, want+"\n"), def)
		}
	}
	if !strings.HasPrefix(def, "std_msgs/Header header\n") || !strings.Contains(def, "\n"+strings.Repeat("=", 80)+"\nMSG: ") {
		t.Fatalf("layout:\n%s", def)
	}
	r := dynamic.NewRegistry()
	if err := r.AddConcatenated("sensor_msgs/msg/Imu", def); err != nil {
		t.Fatalf("msg/dynamic cannot read it: %v", err)
	}
	if _, ok := msg.Definition("no_such/msg/Type"); ok {
		t.Fatal("a definition for an unknown type")
	}
	if d, ok := msg.Definition("std_msgs/msg/String"); !ok || d != "string data\n" {
		t.Fatalf("std_msgs/msg/String: %q %v", d, ok)
	}
}
