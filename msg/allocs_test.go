package msg_test

import (
	"os"
	"testing"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/nav_msgs"
	"github.com/nros-go/nros/msg/sensor_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

// Generated code allocates nothing beyond the message's own strings and
// slices: encoding into a large enough buffer allocates nothing, decoding
// into a reused message allocates only its strings (slices keep their
// storage).
func TestGeneratedAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts differ under -cover/-race")
	}
	img := &sensor_msgs.Image{Header: std_msgs.Header{FrameID: "cam"}, Height: 480, Width: 640,
		Encoding: "rgb8", Step: 1920, Data: make([]byte, 640*480*3)}
	imu, err := os.ReadFile("testdata/bags/walker_sensor_msgs.Imu_0.cdr")
	if err != nil {
		t.Fatal(err)
	}
	odom, err := os.ReadFile("testdata/bags/walker_nav_msgs.Odometry_0.cdr")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		data    []byte
		into    msg.Message
		strings float64 // strings in the message: one allocation each
	}{
		{"Imu", imu, new(sensor_msgs.Imu), 1},
		{"Odometry", odom, new(nav_msgs.Odometry), 2},
		{"Image", msg.Marshal(img, true, nil), new(sensor_msgs.Image), 2},
	} {
		if err := msg.Unmarshal(c.data, c.into); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, len(c.data)+64)
		if n := testing.AllocsPerRun(50, func() { buf = msg.Marshal(c.into, true, buf[:0]) }); n != 0 {
			t.Errorf("%s: Marshal allocates %.1f times", c.name, n)
		}
		if n := testing.AllocsPerRun(50, func() { _ = msg.Unmarshal(c.data, c.into) }); n > c.strings {
			t.Errorf("%s: Unmarshal allocates %.1f times, want at most %.0f (its strings)", c.name, n, c.strings)
		}
	}
}
