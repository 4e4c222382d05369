// Package clock holds the time sources of nros-go and the ROS-time override:
// the per-Context record of the last simulated time that a /clock source
// installed, with the classification of every change (first sample, forward,
// backward, source switch) that timers need.
//
// Nothing here runs a goroutine. Reading is lock-free and allocation-free;
// writers (time sources and ClearRosTimeOverride) serialise on a mutex.
package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Source reads a clock in int64 nanoseconds.
type Source interface {
	Now() int64
}

// SourceFunc adapts a function to Source.
type SourceFunc func() int64

// Now calls f.
func (f SourceFunc) Now() int64 { return f() }

type systemSource struct{}

func (systemSource) Now() int64 { return time.Now().UnixNano() }

// System reads CLOCK_REALTIME as nanoseconds since the UNIX epoch.
var System Source = systemSource{}

var steadyBase = time.Now()

type steadySource struct{}

func (steadySource) Now() int64 { return int64(time.Since(steadyBase)) }

// Steady reads the monotonic clock as nanoseconds since the process started.
var Steady Source = steadySource{}

// Mode bits of an Override.
const (
	modeActive  uint32 = 1 << iota // a source is installed, or its last value is kept
	modeStarted                    // a sample has arrived and is in force
)

// Change classifies what one install did to the ROS time.
type Change uint8

const (
	// NoChange: the sample equals the current value (a paused simulation).
	NoChange Change = iota
	// Forward: time moved forward; ROS timers see the step as elapsed time.
	Forward
	// Backward: time moved back; ROS timers restart their period at the new value.
	Backward
	// Switch: the source of ROS time changed (the first sample replacing system
	// time, or a clear handing back to system time); ROS timers restart their
	// period at the new value and do not see the step as a backlog.
	Switch
	// Ignored: no source is attached, so the sample was not installed.
	Ignored
)

// String names the change.
func (c Change) String() string {
	switch c {
	case NoChange:
		return "none"
	case Forward:
		return "forward"
	case Backward:
		return "backward"
	case Switch:
		return "switch"
	case Ignored:
		return "ignored"
	}
	return "unknown"
}

// Restart is the most recent event after which ROS timers must restart their
// period: a backward jump or a source switch. Epoch counts such events.
type Restart struct {
	Epoch uint64
	At    int64 // ROS time (ns) of the landing point
}

// Waiter is an executor waiting for ROS time to reach a deadline.
type Waiter struct {
	// Deadline is the earliest ROS deadline the waiter cares about
	// (math.MaxInt64 for none). The waiter updates it; installs read it.
	Deadline atomic.Int64
	// C receives a token when ROS time reaches Deadline or a restart happens.
	C chan struct{}
}

// NewWaiter returns a waiter with no deadline that signals on c (a
// one-slot channel that several waiters may share); nil makes a new one.
func NewWaiter(c chan struct{}) *Waiter {
	if c == nil {
		c = make(chan struct{}, 1)
	}
	w := &Waiter{C: c}
	w.Deadline.Store(1<<63 - 1)
	return w
}

// Wake sends a token without blocking.
func (w *Waiter) Wake() {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

// Override is the ROS-time state of one context.
type Override struct {
	system Source

	value atomic.Int64
	mode  atomic.Uint32

	restart atomic.Pointer[Restart]
	waiters atomic.Pointer[[]*Waiter]
	samples atomic.Uint64
	stats   Tracker // guarded by mu; see stats.go

	mu      sync.Mutex
	sources int
	epoch   uint64
	// listeners are called, under mu, after every change other than
	// NoChange/Ignored. Used for jump notifications and sleepers.
	listeners map[int]func(Change, int64, int64)
	nextID    int
}

// NewOverride returns an inactive override that reads system from sys
// (System when nil).
func NewOverride(sys Source) *Override {
	if sys == nil {
		sys = System
	}
	o := &Override{system: sys}
	o.restart.Store(&Restart{})
	empty := []*Waiter{}
	o.waiters.Store(&empty)
	return o
}

// SystemSource returns the system source the override falls back to.
func (o *Override) SystemSource() Source { return o.system }

// Now returns the ROS time: the installed value once a sample is in force,
// else system time. It does not allocate and takes no lock.
func (o *Override) Now() int64 {
	if o.mode.Load()&modeStarted != 0 {
		return o.value.Load()
	}
	return o.system.Now()
}

// Active reports whether a time source is installed, or the last value of
// one that was removed is still in force.
func (o *Override) Active() bool { return o.mode.Load()&modeActive != 0 }

// Started reports whether a sample has arrived and is in force.
func (o *Override) Started() bool { return o.mode.Load()&modeStarted != 0 }

// Driven reports whether ROS time is the installed value (Active and
// Started): then it only moves on installs, never by itself.
func (o *Override) Driven() bool { return o.mode.Load() == modeActive|modeStarted }

// Samples counts the samples installed.
func (o *Override) Samples() uint64 { return o.samples.Load() }

// LastRestart returns the latest restart event.
func (o *Override) LastRestart() Restart { return *o.restart.Load() }

// Attach registers a time source: from now on samples are installed. Before
// the first sample, Now keeps reading system time.
func (o *Override) Attach() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sources++
	o.mode.Store(o.mode.Load() | modeActive)
}

// Detach unregisters a time source. When the last one goes, samples stop
// being installed but the last simulated time is kept (Now keeps returning
// it) until Clear. If no sample ever arrived, the override becomes inactive.
func (o *Override) Detach() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sources == 0 {
		return
	}
	o.sources--
	if o.sources == 0 && o.mode.Load()&modeStarted == 0 {
		o.mode.Store(0)
	}
}

// Sources returns the number of attached sources.
func (o *Override) Sources() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sources
}

// Install sets the ROS time to ns, as a /clock sample does, and returns how
// it classifies. With no source attached the sample is ignored.
func (o *Override) Install(ns int64) Change {
	o.mu.Lock()
	if o.sources == 0 {
		o.mu.Unlock()
		return Ignored
	}
	o.samples.Add(1)
	o.observeLocked(ns) // source statistics (stats.go)
	mode := o.mode.Load()
	old := o.value.Load()
	var ch Change
	switch {
	case mode&modeStarted == 0:
		ch = Switch
	case ns > old:
		ch = Forward
	case ns < old:
		ch = Backward
	default:
		o.mu.Unlock()
		return NoChange
	}
	prevNow := old
	if ch == Switch {
		prevNow = o.system.Now()
	}
	o.value.Store(ns)
	if ch != Forward {
		o.epoch++
		o.restart.Store(&Restart{Epoch: o.epoch, At: ns})
	}
	o.mode.Store(modeActive | modeStarted)
	o.notifyLocked(ch, prevNow, ns)
	o.mu.Unlock()
	o.wake(ch != Forward, ns)
	return ch
}

// Clear drops the override: Now reads system time again and Started is
// false. If a source is still attached, RosTimeIsActive stays true and the
// next sample starts the clock again. ROS timers see a source switch.
func (o *Override) Clear() {
	o.mu.Lock()
	mode := o.mode.Load()
	if mode&modeStarted == 0 {
		o.mu.Unlock()
		return
	}
	prev := o.value.Load()
	if o.sources > 0 {
		o.mode.Store(modeActive)
	} else {
		o.mode.Store(0)
	}
	o.value.Store(0)
	at := o.system.Now()
	o.epoch++
	o.restart.Store(&Restart{Epoch: o.epoch, At: at})
	o.notifyLocked(Switch, prev, at)
	o.mu.Unlock()
	o.wake(true, at)
}

// AddWaiter registers w to be woken by installs.
func (o *Override) AddWaiter(w *Waiter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	old := *o.waiters.Load()
	n := make([]*Waiter, 0, len(old)+1)
	n = append(n, old...)
	n = append(n, w)
	o.waiters.Store(&n)
}

// RemoveWaiter unregisters w.
func (o *Override) RemoveWaiter(w *Waiter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	old := *o.waiters.Load()
	n := make([]*Waiter, 0, len(old))
	for _, x := range old {
		if x != w {
			n = append(n, x)
		}
	}
	o.waiters.Store(&n)
}

// AddListener registers fn, called after every change other than NoChange
// with the change, the ROS time before and the ROS time after. fn runs on
// the installing goroutine with the override's lock held: it must be quick
// and must not call back into the override. It returns a function that
// removes the listener.
func (o *Override) AddListener(fn func(ch Change, before, after int64)) (remove func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.listeners == nil {
		o.listeners = map[int]func(Change, int64, int64){}
	}
	id := o.nextID
	o.nextID++
	o.listeners[id] = fn
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.listeners, id)
	}
}

func (o *Override) notifyLocked(ch Change, before, after int64) {
	for _, fn := range o.listeners {
		fn(ch, before, after)
	}
}

func (o *Override) wake(all bool, now int64) {
	for _, w := range *o.waiters.Load() {
		if all || now >= w.Deadline.Load() {
			w.Wake()
		}
	}
}
