package exec

import (
	"time"

	"github.com/nros-go/nros/internal/clock"
)

// feedRef boxes a feed for the atomic pointer wakers read.
type feedRef struct{ f clock.Feed }

// waitFeed is wait for a loop whose ROS timers wait on f: the spinning
// goroutine waits on f's socket itself (in the runtime's poller) and pulls
// what arrived, so that the sample's install and the pass that follows run
// on the thread the kernel woke, with no hand-off. Wake interrupts that
// wait. It reports false when done closed; ok false when f could not be
// waited on (the caller waits on the channel).
func (l *Loop) waitFeed(f clock.Feed, done <-chan struct{}, d time.Duration) (more, ok bool) {
	if l.held == nil || l.held.f != f {
		l.release()
		f.Hold(1)
		l.held = &feedRef{f}
	}
	readable, ok := f.Wait(d, l.armedF)
	l.pollOn.Store(nil)
	if !ok {
		return true, false
	}
	if readable {
		l.quiet.Store(true)
		f.Pull()
		l.quiet.Store(false)
	}
	// The pass that follows sees everything signalled until now.
	select {
	case <-l.wake:
	default:
	}
	select {
	case <-done:
		return false, true
	default:
		return true, true
	}
}

// armed runs inside the feed's Wait once its timeout is set: from here a
// waker interrupts the wait; one that came before left its token in the
// channel, looked at now.
func (l *Loop) armed() bool {
	l.pollOn.Store(l.held)
	select {
	case <-l.wake:
		l.pollOn.Store(nil)
		return false
	default:
		return true
	}
}

// poke interrupts a spinning goroutine that waits on a feed.
func (l *Loop) poke() {
	if r := l.pollOn.Load(); r != nil {
		r.f.Interrupt()
	}
}

// release lets go of the feed the loop holds (the spinning goroutine).
func (l *Loop) release() {
	if l.held != nil {
		l.held.f.Hold(-1)
		l.held = nil
	}
}
