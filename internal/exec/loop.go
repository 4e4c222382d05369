// Package exec is the executor of nros-go: a run loop that owns its timers'
// heaps, its queue of ready work and its clock domains, and runs callbacks one
// at a time on the goroutine that holds its run token (the one in Spin,
// SpinOnce or SpinSome).
//
// Who owns what:
//   - A Timer's state (internal/timer) is guarded by the timer's own lock,
//     which never moves; the timer is bound to its clock (and so to that
//     clock's restart epochs) when it is made, not when it joins a loop.
//   - The heaps, the ready queue and the domains are guarded by the loop's
//     lock. The lock order is loop, then timer. Neither lock is ever held
//     while a user callback runs.
//   - Timer methods change the timer and tell its loop (touch); the loop
//     re-keys touched timers on its next pass.
//
// A pass reads each clock once (a ROS clock as one consistent snapshot of
// its time and restart epoch), applies restarts, collects the due timers,
// then fires them one by one, re-checking each under its lock so that a
// cancel that lands before the callback starts wins.
package exec

import (
	"context"
	"errors"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/goid"
)

// ErrAlreadySpinning is returned when a loop is spun from two goroutines.
var ErrAlreadySpinning = errors.New("nros: executor is already spinning")

// ErrClosed is returned by operations on a closed loop.
var ErrClosed = errors.New("nros: executor is closed")

// ErrOtherLoop is returned when a timer already belongs to another loop.
var ErrOtherLoop = errors.New("nros: timer belongs to another executor")

// Entity is non-timer work (a subscription with queued messages).
type Entity interface {
	// Execute runs at most one callback and reports whether more work
	// remains.
	Execute() (more bool)
	// Identity names the entity in panic reports.
	Identity() (kind string, id uint64, name string)
}

// PanicReport describes a callback that panicked.
type PanicReport struct {
	Kind  string
	ID    uint64
	Name  string
	Value any
	Stack []byte
}

// Options configure a loop.
type Options struct {
	// Sources are the steady and system clocks the loop reads.
	Sources clock.Sources
	// Report receives every recovered panic, on the goroutine that ran the
	// callback; a non-nil result stops Spin with that error.
	Report func(PanicReport) error
	// BeforeFire, if set, runs in every pass after the clocks are read and
	// before any timer fires, on the goroutine running the pass with no
	// lock held (jump handlers run there). A non-nil result (a handler's
	// panic under a stopping policy) is what that pass returns, after its
	// due timers and ready work ran, as a panicking timer's would be.
	BeforeFire func() error
}

// Loop is one executor.
type Loop struct {
	src        clock.Sources
	report     func(PanicReport) error
	beforeFire func() error

	mu      sync.Mutex
	domains []*domain
	byKey   map[domainKey]*domain
	ready   []Entity
	closed  bool
	pending error // a stop error raised off the loop
	wake    chan struct{}

	// token is the run token, held while a pass runs (a channel rather
	// than a mutex, so that a goroutine waiting for it is durably blocked
	// in a testing/synctest bubble).
	token    chan struct{}
	spinning atomic.Bool

	// Scratch reused by passes (run token holder only).
	due []*Timer
	run []Entity

	alarm  *clock.Alarm // signals wake; the spinning goroutine only
	passes atomic.Uint64

	// The clock feed the loop waits on itself (feed.go): the spinning
	// goroutine owns held and next; wakers read pollOn.
	quiet  atomic.Bool             // set while it pulls: its waiters stay silent
	pollOn atomic.Pointer[feedRef] // the feed it waits on now: Wake interrupts it
	held   *feedRef                // the feed it holds, if any
	armedF func() bool             // l.armed, made once
	next   clock.Feed              // the feed nextWait found for the coming wait
}

type domainKey struct {
	kind Kind
	ov   *clock.Override
}

// domain is the heap of a loop's timers on one clock.
type domain struct {
	clk    Clock
	h      timerHeap
	dirty  []*Timer
	last   int64   // the reading of the latest pass
	epoch  uint64  // the restart epoch applied to the heap
	cur    reading // the reading of the current pass
	waiter *clock.Waiter
}

// New returns an empty loop.
func New(o Options) *Loop {
	if o.Sources.Steady == nil || o.Sources.System == nil {
		o.Sources = clock.NewSources(nil, nil)
	}
	if o.Report == nil {
		o.Report = func(PanicReport) error { return nil }
	}
	l := &Loop{src: o.Sources, report: o.Report, beforeFire: o.BeforeFire, byKey: map[domainKey]*domain{},
		wake: make(chan struct{}, 1), token: make(chan struct{}, 1)}
	l.alarm = o.Sources.NewAlarm(l.wake)
	l.armedF = l.armed
	return l
}

// Sources returns the clocks the loop reads.
func (l *Loop) Sources() clock.Sources { return l.src }

// Passes counts the passes run (for tests and diagnostics).
func (l *Loop) Passes() uint64 { return l.passes.Load() }

// Wake makes a waiting Spin or SpinOnce run a pass now.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
	// Poke even when a token was there already: the alarm leaves one
	// without a poke, and a loop waiting on a feed does not see it.
	l.poke()
}

// Add makes the loop run t. A timer belongs to one loop at most; adding it
// twice to the same loop does nothing.
func (l *Loop) Add(t *Timer) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	t.mu.Lock()
	if t.loop != nil {
		other := t.loop != l
		t.mu.Unlock()
		l.mu.Unlock()
		if other {
			return ErrOtherLoop
		}
		return nil
	}
	t.loop = l
	t.mu.Unlock()
	t.dom = l.domainLocked(&t.clk)
	l.markLocked(t)
	l.mu.Unlock()
	l.Wake()
	return nil
}

func (l *Loop) domainLocked(c *Clock) *domain {
	k := c.domainKey()
	d := l.byKey[k]
	if d == nil {
		d = &domain{clk: *c, last: math.MinInt64}
		if c.Kind == Ros {
			d.waiter = clock.NewWaiter(l.wake)
			d.waiter.Quiet, d.waiter.Poke = &l.quiet, l.poke
			c.Ov.AddWaiter(d.waiter)
			d.epoch = c.Ov.Snapshot().Epoch
		}
		l.byKey[k] = d
		l.domains = append(l.domains, d)
	}
	return d
}

// touch tells the loop that t's state changed (any goroutine, no lock held).
func (l *Loop) touch(t *Timer) {
	l.mu.Lock()
	if !l.closed {
		l.markLocked(t)
	}
	l.mu.Unlock()
	l.Wake()
}

func (l *Loop) markLocked(t *Timer) {
	if !t.dirty {
		t.dirty = true
		t.dom.dirty = append(t.dom.dirty, t)
	}
}

// Schedule queues ready work and wakes the loop (any goroutine). It does
// nothing once the loop is closed.
func (l *Loop) Schedule(e Entity) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.ready = append(l.ready, e)
	l.mu.Unlock()
	l.Wake()
}

// Raise hands the loop an error from another goroutine (a panic recovered on
// a transport goroutine under a stopping policy): the next pass returns it.
func (l *Loop) Raise(err error) {
	l.mu.Lock()
	if l.pending == nil && !l.closed {
		l.pending = err
	}
	l.mu.Unlock()
	l.Wake()
}

// Report reports a panic recovered off the loop through the loop's policy
// and raises the error the policy returns.
func (l *Loop) Report(p PanicReport) {
	if err := l.report(p); err != nil {
		l.Raise(err)
	}
}

// Close stops the loop: no callback starts after it returns, the loop's
// waiters are removed from the clocks, queued work is dropped, and Spin
// returns. If a pass is running on another goroutine, Close waits for its
// callback to return; called from a callback, it returns at once and the
// pass ends after that callback. It is safe to call twice.
func (l *Loop) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	var ws []*domain
	for _, d := range l.domains {
		if d.waiter != nil {
			ws = append(ws, d)
		}
		for _, t := range d.h {
			t.hidx = -1
		}
		for _, t := range d.dirty {
			t.dirty = false
		}
		d.h, d.dirty = nil, nil
	}
	clear(l.ready)
	l.ready = nil
	l.mu.Unlock()
	for _, d := range ws {
		d.clk.Ov.RemoveWaiter(d.waiter)
	}
	l.Wake()
	l.Quiesce()
}

// Closed reports whether Close was called.
func (l *Loop) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Quiesce waits until no pass is running, unless called from a callback.
// After a node cancels its work, it makes sure none of it is still running.
func (l *Loop) Quiesce() {
	select {
	case l.token <- struct{}{}:
		<-l.token
		return
	default:
	}
	if inPass() {
		return
	}
	l.token <- struct{}{}
	<-l.token
}

// inPass reports whether the calling goroutine is inside a pass (running a
// callback) of any Loop: Quiesce from inside a pass of another loop must not
// wait either, as that pass may be waiting for the caller's.
func inPass() bool { return passing.Has() }

// passing holds the goroutines running a pass, of any Loop.
var passing goid.Set

// Spin runs passes until ctx ends or the loop closes (both return nil), a
// callback's panic stops it (its error), or another goroutine is spinning
// (ErrAlreadySpinning).
func (l *Loop) Spin(ctx context.Context) error {
	if !l.spinning.CompareAndSwap(false, true) {
		return ErrAlreadySpinning
	}
	defer l.spinning.Store(false)
	defer l.release()
	if ctx.Done() != nil {
		// A wait on a feed does not select on ctx.Done: wake it.
		stop := context.AfterFunc(ctx, l.Wake)
		defer stop()
	}
	for {
		if ctx.Err() != nil {
			return nil
		}
		_, w := l.runPass()
		switch {
		case w.err == ErrClosed:
			return nil
		case w.err != nil:
			return w.err
		case w.again:
			continue
		}
		if !l.wait(ctx.Done(), w.d) {
			return nil
		}
	}
}

// SpinOnce waits up to timeout for work, runs every callback ready then
// (each at most once) and returns.
func (l *Loop) SpinOnce(timeout time.Duration) error {
	if !l.spinning.CompareAndSwap(false, true) {
		return ErrAlreadySpinning
	}
	defer l.spinning.Store(false)
	defer l.release()
	deadline := int64(l.src.Steady()) + int64(timeout)
	for {
		n, w := l.runPass()
		if w.err == ErrClosed {
			return nil
		}
		if w.err != nil || n > 0 {
			return w.err
		}
		left := time.Duration(deadline - int64(l.src.Steady()))
		if left <= 0 {
			return nil
		}
		d := w.d
		if d < 0 || d > left {
			d = left
		}
		l.wait(nil, d)
	}
}

// SpinSome runs one pass without waiting (everything ready now, each at most
// once) and returns how many callbacks ran.
func (l *Loop) SpinSome() (int, error) {
	if !l.spinning.CompareAndSwap(false, true) {
		return 0, ErrAlreadySpinning
	}
	defer l.spinning.Store(false)
	n, w := l.runPass()
	if w.err == ErrClosed {
		w.err = nil
	}
	return n, w.err
}

// waitResult tells the spinner how long it may wait.
type waitResult struct {
	d     time.Duration // -1: until woken
	again bool          // work is ready: do not wait
	err   error
}

func (l *Loop) runPass() (int, waitResult) {
	l.token <- struct{}{}
	tok := passing.Enter()
	defer func() {
		passing.Leave(tok)
		<-l.token
	}()
	return l.pass()
}

// pass collects what is due under the loop's lock, runs the callbacks
// without it, and computes how long the spinner may then wait.
func (l *Loop) pass() (int, waitResult) {
	l.passes.Add(1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, waitResult{err: ErrClosed}
	}
	if err := l.pending; err != nil {
		l.pending = nil
		l.mu.Unlock()
		return 0, waitResult{err: err}
	}
	due := l.due[:0]
	for _, d := range l.domains {
		if len(d.h) > 0 || len(d.dirty) > 0 {
			due = d.prepare(l, due)
		}
	}
	run := append(l.run[:0], l.ready...)
	clear(l.ready)
	l.ready = l.ready[:0]
	l.mu.Unlock()

	n := 0
	var err error
	if l.beforeFire != nil {
		err = l.beforeFire()
	}
	for _, t := range due {
		if !l.fire(t) {
			continue
		}
		n++
		if perr := l.invoke(t); perr != nil && err == nil {
			err = perr
		}
	}
	for _, e := range run {
		n++
		more, perr := l.execute(e)
		if perr != nil && err == nil {
			err = perr
		}
		if more {
			l.mu.Lock()
			if !l.closed {
				l.ready = append(l.ready, e)
			}
			l.mu.Unlock()
		}
	}
	clear(due)
	l.due = due[:0]
	clear(run)
	l.run = run[:0]
	if err != nil {
		return n, waitResult{err: err}
	}
	return n, l.nextWait()
}

// prepare reads the domain's clock once, applies restarts and touched
// timers, and appends the due timers sorted by deadline, then creation.
func (d *domain) prepare(l *Loop, due []*Timer) []*Timer {
	r := d.clk.read()
	stepBack := !r.started && r.now < d.last
	if r.epoch != d.epoch || stepBack {
		for _, t := range d.h {
			t.mu.Lock()
			t.syncLocked(r, stepBack)
			t.key = t.st.Next
			t.mu.Unlock()
		}
		d.h.init()
		d.epoch = r.epoch
	}
	for _, t := range d.dirty {
		t.dirty = false
		t.mu.Lock()
		live := t.loop == l && !t.st.Canceled
		if live {
			t.syncLocked(r, false)
			t.key = t.st.Next
		}
		t.mu.Unlock()
		switch {
		case !live && t.hidx >= 0:
			d.h.remove(t)
		case live && t.hidx >= 0:
			d.h.fix(t.hidx)
		case live:
			d.h.push(t)
		}
	}
	clear(d.dirty)
	d.dirty = d.dirty[:0]
	d.last, d.cur = r.now, r
	start := len(due)
	due = d.h.appendDue(due, 0, r.now)
	if len(due)-start > 1 {
		slices.SortFunc(due[start:], func(a, b *Timer) int {
			if a.key != b.key {
				if a.key < b.key {
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

// fire applies one activation to a collected timer if it is still due on
// the pass's reading of its clock.
func (l *Loop) fire(t *Timer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.hidx < 0 || l.closed {
		return false
	}
	d := t.dom
	t.mu.Lock()
	ok := t.syncLocked(d.cur, false) && t.st.Fire(d.cur.now)
	canceled := t.st.Canceled
	t.key = t.st.Next
	t.mu.Unlock()
	if canceled {
		d.h.remove(t)
	} else {
		d.h.fix(t.hidx)
	}
	return ok
}

func (l *Loop) invoke(t *Timer) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = l.report(PanicReport{Kind: "timer", ID: t.id, Name: t.name, Value: v, Stack: debug.Stack()})
		}
	}()
	t.cb()
	return nil
}

func (l *Loop) execute(e Entity) (more bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			kind, id, name := e.Identity()
			err = l.report(PanicReport{Kind: kind, ID: id, Name: name, Value: v, Stack: debug.Stack()})
			more = true // the entity keeps its remaining work
		}
	}()
	return e.Execute(), nil
}

// nextWait computes how long the spinner may sleep before the next deadline.
func (l *Loop) nextWait() waitResult {
	l.next = nil
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ready) > 0 || l.pending != nil || l.closed {
		return waitResult{again: true}
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
	for _, d := range l.domains {
		if len(d.dirty) > 0 {
			return waitResult{again: true}
		}
		top := d.top()
		if d.waiter == nil {
			if top != nil {
				consider(sat(top.key, d.clk.read().now))
			}
			continue
		}
		if top == nil {
			d.waiter.Deadline.Store(math.MaxInt64)
			continue
		}
		if l.next == nil {
			l.next = d.clk.Ov.Feed()
		}
		r := d.clk.read()
		if r.started {
			// Sleep until an install makes the timer due: publish the
			// deadline, then look once more (the install may have happened
			// before the deadline was visible to it).
			d.waiter.Deadline.Store(top.key)
			if r2 := d.clk.read(); r2.epoch != d.epoch || r2.now >= top.key || !r2.started {
				wait = 0
			}
			continue
		}
		d.waiter.Deadline.Store(math.MaxInt64)
		if r.epoch != d.epoch {
			wait = 0
			continue
		}
		consider(sat(top.key, r.now))
	}
	if wait == 0 {
		return waitResult{again: true}
	}
	return waitResult{d: wait}
}

func (d *domain) top() *Timer {
	if len(d.h) == 0 {
		return nil
	}
	return d.h[0]
}

// sat returns a-b, saturated.
func sat(a, b int64) int64 {
	c := a - b
	if (b < 0 && c < a) || (b > 0 && c > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

// wait blocks until a wake-up, d elapses (d < 0: no limit) or done closes.
// It reports false when done closed.
//
// The timer is the sources' (clock.Alarm), so a harness that owns wall
// time steps it; it signals the wake channel, and a stale signal only
// costs an extra pass.
func (l *Loop) wait(done <-chan struct{}, d time.Duration) bool {
	if f := l.next; f != nil && l.src.Timer == nil {
		if more, ok := l.waitFeed(f, done, d); ok {
			return more
		}
		// Another loop waits on the feed: wait on the channel, and have
		// the feed's own goroutine read meanwhile (that loop may be
		// running a long callback, holding the feed).
		l.release()
		f.Want(1)
		defer f.Want(-1)
	}
	l.release()
	if d >= 0 {
		l.alarm.Set(d)
		defer l.alarm.Stop()
	}
	select {
	case <-l.wake:
		return true
	case <-done:
		return false
	}
}
