package msg_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/geometry_msgs"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/std_msgs"
)

// Byte layouts of ROS 2 messages on DDS (XCDR1, little-endian encapsulation) and the
// XCDR1 alignment rules (64-bit values align to 8 from the first body byte).
func TestGeneratedWireVectors(t *testing.T) {
	for _, c := range []struct {
		name string
		m    msg.Message
		hex  string // body, after 00 01 00 00
	}{
		{"SetParameters_Response one success", &rcl_interfaces.SetParameters_Response{
			Results: []rcl_interfaces.SetParametersResult{{Successful: true}}},
			"01000000 01000000 01000000 00"},
		{"ParameterValue bool", &rcl_interfaces.ParameterValue{Type: rcl_interfaces.ParameterType_PARAMETER_BOOL, BoolValue: true},
			// type, bool, pad to 8, int64, float64, string "", five empty sequences
			"0101000000000000 0000000000000000 0000000000000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"},
		{"SetParameters_Request use_sim_time", &rcl_interfaces.SetParameters_Request{Parameters: []rcl_interfaces.Parameter{{
			Name: "use_sim_time", Value: rcl_interfaces.ParameterValue{Type: 1, BoolValue: true}}}},
			// count, name (13 bytes with NUL), then the value's type and bool
			// right after it, one pad byte to reach offset 24 for the int64
			"01000000 0d000000 7573655f73696d5f74696d6500 0101 00 0000000000000000 0000000000000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"},
		{"PoseStamped", &geometry_msgs.PoseStamped{Header: std_msgs.Header{FrameID: "m"},
			Pose: geometry_msgs.Pose{Orientation: geometry_msgs.Quaternion{W: 1}}},
			// stamp, "m", pad to 16, 3 float64 position, x y z w
			"00000000 00000000 02000000 6d00 0000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 000000000000f03f"},
	} {
		got := hex.EncodeToString(msg.Marshal(c.m, true, nil))
		want := "00010000" + strings.ReplaceAll(c.hex, " ", "")
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
	if q := geometry_msgs.NewQuaternion(); q.W != 1 || q.X != 0 {
		t.Errorf("Quaternion default %+v, want w=1", q)
	}
	if m, _ := msg.New("geometry_msgs/msg/PoseStamped"); m.(*geometry_msgs.PoseStamped).Pose.Orientation.W != 1 {
		t.Error("msg.New does not apply nested defaults")
	}
}
