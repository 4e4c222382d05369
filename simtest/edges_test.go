package simtest_test

// The edges of simulated time (the spec's table), each as a test on
// simtest: copy one to start a test of your own node.

import (
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/simtest"
)

// robot is a node with use_sim_time true, a 100 ms ROS-time timer and a
// 100 ms wall timer, both recorded.
type robot struct {
	sim       *simtest.Sim
	node      *nros.Node
	rosTimer  *nros.Timer
	ros, wall *simtest.Ticks
}

func newRobot(t *testing.T, policy nros.TimerOverrunPolicy, opts ...simtest.Option) *robot {
	r := &robot{sim: simtest.New(t, opts...)}
	r.node = r.sim.Node("robot", nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	r.ros, r.wall = r.sim.Ticks(), r.sim.Ticks()
	var err error
	if r.rosTimer, err = r.node.CreateTimer(r.node.Clock(), 100*time.Millisecond, r.ros.Tick, nros.WithOverrunPolicy(policy)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.node.CreateWallTimer(100*time.Millisecond, r.wall.Tick); err != nil {
		t.Fatal(err)
	}
	return r
}

// Paused: /clock stops advancing, ROS-time timers stop; wall timers keep
// their cadence.
func TestEdgePaused(t *testing.T) {
	r := newRobot(t, nros.OverrunSkip)
	r.sim.Advance(time.Second)
	r.ros.ExpectCount(t, 10)
	r.sim.Pause()
	r.sim.Advance(2 * time.Second)
	r.ros.ExpectCount(t, 10)
	r.wall.ExpectCount(t, 30)
	if got := r.node.Clock().Now(); got != nros.TimeFromNanoseconds(101e9) {
		t.Fatalf("paused clock reads %v, want 101 s", got)
	}
	r.sim.Resume()
	r.ros.Reset()
	r.sim.Advance(300 * time.Millisecond)
	r.ros.Expect(t, "101.100", "101.200", "101.300")
}

// Replayed at 0.5x or 2x: the timer tracks the rate.
func TestEdgeRate(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want int
	}{{0.5, 10}, {1, 20}, {2, 40}} {
		r := newRobot(t, nros.OverrunSkip, simtest.WithRate(tc.rate))
		r.sim.Advance(2 * time.Second)
		if r.ros.Count() != tc.want || r.wall.Count() != 20 {
			t.Fatalf("rate %v: %d ROS and %d wall activations in 2 s, want %d and 20", tc.rate, r.ros.Count(), r.wall.Count(), tc.want)
		}
	}
	// A rate change mid-run takes effect from the next step.
	r := newRobot(t, nros.OverrunSkip)
	r.sim.Advance(500 * time.Millisecond)
	r.sim.SetRate(0.5)
	r.sim.AdvanceSim(500 * time.Millisecond) // 1 s of wall time
	r.ros.ExpectCount(t, 10)
	if r.sim.Elapsed() != 1500*time.Millisecond {
		t.Fatalf("elapsed %v", r.sim.Elapsed())
	}
}

// A jump backwards restarts the period at the landing point.
func TestEdgeBackwardJump(t *testing.T) {
	for _, p := range []nros.TimerOverrunPolicy{nros.OverrunSkip, nros.OverrunCatchUp} {
		r := newRobot(t, p)
		r.sim.Advance(250 * time.Millisecond)
		r.sim.Jump(-5 * time.Second) // a bag loop: 100.25 s -> 95.25 s
		r.sim.Advance(250 * time.Millisecond)
		r.ros.Expect(t, "100.100", "100.200", "95.350", "95.450")
		if r.rosTimer.Overruns() != 0 {
			t.Fatalf("%v: overruns %d after a backward jump", p, r.rosTimer.Overruns())
		}
	}
}

// A jump forwards is a backlog: Skip coalesces it into one activation and
// counts the rest, CatchUp replays every missed period.
func TestEdgeForwardJump(t *testing.T) {
	skip := newRobot(t, nros.OverrunSkip)
	skip.sim.Advance(150 * time.Millisecond)
	skip.sim.Jump(time.Second) // 100.15 s -> 101.15 s
	skip.ros.Expect(t, "100.100", "101.150")
	if got := skip.rosTimer.Overruns(); got != 9 {
		t.Fatalf("skip: overruns %d, want 9 (100.2 ... 101.0 coalesced into the 101.1 activation)", got)
	}
	skip.sim.Advance(100 * time.Millisecond)
	skip.ros.ExpectCount(t, 3) // back on the grid: 101.2

	catch := newRobot(t, nros.OverrunCatchUp)
	catch.sim.Advance(150 * time.Millisecond)
	catch.sim.Jump(time.Second)
	// Ten missed periods replayed at once, all at the landing time.
	catch.ros.ExpectCount(t, 11)
	if got := catch.rosTimer.Overruns(); got != 9 {
		t.Fatalf("catch_up: overruns %d, want 9 (the periods replayed late)", got)
	}
}

// Unsubscribing does not reset the clock: the node keeps the last
// simulated time instead of snapping back to the wall.
func TestEdgeUnsubscribeKeepsTheLastTime(t *testing.T) {
	r := newRobot(t, nros.OverrunSkip, simtest.ClockTopicOnly())
	r.sim.Advance(time.Second)
	if got := r.node.Clock().Now(); got != nros.TimeFromNanoseconds(101e9) {
		t.Fatalf("clock %v, want 101 s", got)
	}
	if res := r.node.SetParameter(nros.Parameter{Name: nros.UseSimTimeParameter, Value: nros.BoolValue(false)}); !res.Successful {
		t.Fatal(res.Reason)
	}
	r.sim.Advance(time.Second) // the simulator goes on; the node no longer listens
	if got := r.node.Clock().Now(); got != nros.TimeFromNanoseconds(101e9) || !r.node.Clock().Started() {
		t.Fatalf("after unsubscribing the clock reads %v, want the last simulated time 101 s", got)
	}
	// The node subscribed after the simulator's first sample (a volatile
	// /clock is not replayed): its clock started with the sample at
	// 100.01 s, so the timer ran at 100.11 ... 100.91.
	r.ros.ExpectCount(t, 9)
	r.wall.ExpectCount(t, 20)
}

// Clearing is a source switch: ROS time reads system time again, and the
// timer restarts its period there instead of seeing a jump of decades.
func TestEdgeClearIsASourceSwitch(t *testing.T) {
	r := newRobot(t, nros.OverrunSkip)
	r.sim.Advance(time.Second)
	r.sim.StopClock()
	r.node.Clock().ClearRosTimeOverride()
	sys := simtest.DefaultSystemStart.Add(r.sim.Elapsed())
	if got := r.node.Clock().Now().Std(); !got.Equal(sys) || r.node.Clock().Started() {
		t.Fatalf("after clear: %v (started %v), want system time %v", got, r.node.Clock().Started(), sys)
	}
	r.ros.Reset()
	r.sim.Advance(250 * time.Millisecond)
	if r.ros.Count() != 2 || r.rosTimer.Overruns() != 0 {
		t.Fatalf("on system time: %d activations, %d overruns; want 2 and 0", r.ros.Count(), r.rosTimer.Overruns())
	}
	if d := r.ros.All()[1].Ros.Nanoseconds() - r.ros.All()[0].Ros.Nanoseconds(); d != 100e6 {
		t.Fatalf("activations %v apart on system time, want 100ms", d)
	}
}

// Before the first sample a ROS clock reads system time; the first sample
// is a source switch, not a backlog.
func TestEdgeFirstSample(t *testing.T) {
	r := newRobot(t, nros.OverrunSkip, simtest.NotStarted())
	r.sim.Advance(250 * time.Millisecond) // on the Sim's system time
	r.ros.ExpectCount(t, 2)
	r.sim.Start()
	r.ros.Reset()
	r.sim.Advance(200 * time.Millisecond)
	r.ros.Expect(t, "100.100", "100.200")
	if r.rosTimer.Overruns() != 0 {
		t.Fatalf("overruns %d after the first sample", r.rosTimer.Overruns())
	}
}

// Publish and Record: a node that echoes what it hears and reports on a
// ROS-time timer.
func TestPublishAndRecord(t *testing.T) {
	sim := simtest.New(t)
	node := sim.Node("echo")
	out, err := nros.NewPublisher[std_msgs.String](node, "/echo", nros.DefaultQoS())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nros.NewSubscription(node, "/chatter", nros.DefaultQoS(), func(m *std_msgs.String) {
		out.Publish(&std_msgs.String{Data: "echo: " + m.Data})
	}); err != nil {
		t.Fatal(err)
	}
	heard := simtest.Record[std_msgs.String](sim, "/echo")
	sim.Advance(time.Second)
	simtest.Publish(sim, "/chatter", &std_msgs.String{Data: "hello"})
	got := heard.All()
	if len(got) != 1 || got[0].Msg.Data != "echo: hello" || got[0].Ros != nros.TimeFromNanoseconds(101e9) || got[0].Wall != time.Second {
		t.Fatalf("recorded %+v", got)
	}
}
