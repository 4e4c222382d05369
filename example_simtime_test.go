package nros_test

import (
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// The README's program, with a simulator whose first /clock sample arrives
// after the timer is made but before its node joins the executor: the
// timer's period restarts at that sample (a source switch) exactly as if it
// had been attached all along, so it ticks 100 ms of simulated time later.
func Example_firstClockSampleBeforeAddNode() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	if _, err := ctx.Init([]string{"--ros-args", "-p", "use_sim_time:=true"}); err != nil {
		fmt.Println(err)
		return
	}
	node, err := nros.NewNode("hello", nros.WithContext(ctx))
	if err != nil {
		fmt.Println(err)
		return
	}
	clk := node.Clock()
	if _, err := node.CreateTimer(clk, 100*time.Millisecond, func() { fmt.Println("sim tick", clk.Now()) }); err != nil {
		fmt.Println(err)
		return
	}

	// A simulator on the same graph publishes /clock; its first sample
	// lands now, before AddNode.
	sim, _ := nros.NewNode("sim", nros.WithContext(ctx))
	clock, _ := nros.NewPublisher[rosgraph_msgs.Clock](sim, "/clock", nros.ClockQoS())
	publish := func(ms int64) {
		clock.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(ms / 1000), Nanosec: uint32(ms%1000) * 1e6}})
	}
	publish(100_000)

	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	defer exec.Close()
	if err := exec.AddNode(node); err != nil {
		fmt.Println(err)
		return
	}
	for _, ms := range []int64{100_050, 100_100, 100_150, 100_200, 100_300} {
		publish(ms)
		exec.SpinSome()
	}
	// Output:
	// sim tick 100.100000000
	// sim tick 100.200000000
	// sim tick 100.300000000
}
