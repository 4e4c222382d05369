package simtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/simtest"
)

// Waits on ROS time follow the steps: a WithRosTimeout context ends on the
// step that reaches its deadline, and a bag loop ends it with
// ErrTimeSourceChanged.
func TestRosDeadlineFollowsTheSteps(t *testing.T) {
	sim := simtest.New(t)
	clk := sim.Node("waiter").Clock()

	ctx, cancel := nros.WithRosTimeout(context.Background(), clk, nros.Duration(time.Second))
	defer cancel()
	sim.Pause()
	sim.Advance(time.Minute) // paused: no simulated time passes
	if ctx.Err() != nil {
		t.Fatalf("ended while paused: %v", context.Cause(ctx))
	}
	sim.Resume()
	sim.SetRate(2)
	sim.Advance(490 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended at %v, before 101 s", sim.Now())
	}
	sim.Advance(10 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || sim.Now() != nros.TimeFromNanoseconds(101e9) {
		t.Fatalf("at %v: %v", sim.Now(), context.Cause(ctx))
	}

	loop, lcancel := nros.WithRosTimeout(context.Background(), clk, nros.Duration(time.Second))
	defer lcancel()
	sim.Jump(-10 * time.Second)
	if !errors.Is(context.Cause(loop), nros.ErrTimeSourceChanged) {
		t.Fatalf("after a loop: %v", context.Cause(loop))
	}
}

// A goroutine sleeping on ROS time wakes on the step that reaches it.
func TestSleepForFromAGoroutine(t *testing.T) {
	sim := simtest.New(t)
	clk := sim.Node("sleeper").Clock()
	start := clk.Now()
	done := make(chan error, 1)
	go func() {
		done <- clk.SleepUntil(context.Background(), nros.TimeFromNanoseconds(start.Nanoseconds()+int64(time.Second)))
	}()
	sim.Advance(2 * time.Second) // whenever the goroutine starts, 101 s comes
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
