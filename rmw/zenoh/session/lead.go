package session

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/link"
)

// A face's link can be led: a goroutine outside the session (an executor
// whose ROS timers wait on a /clock that arrives over this face) waits on
// the link's socket itself and handles the batch it reads on its own
// goroutine, so that the sample and the callback it makes due run on the
// thread the kernel woke, with no hand-off. Meanwhile the face's reader
// goroutine parks. Batches are handled in order whoever reads them (rmu).
//
// The reader reads again when nobody holds the face (Hold), while someone
// wants it (Want: a goroutine blocks on ROS time outside the executor), and
// once the leader runs callbacks for long (replies, keep-alives and other
// keys must not wait on them): while a leader leads, a ticker looks every
// leadTakeover, and gives the link back when the leader has been away from
// the socket since the tick before. The ticker costs nothing on the path
// from a sample to its callback: resetting a runtime timer there would wake
// another thread (wakeNetPoller -> wakep) when none waits in the poller.
// Only links that implement link.Leadable (TCP, on Linux) can be led.

// leadTakeover is the takeover ticker's period: a leader away from the
// link for one to two periods gives it back to the face's reader.
const leadTakeover = 20 * time.Millisecond

// freshEvery bounds how often Fresh reads the socket.
const freshEvery = 100 * time.Microsecond

type lead struct {
	mu      sync.Mutex
	holders int
	wants   int
	leading bool        // a leader is in Wait, or has not been away for long
	allowed atomic.Bool // the reader may read (!leading || wants > 0); Yield is its opposite
	failed  bool        // the link cannot be led
	park    chan struct{}
	timer   Timer
	ticking bool   // the takeover ticker runs
	gen     uint64 // bumped by every Wait
	seen    uint64 // gen at the ticker's last look

	waiting  atomic.Bool // a leader is in Wait, or between a readable Wait and its Pull
	rmu      sync.Mutex  // held by whoever reads the link (and handles what it read)
	lastPull atomic.Int64
}

func (ld *lead) init() {
	ld.allowed.Store(true)
	ld.park = make(chan struct{}, 1)
}

// applyLocked makes the reader's state follow leading and wants.
func (t *transport) applyLocked() {
	ld := &t.ld
	allowed := !ld.leading || ld.wants > 0
	if allowed == ld.allowed.Load() {
		return
	}
	lk := t.l.(link.Leadable) // leading is only ever set on one
	if allowed {
		lk.Yield(false) // first, or the reader would spin on ErrYield meanwhile
		ld.allowed.Store(true)
		select {
		case ld.park <- struct{}{}:
		default:
		}
		return
	}
	ld.allowed.Store(false)
	lk.Yield(true)
}

// mayRead is the reader's gate: it waits while a leader has the link and
// reports false once the transport closes.
func (t *transport) mayRead() bool {
	ld := &t.ld
	for {
		if ld.allowed.Load() {
			return true
		}
		select {
		case <-ld.park:
		case <-t.closing:
			return false
		}
	}
}

// Hold(1) tells that a goroutine will lead f's link from its next Wait on;
// Hold(-1) that it stopped (the reader reads again).
func (f *Face) Hold(n int) {
	t := f.t
	t.ld.mu.Lock()
	defer t.ld.mu.Unlock()
	t.ld.holders += n
	if t.ld.holders <= 0 {
		t.ld.holders = 0
		t.ld.leading = false
		t.applyLocked()
	}
}

// Want(1) tells that a goroutine blocks until a sample reaches it outside
// the leader: the reader reads even while the link is led. Want(-1) ends it.
func (f *Face) Want(n int) {
	t := f.t
	t.ld.mu.Lock()
	t.ld.wants += n
	if t.ld.leading {
		t.applyLocked()
	}
	t.ld.mu.Unlock()
}

// Leadable reports whether f's link can be led.
func (f *Face) Leadable() bool {
	_, ok := f.t.l.(link.Leadable)
	return ok
}

// Wait leads f's link: it blocks until a whole batch has been read from
// the socket (readable: Pull must follow), Interrupt is called, the link
// fails or timeout passes (< 0: no limit). It calls ready once its timeout
// is armed and before it blocks, and returns at once if ready reports
// false. ok is false when it did not lead: the link cannot be led, it is
// closed, nobody holds it, someone wants it, or another goroutine leads it.
func (f *Face) Wait(timeout time.Duration, ready func() bool) (readable, ok bool) {
	t := f.t
	ld := &t.ld
	lk, isL := t.l.(link.Leadable)
	if !isL || !ld.waiting.CompareAndSwap(false, true) {
		return false, false
	}
	ld.mu.Lock()
	if ld.failed || ld.holders == 0 || ld.wants > 0 || t.closeReason() != nil {
		ld.mu.Unlock()
		ld.waiting.Store(false)
		return false, false
	}
	ld.gen++
	if !ld.ticking {
		ld.ticking = true
		ld.seen = ld.gen
		t.armLocked()
	}
	ld.leading = true
	t.applyLocked()
	ld.mu.Unlock()

	ld.rmu.Lock() // the reader leaves its read (it yields) and the batch it handles
	var dl time.Time
	if timeout >= 0 {
		dl = pollDeadline(timeout)
	}
	readable, err := lk.WaitBatch(dl, ready)
	if err != nil {
		// The reader sees the failure too (now that it may read again).
		ld.rmu.Unlock()
		ld.mu.Lock()
		ld.failed = true
		ld.leading = false
		t.applyLocked()
		ld.mu.Unlock()
		ld.waiting.Store(false)
		return false, false
	}
	if !readable {
		ld.rmu.Unlock()
		t.leftLink()
		return false, true
	}
	return true, true
}

// Interrupt makes the Wait in progress return, or the next one once it
// has called ready.
func (f *Face) Interrupt() {
	if lk, ok := f.t.l.(link.Leadable); ok {
		lk.Interrupt()
	}
}

// Pull handles the batches the readable Wait before it read, on the
// calling goroutine.
func (f *Face) Pull() {
	t := f.t
	ld := &t.ld
	if !ld.waiting.Load() {
		return
	}
	t.handleBuffered()
	ld.lastPull.Store(t.s.cfg.Clock.Now())
	ld.rmu.Unlock()
	t.leftLink()
}

// Fresh reads and handles what waits on the socket, without blocking,
// when nobody reads it now (the leader runs callbacks): a reader of ROS
// time calls it to see the latest sample. It reads at most every
// freshEvery.
func (f *Face) Fresh() {
	t := f.t
	ld := &t.ld
	if ld.waiting.Load() || ld.allowed.Load() || t.s.cfg.Clock.Now()-ld.lastPull.Load() < int64(freshEvery) {
		return
	}
	if !ld.rmu.TryLock() {
		return
	}
	defer ld.rmu.Unlock()
	ld.lastPull.Store(t.s.cfg.Clock.Now())
	if _, err := t.l.(link.Leadable).TryFill(); err != nil {
		return // the reader finds it once it reads again
	}
	t.handleBuffered()
}

// handleBuffered handles the whole batches the link holds (rmu held),
// none once the transport is closing.
func (t *transport) handleBuffered() {
	lk := t.l.(link.Leadable)
	for t.closeReason() == nil {
		b, ok := lk.NextBatch()
		if !ok || t.handle(b) {
			return
		}
	}
}

// leftLink: the leader left the socket.
func (t *transport) leftLink() {
	t.ld.waiting.Store(false)
}

// armLocked (re)starts the takeover ticker's timer.
func (t *transport) armLocked() {
	ld := &t.ld
	if r, ok := ld.timer.(interface{ Reset(time.Duration) bool }); ok {
		r.Reset(leadTakeover)
		return
	}
	if ld.timer != nil {
		ld.timer.Stop()
	}
	ld.timer = t.s.cfg.Clock.AfterFunc(leadTakeover, t.takeover)
}

// takeover is the ticker: it gives the link back to the reader when the
// leader is away from it and has not come back since the last tick, and
// stops once nobody leads.
func (t *transport) takeover() {
	ld := &t.ld
	ld.mu.Lock()
	defer ld.mu.Unlock()
	switch {
	case !ld.leading:
		ld.ticking = false
	case !ld.waiting.Load() && ld.gen == ld.seen:
		ld.leading = false
		ld.ticking = false
		t.applyLocked()
	case ld.waiting.Load():
		ld.seen = ld.gen - 1 // a tick during a Wait does not count as away
		t.armLocked()
	default:
		ld.seen = ld.gen
		t.armLocked()
	}
}
