package dynamic_test

import (
	"fmt"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/dynamic"
)

// A type known only from its definition (as a bag stores it) is decoded
// and printed as `ros2 topic echo` would.
func Example() {
	r := dynamic.NewRegistry()
	if err := r.AddMessage("my_msgs/msg/Reading", []byte("std_msgs/Header header\nfloat32[] values\nstring<=8 unit\n")); err != nil {
		panic(err)
	}
	typ, err := r.Type("my_msgs/msg/Reading")
	if err != nil {
		panic(err)
	}
	sample := []byte{0, 1, 0, 0, // CDR little endian
		5, 0, 0, 0, 0, 0, 0, 0, // stamp: sec 5, nanosec 0
		2, 0, 0, 0, 'm', 0, 0, 0, // frame_id "m", padding
		2, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0x41, // values [1.5, 10]
		3, 0, 0, 0, 'm', 'V', 0} // unit "mV"
	m := typ.New()
	if err := msg.Unmarshal(sample, m); err != nil {
		panic(err)
	}
	fmt.Print(msg.ToYAML(m))
	// Output:
	// header:
	//   stamp:
	//     sec: 5
	//     nanosec: 0
	//   frame_id: m
	// values:
	// - 1.5
	// - 10.0
	// unit: mV
}
