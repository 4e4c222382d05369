package nros_test

import (
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw/intra"
)

// A buffer of recent samples (a transform buffer, a filter's history) is
// meaningless once a bag loops back to its start: the times in it are in
// the future. A jump handler clears it, before any timer of the same sample
// runs. Timers need nothing: their period restarts at the landing point.
func ExampleClock_OnJump() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	node, _ := nros.NewNode("filter", nros.WithContext(ctx))
	clk := node.Clock()
	var history []nros.Time
	clk.OnJump(nros.JumpThreshold{MinBackward: nros.Duration(time.Second)}, func(j nros.TimeJump) {
		fmt.Printf("jumped back %v: dropping %d samples\n", time.Duration(-j.Delta), len(history))
		history = history[:0]
	})
	node.CreateTimer(clk, 500*time.Millisecond, func() {
		history = append(history, clk.Now())
		fmt.Println("sample at", clk.Now(), "history", len(history))
	})
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	exec.AddNode(node)

	bag := ctx.AttachTimeSource() // stands in for `ros2 bag play --loop --clock`
	for _, sim := range []float64{10, 10.5, 11, 11.5, 10, 10.5} {
		t, _ := nros.TimeFromSeconds(sim)
		bag.Install(t)
		exec.SpinSome()
	}
	// Output:
	// sample at 10.500000000 history 1
	// sample at 11.000000000 history 2
	// sample at 11.500000000 history 3
	// jumped back 1.5s: dropping 3 samples
	// sample at 10.500000000 history 1
}
