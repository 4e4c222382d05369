package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
)

// monitorEvery is how often `nros clock --monitor` prints the rate and
// real-time factor.
const monitorEvery = time.Second

// clockMonitor is `nros clock --monitor [TOPIC]`: it listens to a clock
// topic (ClockQoS: best effort, which matches reliable and best-effort
// publishers alike) and prints, with the wall seconds since it started,
//
//	first sample: sim 100.000000000
//	rate 100.0 Hz, rtf 1.00, sim 101.000000000      (every second)
//	paused at sim 101.500000000
//	resumed at sim 101.510000000 after 0.500s
//	jump backward: 103.000000000 -> 98.000000000 (-5.000000000 s)
//	no sample for 1.0s (last sim 104.000000000)
//
// until SIGINT/SIGTERM. A pause is a sample repeating the previous time; a
// jump is any step back, or a step forward longer than 1 s and ten times
// the wall time since the previous sample.
func (e *cliEnv) clockMonitor(ctx context.Context, c *nros.Context, topic string, pos []string) error {
	if len(pos) > 1 {
		return usagef("--monitor takes at most one topic, got %q", pos)
	}
	if len(pos) == 1 {
		topic = pos[0]
	}
	node, err := nros.NewNode("nros_clock_monitor", nros.WithContext(c))
	if err != nil {
		return nodeError(err)
	}
	defer node.Close()
	resolved, err := node.ResolveTopicName(topic)
	if err != nil {
		return usagef("topic %q: %s", topic, cleanMessage(err))
	}
	m := &monitor{env: e, t0: e.clock.Now()}
	m.tr.SetWall(func() clock.SteadyTime { return clock.SteadyTime(e.clock.Now().Sub(m.t0)) })
	sub, err := c.Transport().NewSubscription(rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"},
		resolved, (&rosgraph_msgs.Clock{}).TypeName(), nros.ClockQoS(), m.deliver, rmw.EndpointOptions{})
	if err != nil {
		return fmt.Errorf("subscribing to %s: %w", resolved, err)
	}
	defer sub.Close()
	m.printf("listening on %s (best_effort, volatile, keep_last(1))", resolved)
	for next := monitorEvery; ; next += monitorEvery {
		if e.clock.SleepUntil(ctx, m.t0.Add(next)) != nil {
			return nil // SIGINT/SIGTERM: a normal end
		}
		m.report()
	}
}

// monitor tracks the samples of one clock topic.
type monitor struct {
	env *cliEnv
	t0  time.Time

	mu        sync.Mutex
	tr        clock.Tracker
	pausedAt  int64 // tracker wall time of the pause
	stalled   bool
	malformed uint64
}

// deliver runs on the transport's goroutine.
func (m *monitor) deliver(s rmw.Sample) {
	var c rosgraph_msgs.Clock
	if err := msg.Unmarshal(s.Data, &c); err != nil {
		m.mu.Lock()
		m.malformed++
		m.mu.Unlock()
		return
	}
	sim := nros.NewTime(c.Clock.Sec, c.Clock.Nanosec)
	m.mu.Lock()
	defer m.mu.Unlock()
	wall := m.tr.Now()
	prev := m.tr.Stats(wall).LastSim
	m.stalled = false
	switch m.tr.Observe(wall, sim.Nanoseconds()) {
	case clock.EventFirst:
		m.printfLocked("first sample: sim %v", sim)
	case clock.EventPaused:
		m.pausedAt = wall
		m.printfLocked("paused at sim %v", sim)
	case clock.EventResumed:
		m.printfLocked("resumed at sim %v after %.3fs", sim, float64(wall-m.pausedAt)/1e9)
	case clock.EventJumpBackward, clock.EventJumpForward:
		kind := "forward"
		if sim.Nanoseconds() < prev {
			kind = "backward"
		}
		m.printfLocked("jump %s: %v -> %v (%v s)", kind, nros.TimeFromNanoseconds(prev), sim,
			nros.Duration(sim.Nanoseconds()-prev))
	}
}

// report prints the rate line, or says once that samples stopped.
func (m *monitor) report() {
	m.mu.Lock()
	defer m.mu.Unlock()
	wall := m.tr.Now()
	s := m.tr.Stats(wall)
	switch {
	case s.Samples == 0:
		m.printfLocked("no sample yet")
	case s.Stalled:
		if !m.stalled {
			m.stalled = true
			m.printfLocked("no sample for %.1fs (last sim %v)", float64(wall-s.LastWall)/1e9, nros.TimeFromNanoseconds(s.LastSim))
		}
	default:
		paused := ""
		if s.Paused {
			paused = " (paused)"
		}
		m.printfLocked("rate %.1f Hz, rtf %.2f, sim %v%s", s.SampleRate, s.RealTimeFactor, nros.TimeFromNanoseconds(s.LastSim), paused)
	}
	if m.malformed > 0 {
		m.printfLocked("%d malformed sample(s) dropped", m.malformed)
		m.malformed = 0
	}
}

func (m *monitor) printf(format string, a ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.printfLocked(format, a...)
}

func (m *monitor) printfLocked(format string, a ...any) {
	fmt.Fprintf(m.env.stdout, "[%8.3f] %s\n", m.env.clock.Now().Sub(m.t0).Seconds(), fmt.Sprintf(format, a...))
}
