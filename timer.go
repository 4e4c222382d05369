package nros

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/exec"
	"github.com/nros-go/nros/internal/timer"
)

// TimerClockSource says which clock advances a timer.
type TimerClockSource uint8

const (
	// TimerClockSteady (the default) advances the timer by the monotonic
	// time the executor has already measured for its spin: it costs no
	// clock read per timer. Wall timers use it.
	TimerClockSteady TimerClockSource = iota
	// TimerClockRos advances the timer by ROS time: it follows a simulated
	// clock (paused, scaled, jumping) and reads system time when none is
	// installed.
	TimerClockRos
	// TimerClockSystem advances the timer by system (wall-clock) time.
	TimerClockSystem
)

// String names the clock source.
func (s TimerClockSource) String() string {
	switch s {
	case TimerClockRos:
		return "ros"
	case TimerClockSystem:
		return "system"
	}
	return "steady"
}

// TimerOverrunPolicy says what a timer does when several periods fall due
// at once (a forward jump of its clock, or an executor that was busy).
type TimerOverrunPolicy uint8

const (
	// OverrunSkip (the default) coalesces the backlog into one activation,
	// counts the missed periods in Overruns and keeps the timer on its phase
	// grid.
	OverrunSkip TimerOverrunPolicy = iota
	// OverrunCatchUp replays every missed period. The replay is spread over
	// executor passes, one activation per pass, so that other callbacks run
	// in between.
	OverrunCatchUp
)

// String names the policy as the command line spells it ("skip",
// "catch_up").
func (p TimerOverrunPolicy) String() string { return timer.Policy(p).String() }

// ParseOverrunPolicy reads "skip" or "catch_up" (also "catchup", "catch-up").
func ParseOverrunPolicy(s string) (TimerOverrunPolicy, error) {
	switch s {
	case "skip", "Skip", "SKIP":
		return OverrunSkip, nil
	case "catch_up", "catchup", "catch-up", "CatchUp", "CATCH_UP":
		return OverrunCatchUp, nil
	}
	return 0, fmt.Errorf("nros: unknown overrun policy %q (want skip or catch_up)", s)
}

// TimerOption configures a timer.
type TimerOption func(*timerConfig)

type timerConfig struct {
	policy    TimerOverrunPolicy
	oneShot   bool
	name      string
	autostart bool
}

// WithOverrunPolicy chooses the timer's overrun policy (OverrunSkip by default).
func WithOverrunPolicy(p TimerOverrunPolicy) TimerOption {
	return func(c *timerConfig) { c.policy = p }
}

// OneShot makes the timer fire once, one period after it starts, and then
// cancel itself.
func OneShot() TimerOption { return func(c *timerConfig) { c.oneShot = true } }

// WithTimerName names the timer in logs and panic reports.
func WithTimerName(name string) TimerOption { return func(c *timerConfig) { c.name = name } }

// WithAutostart(false) creates the timer canceled; Reset starts it.
func WithAutostart(on bool) TimerOption { return func(c *timerConfig) { c.autostart = on } }

// ErrBadPeriod reports a timer period that is zero or negative.
var ErrBadPeriod = errors.New("nros: timer period must be positive")

// ErrTimerCanceled is returned by TimeUntilNextCall on a canceled timer.
var ErrTimerCanceled = errors.New("nros: timer is canceled")

var timerIDs atomic.Uint64

// Timer calls a function periodically on the goroutine that spins its
// executor. Its methods are safe to call from any goroutine, including from
// its own callback.
//
// A timer is bound to its clock when it is created: a ROS-time timer sees
// every source switch and backward jump of its context's clock from then on,
// whether or not its node has joined an executor yet.
type Timer struct {
	src  TimerClockSource
	core *exec.Timer
}

func newTimer(ctx *Context, src TimerClockSource, period time.Duration, cb func(), opts []TimerOption) (*Timer, error) {
	if period <= 0 {
		return nil, fmt.Errorf("%w: %v", ErrBadPeriod, period)
	}
	if cb == nil {
		return nil, errors.New("nros: timer callback is nil")
	}
	clk := exec.Clock{Sources: ctx.src}
	switch src {
	case TimerClockSteady:
		clk.Kind = exec.Steady
	case TimerClockSystem:
		clk.Kind = exec.System
	case TimerClockRos:
		clk.Kind, clk.Ov = exec.Ros, ctx.ov
	default:
		return nil, fmt.Errorf("nros: unknown timer clock source %d", src)
	}
	cfg := timerConfig{autostart: true}
	for _, o := range opts {
		o(&cfg)
	}
	id := timerIDs.Add(1)
	return &Timer{src: src, core: exec.NewTimer(exec.Config{ID: id, Name: cfg.name, Clock: clk,
		Period: int64(period), Policy: timer.Policy(cfg.policy), OneShot: cfg.oneShot, Autostart: cfg.autostart, Callback: cb})}, nil
}

// ID returns a number unique to the timer in this process.
func (t *Timer) ID() uint64 { return t.core.ID() }

// Name returns the timer's name (WithTimerName), or "timer-<id>".
func (t *Timer) Name() string {
	if n := t.core.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("timer-%d", t.core.ID())
}

// ClockSource returns which clock advances the timer.
func (t *Timer) ClockSource() TimerClockSource { return t.src }

// Cancel stops the timer. Like time.Timer.Stop it returns true if the call
// stopped an active timer and false if it was already canceled (or was a
// one-shot timer that has fired). An activation that is due but whose
// callback has not started yet does not run.
func (t *Timer) Cancel() bool { return t.core.Cancel() }

// Reset restarts the period from now (on the timer's clock) and un-cancels
// the timer. Any backlog is dropped, and so is anything its clock did while
// the timer was stopped (a jump, a source switch): the next activation is
// one period from now. Like time.Timer.Reset it returns true if the timer
// was active and false if it had been canceled or had fired as a one-shot.
func (t *Timer) Reset() bool { return t.core.Reset() }

// SetPeriod changes the period. As with time.Ticker.Reset, the next
// activation comes one new period from now, and the timer is un-canceled
// only if it was active. A zero or negative period is an error and changes
// nothing. It returns the old period.
func (t *Timer) SetPeriod(d time.Duration) (old time.Duration, err error) {
	if d <= 0 {
		return 0, fmt.Errorf("%w: %v", ErrBadPeriod, d)
	}
	return time.Duration(t.core.SetPeriod(int64(d))), nil
}

// Period returns the timer's period.
func (t *Timer) Period() time.Duration { return time.Duration(t.core.Period()) }

// IsCanceled reports whether the timer is canceled (a one-shot timer that
// has fired counts as canceled).
func (t *Timer) IsCanceled() bool { return t.core.IsCanceled() }

// Overruns returns how many periods the timer has missed so far: coalesced
// under OverrunSkip, replayed late under OverrunCatchUp.
func (t *Timer) Overruns() uint64 { return t.core.Overruns() }

// Activations returns how many times the timer has fired.
func (t *Timer) Activations() uint64 { return t.core.Activations() }

// TimeUntilNextCall returns the time, on the timer's clock, until the next
// activation: negative when one is overdue. A canceled timer gives
// ErrTimerCanceled. For a ROS-time timer under a paused simulation the
// value stays constant while wall time passes; after a source switch or a
// backward jump it counts from the landing point, whether or not the timer
// has joined an executor yet.
func (t *Timer) TimeUntilNextCall() (time.Duration, error) {
	d, ok := t.core.Until()
	if !ok {
		return 0, ErrTimerCanceled
	}
	return time.Duration(d), nil
}
