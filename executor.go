package nros

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/timer"
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
	Kind  string // "timer" or "subscription"
	ID    uint64 // the timer's or subscription's ID
	Name  string // the timer's name, or the subscription's topic
	Value any    // what was passed to panic
	Stack []byte
}

func (e *CallbackPanicError) Error() string {
	return fmt.Sprintf("nros: %s %q (id %d) panicked: %v", e.Kind, e.Name, e.ID, e.Value)
}

// ErrAlreadySpinning is returned when Spin or SpinOnce is called while
// another goroutine is spinning the same executor.
var ErrAlreadySpinning = errors.New("nros: executor is already spinning")

// ExecutorOption configures an Executor.
type ExecutorOption func(*Executor)

// WithExecutorContext sets the context whose ROS clock RegisterTimerOnClock
// uses for TimerClockRos (DefaultContext by default).
func WithExecutorContext(c *Context) ExecutorOption { return func(e *Executor) { e.ctx = c } }

// WithPanicPolicy chooses what happens when a callback panics.
func WithPanicPolicy(p PanicPolicy) ExecutorOption { return func(e *Executor) { e.panicPolicy = p } }

// WithPanicHandler receives every recovered callback panic (instead of the
// log). It runs on the spinning goroutine.
func WithPanicHandler(fn func(*CallbackPanicError)) ExecutorOption {
	return func(e *Executor) { e.onPanic = fn }
}

// WithExecutorLogger sets the logger for executor diagnostics.
func WithExecutorLogger(l *slog.Logger) ExecutorOption { return func(e *Executor) { e.log = l } }

// Executor runs the callbacks of timers and subscriptions on the goroutine
// that calls Spin or SpinOnce, one at a time.
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

	host     timerHost // mu guards everything below and the timers' state
	steady   *domain
	system   *domain
	ros      map[*clock.Override]*domain
	ready    []readyEntity
	wake     chan struct{}
	spinning atomic.Bool

	// scratch reused by passes
	due []*Timer
	run []readyEntity

	waitTimer *time.Timer
	passes    atomic.Uint64 // passes run, for tests and diagnostics
}

// readyEntity is a unit of non-timer work (a subscription with queued
// messages). execute runs at most one callback and reports whether more
// work remains.
type readyEntity interface {
	execute(e *Executor) (more bool)
}

// NewExecutor returns an executor.
func NewExecutor(opts ...ExecutorOption) *Executor {
	e := &Executor{wake: make(chan struct{}, 1), ros: map[*clock.Override]*domain{}}
	e.host.exec = e
	for _, o := range opts {
		o(e)
	}
	if e.ctx == nil {
		e.ctx = DefaultContext()
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.steady = &domain{ref: clockRef{src: TimerClockSteady}}
	e.system = &domain{ref: clockRef{src: TimerClockSystem}}
	e.system.last = math.MinInt64
	return e
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
	return sysSource.Now() / 1000
}

// RegisterTimerOnClock creates a timer on the executor that src advances:
// TimerClockSteady (free, the executor's own spin time), TimerClockRos (the
// executor context's ROS clock, read on every evaluation) or
// TimerClockSystem. A zero or negative period is an error.
func (e *Executor) RegisterTimerOnClock(period time.Duration, src TimerClockSource, cb func(), opts ...TimerOption) (*Timer, error) {
	ref := clockRef{src: src}
	if src == TimerClockRos {
		ref.ov = e.ctx.ov
	} else if src != TimerClockSteady && src != TimerClockSystem {
		return nil, fmt.Errorf("nros: unknown timer clock source %d", src)
	}
	t, err := newTimer(ref, period, cb, opts)
	if err != nil {
		return nil, err
	}
	e.host.mu.Lock()
	t.host.Store(&e.host)
	e.attachLocked(t)
	e.host.mu.Unlock()
	e.Wake()
	return t, nil
}

func newTimer(ref clockRef, period time.Duration, cb func(), opts []TimerOption) (*Timer, error) {
	if period <= 0 {
		return nil, fmt.Errorf("%w: %v", ErrBadPeriod, period)
	}
	if cb == nil {
		return nil, errors.New("nros: timer callback is nil")
	}
	cfg := timerConfig{autostart: true}
	for _, o := range opts {
		o(&cfg)
	}
	t := &Timer{id: timerIDs.Add(1), name: cfg.name, src: ref.src, cb: cb, hidx: -1}
	t.dom = &domain{ref: ref} // parked until attached to an executor
	t.st = timer.New(ref.now(), int64(period), cfg.policy, cfg.oneShot)
	t.st.Canceled = !cfg.autostart
	return t, nil
}

// attachLocked moves a timer into one of the executor's heaps.
func (e *Executor) attachLocked(t *Timer) {
	d := e.domainFor(t.dom.ref)
	if d.waiter != nil {
		if d.h.Len() > 0 {
			// Apply pending restarts to the timers already there first,
			// so that they do not also move the new one's start back.
			d.observe(d.ref.ov.Now(), d.ref.ov)
		} else {
			d.epoch = d.ref.ov.LastRestart().Epoch
		}
	}
	t.dom = d
	if !t.st.Canceled {
		d.push(t)
	}
}

func (e *Executor) domainFor(ref clockRef) *domain {
	switch ref.src {
	case TimerClockSteady:
		return e.steady
	case TimerClockSystem:
		return e.system
	}
	d := e.ros[ref.ov]
	if d == nil {
		d = &domain{ref: ref, last: math.MinInt64}
		d.waiter = clock.NewWaiter(e.wake)
		ref.ov.AddWaiter(d.waiter)
		e.ros[ref.ov] = d
	}
	return d
}

// Wake makes a waiting Spin or SpinOnce run a pass now.
func (e *Executor) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// schedule queues a ready entity and wakes the executor (any goroutine).
func (e *Executor) schedule(r readyEntity) {
	e.host.mu.Lock()
	e.ready = append(e.ready, r)
	e.host.mu.Unlock()
	e.Wake()
}

// Spin runs callbacks until ctx is done. It returns nil when ctx ends, a
// *CallbackPanicError under PanicStop, or ErrAlreadySpinning.
func (e *Executor) Spin(ctx context.Context) error {
	if !e.spinning.CompareAndSwap(false, true) {
		return ErrAlreadySpinning
	}
	defer e.spinning.Store(false)
	for {
		if ctx.Err() != nil {
			return nil
		}
		wait := e.pass()
		if wait.err != nil {
			return wait.err
		}
		if wait.again {
			continue
		}
		if !e.wait(ctx.Done(), wait.d) {
			return nil
		}
	}
}

// SpinOnce waits up to timeout for a callback to become ready, then runs
// every callback that is ready (each at most once: a CatchUp backlog gets
// one activation per call) and returns. A timeout of zero only runs what is
// ready now. It returns a *CallbackPanicError under PanicStop, or
// ErrAlreadySpinning.
func (e *Executor) SpinOnce(timeout time.Duration) error {
	if !e.spinning.CompareAndSwap(false, true) {
		return ErrAlreadySpinning
	}
	defer e.spinning.Store(false)
	deadline := time.Now().Add(timeout)
	for {
		n, w := e.passCount()
		if w.err != nil || n > 0 {
			return w.err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		d := w.d
		if d < 0 || d > left {
			d = left
		}
		e.wait(nil, d)
	}
}

// passResult tells the loop how long it may wait.
type passResult struct {
	d     time.Duration // -1: no deadline (wait for a wake-up)
	again bool          // work is still ready: do not wait
	err   error
}

func (e *Executor) pass() passResult {
	_, r := e.passCount()
	return r
}

// passCount runs one pass: it collects what is due under the lock, runs the
// callbacks without it, and computes how long the loop may then wait.
func (e *Executor) passCount() (int, passResult) {
	e.passes.Add(1)
	e.host.mu.Lock()
	due := e.due[:0]
	due = e.steady.collect(due, e.steady.ref.now())
	if e.system.h.Len() > 0 {
		due = e.system.collect(due, e.system.observe(e.system.ref.now(), nil))
	}
	for _, d := range e.ros {
		if d.h.Len() > 0 {
			due = d.collect(due, d.observe(d.ref.ov.Now(), d.ref.ov))
		}
	}
	run := append(e.run[:0], e.ready...)
	clear(e.ready)
	e.ready = e.ready[:0]
	e.host.mu.Unlock()

	n := 0
	var err error
	for _, t := range due {
		if e.fireTimer(t) {
			n++
			if perr := e.invokeTimer(t); perr != nil && err == nil {
				err = perr
			}
		}
	}
	for _, r := range run {
		n++
		var more bool
		if perr := e.invokeEntity(r, &more); perr != nil && err == nil {
			err = perr
		}
		if more {
			e.host.mu.Lock()
			e.ready = append(e.ready, r)
			e.host.mu.Unlock()
		}
	}
	clear(due)
	e.due = due[:0]
	clear(run)
	e.run = run[:0]
	if err != nil {
		return n, passResult{err: err}
	}
	return n, e.nextWait()
}

// fireTimer applies one activation to a collected timer, if it is still due.
func (e *Executor) fireTimer(t *Timer) bool {
	h := t.lock()
	defer h.mu.Unlock()
	if h.exec != e || t.hidx < 0 {
		return false
	}
	d := t.dom
	if !t.st.Fire(d.last) {
		return false
	}
	if t.st.Canceled {
		d.remove(t)
	} else {
		d.fix(t)
	}
	return true
}

func (e *Executor) invokeTimer(t *Timer) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = e.reportPanic(&CallbackPanicError{Kind: "timer", ID: t.id, Name: t.Name(), Value: v, Stack: debug.Stack()})
		}
	}()
	t.cb()
	return nil
}

func (e *Executor) invokeEntity(r readyEntity, more *bool) (err error) {
	defer func() {
		if v := recover(); v != nil {
			kind, id, name := "subscription", uint64(0), ""
			if s, ok := r.(interface{ identity() (uint64, string) }); ok {
				id, name = s.identity()
			}
			err = e.reportPanic(&CallbackPanicError{Kind: kind, ID: id, Name: name, Value: v, Stack: debug.Stack()})
			*more = true // the entity keeps its remaining work
		}
	}()
	*more = r.execute(e)
	return nil
}

func (e *Executor) reportPanic(p *CallbackPanicError) error {
	if e.onPanic != nil {
		e.onPanic(p)
	} else {
		e.log.Error("callback panicked", "kind", p.Kind, "id", p.ID, "name", p.Name, "panic", fmt.Sprint(p.Value))
	}
	if e.panicPolicy == PanicStop {
		return p
	}
	return nil
}

// nextWait computes how long the loop may sleep before the next deadline.
func (e *Executor) nextWait() passResult {
	e.host.mu.Lock()
	defer e.host.mu.Unlock()
	if len(e.ready) > 0 {
		return passResult{again: true}
	}
	wait := time.Duration(-1)
	consider := func(until int64) {
		if until <= 0 {
			wait = 0
			return
		}
		if wait < 0 || time.Duration(until) < wait {
			wait = time.Duration(until)
		}
	}
	if top := e.steady.top(); top != nil {
		consider(top.st.Until(e.steady.ref.now()))
	}
	if top := e.system.top(); top != nil {
		consider(top.st.Until(e.system.ref.now()))
	}
	for _, d := range e.ros {
		top := d.top()
		if top == nil {
			d.waiter.Deadline.Store(math.MaxInt64)
			continue
		}
		ov := d.ref.ov
		if ov.Driven() {
			// Sleep until an install makes the timer due: publish the
			// deadline, then look once more (the install may have happened
			// before the deadline was visible to it).
			d.waiter.Deadline.Store(top.st.Next)
			if ov.LastRestart().Epoch != d.epoch || ov.Now() >= top.st.Next || !ov.Driven() {
				wait = 0
			}
			continue
		}
		d.waiter.Deadline.Store(math.MaxInt64)
		if ov.LastRestart().Epoch != d.epoch {
			wait = 0
			continue
		}
		consider(top.st.Until(ov.Now()))
	}
	if wait == 0 {
		return passResult{again: true}
	}
	return passResult{d: wait}
}

// wait blocks until a wake-up, d elapses (d < 0: no limit) or done closes.
// It reports false when done closed.
func (e *Executor) wait(done <-chan struct{}, d time.Duration) bool {
	var tc <-chan time.Time
	if d >= 0 {
		if e.waitTimer == nil {
			e.waitTimer = time.NewTimer(d)
		} else {
			e.waitTimer.Reset(d)
		}
		tc = e.waitTimer.C
		defer e.waitTimer.Stop()
	}
	select {
	case <-e.wake:
		return true
	case <-tc:
		return true
	case <-done:
		return false
	}
}

// timerHost is the lock that guards a timer: its executor's, or, before the
// timer is attached to one, its node's.
type timerHost struct {
	mu   sync.Mutex
	exec *Executor
}

func (h *timerHost) unqueue(t *Timer) {
	if h.exec != nil && t.hidx >= 0 {
		t.dom.remove(t)
	}
}

func (h *timerHost) requeue(t *Timer) {
	if h.exec == nil {
		return
	}
	if t.hidx >= 0 {
		t.dom.fix(t)
	} else if !t.st.Canceled {
		t.dom.push(t)
	}
	h.exec.Wake()
}

// clockRef says how to read a timer's clock.
type clockRef struct {
	src TimerClockSource
	ov  *clock.Override // for TimerClockRos
}

func (r clockRef) now() int64 {
	switch r.src {
	case TimerClockRos:
		return r.ov.Now()
	case TimerClockSystem:
		return sysSource.Now()
	}
	return clock.Steady.Now()
}

// domain is the heap of an executor's timers on one clock.
type domain struct {
	ref    clockRef
	h      timerHeap
	last   int64         // the clock reading of the latest pass
	epoch  uint64        // the restart epoch already applied (ROS)
	waiter *clock.Waiter // ROS only
}

// now reads the domain's clock (for timer queries).
func (d *domain) now() int64 { return d.ref.now() }

// observe records a new reading of the domain's clock. A restart event of
// the override (backward jump or source switch) or a reading that went
// backwards restarts the period of every timer at the landing point.
func (d *domain) observe(now int64, ov *clock.Override) int64 {
	if ov != nil {
		if r := ov.LastRestart(); r.Epoch != d.epoch {
			d.epoch = r.Epoch
			d.restartAll(r.At)
			// Time may have moved on since the landing point: timers see
			// that as ordinary elapsed time.
			if now < r.At {
				d.restartAll(now)
			}
			d.last = now
			return now
		}
	}
	if now < d.last {
		d.restartAll(now)
	}
	d.last = now
	return now
}

func (d *domain) restartAll(at int64) {
	for _, t := range d.h {
		t.st.Restart(at)
	}
	// Every deadline moved by its own period: re-establish the heap order.
	d.h.init()
}

// collect appends every due timer (heap order is not call order: the
// result is sorted by deadline, then creation).
func (d *domain) collect(due []*Timer, now int64) []*Timer {
	d.last = now
	start := len(due)
	due = d.h.appendDue(due, 0, now)
	if len(due)-start > 1 {
		slices.SortFunc(due[start:], func(a, b *Timer) int {
			if a.st.Next != b.st.Next {
				if a.st.Next < b.st.Next {
					return -1
				}
				return 1
			}
			if a.id < b.id {
				return -1
			}
			return 1
		})
	}
	return due
}

func (d *domain) top() *Timer {
	if len(d.h) == 0 {
		return nil
	}
	return d.h[0]
}

func (d *domain) push(t *Timer) { d.h.push(t) }
func (d *domain) fix(t *Timer)  { d.h.fix(t.hidx) }
func (d *domain) remove(t *Timer) {
	d.h.remove(t.hidx)
}

// timerHeap is a binary min-heap of timers by next deadline. Each timer
// knows its index, so fix and remove are O(log n).
type timerHeap []*Timer

// Len returns the number of timers.
func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.st.Next != b.st.Next {
		return a.st.Next < b.st.Next
	}
	return a.id < b.id
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}

func (h *timerHeap) push(t *Timer) {
	t.hidx = len(*h)
	*h = append(*h, t)
	h.up(t.hidx)
}

func (h *timerHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	t := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	t.hidx = -1
}

func (h timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h timerHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h timerHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h timerHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// appendDue walks the heap from i and appends the timers due at now; it
// visits only due timers and their children.
func (h timerHeap) appendDue(out []*Timer, i int, now int64) []*Timer {
	if i >= len(h) || h[i].st.Next > now {
		return out
	}
	out = append(out, h[i])
	out = h.appendDue(out, 2*i+1, now)
	return h.appendDue(out, 2*i+2, now)
}
