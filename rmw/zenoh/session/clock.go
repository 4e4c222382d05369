package session

import "time"

// Clock is the time of a session: lease expiry and keep-alives, the
// handshake, interest and query timeouts and the reconnection backoff all
// read it, so a test can drive them. SystemClock is the default.
type Clock interface {
	// Now reads a monotonic clock, in nanoseconds from any origin.
	Now() int64
	// AfterFunc calls f on a goroutine of its own once d has passed on
	// that clock; Stop on the result cancels the call.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of Clock.AfterFunc.
type Timer interface {
	// Stop cancels the call; it reports whether it was still pending.
	Stop() bool
}

// SystemClock is the operating system's monotonic clock and the Go
// runtime's timers (in a testing/synctest bubble, its fake clock): the only
// place of the package that reads the runtime's time.
type SystemClock struct{}

var systemBase = time.Now()

// Now returns the time since the process's first reading.
func (SystemClock) Now() int64 { return int64(time.Since(systemBase)) }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// after returns a channel that c closes once d has passed, and a function
// that cancels it.
func after(c Clock, d time.Duration) (<-chan struct{}, func() bool) {
	ch := make(chan struct{})
	t := c.AfterFunc(d, func() { close(ch) })
	return ch, t.Stop
}

// pollDeadline is the read deadline d from now for a wait in the runtime's
// poller (which reads the real clock, whatever Config.Clock is); d past
// about a century means none.
func pollDeadline(d time.Duration) time.Time {
	if d > 100*365*24*time.Hour {
		return time.Time{}
	}
	return time.Now().Add(d)
}
