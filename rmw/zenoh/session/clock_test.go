package session

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// manualClock is a Clock that the test advances by hand.
type manualClock struct {
	now atomic.Int64
	t   *clock.ManualTimers
}

func newManualClock() *manualClock {
	c := &manualClock{}
	c.t = clock.NewManualTimers(c.now.Load)
	return c
}

func (c *manualClock) Now() int64 { return c.now.Load() }

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer { return c.t.AfterFunc(d, f) }

// advance moves the clock by d and runs what fell due; it returns how many.
func (c *manualClock) advance(d time.Duration) int {
	c.now.Add(int64(d))
	return c.t.Fire()
}

// The handshake timeout runs on Config.Clock: a peer that never answers is
// dropped when that clock, not the runtime's, has advanced by the timeout.
func TestHandshakeTimeoutOnTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newManualClock()
		s := open(t, wire.Peer, &rec{}, func(c *Config) { c.Clock = clk; c.HandshakeTimeout = time.Second })
		defer s.Close()
		la, lb := link.Pipe(0)
		defer la.Close()
		errc := make(chan error, 1)
		go func() { _, err := s.Attach(lb, false); errc <- err }()
		synctest.Wait()
		time.Sleep(time.Hour) // the runtime's (fake) clock does not time the handshake
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("Attach returned before the configured clock advanced: %v", err)
		default:
		}
		if n := clk.advance(time.Second - 1); n != 0 {
			t.Fatalf("%d timers fired before the timeout", n)
		}
		if n := clk.advance(1); n != 1 {
			t.Fatalf("%d timers fired at the timeout, want the handshake's", n)
		}
		if err := <-errc; err == nil {
			t.Fatal("Attach succeeded with a silent peer")
		}
	})
}
