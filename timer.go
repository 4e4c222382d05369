package nros

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

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
type TimerOverrunPolicy = timer.Policy

const (
	// OverrunSkip (the default) coalesces the backlog into one activation,
	// counts the missed periods in Overruns and keeps the timer on its phase
	// grid.
	OverrunSkip TimerOverrunPolicy = timer.Skip
	// OverrunCatchUp replays every missed period. The replay is spread over
	// executor passes, one activation per pass, so that other callbacks run
	// in between.
	OverrunCatchUp TimerOverrunPolicy = timer.CatchUp
)

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
type Timer struct {
	id   uint64
	name string
	src  TimerClockSource
	cb   func()

	// host is the executor (or, before one is attached, the node) whose
	// lock guards the fields below.
	host atomic.Pointer[timerHost]
	dom  *domain
	st   timer.State
	hidx int // index in dom's heap, -1 when not in it
}

// ID returns a number unique to the timer in this process.
func (t *Timer) ID() uint64 { return t.id }

// Name returns the timer's name (WithTimerName), or "timer-<id>".
func (t *Timer) Name() string {
	if t.name != "" {
		return t.name
	}
	return fmt.Sprintf("timer-%d", t.id)
}

// ClockSource returns which clock advances the timer.
func (t *Timer) ClockSource() TimerClockSource { return t.src }

// Cancel stops the timer. Like time.Timer.Stop it returns true if the call
// stopped an active timer and false if it was already canceled (or was a
// one-shot timer that has fired). An activation that is due but whose
// callback has not started yet does not run.
func (t *Timer) Cancel() bool {
	h := t.lock()
	defer h.mu.Unlock()
	if t.st.Canceled {
		return false
	}
	t.st.Canceled = true
	h.unqueue(t)
	return true
}

// Reset restarts the period from now (on the timer's clock) and un-cancels
// the timer; any backlog is dropped. Like time.Timer.Reset it returns true
// if the timer was active and false if it had been canceled or had fired as
// a one-shot.
func (t *Timer) Reset() bool {
	h := t.lock()
	defer h.mu.Unlock()
	was := !t.st.Canceled
	t.st.Canceled = false
	t.st.Restart(t.dom.now())
	h.requeue(t)
	return was
}

// SetPeriod changes the period. As with time.Ticker.Reset, the next
// activation comes one new period from now, and the timer is un-canceled
// only if it was active. A zero or negative period is an error and changes
// nothing. It returns the old period.
func (t *Timer) SetPeriod(d time.Duration) (old time.Duration, err error) {
	if d <= 0 {
		return 0, fmt.Errorf("%w: %v", ErrBadPeriod, d)
	}
	h := t.lock()
	defer h.mu.Unlock()
	old = time.Duration(t.st.Period)
	t.st.Period = int64(d)
	t.st.Restart(t.dom.now())
	h.requeue(t)
	return old, nil
}

// Period returns the timer's period.
func (t *Timer) Period() time.Duration {
	h := t.lock()
	defer h.mu.Unlock()
	return time.Duration(t.st.Period)
}

// IsCanceled reports whether the timer is canceled (a one-shot timer that
// has fired counts as canceled).
func (t *Timer) IsCanceled() bool {
	h := t.lock()
	defer h.mu.Unlock()
	return t.st.Canceled
}

// Overruns returns how many periods the timer has missed so far: coalesced
// under OverrunSkip, replayed late under OverrunCatchUp.
func (t *Timer) Overruns() uint64 {
	h := t.lock()
	defer h.mu.Unlock()
	return t.st.Overruns
}

// Activations returns how many times the timer has fired.
func (t *Timer) Activations() uint64 {
	h := t.lock()
	defer h.mu.Unlock()
	return t.st.Activations
}

// TimeUntilNextCall returns the time, on the timer's clock, until the next
// activation: negative when one is overdue. A canceled timer gives
// ErrTimerCanceled. For a ROS-time timer under a paused simulation the
// value stays constant while wall time passes.
func (t *Timer) TimeUntilNextCall() (time.Duration, error) {
	h := t.lock()
	defer h.mu.Unlock()
	if t.st.Canceled {
		return 0, ErrTimerCanceled
	}
	return time.Duration(t.st.Until(t.dom.now())), nil
}

// lock locks the host that owns the timer now and returns it locked.
func (t *Timer) lock() *timerHost {
	for {
		h := t.host.Load()
		h.mu.Lock()
		if t.host.Load() == h {
			return h
		}
		h.mu.Unlock()
	}
}
