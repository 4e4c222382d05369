// Package hlc is zenoh's hybrid logical clock (the uhlc crate's): 64-bit
// NTP-format times since the UNIX epoch (32 bits of seconds, 32 of
// fraction) whose 4 lowest bits are a counter, so that the timestamps one
// clock gives are unique and increasing, and never behind those it has
// seen. A zenoh router with timestamping on stamps the puts that come
// without a timestamp and checks those that come with one.
package hlc

import (
	"fmt"
	"sync"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

const (
	counterBits = 4
	counterMask = 1<<counterBits - 1
	// DefaultMaxDelta is how far in the future a timestamp may be (uhlc's
	// default, 500 ms).
	DefaultMaxDelta = 500 * time.Millisecond
)

// NTP64 converts a time to zenoh's 64-bit time: seconds since the UNIX
// epoch in the high 32 bits, the fraction of a second in the low 32.
func NTP64(t time.Time) uint64 { return FromDuration(time.Duration(t.UnixNano())) }

// FromDuration converts a duration to the same fixed-point format.
func FromDuration(d time.Duration) uint64 {
	ns := uint64(d)
	secs, nanos := ns/1e9, ns%1e9
	return secs<<32 + nanos<<32/1e9
}

// Time converts a 64-bit zenoh time back to a time.
func Time(ntp uint64) time.Time {
	secs := ntp >> 32
	nanos := ((ntp & 0xffffffff) * 1e9) >> 32
	return time.Unix(int64(secs), int64(nanos))
}

// Clock is a hybrid logical clock. Its methods may be called
// concurrently.
type Clock struct {
	id       wire.ZenohID
	now      func() time.Time
	maxDelta uint64
	maxDur   time.Duration

	mu   sync.Mutex
	last uint64
}

// New makes a clock with the given id (a zenoh node's zid) reading now
// (time.Now when nil); maxDelta bounds how far ahead of it a timestamp
// may be (DefaultMaxDelta when 0).
func New(id wire.ZenohID, now func() time.Time, maxDelta time.Duration) *Clock {
	if now == nil {
		now = time.Now
	}
	if maxDelta <= 0 {
		maxDelta = DefaultMaxDelta
	}
	return &Clock{id: id, now: now, maxDelta: FromDuration(maxDelta), maxDur: maxDelta}
}

// Now returns a new timestamp, after every one the clock gave or saw.
func (c *Clock) Now() wire.Timestamp {
	now := NTP64(c.now()) &^ counterMask
	c.mu.Lock()
	defer c.mu.Unlock()
	if now > c.last&^counterMask {
		c.last = now
	} else {
		c.last++
	}
	return wire.Timestamp{Time: c.last, ID: c.id}
}

// ErrDelta is a timestamp too far in the future.
type ErrDelta struct {
	TS  wire.Timestamp
	Now uint64
	Max time.Duration
}

// Error implements the error interface.
func (e *ErrDelta) Error() string {
	return fmt.Sprintf("hlc: timestamp %v from %s is more than %v ahead of this clock",
		Time(e.TS.Time).UTC().Format(time.RFC3339Nano), e.TS.ID, e.Max)
}

// Update makes the clock follow a timestamp from elsewhere, or reports
// *ErrDelta (and leaves the clock) when it is more than the maximum delta
// ahead.
func (c *Clock) Update(ts wire.Timestamp) error {
	now := NTP64(c.now()) &^ counterMask
	if ts.Time > now && ts.Time-now > c.maxDelta {
		return &ErrDelta{TS: ts, Now: now, Max: c.maxDur}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := max(now, ts.Time, c.last); m {
	case now:
		c.last = now
	case ts.Time:
		c.last = ts.Time + 1
	default:
		c.last++
	}
	return nil
}
