package nros

import (
	"testing"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/zenoh"
)

// A context made with the caller's clocks gives them to its default
// transport: the clock it passes reads the context's steady time and its
// waits end on the context's timers, so a harness that owns time steps the
// transport's heartbeats, leases and timeouts too. A context on the
// system's clocks leaves the transports on theirs.
func TestContextClockReachesDefaultTransport(t *testing.T) {
	steady := int64(5)
	timers := clock.NewManualTimers(func() int64 { return steady })
	c := NewContext(WithClockSources(func() int64 { return steady }, nil),
		WithClockTimers(func(d time.Duration, f func()) func() bool { return timers.AfterFunc(d, f).Stop }))
	if !c.ownClock {
		t.Fatal("a context with the caller's clocks does not pass them on")
	}
	var tc interface {
		rtps.Clock
		zenoh.Clock
	} = transportClock{c.src}
	if got := tc.Now(); got != 5 {
		t.Fatalf("Now %d, want the context's steady time 5", got)
	}
	ch, _ := tc.After(time.Second)
	stopped, stop := tc.After(time.Second)
	stop()
	steady += int64(time.Second)
	if timers.Fire() != 1 {
		t.Fatal("the transport's waits are not the context's timers")
	}
	select {
	case <-ch:
	default:
		t.Fatal("After did not end when the context's clock passed it")
	}
	select {
	case <-stopped:
		t.Fatal("a released After ended")
	default:
	}
	if NewContext().ownClock {
		t.Fatal("a context on the system's clocks claims its own")
	}
}
