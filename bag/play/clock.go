package play

import (
	"context"
	"time"
)

// Clock is the wall time a Player plays against: it reads the time from it
// and waits on it, and on nothing else. The default is the process's
// monotonic clock (the time package, so inside a
// testing/synctest bubble it is the bubble's fake time); a harness that
// owns time passes its own (simtest.Sim.WallClock).
//
// It must not be the ROS clock the Player drives through /clock.
type Clock interface {
	// Now returns the current time. It must not go backwards.
	Now() time.Time
	// SleepUntil returns nil once Now has reached t, or ctx.Err() when ctx
	// ends first.
	SleepUntil(ctx context.Context, t time.Time) error
}

// realClock is the process's clock: the time package's monotonic
// readings and timers. It is the only place in this package that reads or
// waits on real time.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
