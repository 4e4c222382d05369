package nros

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/exec"
)

// PanicPolicy says what an executor does when a callback panics.
type PanicPolicy uint8

const (
	// PanicContinue (the default) recovers the panic, reports it (to the
	// panic handler, else the log) with the callback's identity, and keeps
	// running the other callbacks. The panicking timer stays scheduled.
	PanicContinue PanicPolicy = iota
	// PanicStop recovers the panic, reports it, and makes Spin / SpinOnce
	// return it as a *CallbackPanicError.
	PanicStop
)

// CallbackPanicError describes a callback that panicked.
type CallbackPanicError struct {
	// Kind is "timer", "subscription", "jump", "event" (an endpoint event
	// handler), "dropped" (a dropped-sample handler), or, for code that
	// runs on another goroutine, "decode" (a message's UnmarshalCDR, on the
	// transport's) or "action" (an action server's Execute).
	Kind  string
	ID    uint64 // the timer's or subscription's ID
	Name  string // the timer's name, or the subscription's topic
	Value any    // what was passed to panic
	Stack []byte
}

// Error names the callback and the panic value.
func (e *CallbackPanicError) Error() string {
	return fmt.Sprintf("nros: %s %q (id %d) panicked: %v", e.Kind, e.Name, e.ID, e.Value)
}

// ErrAlreadySpinning is returned when Spin or SpinOnce is called while
// another goroutine is spinning the same executor.
var ErrAlreadySpinning = errors.New("nros: executor is already spinning")

// ErrExecutorClosed is returned by Spin, SpinOnce, SpinSome and AddNode on
// an executor that was closed before the call.
var ErrExecutorClosed = errors.New("nros: executor is closed")

// ErrTimerOtherExecutor is returned when a timer that belongs to one
// executor is added to another.
var ErrTimerOtherExecutor = errors.New("nros: timer belongs to another executor")

// loopErr spells the run loop's errors as the package's own.
func loopErr(err error) error {
	switch err {
	case exec.ErrAlreadySpinning:
		return ErrAlreadySpinning
	case exec.ErrClosed:
		return ErrExecutorClosed
	case exec.ErrOtherLoop:
		return ErrTimerOtherExecutor
	}
	return err
}

// ExecutorOption configures an Executor.
type ExecutorOption func(*Executor)

// WithExecutorContext sets the context whose ROS clock RegisterTimerOnClock
// uses for TimerClockRos, and whose steady and system clocks the executor
// reads (DefaultContext by default).
func WithExecutorContext(c *Context) ExecutorOption { return func(e *Executor) { e.ctx = c } }

// WithPanicPolicy chooses what happens when a callback panics.
func WithPanicPolicy(p PanicPolicy) ExecutorOption { return func(e *Executor) { e.panicPolicy = p } }

// WithPanicHandler receives every recovered callback panic (instead of the
// log). It runs on the goroutine that recovered the panic: the spinning one
// for callbacks and handlers, a transport goroutine for decoding.
func WithPanicHandler(fn func(*CallbackPanicError)) ExecutorOption {
	return func(e *Executor) { e.onPanic = fn }
}

// WithExecutorLogger sets the logger for executor diagnostics.
func WithExecutorLogger(l *slog.Logger) ExecutorOption { return func(e *Executor) { e.log = l } }

// Executor runs the callbacks of timers and subscriptions, and jump
// handlers, one at a time, on the goroutine that calls Spin, SpinOnce or
// SpinSome; transports and time sources only queue work and wake it.
//
// Steady timers sit in a heap on the monotonic clock; system and ROS timers
// sit in heaps on their own clocks, so a spin costs nothing for timers that
// are not due. A ROS-time timer driven by a /clock source is woken by the
// sample that makes it due: a paused simulation costs no CPU.
type Executor struct {
	ctx         *Context
	panicPolicy PanicPolicy
	onPanic     func(*CallbackPanicError)
	log         *slog.Logger
	epochClock  atomic.Pointer[func() int64]
	loop        *exec.Loop
	// jumps are the registries of the contexts whose jumps this executor
	// delivers (its own context and those of the nodes added to it).
	jumps atomic.Pointer[[]*jumpRegistry]
	jmu   sync.Mutex // serialises changes of jumps
}

// NewExecutor returns an executor.
func NewExecutor(opts ...ExecutorOption) *Executor {
	e := &Executor{}
	for _, o := range opts {
		o(e)
	}
	if e.ctx == nil {
		e.ctx = DefaultContext()
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.loop = exec.New(exec.Options{Sources: e.ctx.src, Report: e.report, BeforeFire: e.deliverJumps})
	e.deliverJumpsOf(e.ctx)
	return e
}

// deliverJumpsOf makes the executor deliver the jumps of ctx's clock.
func (e *Executor) deliverJumpsOf(ctx *Context) {
	e.jmu.Lock()
	defer e.jmu.Unlock()
	var cur []*jumpRegistry
	if p := e.jumps.Load(); p != nil {
		cur = *p
	}
	for _, r := range cur {
		if r == ctx.jumps {
			return
		}
	}
	next := append(append([]*jumpRegistry(nil), cur...), ctx.jumps)
	e.jumps.Store(&next)
	ctx.jumps.addLoop(e.loop)
}

// deliverJumps runs in every pass, before timers fire. It returns the
// first stopping error of a panicking handler, for the pass to return.
func (e *Executor) deliverJumps() error {
	var err error
	if p := e.jumps.Load(); p != nil {
		for _, r := range *p {
			if rerr := r.deliver(e); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	return err
}

// report converts and reports a recovered panic; under PanicStop it returns
// the error that stops Spin.
func (e *Executor) report(p exec.PanicReport) error {
	perr := &CallbackPanicError{Kind: p.Kind, ID: p.ID, Name: p.Name, Value: p.Value, Stack: p.Stack}
	if e.onPanic != nil {
		e.onPanic(perr)
	} else {
		e.log.Error("callback panicked", "kind", perr.Kind, "id", perr.ID, "name", perr.Name, "panic", fmt.Sprint(perr.Value))
	}
	if e.panicPolicy == PanicStop {
		return perr
	}
	return nil
}

// SetEpochClock sets the clock that the age monitor compares message stamps
// against, in microseconds since the UNIX epoch (system time by default).
// It is deliberately separate from ROS time: see the age monitor's caveat.
func (e *Executor) SetEpochClock(fn func() int64) {
	if fn == nil {
		e.epochClock.Store(nil)
		return
	}
	e.epochClock.Store(&fn)
}

// epochNowUs reads the epoch clock.
func (e *Executor) epochNowUs() int64 {
	if p := e.epochClock.Load(); p != nil {
		return (*p)()
	}
	return int64(e.ctx.src.System()) / 1000
}

// RegisterTimerOnClock creates a timer on the executor that src advances:
// TimerClockSteady (free, the executor's own spin time), TimerClockRos (the
// executor context's ROS clock, read on every evaluation) or
// TimerClockSystem. A zero or negative period is an error.
func (e *Executor) RegisterTimerOnClock(period time.Duration, src TimerClockSource, cb func(), opts ...TimerOption) (*Timer, error) {
	t, err := newTimer(e.ctx, src, period, cb, opts)
	if err != nil {
		return nil, err
	}
	if err := e.loop.Add(t.core); err != nil {
		return nil, loopErr(err)
	}
	return t, nil
}

// Wake makes a waiting Spin or SpinOnce run a pass now.
func (e *Executor) Wake() { e.loop.Wake() }

// schedule queues a ready entity and wakes the executor (any goroutine).
func (e *Executor) schedule(r exec.Entity) { e.loop.Schedule(r) }

// Spin runs callbacks until ctx is done or the executor is closed. It
// returns nil then, a *CallbackPanicError under PanicStop,
// ErrAlreadySpinning, or ErrExecutorClosed if the executor was closed
// before the call.
func (e *Executor) Spin(ctx context.Context) error {
	if e.loop.Closed() {
		return ErrExecutorClosed
	}
	return loopErr(e.loop.Spin(ctx))
}

// SpinOnce waits up to timeout for a callback to become ready, then runs
// every callback that is ready (each at most once: a CatchUp backlog gets
// one activation per call) and returns. A timeout of zero only runs what is
// ready now. It returns a *CallbackPanicError under PanicStop,
// ErrAlreadySpinning, or ErrExecutorClosed.
func (e *Executor) SpinOnce(timeout time.Duration) error {
	if e.loop.Closed() {
		return ErrExecutorClosed
	}
	return loopErr(e.loop.SpinOnce(timeout))
}

// SpinSome runs every callback that is ready now, each at most once,
// without waiting, and returns how many ran (rclcpp's spin_some). Call it
// until it returns 0 to run a CatchUp backlog or a queue to the end.
func (e *Executor) SpinSome() (int, error) {
	if e.loop.Closed() {
		return 0, ErrExecutorClosed
	}
	n, err := e.loop.SpinSome()
	return n, loopErr(err)
}

// Close stops the executor: Spin returns, no callback starts after Close
// returns, and what the executor registered on its contexts' clocks is
// removed. If a callback is running on another goroutine, Close waits for
// it to return (not when called from a callback). Its nodes keep belonging
// to it (their timers and subscriptions stay quiet); close them too. It is
// safe to call twice.
func (e *Executor) Close() error {
	e.loop.Close()
	if p := e.jumps.Load(); p != nil {
		for _, r := range *p {
			r.removeLoop(e.loop)
		}
	}
	return nil
}

// ErrNilNode is what a nil *Node (the result of a NewNode that failed)
// gives instead of a nil-pointer crash: its methods panic with it, and the
// calls that take a node and return an error (CreateTimer,
// CreateWallTimer, Close, NewPublisher, NewSubscription,
// Executor.AddNode) return it.
var ErrNilNode = errors.New("nros: nil *Node: NewNode failed, check its error")
