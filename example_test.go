package nros_test

import (
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros"
)

// A ROS-time timer follows whatever drives the context's clock. Here a
// TimeSource stands in for a /clock subscription: the timer fires only when
// simulated time crosses its deadlines, whatever the wall clock does.
func ExampleNode_CreateTimer() {
	ctx := nros.NewContext(nros.WithLogOutput(io.Discard))
	node, _ := nros.NewNode("example", nros.WithContext(ctx))
	clk := node.Clock()
	src := ctx.AttachTimeSource()
	src.Install(nros.TimeFromNanoseconds(100e9)) // the first sample: 100 s

	tm, _ := node.CreateTimer(clk, 100*time.Millisecond, func() {
		fmt.Println("tick at", clk.Now())
	})
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	exec.AddNode(node)

	for _, sim := range []float64{100.05, 100.1, 100.1, 100.35, 95.0, 95.1} {
		t, _ := nros.TimeFromSeconds(sim)
		src.Install(t)
		exec.SpinOnce(0)
	}
	fmt.Println("overruns:", tm.Overruns())
	// Output:
	// tick at 100.100000000
	// tick at 100.350000000
	// tick at 95.100000000
	// overruns: 1
}

// Time values convert to builtin_interfaces fields with ROS's floor rule.
func ExampleTime_SecNanosec() {
	t := nros.TimeFromNanoseconds(-500_000_000)
	sec, nsec, _ := t.SecNanosec()
	fmt.Println(sec, nsec)
	_, _, err := nros.TimeFromNanoseconds(1 << 62).SecNanosec()
	fmt.Println(err != nil)
	// Output:
	// -1 500000000
	// true
}
