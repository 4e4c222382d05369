package nros

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw/intra"
)

// WaitForService and WaitForServer poll between graph events on the
// context's timers (WithClockTimers), so a harness that owns time steps
// them, and they leave no timer behind.
func TestAvailabilityPollsOnTheContextsTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var steady atomic.Int64
		timers := clock.NewManualTimers(steady.Load)
		ctx := NewContext(WithTransport(intra.New()), WithLogOutput(io.Discard),
			WithClockSources(steady.Load, nil),
			WithClockTimers(func(d time.Duration, f func()) func() bool { return timers.AfterFunc(d, f).Stop }))
		defer ctx.Shutdown()
		n, err := NewNode("poller", WithContext(ctx), WithoutParameterServices())
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		c, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](n, "s")
		if err != nil {
			t.Fatal(err)
		}
		ac, err := NewActionClient[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback](n, "f")
		if err != nil {
			t.Fatal(err)
		}
		for name, wait := range map[string]func(context.Context) error{
			"WaitForService": c.WaitForService,
			"WaitForServer":  ac.WaitForServer,
		} {
			cctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- wait(cctx) }()
			synctest.Wait()
			if p := timers.Pending(); p != 1 {
				t.Fatalf("%s: %d timers on the context's clock, want its poll", name, p)
			}
			for range 3 { // each poll looks again and re-arms
				steady.Add(int64(availabilityPoll))
				if timers.Fire() != 1 {
					t.Fatalf("%s: the poll was not due after %v", name, availabilityPoll)
				}
				synctest.Wait()
				if p := timers.Pending(); p != 1 {
					t.Fatalf("%s: %d timers after a poll, want 1", name, p)
				}
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%s = %v, want context.Canceled", name, err)
			}
			if p := timers.Pending(); p != 0 {
				t.Fatalf("%s left %d timers", name, p)
			}
		}
	})
}
