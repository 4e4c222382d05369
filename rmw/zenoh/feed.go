package zenoh

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/session"
)

// feed is the rmw.Feed of a subscription made with
// rmw.EndpointOptions.Feed: a holder leads the link of the face the
// subscription's samples last came from (session/lead.go), so that an
// executor waits on that socket itself. Samples of other faces, and of
// every face while nobody leads, come through the faces' readers as usual.
// A Zenoh link carries every key: while the holder runs callbacks the
// face's reader takes the link back after a millisecond.
type feed struct {
	last   atomic.Pointer[session.Face] // where the latest sample came from
	closed atomic.Bool

	// waiting: a goroutine is in Wait, or between a readable Wait and its
	// Pull; ready and checkReady serve that one (checkReady is made once).
	waiting    atomic.Bool
	ready      func() bool
	checkReady func() bool

	mu        sync.Mutex
	holds     int
	held      *session.Face // the face this feed holds (one Face.Hold), while holds > 0
	heldA     atomic.Pointer[session.Face]
	wants     int
	wantGiven *session.Face                // the face given a Face.Want(1) while wants > 0
	waitOn    atomic.Pointer[session.Face] // the face a Wait leads, until its Pull
}

// fedSubscription is a Subscription with a feed: it implements rmw.Feed.
type fedSubscription struct{ *Subscription }

var _ rmw.Feed = fedSubscription{}

// Hold implements rmw.Feed.
func (s fedSubscription) Hold(n int) {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds += n
	if f.holds <= 0 {
		f.holds = 0
		f.releaseLocked()
	}
}

func (f *feed) releaseLocked() {
	if f.held != nil {
		f.held.Hold(-1)
		f.held = nil
		f.heldA.Store(nil)
	}
}

// Want implements rmw.Feed.
func (s fedSubscription) Want(n int) {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	before := f.wants > 0
	f.wants += n
	after := f.wants > 0
	switch {
	case after && !before && f.held != nil:
		f.held.Want(1)
		f.wantGiven = f.held
	case before && !after && f.wantGiven != nil:
		f.wantGiven.Want(-1)
		f.wantGiven = nil
	}
}

// Wait implements rmw.Feed. One goroutine at a time waits on the feed,
// whatever face it leads: another gets ok false.
func (s fedSubscription) Wait(timeout time.Duration, ready func() bool) (readable, ok bool) {
	f := s.feed
	face := f.last.Load()
	if face == nil || !face.Leadable() || !f.waiting.CompareAndSwap(false, true) {
		return false, false
	}
	f.mu.Lock()
	if f.closed.Load() || f.holds == 0 || f.wants > 0 {
		f.mu.Unlock()
		f.waiting.Store(false)
		return false, false
	}
	if f.held != face {
		f.releaseLocked()
		face.Hold(1)
		f.held = face
		f.heldA.Store(face)
	}
	f.waitOn.Store(face)
	f.mu.Unlock()
	f.ready = ready
	readable, ok = face.Wait(timeout, f.checkReady)
	f.ready = nil
	if !readable {
		f.waitOn.Store(nil)
		f.waiting.Store(false)
	}
	return readable, ok
}

// readyUnlessClosed is the ready of a Wait: a Close after the Wait began
// ends it there (its Interrupt may have come before the Wait armed).
func (f *feed) readyUnlessClosed() bool { return !f.closed.Load() && f.ready() }

// Interrupt implements rmw.Feed.
func (s fedSubscription) Interrupt() {
	if face := s.feed.waitOn.Load(); face != nil {
		face.Interrupt()
	}
}

// Pull implements rmw.Feed.
func (s fedSubscription) Pull() {
	f := s.feed
	if !f.waiting.Load() {
		return
	}
	if face := f.waitOn.Swap(nil); face != nil {
		face.Pull()
	}
	f.waiting.Store(false)
}

// Fresh implements rmw.Feed.
func (s fedSubscription) Fresh() {
	if face := s.feed.heldA.Load(); face != nil {
		face.Fresh()
	}
}

// close lets go of the faces the feed holds or wants and ends a Wait in
// progress; later Waits do not lead.
func (f *feed) close() {
	f.mu.Lock()
	f.closed.Store(true)
	f.releaseLocked()
	if f.wantGiven != nil {
		f.wantGiven.Want(-1)
		f.wantGiven = nil
	}
	f.mu.Unlock()
	if face := f.waitOn.Load(); face != nil {
		face.Interrupt()
	}
}
