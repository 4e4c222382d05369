package clock

import (
	"sync"
	"time"
)

// This file is the one place where nros-go waits on time: every wait of the
// runtime (the executor's sleep between passes, waits on system and steady
// clocks, the clock-health warnings) asks its context's Sources for a timer,
// so that a harness that owns wall time (package simtest) steps all of them.

// Timer is a pending call of Sources.AfterFunc.
type Timer interface {
	// Stop cancels the call; it reports whether the call was still
	// pending.
	Stop() bool
	// Reset makes the call happen once d has passed from now (again, if it
	// already ran); it reports whether the call was still pending.
	Reset(d time.Duration) bool
}

// TimerFunc starts a timer: f is called once d has passed on the steady
// clock of the Sources it belongs to. The runtime's timers call f on a
// goroutine of their own; a harness may call it on the goroutine that
// advances its clock. f must not block.
type TimerFunc func(d time.Duration, f func()) Timer

// AfterFunc calls f once d of the sources' steady time has passed (see
// TimerFunc): the Go runtime's time.AfterFunc (in a testing/synctest
// bubble, on its fake clock) unless the sources say otherwise.
func (s Sources) AfterFunc(d time.Duration, f func()) Timer {
	if s.Timer == nil {
		return time.AfterFunc(d, f)
	}
	return s.Timer(d, f)
}

// Alarm is a reusable timer that signals a one-slot channel: the waits of a
// goroutine that selects on that channel together with its other wake-ups
// (the executor's). Set and Stop are for the goroutine that owns it.
type Alarm struct {
	src Sources
	c   chan struct{}
	fn  func()
	t   Timer
	on  bool
}

// NewAlarm returns an alarm that signals c.
func (s Sources) NewAlarm(c chan struct{}) *Alarm {
	a := &Alarm{src: s, c: c}
	a.fn = func() {
		select {
		case a.c <- struct{}{}:
		default:
		}
	}
	return a
}

// Set makes the alarm signal once d has passed (replacing an earlier Set).
func (a *Alarm) Set(d time.Duration) {
	if a.t == nil {
		a.t = a.src.AfterFunc(d, a.fn)
	} else {
		a.t.Reset(d)
	}
	a.on = true
}

// Stop cancels a pending signal. A signal already sent stays in the
// channel: a spurious wake-up, which the owner tolerates.
func (a *Alarm) Stop() {
	if a.on {
		a.t.Stop()
		a.on = false
	}
}

// ManualTimers are timers on a clock that a harness advances by hand: Fire
// calls, in deadline order, the functions whose time has come. Its
// AfterFunc is a TimerFunc. Safe for concurrent use; the functions run on
// the goroutine that calls Fire, with no lock held.
type ManualTimers struct {
	now func() int64
	mu  sync.Mutex
	q   []*manualTimer // by deadline, then by scheduling
}

type manualTimer struct {
	m    *ManualTimers
	at   int64
	f    func()
	live bool
}

// NewManualTimers returns timers on the clock that now reads (ns).
func NewManualTimers(now func() int64) *ManualTimers { return &ManualTimers{now: now} }

// AfterFunc schedules f once the clock reads its current value plus d.
func (m *ManualTimers) AfterFunc(d time.Duration, f func()) Timer {
	t := &manualTimer{m: m, f: f}
	t.Reset(d)
	return t
}

// Pending counts the scheduled calls.
func (m *ManualTimers) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.q)
}

// Fire calls, in order of their time (then of scheduling), every function
// due by the clock's reading now; one that schedules another call due by
// then sees it called too. It returns how many it called.
func (m *ManualTimers) Fire() int {
	n := 0
	for {
		now := m.now()
		m.mu.Lock()
		if len(m.q) == 0 || m.q[0].at > now {
			m.mu.Unlock()
			return n
		}
		t := m.q[0]
		m.q = m.q[1:]
		t.live = false
		m.mu.Unlock()
		t.f()
		n++
	}
}

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	return t.removeLocked()
}

func (t *manualTimer) removeLocked() bool {
	if !t.live {
		return false
	}
	for i, x := range t.m.q {
		if x == t {
			t.m.q = append(t.m.q[:i], t.m.q[i+1:]...)
			break
		}
	}
	t.live = false
	return true
}

func (t *manualTimer) Reset(d time.Duration) bool {
	m := t.m
	at := m.now() + int64(max(d, 0))
	m.mu.Lock()
	defer m.mu.Unlock()
	was := t.removeLocked()
	t.at, t.live = at, true
	i := len(m.q)
	for i > 0 && m.q[i-1].at > at {
		i--
	}
	m.q = append(m.q, nil)
	copy(m.q[i+1:], m.q[i:])
	m.q[i] = t
	return was
}
