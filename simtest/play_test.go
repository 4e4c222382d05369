package simtest_test

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/sensor_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/simtest"
)

const walker = "../testdata/bags/walker_galactic_clock_sqlite3"

// heardImu is one /imu message as the node under test saw it.
type heardImu struct {
	stamp int64         // the message's header stamp
	ros   int64         // the node's ROS time in the callback
	wall  time.Duration // the Sim's wall time
}

// expectedImu reads the bag on its own: for each /imu message, its header
// stamp, when it must be published (wall time after the start of play, at
// rate 1: its offset into the bag, to the ns) and the ROS time the node
// must read then (the last recorded /clock sample published before it);
// and the recorded /clock samples.
func expectedImu(t *testing.T) (imu []heardImu, clock []int64) {
	t.Helper()
	b, err := bag.Open(walker)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Messages(bag.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	last := int64(-1)
	for {
		m, err := r.Next()
		if err == io.EOF {
			return imu, clock
		}
		if err != nil {
			t.Fatal(err)
		}
		switch m.Topic.Name {
		case "/clock":
			var c rosgraph_msgs.Clock
			if err := msg.Unmarshal(m.Data, &c); err != nil {
				t.Fatal(err)
			}
			last = nros.NewTime(c.Clock.Sec, c.Clock.Nanosec).Nanoseconds()
			clock = append(clock, last)
		case "/imu":
			var m2 sensor_msgs.Imu
			if err := msg.Unmarshal(m.Data, &m2); err != nil {
				t.Fatal(err)
			}
			imu = append(imu, heardImu{
				stamp: nros.NewTime(m2.Header.Stamp.Sec, m2.Header.Stamp.Nanosec).Nanoseconds(),
				ros:   last,
				wall:  time.Duration(m.Time - st.Start),
			})
		}
	}
}

// A real bag (a Gazebo recording with its simulator's /clock) plays through
// play.Player into a simulated world: a node with use_sim_time follows the
// recorded /clock, its ROS timer fires on the bag's simulated seconds, and
// its subscription hears every /imu message at the exact wall time of its
// offset into the bag, reading the ROS time of the last /clock before it.
// Everything is stepped by the test: run it with -count=5.
func TestPlayBagIntoSim(t *testing.T) {
	want, clock := expectedImu(t)
	if len(want) != 5187 { // MANIFEST.md
		t.Fatalf("%d /imu messages in the bag", len(want))
	}

	sim := simtest.New(t, simtest.NotStarted()) // the bag brings /clock
	node := sim.Node("robot", nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	var heard []heardImu
	if _, err := nros.NewSubscription(node, "/imu", nros.SensorDataQoS(), func(m *sensor_msgs.Imu) {
		heard = append(heard, heardImu{
			stamp: nros.NewTime(m.Header.Stamp.Sec, m.Header.Stamp.Nanosec).Nanoseconds(),
			ros:   node.Clock().Now().Nanoseconds(),
			wall:  sim.Elapsed(),
		})
	}); err != nil {
		t.Fatal(err)
	}
	ticks := sim.Ticks()
	if _, err := node.CreateTimer(node.Clock(), time.Second, ticks.Tick); err != nil {
		t.Fatal(err)
	}

	b, err := bag.Open(walker)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := play.New(sim.Node("rosbag2_player"), b, play.Options{Clock: sim.WallClock()})
	if err != nil {
		t.Fatal(err)
	}
	start := sim.Elapsed()
	sim.Play(p)
	sim.Advance(29 * time.Second)
	if st := p.Status(); st.Done {
		t.Fatalf("done after 29 s of a 29.59 s bag: %+v", st)
	}
	sim.Advance(time.Second)
	if st := p.Status(); !st.Done || st.Published != 10078 {
		t.Fatalf("after 30 s: %+v", st)
	}

	if len(heard) != len(want) {
		t.Fatalf("heard %d /imu messages, want %d", len(heard), len(want))
	}
	for i, h := range heard {
		w := want[i]
		w.wall += start
		if h != w {
			t.Fatalf("/imu %d: heard %+v, want %+v", i, h, w)
		}
	}
	// The first /clock sample (0.094 s) switches ROS time to the bag's
	// simulated time and the timer restarts there: it fires on the first
	// recorded sample at or after each simulated second since.
	var wantTicks []string
	for k, i := int64(1), 0; i < len(clock); i++ {
		if clock[i] >= clock[0]+k*1e9 {
			wantTicks = append(wantTicks, fmt.Sprintf("%.3f", float64(clock[i])/1e9))
			k++
		}
	}
	if len(wantTicks) != 26 || wantTicks[0] != "1.112" || wantTicks[25] != "26.107" {
		t.Fatalf("the recorded /clock crosses its seconds at %v", wantTicks)
	}
	ticks.Expect(t, wantTicks...)
	if got, want := sim.Now().Nanoseconds(), int64(26398000000); got != want {
		t.Fatalf("ROS time after the bag: %d, want the last recorded /clock %d", got, want)
	}
	if math.Abs(sim.Elapsed().Seconds()-30) > 1e-9 {
		t.Fatalf("wall time %v", sim.Elapsed())
	}
}

// heardString is one /topic message as the node under test saw it.
type heardString struct {
	data string
	ros  int64
	wall time.Duration
}

// The player's own /clock (ClockRate) at rate 2 drives the world's ROS
// time from bag time; its controls, used by the test between steps,
// pause, seek and loop the simulation.
func TestPlayBagClockAndControls(t *testing.T) {
	const talker = "../testdata/bags/talker_mcap"
	const bagStart = int64(1585866235112411371) // MANIFEST.md: the first /rosout
	const firstTopic = int64(1585866235112609068)

	sim := simtest.New(t, simtest.NotStarted())
	node := sim.Node("listener", nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	var heard []heardString
	if _, err := nros.NewSubscription(node, "/topic", nros.DefaultQoS(), func(m *std_msgs.String) {
		heard = append(heard, heardString{m.Data, node.Clock().Now().Nanoseconds(), sim.Elapsed()})
	}); err != nil {
		t.Fatal(err)
	}
	b, err := bag.Open(talker)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := play.New(sim.Node("rosbag2_player"), b, play.Options{
		Clock: sim.WallClock(), ClockRate: 100, Rate: 2, Loop: true, Topics: []string{"/topic"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Topics()) != 1 || p.Topics()[0].Name != "/topic" {
		t.Fatalf("topics %+v", p.Topics())
	}
	start := sim.Elapsed()
	sim.Play(p)
	if got := sim.Now().Nanoseconds(); got != bagStart {
		t.Fatalf("ROS time at the start: %d, want the bag's start %d", got, bagStart)
	}
	// At rate 2 the first message (0.198 ms into the bag) goes out 99 µs
	// after the start, after the first /clock sample (the bag's start).
	sim.Advance(time.Second)
	if len(heard) != 4 { // recorded every 0.5 s
		t.Fatalf("%d messages in the first second at 2x: %+v", len(heard), heard)
	}
	h := heard[0]
	if h.data != "Hello, world! 0" || h.ros != bagStart || h.wall != start+time.Duration((firstTopic-bagStart+1)/2) {
		t.Fatalf("first message %+v", h)
	}
	for i, h := range heard {
		// ROS time is that of the last 10 ms /clock sample: 20 ms of bag
		// time per sample.
		k := int64(h.wall-start) / int64(10*time.Millisecond)
		if h.ros != bagStart+k*20e6 {
			t.Fatalf("message %d at wall %v read ROS time %d, want %d", i, h.wall-start, h.ros-bagStart, k*20e6)
		}
	}
	if got := sim.Now().Nanoseconds(); got != bagStart+2e9 {
		t.Fatalf("ROS time after 1 s at 2x: +%d", got-bagStart)
	}

	p.Pause()
	sim.Advance(time.Second)
	if len(heard) != 4 || sim.Now().Nanoseconds() != bagStart+2e9 {
		t.Fatalf("paused: %d messages, ROS time +%d", len(heard), sim.Now().Nanoseconds()-bagStart)
	}
	if !p.PlayNext() {
		t.Fatal("play next refused")
	}
	sim.RunUntilIdle()
	if len(heard) != 5 || heard[4].data != "Hello, world! 4" {
		t.Fatalf("after play next: %+v", heard[4:])
	}
	p.SeekTo(bagStart + 4e9)
	p.Resume()
	sim.Advance(10 * time.Millisecond) // the seek's /clock sample, then the run
	if got := sim.Now().Nanoseconds(); got != bagStart+4e9+20e6 {
		t.Fatalf("after the seek: ROS time +%d", got-bagStart)
	}
	if len(heard) != 6 || heard[5].data != "Hello, world! 8" { // recorded 4.0007 s in
		t.Fatalf("after the seek: %+v", heard[5:])
	}
	// The bag ends 4.531 s in: 0.266 s of wall time later; the loop jumps
	// ROS time back to the start and plays /topic again from message 0.
	heard = heard[:0]
	sim.Advance(300 * time.Millisecond)
	if len(heard) != 2 || heard[0].data != "Hello, world! 9" || heard[1].data != "Hello, world! 0" {
		t.Fatalf("around the loop: %+v", heard)
	}
	if st := p.Status(); st.Loops != 1 || st.Published != 8 || st.Done {
		t.Fatalf("status %+v", st)
	}
	if heard[1].ros >= bagStart+1e9 {
		t.Fatalf("ROS time did not jump back: +%d", heard[1].ros-bagStart)
	}
}

// A player that does not read the Sim's wall time cannot be stepped by it:
// Play says so instead of playing in real time.
func TestPlayNeedsTheSimClock(t *testing.T) {
	b, err := bag.Open("../testdata/bags/talker_mcap")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sim := simtest.New(t)
	p, err := play.New(sim.Node("rosbag2_player"), b, play.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ft := &fatalTB{}
	other := simtest.New(ft)
	defer other.Close()
	func() {
		defer func() { recover() }()
		other.Play(p)
	}()
	if !strings.Contains(ft.msg, "sim.WallClock()") {
		t.Fatalf("Play with a real clock: %q", ft.msg)
	}
}

// fatalTB records the first failure and stops the failing call.
type fatalTB struct{ msg string }

func (*fatalTB) Helper()        {}
func (*fatalTB) Cleanup(func()) {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	if f.msg == "" {
		f.msg = fmt.Sprintf(format, args...)
	}
	panic(f)
}
