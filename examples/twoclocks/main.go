// Command twoclocks runs two simulations in one process, each on its own
// simulated clock: one replays at real speed (1x), the other three times
// faster (3x). Each simulation is an nros.Context with a node whose
// use_sim_time is true and whose /clock is remapped to the simulation's own
// clock topic; a 10 Hz ROS-time timer on each node counts activations.
//
//	go run ./examples/twoclocks [-wall 2s]
//
// prints, after the given wall time, one line per simulation:
//
//	sim1x: 20 activations, ROS time 102.000000000
//	sim3x: 60 activations, ROS time 106.000000000
//
// Everything runs over one in-process transport: no network.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

func main() {
	wall := flag.Duration("wall", 2*time.Second, "how long to run, in wall time")
	flag.Parse() // a bad flag: exit 2 with the flag named
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "twoclocks: unexpected argument %q (only -wall DURATION)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *wall <= 0 {
		fmt.Fprintf(os.Stderr, "twoclocks: -wall %v: want a positive duration such as 2s\n", *wall)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *wall, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "twoclocks:", err)
		os.Exit(1)
	}
}

// run starts both simulations, lets them run for wall, and prints their
// timers' counts.
func run(ctx context.Context, wall time.Duration, out io.Writer) error {
	tr := intra.New()
	defer tr.Close()
	sims := make([]*simulation, 0, 2)
	for _, rate := range []float64{1, 3} {
		s, err := newSimulation(tr, fmt.Sprintf("sim%gx", rate), rate, 100*time.Second)
		if err != nil {
			return err
		}
		defer s.Close()
		sims = append(sims, s)
	}
	for _, s := range sims {
		s.Start()
	}
	select {
	case <-ctx.Done():
	case <-time.After(wall):
	}
	for _, s := range sims {
		s.Stop()
	}
	for _, s := range sims {
		fmt.Fprintf(out, "%s: %d activations, ROS time %v\n", s.Name, s.Activations(), s.Node.Clock().Now())
	}
	return nil
}

// simulation is one simulated world: a context of its own, a simulator
// publishing the world's clock, and a node following it.
type simulation struct {
	Name  string
	Ctx   *nros.Context
	Node  *nros.Node
	Timer *nros.Timer
	Exec  *nros.Executor

	rate   float64
	start  time.Duration // sim time at wall 0
	simPub *nros.Publisher[rosgraph_msgs.Clock]
	offset atomic.Int64 // ns added by Jump
	n      atomic.Uint64

	stop func()
	wg   sync.WaitGroup
}

// ClockHz is how often each simulator publishes its clock (wall time).
const ClockHz = 100

// newSimulation makes a world named name on tr whose simulated time starts
// at start and runs at rate times real time. Its clock is published on
// /<name>/clock; the node's command line remaps /clock there.
func newSimulation(tr rmw.Transport, name string, rate float64, start time.Duration) (*simulation, error) {
	s := &simulation{Name: name, rate: rate, start: start}
	s.Ctx = nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))
	topic := "/" + name + "/clock"
	simNode, err := nros.NewNode("simulator", nros.WithContext(s.Ctx), nros.WithNamespace(name))
	if err != nil {
		return nil, err
	}
	if s.simPub, err = nros.NewPublisher[rosgraph_msgs.Clock](simNode, topic, nros.ClockQoS()); err != nil {
		return nil, err
	}
	s.Node, err = nros.NewNode("controller", nros.WithContext(s.Ctx), nros.WithNamespace(name),
		nros.WithArguments("--ros-args", "-p", "use_sim_time:=true", "-r", "/clock:="+topic))
	if err != nil {
		return nil, err
	}
	s.Timer, err = s.Node.CreateTimer(s.Node.Clock(), 100*time.Millisecond, func() { s.n.Add(1) })
	if err != nil {
		return nil, err
	}
	s.Exec = nros.NewExecutor(nros.WithExecutorContext(s.Ctx))
	if err := s.Exec.AddNode(s.Node); err != nil {
		return nil, err
	}
	// The first sample, so that the timer starts on simulated time.
	if err := s.publish(0); err != nil {
		return nil, err
	}
	return s, nil
}

// Start runs the simulator (publishing the clock at ClockHz) and the node's
// executor, each on a goroutine of its own.
func (s *simulation) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.Exec.Spin(ctx)
	}()
	go func() {
		defer s.wg.Done()
		t0 := time.Now()
		tick := time.NewTicker(time.Second / ClockHz)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				s.publish(now.Sub(t0))
			}
		}
	}()
}

// publish sends the simulated time for wall time w since the start.
func (s *simulation) publish(w time.Duration) error {
	ns := int64(s.start) + int64(float64(w)*s.rate) + s.offset.Load()
	sec, nsec, err := nros.TimeFromNanoseconds(ns).SecNanosec()
	if err != nil {
		return err
	}
	var m rosgraph_msgs.Clock
	m.Clock.Sec, m.Clock.Nanosec = sec, nsec
	return s.simPub.Publish(&m)
}

// Jump moves this world's simulated time by d from the next sample on (a
// reset, a bag loop): only this world's clock and timers see it.
func (s *simulation) Jump(d time.Duration) { s.offset.Add(int64(d)) }

// Activations returns how many times the node's 10 Hz ROS timer fired.
func (s *simulation) Activations() uint64 { return s.n.Load() }

// Stop ends the simulator and the executor.
func (s *simulation) Stop() {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
}

// Close stops the world and shuts its context down.
func (s *simulation) Close() {
	s.Stop()
	s.Ctx.Shutdown()
}
