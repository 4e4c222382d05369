package zenoh

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/session"
)

// The system clock sources: the only place of the package that reads the
// runtime's clocks. Everything else takes time from Config.Clock and
// Config.WallNow.

// systemClock is the operating system's monotonic clock (time.Since a
// reading taken when it was made, so it also runs on the fake clock of a
// testing/synctest bubble).
type systemClock struct{ epoch time.Time }

func newSystemClock() systemClock { return systemClock{epoch: time.Now()} }

func (c systemClock) Now() int64 { return int64(time.Since(c.epoch)) }

func (systemClock) After(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	tm := time.AfterFunc(d, func() { once.Do(func() { close(ch) }) })
	return ch, func() { tm.Stop() }
}

func systemWallNow() int64 { return time.Now().UnixNano() }

// sessionClock runs the session on a Config.Clock of the caller's, so that
// its handshake, reconnection, interest and query timeouts pass as the
// transport's heartbeats do. A timer waits for the Clock's After on a
// goroutine of its own, which also ends when the transport closes (done);
// with the system clock the session uses the runtime's timers directly.
type sessionClock struct {
	c    Clock
	done <-chan struct{}
}

func (s sessionClock) Now() int64 { return s.c.Now() }

func (s sessionClock) AfterFunc(d time.Duration, f func()) session.Timer {
	ch, release := s.c.After(d)
	t := &clockTimer{stop: make(chan struct{}), release: release}
	go func() {
		select {
		case <-ch:
			if t.state.CompareAndSwap(0, 1) {
				f()
			}
		case <-t.stop:
		case <-s.done:
			release()
		}
	}()
	return t
}

// clockTimer is a pending sessionClock.AfterFunc: state 0 pending, 1
// fired, 2 stopped.
type clockTimer struct {
	state   atomic.Int32
	stop    chan struct{}
	release func()
}

func (t *clockTimer) Stop() bool {
	if !t.state.CompareAndSwap(0, 2) {
		return false
	}
	close(t.stop)
	t.release()
	return true
}
