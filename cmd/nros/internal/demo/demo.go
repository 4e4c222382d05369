// Package demo is `nros demo`: an in-process simulated clock follows a
// script, publishes /clock over the in-process transport, and drives a node
// (use_sim_time true) with one ROS-time timer and one wall timer, so
// that every edge of simulated time (pause, rates, backward and forward
// jumps, the first sample replacing system time) shows on one timeline.
//
// Output (Config.Stdout, when not nil), one line per event:
//
//	clock <wall_unix_ns> <ros_time_ns>                  a /clock sample was published
//	ros   <wall_unix_ns> <ros_time_ns> <overruns_total> the ROS-time timer fired
//	wall  <wall_unix_ns> <ros_time_ns>                  the wall timer fired
//
// and a human summary on Config.Stderr: a header, then one line per script
// step as soon as the step is over, then the totals.
package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
	"github.com/nros-go/nros/cmd/nros/internal/timeline"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// DefaultScript walks through every edge of the spec in nine seconds.
const DefaultScript = "start=100.0;pause 1s;play 1x 2s;pause 1s;play 2x 1s;play 0.5x 2s;jump -5s;play 1x 1s;jump +10s;play 1x 1s"

// Config is what the command line sets.
type Config struct {
	Script     string
	Hz         float64
	Period     time.Duration // ROS-time timer
	WallPeriod time.Duration // wall timer
	Overrun    nros.TimerOverrunPolicy
	Stdout     io.Writer // the event lines; nil: none
	Stderr     io.Writer // the summary, step by step; nil: none
	// SVG, when set, receives the timeline as a picture once the script
	// has ended: ROS time against wall time, every timer activation
	// marked, the steps labelled.
	SVG io.Writer
}

// stepStats is what happened during one script step.
type stepStats struct {
	rosFires, wallFires, samples int
	overruns                     uint64
	simFirst, simLast            int64
	seen                         bool
}

// Run plays the script to its end and returns nil, or an error for a bad
// configuration or when ctx is canceled first.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Script == "" {
		cfg.Script = DefaultScript
	}
	if cfg.Hz == 0 {
		cfg.Hz = 100
	}
	if !(cfg.Hz > 0 && cfg.Hz <= MaxHz) {
		return fmt.Errorf("clock rate %v Hz: want more than 0 and at most %g", cfg.Hz, float64(MaxHz))
	}
	if cfg.Period == 0 {
		cfg.Period = 100 * time.Millisecond
	}
	if cfg.WallPeriod == 0 {
		cfg.WallPeriod = 100 * time.Millisecond
	}
	if cfg.Period < 0 || cfg.WallPeriod < 0 {
		return errors.New("timer periods must be positive")
	}
	script, err := clockscript.Parse(cfg.Script)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	steps := script.Steps()

	out := &lineWriter{}
	if cfg.Stdout != nil {
		out.w = bufio.NewWriter(cfg.Stdout)
	}
	defer out.flush()
	sum := &summary{cfg: cfg, steps: steps}
	sum.header()

	// The embedded default: an in-process transport, a simulator node
	// publishing /clock and the demo node with use_sim_time on, as a launch
	// file would set it.
	rctx := nros.NewContext(nros.WithLogOutput(io.Discard), nros.WithTransport(intra.New()))
	defer rctx.Shutdown()
	node, err := nros.NewNode("demo", nros.WithContext(rctx),
		nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	if err != nil {
		return err
	}
	defer node.Close()
	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	clk := node.Clock()

	var tl *timeline.Timeline
	if cfg.SVG != nil {
		tl = &timeline.Timeline{}
	}
	var mu sync.Mutex
	stats := make([]stepStats, len(steps)+1)
	var curStep atomic.Int64 // the step the latest sample belongs to
	start := time.Now()
	// An instant belongs to the step that led up to it: the sample at the
	// end of a play step carries that step's last sim time.
	stepAtWall := func(w time.Duration) int {
		if w > 0 {
			w--
		}
		_, st := script.SimAt(w)
		if st.Mode == clockscript.Ended {
			return steps[len(steps)-1].Index
		}
		return st.Step
	}
	index := func(idx int) int { // step index -> position in steps
		for i, s := range steps {
			if s.Index == idx {
				return i
			}
		}
		return len(steps)
	}

	var rosTimer *nros.Timer
	rosTimer, err = node.CreateTimer(clk, cfg.Period, func() {
		now := clk.Now().Nanoseconds()
		over := rosTimer.Overruns()
		out.printf("ros %d %d %d\n", time.Now().UnixNano(), now, over)
		tl.Add(timeline.Ros, time.Since(start), now)
		mu.Lock()
		s := &stats[curStep.Load()]
		s.rosFires++
		mu.Unlock()
	}, nros.WithOverrunPolicy(cfg.Overrun), nros.WithTimerName("ros"))
	if err != nil {
		return err
	}
	_, err = node.CreateWallTimer(cfg.WallPeriod, func() {
		wall := time.Now()
		out.printf("wall %d %d\n", wall.UnixNano(), clk.Now().Nanoseconds())
		tl.Add(timeline.Wall, wall.Sub(start), clk.Now().Nanoseconds())
		mu.Lock()
		stats[index(stepAtWall(wall.Sub(start)))].wallFires++
		mu.Unlock()
	}, nros.WithTimerName("wall"))
	if err != nil {
		return err
	}
	if err := exec.AddNode(node); err != nil {
		return err
	}
	src, err := newClockSource(rctx)
	if err != nil {
		return err
	}
	defer src.close()

	spinCtx, stopSpin := context.WithCancel(ctx)
	spun := make(chan error, 1)
	go func() { spun <- exec.Spin(spinCtx) }()

	var prevWall time.Duration = -1
	overBefore := uint64(0)
	for smp := range script.SampleSeq(cfg.Hz) {
		if d := time.Until(start.Add(smp.Wall)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				stopSpin()
				<-spun
				return ctx.Err()
			}
		}
		// A sample belongs to the jump that it is the first to carry, else
		// to the step in force at its instant.
		si := index(stepAtWall(smp.Wall))
		for i, s := range steps {
			if (s.Kind == clockscript.KindJump || s.Kind == clockscript.KindJumpTo) && s.WallStart > prevWall && s.WallStart <= smp.Wall {
				si = i
			}
		}
		prevWall = smp.Wall
		mu.Lock()
		// Overruns counted since the previous sample belong to the step the
		// previous sample was in.
		o := rosTimer.Overruns()
		stats[curStep.Load()].overruns += o - overBefore
		overBefore = o
		// The steps before the previous sample's are over, and their
		// timers have had at least one sample period to run (a wall
		// activation at a step's last instant included).
		sum.upTo(int(curStep.Load()), stats)
		curStep.Store(int64(si))
		s := &stats[si]
		if !s.seen {
			s.seen, s.simFirst = true, smp.Sim
		}
		s.simLast = smp.Sim
		s.samples++
		mu.Unlock()
		out.printf("clock %d %d\n", time.Now().UnixNano(), smp.Sim)
		tl.Add(timeline.Clock, smp.Wall, smp.Sim)
		if err := src.publish(smp.Sim); err != nil {
			stopSpin()
			<-spun
			return fmt.Errorf("publishing /clock: %w", err)
		}
	}
	if d := time.Until(start.Add(script.Duration())); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	stopSpin()
	if err := <-spun; err != nil {
		return err
	}
	// Run what fell due at the very end (a wall activation at the last
	// instant), so that the output does not depend on which goroutine woke
	// first.
	if ctx.Err() == nil {
		if err := exec.SpinOnce(0); err != nil {
			return err
		}
	}
	mu.Lock()
	stats[curStep.Load()].overruns += rosTimer.Overruns() - overBefore
	mu.Unlock()
	out.flush()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	mu.Lock()
	sum.upTo(len(steps), stats)
	mu.Unlock()
	sum.total(rosTimer.Overruns())
	if tl != nil {
		spans := make([]timeline.Span, len(steps))
		for i, s := range steps {
			spans[i] = timeline.Span{Start: s.WallStart, Label: s.Text}
		}
		title := fmt.Sprintf("nros demo: ROS time against wall time — ROS timer %v (%s), wall timer %v, /clock at %g Hz",
			cfg.Period, cfg.Overrun, cfg.WallPeriod, cfg.Hz)
		if err := tl.WriteSVG(cfg.SVG, title, spans, script.Duration()); err != nil {
			return fmt.Errorf("writing the picture: %w", err)
		}
	}
	return nil
}

// MaxHz is the highest /clock rate Run accepts.
const MaxHz = 1e6

// summary writes the human view to cfg.Stderr, a step at a time.
type summary struct {
	cfg                 Config
	steps               []clockscript.Step
	done                int // steps written
	totalRos, totalWall int
}

func (m *summary) header() {
	if m.cfg.Stderr == nil {
		return
	}
	c := m.cfg
	fmt.Fprintf(c.Stderr, "nros demo: ROS timer %v (%s), wall timer %v, /clock at %g Hz\n", c.Period, c.Overrun, c.WallPeriod, c.Hz)
}

// upTo writes the lines of the steps before position n.
func (m *summary) upTo(n int, stats []stepStats) {
	for ; m.done < n && m.done < len(m.steps); m.done++ {
		st := stats[m.done]
		m.totalRos += st.rosFires
		m.totalWall += st.wallFires
		if m.cfg.Stderr != nil {
			fmt.Fprintln(m.cfg.Stderr, stepLine(m.cfg, m.steps[m.done], st))
		}
	}
}

func (m *summary) total(overruns uint64) {
	if m.cfg.Stderr == nil {
		return
	}
	w := m.cfg.Stderr
	fmt.Fprintf(w, "  total: ROS timer %d activations, %d overruns; wall timer %d activations\n", m.totalRos, overruns, m.totalWall)
	fmt.Fprintln(w, "  (the first /clock sample replaced system time: a source switch, so the ROS period restarted there instead of counting a backlog)")
}

// stepLine describes what happened during one step.
func stepLine(cfg Config, s clockscript.Step, st stepStats) string {
	what := ""
	switch s.Kind {
	case clockscript.KindStart:
		what = fmt.Sprintf("sim starts at %s", clockscript.FormatSim(s.Sim))
	case clockscript.KindPlay:
		what = fmt.Sprintf("sim %s -> %s at %sx: ROS timer fired %d, wall timer %d", clockscript.FormatSim(s.SimBefore), clockscript.FormatSim(s.SimAfter), s.Rate, st.rosFires, st.wallFires)
	case clockscript.KindPause:
		what = fmt.Sprintf("sim held at %s: ROS timer fired %d (silent while paused), wall timer kept its cadence with %d", clockscript.FormatSim(s.SimBefore), st.rosFires, st.wallFires)
	case clockscript.KindStall:
		what = fmt.Sprintf("no /clock at all, sim stays %s: ROS timer fired %d, wall timer %d", clockscript.FormatSim(s.SimBefore), st.rosFires, st.wallFires)
	case clockscript.KindJump, clockscript.KindJumpTo:
		if s.SimAfter < s.SimBefore {
			what = fmt.Sprintf("backward jump %s -> %s: the ROS period restarts at the landing point (%d activations on that sample)", clockscript.FormatSim(s.SimBefore), clockscript.FormatSim(s.SimAfter), st.rosFires)
		} else {
			what = fmt.Sprintf("forward jump %s -> %s: a backlog, %s gave %d activations on that sample", clockscript.FormatSim(s.SimBefore), clockscript.FormatSim(s.SimAfter), cfg.Overrun, st.rosFires)
		}
	case clockscript.KindHz:
		what = fmt.Sprintf("publish rate now %s Hz", s.Rate)
	}
	if st.overruns > 0 {
		what += fmt.Sprintf(", overruns +%d", st.overruns)
	}
	return fmt.Sprintf("  step %-2d %-14s wall %6.2fs  %s", s.Index, s.Text, s.WallStart.Seconds(), what)
}

// lineWriter serialises whole lines from several goroutines; with no
// writer it drops them.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	fmt.Fprintf(l.w, format, args...)
	l.mu.Unlock()
}

func (l *lineWriter) flush() {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	l.w.Flush()
	l.mu.Unlock()
}

// clockSource is the simulator's side: a node publishing
// rosgraph_msgs/Clock on /clock with ClockQoS.
type clockSource struct {
	node *nros.Node
	pub  *nros.Publisher[rosgraph_msgs.Clock]
}

func newClockSource(c *nros.Context) (*clockSource, error) {
	n, err := nros.NewNode("sim_clock", nros.WithContext(c))
	if err != nil {
		return nil, err
	}
	p, err := nros.NewPublisher[rosgraph_msgs.Clock](n, nros.DefaultClockTopic, nros.ClockQoS())
	if err != nil {
		n.Close()
		return nil, err
	}
	return &clockSource{node: n, pub: p}, nil
}

func (c *clockSource) publish(sim int64) error {
	sec, nsec, err := nros.TimeFromNanoseconds(sim).SecNanosec()
	if err != nil {
		return err
	}
	return c.pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: sec, Nanosec: nsec}})
}

func (c *clockSource) close() { c.node.Close() }
