package exec

import (
	"testing"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/timer"
)

const sec = 1_000_000_000

func rosTimer(ov *clock.Override, period int64, p timer.Policy) *Timer {
	return NewTimer(Config{ID: 1, Clock: Clock{Kind: Ros, Sources: clock.NewSources(nil, nil), Ov: ov},
		Period: period, Policy: p, Autostart: true, Callback: func() {}})
}

// A reading taken before a restart that the timer has already applied (it
// was reset after the jump) must not evaluate it: with the old time and the
// new deadline, the timer would look ~900 periods late.
func TestStaleReadingNeverEvaluates(t *testing.T) {
	for _, p := range []timer.Policy{timer.Skip, timer.CatchUp} {
		ov := clock.NewOverride(nil)
		ov.Attach()
		ov.Install(1000 * sec)
		tm := rosTimer(ov, sec, p)
		old := tm.clk.read()  // a pass reads the clock here ...
		ov.Install(100 * sec) // ... a bag loops back ...
		tm.Reset()            // ... and the timer restarts from the landing point
		tm.mu.Lock()
		ok := tm.syncLocked(old, false)
		fired := ok && tm.st.Fire(old.now)
		next, over := tm.st.Next, tm.st.Overruns
		tm.mu.Unlock()
		if ok || fired || over != 0 || next != 101*sec {
			t.Fatalf("%v: stale reading evaluated the timer: ok=%v fired=%v overruns=%d next=%d", p, ok, fired, over, next)
		}
	}
}

// A timer made before a restart applies it on its first evaluation, with no
// backlog, whether or not it belongs to a loop.
func TestTimerAppliesRestartsLazily(t *testing.T) {
	ov := clock.NewOverride(func() clock.SystemTime { return clock.SystemTime(1_700_000_000 * sec) })
	ov.Attach()
	tm := rosTimer(ov, sec, timer.Skip) // on system time: deadline in 2023
	ov.Install(100 * sec)               // the first sample: a source switch
	ov.Install(100*sec + sec/2)
	d, ok := tm.Until()
	if !ok || d != sec/2 {
		t.Fatalf("Until = %d, %v; want 0.5 s from the switch", d, ok)
	}
	ov.Install(50 * sec) // backward
	if d, _ := tm.Until(); d != sec {
		t.Fatalf("after a backward jump Until = %d, want a full period", d)
	}
}

func TestClosedLoopRefusesTimers(t *testing.T) {
	l := New(Options{})
	ov := clock.NewOverride(nil)
	tm := rosTimer(ov, sec, timer.Skip)
	if err := l.Add(tm); err != nil {
		t.Fatal(err)
	}
	if ov.Waiters() != 1 {
		t.Fatal("no waiter for the ROS domain")
	}
	if err := New(Options{}).Add(tm); err != ErrOtherLoop {
		t.Fatalf("second loop: %v", err)
	}
	l.Close()
	if ov.Waiters() != 0 {
		t.Fatal("waiter left after Close")
	}
	if err := l.Add(rosTimer(ov, sec, timer.Skip)); err != ErrClosed {
		t.Fatalf("Add after Close: %v", err)
	}
	if n, err := l.SpinSome(); n != 0 || err != nil {
		t.Fatalf("SpinSome after Close: %d %v", n, err)
	}
}
