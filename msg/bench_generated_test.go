package msg_test

import (
	"os"
	"testing"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/sensor_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

// BenchmarkImu encodes and decodes a recorded sensor_msgs/Imu (324 bytes).
func BenchmarkImu(b *testing.B) {
	data, err := os.ReadFile("testdata/bags/walker_sensor_msgs.Imu_0.cdr")
	if err != nil {
		b.Fatal(err)
	}
	var m sensor_msgs.Imu
	if err := msg.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	benchCodec(b, &m, new(sensor_msgs.Imu), len(data))
}

// BenchmarkImage640x480 encodes and decodes a 640x480 rgb8
// sensor_msgs/Image (921,600 data bytes).
func BenchmarkImage640x480(b *testing.B) {
	m := &sensor_msgs.Image{
		Header:   std_msgs.Header{FrameID: "camera_optical_frame"},
		Height:   480,
		Width:    640,
		Encoding: "rgb8",
		Step:     640 * 3,
		Data:     make([]byte, 640*480*3),
	}
	for i := range m.Data {
		m.Data[i] = byte(i)
	}
	benchCodec(b, m, new(sensor_msgs.Image), len(m.Data))
}
