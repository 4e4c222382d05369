package simtest_test

import (
	"fmt"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/simtest"
)

// Play a recorded talker into a simulated world, with /clock from bag time
// at 100 Hz: the listener, on simulated time, hears each message at its
// recorded offset and reads the bag time of the last /clock sample (10 ms
// grid). Nothing sleeps: the Sim steps wall time to every message.
func ExampleSim_Play() {
	sim := simtest.New(nil, simtest.NotStarted()) // the bag brings /clock
	defer sim.Close()
	listener := sim.Node("listener", nros.WithParameterOverrides(map[string]any{"use_sim_time": true}))
	nros.NewSubscription(listener, "/topic", nros.DefaultQoS(), func(m *std_msgs.String) {
		fmt.Printf("%q at wall %v, ROS time %v\n", m.Data, sim.Elapsed(), listener.Clock().Now())
	})

	b, err := bag.Open("../testdata/bags/talker_mcap")
	if err != nil {
		panic(err)
	}
	defer b.Close()
	p, err := play.New(sim.Node("rosbag2_player"), b, play.Options{Clock: sim.WallClock(), ClockRate: 100})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	sim.Play(p)
	sim.Advance(1200 * time.Millisecond)
	// Output:
	// "Hello, world! 0" at wall 197.697µs, ROS time 1585866235.112411371
	// "Hello, world! 1" at wall 500.563676ms, ROS time 1585866235.612411371
	// "Hello, world! 2" at wall 1.000620752s, ROS time 1585866236.112411371
}
