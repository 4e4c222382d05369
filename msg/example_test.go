package msg_test

import (
	"fmt"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

func ExampleMarshal() {
	buf := msg.Marshal(&std_msgs.String{Data: "hello"}, true, nil)
	fmt.Printf("% x\n", buf)

	var s std_msgs.String
	if err := msg.Unmarshal(buf, &s); err != nil {
		panic(err)
	}
	fmt.Println(s.Data)
	// Output:
	// 00 01 00 00 06 00 00 00 68 65 6c 6c 6f 00
	// hello
}

func ExampleToYAML() {
	c := &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 100, Nanosec: 500}}
	fmt.Print(msg.ToYAML(c) + "---\n")
	// Output:
	// clock:
	//   sec: 100
	//   nanosec: 500
	// ---
}

func ExampleNew() {
	m, ok := msg.New("rosgraph_msgs::msg::dds_::Clock_")
	dds, _ := msg.DDSTypeName(m.TypeName())
	fmt.Println(ok, m.TypeName(), dds)
	// Output: true rosgraph_msgs/msg/Clock rosgraph_msgs::msg::dds_::Clock_
}
