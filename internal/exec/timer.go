package exec

import (
	"sync"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/timer"
)

// Kind says which clock advances a timer.
type Kind uint8

const (
	// Steady timers advance by the monotonic time the loop measured once
	// for its pass.
	Steady Kind = iota
	// Ros timers advance by ROS time and restart on its backward jumps and
	// source switches.
	Ros
	// System timers advance by system time and restart when it steps back.
	System
)

// Clock binds a timer to the clock that advances it.
type Clock struct {
	Kind    Kind
	Sources clock.Sources
	Ov      *clock.Override // for Ros
}

// reading is one consistent reading of a timer clock, as the int64
// nanoseconds the timer state machine works in. The conversion from the
// typed readings of internal/clock happens here only.
type reading struct {
	now     int64
	epoch   uint64 // restart epoch (Ros), 0 otherwise
	at      int64  // landing point of that restart
	started bool   // Ros time driven by samples: it never steps back without an epoch
}

func (c *Clock) read() reading {
	switch c.Kind {
	case Ros:
		s := c.Ov.Snapshot()
		return reading{now: int64(s.Now), epoch: s.Epoch, at: int64(s.At), started: s.Started}
	case System:
		return reading{now: int64(c.Sources.System())}
	}
	return reading{now: int64(c.Sources.Steady())}
}

// domainKey identifies the heap of a loop that a clock's timers share.
func (c *Clock) domainKey() domainKey { return domainKey{c.Kind, c.Ov} }

// Timer is one timer: its state machine, the clock that advances it and the
// restart epoch of that clock it has applied. It is bound to its clock when
// it is made, so it sees every restart of that clock (a source switch, a
// backward jump) whether or not it belongs to a loop yet.
//
// Its state is guarded by its own lock, which never moves. A loop keeps the
// timer in a heap under the loop's lock; the timer tells the loop when its
// state changed (Touch), and the loop re-keys it on its next pass.
type Timer struct {
	id   uint64
	name string
	clk  Clock
	cb   func()

	mu    sync.Mutex
	st    timer.State
	epoch uint64 // the clock's restart epoch applied to st
	last  int64  // the latest reading applied to st
	loop  *Loop

	// Guarded by loop.mu.
	dom   *domain
	hidx  int   // index in dom's heap, -1 when not in it
	key   int64 // st.Next as the loop last saw it
	dirty bool
}

// Config describes a new timer.
type Config struct {
	ID        uint64
	Name      string
	Clock     Clock
	Period    int64 // > 0
	Policy    timer.Policy
	OneShot   bool
	Autostart bool
	Callback  func()
}

// NewTimer makes a timer whose first deadline is one period after now on
// its clock.
func NewTimer(c Config) *Timer {
	t := &Timer{id: c.ID, name: c.Name, clk: c.Clock, cb: c.Callback, hidx: -1}
	r := t.clk.read()
	t.st = timer.New(r.now, c.Period, c.Policy, c.OneShot)
	t.st.Canceled = !c.Autostart
	t.epoch, t.last = r.epoch, r.now
	return t
}

// ID returns the timer's ID.
func (t *Timer) ID() uint64 { return t.id }

// Name returns the timer's name as given.
func (t *Timer) Name() string { return t.name }

// Kind returns the timer's clock kind.
func (t *Timer) Kind() Kind { return t.clk.Kind }

// syncLocked applies the restarts that reading r shows to the timer: a
// restart epoch newer than the timer's restarts the period at its landing
// point, and a clock that is not sample-driven and went back (or that the
// loop saw step back, stepBack) restarts it at r.now. It reports false when
// r is older than the timer's state (the timer was restarted from a newer
// reading): such a reading must not evaluate the timer. t.mu is held.
func (t *Timer) syncLocked(r reading, stepBack bool) bool {
	if r.epoch < t.epoch {
		return false
	}
	if r.epoch > t.epoch {
		t.st.Restart(r.at)
		t.epoch, t.last = r.epoch, r.at
	}
	if !r.started && (stepBack || r.now < t.last) {
		t.st.Restart(r.now)
		t.last = r.now
	}
	t.last = max(t.last, r.now)
	return true
}

// restartLocked restarts the period from r (Reset, SetPeriod): whatever
// happened to the clock before is forgotten. t.mu is held.
func (t *Timer) restartLocked(r reading) {
	t.st.Restart(r.now)
	t.epoch, t.last = max(t.epoch, r.epoch), r.now
}

// Cancel stops the timer; it reports whether it was active.
func (t *Timer) Cancel() bool {
	t.mu.Lock()
	was := !t.st.Canceled
	t.st.Canceled = true
	l := t.loop
	t.mu.Unlock()
	if was && l != nil {
		l.touch(t)
	}
	return was
}

// Reset restarts the period from now and un-cancels the timer, dropping any
// backlog and any restart of its clock while it was stopped. It reports
// whether the timer was active.
func (t *Timer) Reset() bool {
	t.mu.Lock()
	r := t.clk.read()
	was := !t.st.Canceled
	t.st.Canceled = false
	t.restartLocked(r)
	l := t.loop
	t.mu.Unlock()
	if l != nil {
		l.touch(t)
	}
	return was
}

// SetPeriod changes the period and restarts it from now; it returns the old
// period. period must be positive.
func (t *Timer) SetPeriod(period int64) (old int64) {
	t.mu.Lock()
	r := t.clk.read()
	old = t.st.Period
	t.st.Period = period
	t.restartLocked(r)
	l := t.loop
	t.mu.Unlock()
	if l != nil {
		l.touch(t)
	}
	return old
}

// Period returns the period.
func (t *Timer) Period() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Period
}

// IsCanceled reports whether the timer is canceled.
func (t *Timer) IsCanceled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Canceled
}

// Overruns returns the periods the timer missed.
func (t *Timer) Overruns() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Overruns
}

// Activations returns how many times the timer fired.
func (t *Timer) Activations() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Activations
}

// Until returns the time on the timer's clock until its next activation
// (negative when overdue), after applying every restart its clock has had;
// ok is false when the timer is canceled.
func (t *Timer) Until() (d int64, ok bool) {
	t.mu.Lock()
	r := t.clk.read() // under the lock: never older than the timer's state
	if t.st.Canceled {
		t.mu.Unlock()
		return 0, false
	}
	before := t.st.Next
	t.syncLocked(r, false)
	d = t.st.Until(r.now)
	moved := t.st.Next != before
	l := t.loop
	t.mu.Unlock()
	if moved && l != nil {
		l.touch(t)
	}
	return d, true
}
