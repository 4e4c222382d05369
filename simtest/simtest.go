// Package simtest runs time-dependent nodes in a test, deterministically:
// a simulated world whose wall time, system time and simulated (ROS) time
// the test steps, with no network, no sleeping and no goroutines of its own.
//
// A Sim owns a Context (on a private in-process transport) whose steady and
// system clocks read the Sim's wall time, an Executor for that context, and
// a simulator that publishes rosgraph_msgs/Clock on /clock. Every step —
// Advance, Pause, Jump, SetRate, Publish — changes the world and then runs
// the executor until nothing is ready (RunUntilIdle), so when the call
// returns every callback the step made due has run, on the test's
// goroutine.
//
//	sim := simtest.New(t)
//	node := sim.Node("controller")
//	ticks := sim.Ticks()
//	node.CreateTimer(node.Clock(), 100*time.Millisecond, ticks.Tick)
//	sim.Advance(time.Second) // ten activations, at 100.1 s ... 101.0 s
//	sim.Pause()
//	sim.Advance(time.Second) // none: the simulation is paused
//
// Wall time advances in steps of the clock period (WithClockPeriod, 10 ms by
// default); at every step the simulator publishes the current simulated time
// (also while paused, as ros2 bag play and Gazebo do) and the executor runs.
// Simulated time moves by the rate times the wall step.
//
// By default the Sim also installs its simulated time on the context
// directly, so the context's ROS clock follows it whatever the nodes'
// use_sim_time says; with ClockTopicOnly the ROS clock follows it only
// through nodes that subscribe to /clock (use_sim_time true).
//
// Callbacks run on the test's goroutine: a callback must not block on the
// Sim (a SleepFor on ROS time inside a callback would wait for a step that
// the blocked test cannot take). Waits on ROS time (Clock.SleepFor from a
// goroutine of the test's own, nros.WithRosTimeout) follow the steps: each
// step's install wakes them. Every other wait of the context runs on the
// Sim's wall time (nros.WithClockTimers): waits on the system and steady
// clocks, the executor's own sleeps and the clock-health warnings (5 s
// without a first /clock sample, 30 s of stall) fire on the step whose
// wall time reaches them.
package simtest

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// Defaults of a Sim.
const (
	// DefaultStart is the simulated time a Sim starts at.
	DefaultStart = 100 * time.Second
	// DefaultClockPeriod is the wall time between two /clock samples.
	DefaultClockPeriod = 10 * time.Millisecond
	// maxIdlePasses bounds RunUntilIdle: a callback that keeps making work
	// ready for ever fails the test instead of hanging it.
	maxIdlePasses = 100_000
)

// DefaultSystemStart is the system time (wall-clock date) a Sim starts at.
var DefaultSystemStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Option configures a Sim.
type Option func(*config)

type config struct {
	start       time.Duration
	systemStart time.Time
	rate        float64
	period      time.Duration
	topicOnly   bool
	logs        io.Writer
	started     bool
}

// WithStart sets the simulated time the world starts at (DefaultStart).
func WithStart(t time.Duration) Option { return func(c *config) { c.start = t } }

// WithSystemStart sets the system time (a date) the world starts at.
func WithSystemStart(t time.Time) Option { return func(c *config) { c.systemStart = t } }

// WithRate sets the initial real-time factor (1 by default).
func WithRate(r float64) Option { return func(c *config) { c.rate = r } }

// WithClockPeriod sets the wall time between two /clock samples.
func WithClockPeriod(d time.Duration) Option { return func(c *config) { c.period = d } }

// ClockTopicOnly makes the Sim only publish /clock: the context's ROS clock
// then follows the simulation only through nodes with use_sim_time true
// (or InstallRosTimeSource), as in a real deployment.
func ClockTopicOnly() Option { return func(c *config) { c.topicOnly = true } }

// WithLogOutput sends the context's node logs to w (discarded by default).
func WithLogOutput(w io.Writer) Option { return func(c *config) { c.logs = w } }

// NotStarted makes the simulator silent until Start: ROS time reads the
// Sim's system time until then.
func NotStarted() Option { return func(c *config) { c.started = false } }

// TB is the part of testing.TB a Sim uses: *testing.T and *testing.B
// satisfy it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// panicTB stands in for a test outside one (examples, tools): failures
// panic and nothing is cleaned up for the caller.
type panicTB struct{}

func (panicTB) Helper()                           {}
func (panicTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (panicTB) Cleanup(func())                    {}

// Sim is one simulated world. Its methods are meant for the test's
// goroutine; they are not safe for concurrent use with each other.
type Sim struct {
	t   TB
	cfg config

	ctx  *nros.Context
	tr   rmw.Transport
	exec *nros.Executor
	src  *nros.TimeSource
	pub  rmw.Publisher
	aux  *nros.Node // publishes and records on the test's behalf

	mu     sync.Mutex // guards the clocks, read from any goroutine
	steady int64      // wall time since the start, ns
	sim    int64      // simulated time, ns
	rate   float64
	paused bool
	on     bool // the simulator publishes
	buf    []byte

	pubs map[string]any // topic -> *nros.Publisher[T]

	timers *clock.ManualTimers // every wait of the context, on steadyNow

	played []*played // Play's
}

// New makes a world for t; a failure in any step fails t, and the world is
// closed when the test ends. Outside a test t may be nil: failures then
// panic, and the caller closes the world.
func New(t TB, opts ...Option) *Sim {
	if t == nil {
		t = panicTB{}
	}
	t.Helper()
	cfg := config{start: DefaultStart, systemStart: DefaultSystemStart, rate: 1, period: DefaultClockPeriod, logs: io.Discard, started: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.period <= 0 {
		t.Fatalf("simtest: clock period %v must be positive", cfg.period)
	}
	if cfg.rate < 0 || math.IsNaN(cfg.rate) || math.IsInf(cfg.rate, 0) {
		t.Fatalf("simtest: rate %v must be finite and not negative", cfg.rate)
	}
	s := &Sim{t: t, cfg: cfg, sim: int64(cfg.start), rate: cfg.rate, pubs: map[string]any{}}
	s.tr = intra.New(intra.WithNow(s.systemNow))
	s.timers = clock.NewManualTimers(s.steadyNow)
	s.ctx = nros.NewContext(nros.WithTransport(s.tr), nros.WithLogOutput(cfg.logs),
		nros.WithClockSources(s.steadyNow, s.systemNow),
		nros.WithClockTimers(func(d time.Duration, f func()) func() bool { return s.timers.AfterFunc(d, f).Stop }))
	s.exec = nros.NewExecutor(nros.WithExecutorContext(s.ctx), nros.WithPanicPolicy(nros.PanicStop))
	var err error
	if s.aux, err = nros.NewNode("simtest", nros.WithContext(s.ctx)); err != nil {
		t.Fatalf("simtest: %v", err)
	}
	s.pub, err = s.tr.NewPublisher(rmw.NodeInfo{Name: "simulator", Namespace: "/", Enclave: "/"}, nros.DefaultClockTopic,
		(&rosgraph_msgs.Clock{}).TypeName(), nros.ClockQoS(), rmw.EndpointOptions{})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	t.Cleanup(s.Close)
	if cfg.started {
		s.Start()
	}
	return s
}

// Close stops the world: the executor, the context and its transport.
func (s *Sim) Close() {
	s.exec.Close()
	s.ctx.Shutdown()
	s.tr.Close()
}

func (s *Sim) steadyNow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(time.Second) + s.steady
}

func (s *Sim) systemNow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.systemStart.UnixNano() + s.steady
}

// Context returns the world's context: make nodes with
// nros.WithContext(sim.Context()), or use Node.
func (s *Sim) Context() *nros.Context { return s.ctx }

// Executor returns the world's executor. The Sim spins it; do not call its
// Spin methods yourself while a step runs.
func (s *Sim) Executor() *nros.Executor { return s.exec }

// Node makes a node in the world and adds it to the executor; an error
// fails the test.
func (s *Sim) Node(name string, opts ...nros.NodeOption) *nros.Node {
	s.t.Helper()
	n, err := nros.NewNode(name, append([]nros.NodeOption{nros.WithContext(s.ctx)}, opts...)...)
	if err != nil {
		s.t.Fatalf("simtest: node %s: %v", name, err)
	}
	if err := s.exec.AddNode(n); err != nil {
		s.t.Fatalf("simtest: node %s: %v", name, err)
	}
	s.t.Cleanup(func() { n.Close() })
	s.RunUntilIdle()
	return n
}

// Start makes the simulator publish: the first /clock sample goes out now
// (a source switch for the ROS clock), and one per clock period from then
// on. New starts it unless NotStarted was given.
func (s *Sim) Start() {
	s.t.Helper()
	s.mu.Lock()
	was := s.on
	s.on = true
	s.mu.Unlock()
	if was {
		return
	}
	if !s.cfg.topicOnly && s.src == nil {
		s.src = s.ctx.AttachTimeSource()
	}
	s.publishClock()
	s.RunUntilIdle()
}

// StopClock makes the simulator go away: no more /clock samples, and the
// Sim's own time source is detached. The ROS clock keeps the last simulated
// time (it does not snap back to system time) until ClearRosTimeOverride.
// Wall time still advances with Advance.
func (s *Sim) StopClock() {
	s.t.Helper()
	s.mu.Lock()
	s.on = false
	s.mu.Unlock()
	if s.src != nil {
		s.src.Detach()
		s.src = nil
	}
	s.RunUntilIdle()
}

// Advance moves wall time forward by d, in clock-period steps: at each step
// the steady and system clocks move by the step, simulated time by the
// rate times the step (not while paused), the simulator publishes the
// simulated time, and the executor runs until idle.
func (s *Sim) Advance(d time.Duration) {
	s.t.Helper()
	for d > 0 {
		step := min(d, s.cfg.period, s.untilPlayed())
		d -= step
		s.mu.Lock()
		s.steady += int64(step)
		if s.on && !s.paused {
			s.sim += int64(math.Round(float64(step) * s.rate))
		}
		s.mu.Unlock()
		s.timers.Fire()
		s.publishClock()
		s.playDue()
		s.RunUntilIdle()
	}
}

// AdvanceSim moves wall time forward until simulated time has advanced by
// d at the current rate (Advance(d / rate)). It fails the test while
// paused, at rate 0 or with the simulator stopped.
func (s *Sim) AdvanceSim(d time.Duration) {
	s.t.Helper()
	s.mu.Lock()
	rate, ok := s.rate, s.on && !s.paused && s.rate > 0
	s.mu.Unlock()
	if !ok {
		s.t.Fatalf("simtest: AdvanceSim while simulated time stands still")
	}
	s.Advance(time.Duration(math.Round(float64(d) / rate)))
}

// Pause freezes simulated time; wall time goes on and the simulator keeps
// republishing the frozen time at each step.
func (s *Sim) Pause() {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

// Resume lets simulated time run again at the current rate.
func (s *Sim) Resume() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// SetRate sets the real-time factor (0.5: half speed, 2: twice as fast)
// from the next step on. A negative or non-finite rate fails the test.
func (s *Sim) SetRate(r float64) {
	s.t.Helper()
	if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		s.t.Fatalf("simtest: rate %v must be finite and not negative", r)
	}
	s.mu.Lock()
	s.rate = r
	s.mu.Unlock()
}

// Jump moves simulated time by d at once (negative: back, as a bag loop or
// a simulator reset does), publishes it, and runs the executor until idle.
// Wall time does not move.
func (s *Sim) Jump(d time.Duration) {
	s.t.Helper()
	s.mu.Lock()
	s.sim += int64(d)
	s.mu.Unlock()
	s.publishClock()
	s.RunUntilIdle()
}

// JumpTo sets simulated time to t at once (see Jump).
func (s *Sim) JumpTo(t time.Duration) {
	s.t.Helper()
	s.mu.Lock()
	s.sim = int64(t)
	s.mu.Unlock()
	s.publishClock()
	s.RunUntilIdle()
}

// SimTime returns the simulator's time (what it publishes on /clock).
func (s *Sim) SimTime() nros.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nros.TimeFromNanoseconds(s.sim)
}

// Now returns the context's ROS time (what nodes read).
func (s *Sim) Now() nros.Time { return s.ctx.Clock().Now() }

// Elapsed returns the wall time that has passed since the world began.
func (s *Sim) Elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.steady)
}

// publishClock sends the simulated time on /clock and installs it on the
// context (unless ClockTopicOnly), if the simulator is on.
func (s *Sim) publishClock() {
	s.t.Helper()
	s.mu.Lock()
	on, ns := s.on, s.sim
	s.mu.Unlock()
	if !on {
		return
	}
	t := nros.TimeFromNanoseconds(ns)
	if s.src != nil {
		s.src.Install(t)
	}
	sec, nsec, err := t.SecNanosec()
	if err != nil {
		s.t.Fatalf("simtest: simulated time %v: %v", t, err)
	}
	var m rosgraph_msgs.Clock
	m.Clock.Sec, m.Clock.Nanosec = sec, nsec
	s.buf = msg.Marshal(&m, true, s.buf[:0])
	if err := s.pub.Publish(s.buf); err != nil {
		s.t.Fatalf("simtest: publishing /clock: %v", err)
	}
}

// RunUntilIdle runs the executor until no callback is ready and returns how
// many ran. A callback panic fails the test, and so does work that never
// ends.
func (s *Sim) RunUntilIdle() int {
	s.t.Helper()
	total := 0
	for range maxIdlePasses {
		n, err := s.exec.SpinSome()
		if err != nil {
			s.t.Fatalf("simtest: %v", err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
	s.t.Fatalf("simtest: still busy after %d executor passes", maxIdlePasses)
	return total
}

// Ticks records when a callback ran: pass Tick (or call it from a
// callback) and read the activations back.
type Ticks struct {
	s  *Sim
	mu sync.Mutex
	at []Tick
}

// Tick is one recorded activation.
type Tick struct {
	Ros  nros.Time     // the context's ROS time
	Wall time.Duration // the Sim's wall time since it began
}

// Ticks returns an empty recorder of activations.
func (s *Sim) Ticks() *Ticks { return &Ticks{s: s} }

// Tick records an activation now. Use it as a timer callback
// (node.CreateTimer(clk, period, ticks.Tick)) or call it from one.
func (k *Ticks) Tick() {
	t := Tick{Ros: k.s.Now(), Wall: k.s.Elapsed()}
	k.mu.Lock()
	k.at = append(k.at, t)
	k.mu.Unlock()
}

// Count returns how many activations were recorded.
func (k *Ticks) Count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.at)
}

// All returns the recorded activations.
func (k *Ticks) All() []Tick {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Tick(nil), k.at...)
}

// Reset forgets the recorded activations.
func (k *Ticks) Reset() {
	k.mu.Lock()
	k.at = nil
	k.mu.Unlock()
}

// RosSeconds returns the ROS times of the activations in seconds, in the
// %.3f spelling ("100.100"), for comparison with a literal list.
func (k *Ticks) RosSeconds() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, len(k.at))
	for i, t := range k.at {
		out[i] = fmt.Sprintf("%.3f", t.Ros.Seconds())
	}
	return out
}

// Expect fails the test unless the activations happened at exactly these
// ROS times (seconds, %.3f) since the last Reset.
func (k *Ticks) Expect(t TB, rosSeconds ...string) {
	t.Helper()
	got := k.RosSeconds()
	if strings.Join(got, " ") != strings.Join(rosSeconds, " ") {
		t.Fatalf("activations at %v, want %v", got, rosSeconds)
	}
}

// ExpectCount fails the test unless n activations were recorded.
func (k *Ticks) ExpectCount(t TB, n int) {
	t.Helper()
	if got := k.Count(); got != n {
		t.Fatalf("%d activations, want %d (at %v)", got, n, k.RosSeconds())
	}
}
