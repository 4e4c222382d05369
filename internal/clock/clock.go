// Package clock holds the time sources of nros-go and the ROS-time override:
// the per-Context record of the last simulated time that a /clock source
// installed, with the classification of every change (first sample, forward,
// backward, source switch) that timers need.
//
// Readings of the three clocks have distinct types (SteadyTime, SystemTime,
// RosTime) so that a deadline on one clock cannot be compared with a reading
// of another by mistake; the sources are values (Sources), carried by each
// Context, never package variables.
//
// Nothing here runs a goroutine. Reading is lock-free and allocation-free;
// writers (time sources and ClearRosTimeOverride) serialise on a mutex, and
// publish every change under a sequence counter so that a reader can take
// the ROS time and the restart state as one consistent Snapshot.
package clock

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// SteadyTime is a reading of the monotonic clock, in nanoseconds since an
// arbitrary origin. It never steps.
type SteadyTime int64

// SystemTime is a reading of the system (wall) clock, in nanoseconds since
// the UNIX epoch. It can step when the system time is set.
type SystemTime int64

// RosTime is a reading of ROS time, in nanoseconds since the UNIX epoch:
// simulated time while a source drives it, system time otherwise.
type RosTime int64

// Sources are the steady and system clocks that one Context (and every
// clock, timer and executor of it) reads.
type Sources struct {
	Steady func() SteadyTime
	System func() SystemTime
	// Timer starts the timers of every wait on these clocks (see
	// timer.go); nil means the Go runtime's.
	Timer TimerFunc
}

var steadyBase = time.Now()

// DefaultSteady reads the process's monotonic clock.
func DefaultSteady() SteadyTime { return SteadyTime(time.Since(steadyBase)) }

// DefaultSystem reads CLOCK_REALTIME.
func DefaultSystem() SystemTime { return SystemTime(time.Now().UnixNano()) }

// DefaultReadings reads CLOCK_REALTIME and the monotonic clock together,
// from one clock reading: DefaultSystem and DefaultSteady at once.
func DefaultReadings() (SystemTime, SteadyTime) {
	n := time.Now()
	return SystemTime(n.UnixNano()), SteadyTime(n.Sub(steadyBase))
}

// NewSources returns sources reading steady and system (nanoseconds); a nil
// function stands for the real clock.
func NewSources(steady, system func() int64) Sources {
	s := Sources{Steady: DefaultSteady, System: DefaultSystem}
	if steady != nil {
		s.Steady = func() SteadyTime { return SteadyTime(steady()) }
	}
	if system != nil {
		s.System = func() SystemTime { return SystemTime(system()) }
	}
	return s
}

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
	// Rejected: the sample was negative (before the epoch), which no ROS
	// clock can show; it was dropped and counted, the clock is unchanged.
	Rejected
	// Cleared: the override was cleared (ClearRosTimeOverride): ROS time is
	// system time again. Timers see it as a source switch.
	Cleared
	// Detached: the last source was removed while a sample was in force;
	// the last simulated time is kept, so the time does not change.
	Detached
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
	case Rejected:
		return "rejected"
	case Cleared:
		return "cleared"
	case Detached:
		return "detached"
	}
	return "unknown"
}

// Restart is the most recent event after which ROS timers must restart their
// period: a backward jump or a source switch. Epoch counts such events.
type Restart struct {
	Epoch uint64
	At    RosTime // ROS time of the landing point
}

// Snapshot is the ROS time and the restart state read together: a reader
// never sees a new time with an old restart epoch or the reverse.
type Snapshot struct {
	Now     RosTime // system time when no sample is in force
	Epoch   uint64  // the restart epoch in force at Now
	At      RosTime // the landing point of that restart
	Started bool    // a sample is in force (Now is simulated time)
	Active  bool    // a source is attached, or its last value is kept
}

// Driven reports whether the snapshot's time only moves on installs (a
// sample is in force).
func (s Snapshot) Driven() bool { return s.Started }

// Waiter is an executor waiting for ROS time to reach a deadline.
type Waiter struct {
	// Deadline is the earliest ROS deadline the waiter cares about
	// (math.MaxInt64 for none). The waiter updates it; installs read it.
	Deadline atomic.Int64
	// C receives a token when ROS time reaches Deadline or a restart happens.
	C chan struct{}
	// Quiet, if set and true, mutes the waiter: the executor is installing
	// samples itself (Feed.Pull) and looks at the clock right after.
	Quiet *atomic.Bool
	// Poke, if set, is called after every signal, sent or not (the
	// executor may be waiting on a Feed rather than receiving from C).
	Poke func()
}

// Feed is a source of installs that a waiting goroutine can read itself:
// rmw.Feed's methods (see there), which the /clock subscription of a
// context may implement, named here so that the time core does not import
// the transport interface.
type Feed interface {
	Hold(n int)
	Want(n int)
	Wait(timeout time.Duration, ready func() bool) (readable, ok bool)
	Interrupt()
	Pull()
	Fresh()
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

// Wake signals the waiter without blocking.
func (w *Waiter) Wake() { w.signal() }

// signal sends the token and reports whether this call sent it.
func (w *Waiter) signal() bool {
	if w.Quiet != nil && w.Quiet.Load() {
		return false
	}
	sent := false
	select {
	case w.C <- struct{}{}:
		sent = true
	default:
	}
	if w.Poke != nil {
		w.Poke() // also when a token was there: see exec.Loop.Wake
	}
	return sent
}

// Override is the ROS-time state of one context.
type Override struct {
	system func() SystemTime

	// seq is odd while a writer changes value/mode/epoch/at: Snapshot
	// readers retry. Now needs no retry: value and mode are each
	// meaningful alone.
	seq   atomic.Uint64
	value atomic.Int64
	mode  atomic.Uint32
	epoch atomic.Uint64
	at    atomic.Int64

	waiters  atomic.Pointer[[]*Waiter]
	feed     atomic.Pointer[feedBox]
	samples  atomic.Uint64
	rejected atomic.Uint64
	stats    Tracker // guarded by mu; see stats.go

	mu      sync.Mutex
	sources int
	// listeners are called, under mu, after every change other than
	// NoChange/Ignored/Rejected. Used for jump notifications and sleepers.
	listeners map[int]func(Change, int64, int64)
	nextID    int
}

// NewOverride returns an inactive override that falls back to system (the
// real system clock when nil).
func NewOverride(system func() SystemTime) *Override {
	if system == nil {
		system = DefaultSystem
	}
	o := &Override{system: system}
	empty := []*Waiter{}
	o.waiters.Store(&empty)
	return o
}

// System reads the system clock the override falls back to.
func (o *Override) System() SystemTime { return o.system() }

type feedBox struct{ f Feed }

// SetFeed makes f the feed that installs on o (nil: none).
func (o *Override) SetFeed(f Feed) {
	if f == nil {
		o.feed.Store(nil)
		return
	}
	o.feed.Store(&feedBox{f})
}

// ClearFeed removes f if it is o's feed.
func (o *Override) ClearFeed(f Feed) {
	if b := o.feed.Load(); b != nil && b.f == f {
		o.feed.CompareAndSwap(b, nil)
	}
}

// Feed returns o's feed, or nil.
func (o *Override) Feed() Feed {
	if b := o.feed.Load(); b != nil {
		return b.f
	}
	return nil
}

// Want tells o's feed, if it has one, that a goroutine blocks until an
// install reaches it, outside any executor (see rmw.Feed.Want): the
// feed's own goroutine keeps reading while an executor that holds it runs
// callbacks. Call the result once the wait is over.
func (o *Override) Want() (done func()) {
	f := o.Feed()
	if f == nil {
		return func() {}
	}
	f.Want(1)
	return sync.OnceFunc(func() { f.Want(-1) })
}

// Fresh lets the feed read what waits, when nobody reads it now (see
// rmw.Feed.Fresh). Call it with no lock held that an install may need (it
// installs, and listeners run): Now and Snapshot do not call it.
func (o *Override) Fresh() {
	if o.feed.Load() != nil {
		o.freshSlow()
	}
}

func (o *Override) freshSlow() {
	if b := o.feed.Load(); b != nil && o.mu.TryLock() {
		o.mu.Unlock()
		b.f.Fresh()
	}
}

// Now returns the ROS time: the installed value once a sample is in force,
// else system time. It does not allocate and takes no lock.
func (o *Override) Now() RosTime {
	if o.mode.Load()&modeStarted != 0 {
		return RosTime(o.value.Load())
	}
	return RosTime(o.system())
}

// Snapshot returns the ROS time and the restart state as one consistent
// reading. It does not allocate and takes no lock.
func (o *Override) Snapshot() Snapshot {
	for spins := 0; ; spins++ {
		s1 := o.seq.Load()
		if s1&1 == 0 {
			mode := o.mode.Load()
			v := o.value.Load()
			ep := o.epoch.Load()
			at := o.at.Load()
			if o.seq.Load() == s1 {
				s := Snapshot{Epoch: ep, At: RosTime(at), Started: mode&modeStarted != 0, Active: mode&modeActive != 0}
				if s.Started {
					s.Now = RosTime(v)
				} else {
					s.Now = RosTime(o.system())
				}
				return s
			}
		}
		if spins > 8 {
			runtime.Gosched() // a writer was preempted mid-update
		}
	}
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

// Rejected counts the samples refused because they were negative.
func (o *Override) Rejected() uint64 { return o.rejected.Load() }

// LastRestart returns the latest restart event.
func (o *Override) LastRestart() Restart {
	s := o.Snapshot()
	return Restart{Epoch: s.Epoch, At: s.At}
}

// Attach registers a time source: from now on samples are installed. Before
// the first sample, Now keeps reading system time.
func (o *Override) Attach() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sources++
	o.seq.Add(1)
	o.mode.Store(o.mode.Load() | modeActive)
	o.seq.Add(1)
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
	if o.sources == 0 {
		if o.mode.Load()&modeStarted == 0 {
			o.seq.Add(1)
			o.mode.Store(0)
			o.seq.Add(1)
		} else {
			v := o.value.Load()
			o.notifyLocked(Detached, v, v)
		}
	}
}

// Sources returns the number of attached sources.
func (o *Override) Sources() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sources
}

// Install sets the ROS time to ns, as a /clock sample does, and returns how
// it classifies. With no source attached the sample is ignored; a negative
// sample is rejected (and counted) and changes nothing.
//
// It only signals: the waiters it wakes (executors, sleepers) run what the
// new time makes due on their own goroutines, never on the installer's.
func (o *Override) Install(ns RosTime) Change {
	o.mu.Lock()
	if o.sources == 0 {
		o.mu.Unlock()
		return Ignored
	}
	if ns < 0 {
		o.rejected.Add(1)
		o.mu.Unlock()
		return Rejected
	}
	o.samples.Add(1)
	o.observeLocked(int64(ns)) // source statistics (stats.go)
	mode := o.mode.Load()
	old := RosTime(o.value.Load())
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
		prevNow = RosTime(o.system())
	}
	o.seq.Add(1)
	o.value.Store(int64(ns))
	if ch != Forward {
		o.epoch.Add(1)
		o.at.Store(int64(ns))
	}
	o.mode.Store(modeActive | modeStarted)
	o.seq.Add(1)
	o.notifyLocked(ch, int64(prevNow), int64(ns))
	o.mu.Unlock()
	if o.wake(ch != Forward, ns) {
		// Hand the processor to the executor just woken (it is the next
		// goroutine to run here): the callback runs now, on the
		// executor's goroutine, rather than after the installer has
		// finished its own work or another processor has stolen it.
		runtime.Gosched()
	}
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
	at := RosTime(o.system())
	o.seq.Add(1)
	if o.sources > 0 {
		o.mode.Store(modeActive)
	} else {
		o.mode.Store(0)
	}
	o.epoch.Add(1)
	o.at.Store(int64(at))
	o.seq.Add(1)
	o.notifyLocked(Cleared, prev, int64(at))
	o.mu.Unlock()
	o.wake(true, at)
}

// Barrier returns once every install or clear that was under way when it
// was called has finished, listeners included.
func (o *Override) Barrier() {
	o.mu.Lock()
	//lint:ignore SA2001 waiting for the writers is the point
	o.mu.Unlock()
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

// Waiters returns the number of registered waiters (for leak checks).
func (o *Override) Waiters() int { return len(*o.waiters.Load()) }

// AddListener registers fn, called after every change other than NoChange,
// Ignored and Rejected (so: Switch, Forward, Backward, Cleared, Detached)
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

func (o *Override) wake(all bool, now RosTime) (woke bool) {
	for _, w := range *o.waiters.Load() {
		if all || int64(now) >= w.Deadline.Load() {
			woke = w.signal() || woke
		}
	}
	return woke
}
