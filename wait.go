package nros

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/nros-go/nros/internal/clock"
)

// ErrTimeSourceChanged is returned by the waits of a Clock (SleepUntil,
// SleepFor) and is the cause of a WithRosDeadline context when the ROS time
// they wait on stops meaning what it meant when the wait began: the
// override was cleared (ClearRosTimeOverride), the first /clock sample
// replaced system time, or time jumped back to before the start of the wait
// (a bag loop, a simulator reset). The deadline may then never come, or
// come at a time that has nothing to do with the one asked for: the caller
// decides whether to wait again.
var ErrTimeSourceChanged = errors.New("nros: the ROS time source changed during the wait")

// ErrClockDeadlineExceeded is the cause (context.Cause) of a context made
// by WithRosDeadline or WithRosTimeout whose clock reached the deadline.
// errors.Is(err, context.DeadlineExceeded) is true for it, so code that
// checks for a timeout the usual way sees one.
var ErrClockDeadlineExceeded error = clockDeadlineError{}

type clockDeadlineError struct{}

func (clockDeadlineError) Error() string { return "nros: clock deadline exceeded" }

// Is makes errors.Is(ErrClockDeadlineExceeded, context.DeadlineExceeded) true.
func (clockDeadlineError) Is(target error) bool { return target == context.DeadlineExceeded }

// SleepUntil blocks the calling goroutine until the clock reads t or later,
// and returns nil then. It blocks nothing else: an executor callback may
// call it, because /clock samples are installed on the transport's
// goroutine (or by whoever calls TimeSource.Install), never on the
// executor's — but the executor that runs the callback runs nothing else
// until it returns.
//
// On a ROS clock driven by a time source it returns when an installed
// sample reaches t; while the simulation is paused it waits without
// spinning or polling, as long as ctx lets it. It returns
// ErrTimeSourceChanged when the time source changes under it (see that
// error) and ctx.Err() when ctx ends first. On a system or steady clock,
// and on a ROS clock that reads system time (no source, or no sample yet),
// it waits on a timer of the clock's context (the Go runtime's, unless
// WithClockTimers gave others).
func (c *Clock) SleepUntil(ctx context.Context, t Time) error {
	return c.sleep(ctx, c.begin(), t.ns)
}

// SleepFor blocks the calling goroutine until d has passed on the clock
// (from the time of the call), as SleepUntil(ctx, c.Now()+d) does: one
// second of simulated time on a driven ROS clock, however long that takes
// in real time. A zero or negative d returns at once (ctx.Err() if ctx has
// ended).
func (c *Clock) SleepFor(ctx context.Context, d Duration) error {
	b := c.begin()
	return c.sleep(ctx, b, addSat(b.now, int64(d)))
}

// WaitUntilStarted blocks the calling goroutine until a ROS clock has
// simulated time in force (Started: a first sample has arrived) and returns
// nil, or returns ctx.Err() when ctx ends first. It does not poll: the
// installing goroutine wakes it. System and steady clocks are always
// started. Bound it with a wall-time context (context.WithTimeout) when
// nothing may ever publish /clock.
func (c *Clock) WaitUntilStarted(ctx context.Context) error {
	if c.Started() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ready := make(chan struct{})
	var once sync.Once
	remove := c.ov.AddListener(func(ch clock.Change, _, _ int64) {
		// Listeners run after the mode is stored: Started is current.
		if ch == clock.Switch && c.ov.Started() {
			once.Do(func() { close(ready) })
		}
	})
	defer remove()
	defer c.ov.Want()()
	if c.Started() {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WithRosDeadline returns a copy of parent that ends when clk reads t or
// later, or when parent ends, or when cancel is called, whichever comes
// first. Nothing blocks: the goroutine that installs the sample reaching t
// ends the context.
//
// When clk reaches t, context.Cause of the returned context is
// ErrClockDeadlineExceeded and its Err is context.DeadlineExceeded (contexts
// derived from it report context.Canceled with the same cause). When the
// time source changes under it (see ErrTimeSourceChanged) it ends with that
// cause. Its Deadline method reports parent's wall-clock deadline only:
// simulated time has none. On a system or steady clock, and on a ROS clock
// that reads system time, a timer of the clock's context ends it (see
// WithClockTimers).
//
// Call cancel as soon as the work is done, to release the clock's listener.
func WithRosDeadline(parent context.Context, clk *Clock, t Time) (context.Context, context.CancelFunc) {
	return withClockDeadline(parent, clk, clk.begin(), t.ns)
}

// WithRosTimeout is WithRosDeadline(parent, clk, clk.Now()+d).
func WithRosTimeout(parent context.Context, clk *Clock, d Duration) (context.Context, context.CancelFunc) {
	b := clk.begin()
	return withClockDeadline(parent, clk, b, addSat(b.now, int64(d)))
}

func withClockDeadline(parent context.Context, clk *Clock, start waitStart, target int64) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancelCause(parent)
	rc := &clockDeadlineCtx{Context: inner}
	if inner.Err() != nil {
		return rc, func() { cancel(context.Canceled) }
	}
	w := clk.startWait(start, target, func(err error) {
		if err == nil {
			err = ErrClockDeadlineExceeded
		}
		cancel(err)
	})
	context.AfterFunc(inner, w.stop)
	return rc, func() { cancel(context.Canceled) }
}

// clockDeadlineCtx reports context.DeadlineExceeded when its clock passed
// the deadline.
type clockDeadlineCtx struct{ context.Context }

func (c *clockDeadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == ErrClockDeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// waitStart is the state of a clock when a wait began.
type waitStart struct {
	now    int64
	epoch  uint64 // ROS: the restart epoch in force
	driven bool   // ROS: a sample was in force
}

// begin reads the clock for a wait (ROS time and its restart state as one
// snapshot).
func (c *Clock) begin() waitStart {
	if c.typ != ROSTime {
		return waitStart{now: c.Now().ns}
	}
	c.ov.Fresh()
	s := c.ov.Snapshot()
	return waitStart{now: int64(s.Now), epoch: s.Epoch, driven: s.Driven()}
}

// sleep waits for target, a wait that began at start (both on c's clock).
func (c *Clock) sleep(ctx context.Context, start waitStart, target int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if start.now >= target {
		return nil
	}
	done := make(chan error, 1)
	w := c.startWait(start, target, func(err error) { done <- err })
	defer w.stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clockWait watches one clock until it reaches a target. finish is called
// exactly once (unless stop comes first), possibly on the installing
// goroutine with the override's lock held: it must not block or call into
// the override.
type clockWait struct {
	c      *Clock
	start  int64
	target int64

	mu       sync.Mutex
	finished bool
	stopped  bool
	finish   func(error)
	remove   func()
	unwant   func() // ends the wait's claim on the clock's feed
	tm       clock.Timer
}

// startWait begins watching. On a driven ROS clock a listener on the
// override finishes the wait; otherwise a real timer does (and, on a ROS
// clock, the listener reports the first sample as a source change).
func (c *Clock) startWait(start waitStart, target int64, finish func(error)) *clockWait {
	w := &clockWait{c: c, start: start.now, target: target, finish: finish}
	if c.typ == ROSTime {
		w.unwant = c.ov.Want()
		w.remove = c.ov.AddListener(w.onChange)
		// A restart between the start of the wait and the listener's
		// registration was not seen by the listener: judge it now.
		s := c.ov.Snapshot()
		if s.Epoch != start.epoch && (s.Driven() != start.driven || int64(s.At) < start.now) {
			w.done(ErrTimeSourceChanged)
			return w
		}
		if s.Driven() {
			if int64(s.Now) >= target {
				w.done(nil)
			}
			return w
		}
	}
	w.arm()
	return w
}

// onChange runs on the installing goroutine under the override's lock.
func (w *clockWait) onChange(ch clock.Change, _, after int64) {
	switch ch {
	case clock.Switch, clock.Cleared:
		w.done(ErrTimeSourceChanged)
	case clock.Backward:
		if after < w.start {
			w.done(ErrTimeSourceChanged)
		}
	case clock.Forward:
		if after >= w.target {
			w.done(nil)
		}
	}
}

// arm starts (or restarts) the real timer for the time still to wait on a
// clock that moves by itself.
func (w *clockWait) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished || w.stopped {
		return
	}
	left := w.target - w.c.now().ns
	if left <= 0 {
		w.finished = true
		w.finish(nil)
		return
	}
	if w.tm == nil {
		w.tm = w.c.ctx.src.AfterFunc(time.Duration(left), w.arm)
	} else {
		w.tm.Reset(time.Duration(left))
	}
}

func (w *clockWait) done(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished || w.stopped {
		return
	}
	w.finished = true
	if w.tm != nil {
		w.tm.Stop()
	}
	w.finish(err)
}

// stop releases the listener and the timer. It must not be called from
// finish.
func (w *clockWait) stop() {
	if w.remove != nil {
		w.remove()
	}
	if w.unwant != nil {
		w.unwant()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.tm != nil {
		w.tm.Stop()
	}
}

// addSat adds without overflowing.
func addSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}
