package gen_test

import (
	"strings"
	"testing"

	"github.com/nros-go/nros/internal/gen"
	"github.com/nros-go/nros/msg/dynamic"
)

// The definitions given to bags name every nested type once, in the
// rosbag2 layout, and msg/dynamic (which reads such definitions from bags)
// understands them.
func TestMessageDefinition(t *testing.T) {
	def, ok := gen.MessageDefinition("sensor_msgs/msg/Imu")
	if !ok {
		t.Fatal("no definition of sensor_msgs/msg/Imu")
	}
	for _, want := range []string{"MSG: std_msgs/Header", "MSG: builtin_interfaces/Time", "MSG: geometry_msgs/Quaternion", "MSG: geometry_msgs/Vector3"} {
		if strings.Count(def, want+"\n") != 1 {
			t.Fatalf("%q appears %d times in:\n%s", want, strings.Count(def, want+"\n"), def)
		}
	}
	if !strings.Contains(def, "\n"+strings.Repeat("=", 80)+"\nMSG: ") {
		t.Fatalf("separator:\n%s", def)
	}
	r := dynamic.NewRegistry()
	if err := r.AddConcatenated("sensor_msgs/msg/Imu", def); err != nil {
		t.Fatalf("msg/dynamic cannot read it: %v", err)
	}
	if _, ok := gen.MessageDefinition("no_such/msg/Type"); ok {
		t.Fatal("a definition for an unknown type")
	}
	if _, ok := gen.MessageDefinition("std_msgs/msg/String"); !ok {
		t.Fatal("std_msgs/msg/String")
	}
}
