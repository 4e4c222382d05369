package simtest_test

import (
	"fmt"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/simtest"
)

// A node with a 10 Hz ROS-time timer, stepped through a simulation that
// runs, pauses, runs at double speed and loops back. In a test, pass the
// *testing.T to New instead of nil: failures then fail the test and the
// world is closed when it ends.
func Example() {
	sim := simtest.New(nil) // simulated time starts at 100 s
	defer sim.Close()
	node := sim.Node("controller", nros.WithParameterOverrides(map[string]any{"use_sim_time": true}))
	ticks := sim.Ticks()
	node.CreateTimer(node.Clock(), 100*time.Millisecond, ticks.Tick)

	sim.Advance(300 * time.Millisecond)
	fmt.Println("running:", ticks.RosSeconds())

	ticks.Reset()
	sim.Pause()
	sim.Advance(time.Second)
	fmt.Println("paused:", ticks.Count(), "activations, clock at", node.Clock().Now())

	sim.Resume()
	sim.SetRate(2)
	sim.Advance(100 * time.Millisecond)
	fmt.Println("2x:", ticks.RosSeconds())

	ticks.Reset()
	sim.Jump(-5 * time.Second) // the bag loops
	sim.Advance(100 * time.Millisecond)
	fmt.Println("after the loop:", ticks.RosSeconds(), "wall elapsed", sim.Elapsed())
	// Output:
	// running: [100.100 100.200 100.300]
	// paused: 0 activations, clock at 100.300000000
	// 2x: [100.400 100.500]
	// after the loop: [95.600 95.700] wall elapsed 1.5s
}
