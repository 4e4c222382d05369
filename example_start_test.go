package nros_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// Init takes the program's command line: the ROS arguments (after
// --ros-args) are kept for the nodes made afterwards, the others come
// back. nros.Init does this for the default context; a Context of one's
// own (here, to stay in process) has the same Init.
func ExampleInit() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	rest, err := ctx.Init([]string{"--verbose", "--ros-args", "-p", "period_ms:=250", "-r", "chatter:=/talk"})
	fmt.Println(rest, err)

	node, _ := nros.NewNode("talker", nros.WithContext(ctx))
	period, _ := node.DeclareParameter("period_ms", nros.IntegerValue(1000))
	topic, _ := node.ResolveTopicName("chatter")
	fmt.Println(period.ValueString(), topic)

	// A malformed ROS argument is an error that names it.
	_, err = nros.NewContext().Init([]string{"--ros-args", "-r", "clock"})
	fmt.Println(err)
	// Output:
	// [--verbose] <nil>
	// 250 /talk
	// invalid ROS argument "clock": -r: expected [node:]from:=to
}

// A publisher and a subscription of std_msgs/String; the subscription's
// callback runs on the executor that spins its node.
func ExampleNewPublisher() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	node, _ := nros.NewNode("chat", nros.WithContext(ctx))
	got := 0
	nros.NewSubscription[std_msgs.String](node, "/chatter", nros.DefaultQoS(), func(m *std_msgs.String) {
		got++
		fmt.Println("heard:", m.Data)
	})
	pub, _ := nros.NewPublisher[std_msgs.String](node, "/chatter", nros.DefaultQoS())
	for _, s := range []string{"hello", "world"} {
		pub.Publish(&std_msgs.String{Data: s})
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	exec.AddNode(node)
	for got < 2 {
		exec.SpinOnce(time.Second)
	}
	// Output:
	// heard: hello
	// heard: world
}

// use_sim_time turns simulated time on: from the command line
// (-p use_sim_time:=true), a params file, WithParameterOverrides or, as
// here, a set at runtime. The node's clock then follows /clock.
func Example_useSimTime() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	node, _ := nros.NewNode("follower", nros.WithContext(ctx))
	clk := node.Clock()
	fmt.Println("active:", clk.RosTimeIsActive())

	res := node.SetParameter(nros.Parameter{Name: nros.UseSimTimeParameter, Value: nros.BoolValue(true)})
	fmt.Println("set:", res.Successful, "active:", clk.RosTimeIsActive(), "started:", clk.Started())

	// A simulator publishes /clock; the first sample replaces system time.
	sim, _ := nros.NewNode("simulator", nros.WithContext(ctx))
	pub, _ := nros.NewPublisher[rosgraph_msgs.Clock](sim, "/clock", nros.ClockQoS())
	pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 42}})
	fmt.Println("started:", clk.Started(), "now:", clk.Now())

	// A value that is not a bool is refused, naming the parameter and the type.
	res = node.SetParameter(nros.Parameter{Name: nros.UseSimTimeParameter, Value: nros.StringValue("maybe")})
	fmt.Println(res.Successful, res.Reason)
	// Output:
	// active: false
	// set: true active: true started: false
	// started: true now: 42.000000000
	// false Wrong parameter type, parameter {use_sim_time} is of type {bool}, setting it to {string} is not allowed.
}

// Spin runs callbacks on the calling goroutine until its context ends;
// here a wall timer ends it after its third activation.
func ExampleExecutor_Spin() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	node, _ := nros.NewNode("spinner", nros.WithContext(ctx))
	spin, stop := context.WithCancel(context.Background())
	n := 0
	node.CreateWallTimer(10*time.Millisecond, func() {
		n++
		fmt.Println("activation", n)
		if n == 3 {
			stop()
		}
	})
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	exec.AddNode(node)
	err := exec.Spin(spin) // returns nil when spin is canceled
	fmt.Println("Spin returned", err)
	// Output:
	// activation 1
	// activation 2
	// activation 3
	// Spin returned <nil>
}
