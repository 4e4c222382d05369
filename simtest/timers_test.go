package simtest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/simtest"
)

// logBuf collects the world's node logs.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) lines(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// The clock-health warnings follow the Sim's wall time: no first /clock
// sample after 5 s, then a 30 s stall and its end (#16: simtest steps every
// wait of the context).
func TestClockHealthWarningsFollowTheSteps(t *testing.T) {
	logs := &logBuf{}
	sim := simtest.New(t, simtest.NotStarted(), simtest.ClockTopicOnly(), simtest.WithLogOutput(logs))
	sim.Node("follower", nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	sim.Advance(nros.ClockSilenceWarning - 10*time.Millisecond)
	if l := logs.lines("[WARN]"); len(l) != 0 {
		t.Fatalf("warned before 5 s: %q", l)
	}
	sim.Advance(10 * time.Millisecond)
	if l := logs.lines("no sample on /clock after 5s"); len(l) != 1 {
		t.Fatalf("at 5 s: %q", logs.lines(""))
	}

	sim.Start()
	sim.Advance(time.Minute)
	sim.StopClock()
	sim.Advance(nros.ClockStallWarning - 20*time.Millisecond)
	if l := logs.lines("for 30s"); len(l) != 0 {
		t.Fatalf("stall warned early: %q", l)
	}
	sim.Advance(20 * time.Millisecond)
	if l := logs.lines("no sample on /clock for 30s"); len(l) != 1 {
		t.Fatalf("after a 30 s stall: %q", logs.lines(""))
	}
	sim.Start()
	if l := logs.lines("/clock resumed after"); len(l) != 1 {
		t.Fatalf("after resuming: %q", logs.lines(""))
	}
}

// A wait on the system clock (and on a ROS clock that reads system time)
// ends on the step whose wall time reaches it.
func TestSystemClockWaitFollowsTheSteps(t *testing.T) {
	sim := simtest.New(t, simtest.NotStarted())
	sys := sim.Context().SystemClock()
	ctx, cancel := nros.WithRosTimeout(context.Background(), sys, nros.Duration(time.Second))
	defer cancel()
	ros, rcancel := nros.WithRosTimeout(context.Background(), sim.Context().Clock(), nros.Duration(2*time.Second))
	defer rcancel()
	sim.Advance(time.Second - 10*time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended before a second: %v", context.Cause(ctx))
	}
	sim.Advance(10 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("after a second: %v", context.Cause(ctx))
	}
	sim.Advance(time.Second)
	if !errors.Is(ros.Err(), context.DeadlineExceeded) {
		t.Fatalf("ROS clock on system time, after 2 s: %v", context.Cause(ros))
	}

	// A goroutine sleeping on the system clock wakes on the step that
	// reaches its time, whenever it started.
	done := make(chan error, 1)
	target := nros.TimeFromNanoseconds(sys.Now().Nanoseconds() + int64(time.Second))
	go func() { done <- sys.SleepUntil(context.Background(), target) }()
	for range 3 {
		sim.Advance(time.Second)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sleeper never woke")
	}
}
