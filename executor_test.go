package nros

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

const (
	ms  = int64(time.Millisecond)
	sec = int64(time.Second)
)

// fire is one recorded activation.
type fire struct {
	wall time.Duration // fake wall time since the test started
	ros  int64         // ROS time when the callback ran
	over uint64        // the timer's overrun total after the activation
}

// rig is an executor spinning in a synctest bubble with a ROS timer and a
// wall timer on one node, and a time source to drive the context.
type rig struct {
	t     *testing.T
	start time.Time
	ctx   *Context
	exec  *Executor
	node  *Node
	src   *TimeSource
	ros   *Timer
	wall  *Timer

	mu        sync.Mutex
	rosFires  []fire
	wallFires []fire
	stop      func()
}

func newRig(t *testing.T, policy TimerOverrunPolicy, period time.Duration) *rig {
	r := &rig{t: t, start: time.Now(), ctx: NewContext()}
	r.exec = NewExecutor(WithExecutorContext(r.ctx))
	var err error
	r.node, err = NewNode("rig", WithContext(r.ctx))
	if err != nil {
		t.Fatal(err)
	}
	r.src = r.ctx.AttachTimeSource()
	r.ros, err = r.node.CreateTimer(r.node.Clock(), period, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.rosFires = append(r.rosFires, fire{time.Since(r.start), r.node.Clock().Now().Nanoseconds(), r.ros.Overruns()})
	}, WithOverrunPolicy(policy), WithTimerName("ros"))
	if err != nil {
		t.Fatal(err)
	}
	r.wall, err = r.node.CreateWallTimer(period, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.wallFires = append(r.wallFires, fire{time.Since(r.start), r.node.Clock().Now().Nanoseconds(), 0})
	}, WithTimerName("wall"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.exec.AddNode(r.node); err != nil {
		t.Fatal(err)
	}
	r.stop = spinInBackground(t, r.exec)
	return r
}

func spinInBackground(t *testing.T, e *Executor) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Spin(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Spin: %v", err)
		}
	}
}

// install installs a sample and lets the executor react.
func (r *rig) install(simNs int64) {
	r.src.Install(TimeFromNanoseconds(simNs))
	synctest.Wait()
}

// play publishes samples every 10 ms of wall time for wall, with sim time
// advancing at rate (num/den) from its value at the start of the segment
// (the first sample of the segment carries that value), and returns the sim
// time at the end of the segment.
func (r *rig) play(from int64, num, den int64, wall time.Duration) int64 {
	const step = 10 * time.Millisecond
	for w := time.Duration(0); w < wall; w += step {
		r.install(from + int64(w)*num/den)
		time.Sleep(step)
	}
	synctest.Wait()
	return from + int64(wall)*num/den
}

func (r *rig) snapshot() (ros, wall []fire) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fire(nil), r.rosFires...), append([]fire(nil), r.wallFires...)
}

func rosTimes(fs []fire) []int64 {
	out := make([]int64, len(fs))
	for i, f := range fs {
		out[i] = f.ros
	}
	return out
}

func grid(from, step int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)*step
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var policies = []TimerOverrunPolicy{OverrunSkip, OverrunCatchUp}

func TestPausedClockSilencesRosTimersNotWallTimers(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, p, 100*time.Millisecond)
				defer r.stop()
				sim := r.play(100*sec, 1, 1, time.Second) // 1x for 1 s
				ros1, wall1 := r.snapshot()
				r.play(sim, 0, 1, 2*time.Second) // paused for 2 s, same stamp republished
				ros2, wall2 := r.snapshot()

				if want := grid(100*sec+100*ms, 100*ms, 9); !equalInts(rosTimes(ros1), want) {
					t.Fatalf("ROS fires while playing: %v, want %v", rosTimes(ros1), want)
				}
				// The pause's first sample (101.0 s) completes the tenth period;
				// after that nothing.
				if got := rosTimes(ros2[len(ros1):]); !equalInts(got, []int64{101 * sec}) {
					t.Fatalf("ROS fires while paused: %v, want only [101s]", got)
				}
				if n := len(wall2) - len(wall1); n != 20 {
					t.Fatalf("wall fires during the 2 s pause: %d, want 20", n)
				}
				for i, f := range wall2 {
					if want := time.Duration(i+1) * 100 * time.Millisecond; f.wall != want {
						t.Fatalf("wall fire %d at %v, want %v (cadence lost)", i, f.wall, want)
					}
				}
				if r.ros.Overruns() != 0 {
					t.Fatalf("overruns %d", r.ros.Overruns())
				}
			})
		})
	}
}

func TestRosTimersFollowTheRate(t *testing.T) {
	tests := []struct {
		num, den int64
		want     int // ROS fires in 2 s of wall time: sim reaches 100 + rate*1.99 s
	}{
		{1, 2, 9}, {1, 1, 19}, {2, 1, 39}, {4, 1, 79},
	}
	for _, p := range policies {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%d:%d", p, tt.num, tt.den), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := newRig(t, p, 100*time.Millisecond)
					defer r.stop()
					r.play(100*sec, tt.num, tt.den, 2*time.Second)
					ros, wall := r.snapshot()
					// Each deadline fires on the first sample at or past it.
					step := 10 * ms * tt.num / tt.den
					want := grid(100*sec+100*ms, 100*ms, tt.want)
					for i, g := range want {
						want[i] = 100*sec + (g-100*sec+step-1)/step*step
					}
					if !equalInts(rosTimes(ros), want) {
						t.Fatalf("ROS fires %v, want %v", rosTimes(ros), want)
					}
					if len(wall) != 19 && len(wall) != 20 {
						t.Fatalf("wall fires %d, want 19 or 20 whatever the rate", len(wall))
					}
					if r.ros.Overruns() != 0 {
						t.Fatalf("overruns %d at a steady rate", r.ros.Overruns())
					}
				})
			})
		}
	}
}

func TestBackwardJumpRestartsThePeriod(t *testing.T) {
	for _, p := range policies {
		for _, jump := range []int64{-5 * sec, -50 * ms, -1} {
			t.Run(fmt.Sprintf("%s/%dns", p, jump), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := newRig(t, p, 100*time.Millisecond)
					defer r.stop()
					sim := r.play(100*sec, 1, 1, 260*time.Millisecond) // fires at 100.1, 100.2
					landing := sim - 10*ms + jump                      // from the last sample, 100.25
					if landing >= sim-10*ms {
						t.Fatal("not a backward jump")
					}
					r.install(landing)
					after := r.play(landing, 1, 1, 300*time.Millisecond)
					_ = after
					ros, _ := r.snapshot()
					want := []int64{100*sec + 100*ms, 100*sec + 200*ms,
						landing + 100*ms, landing + 200*ms}
					if !equalInts(rosTimes(ros), want) {
						t.Fatalf("ROS fires %v, want %v (period restarted at the landing point %d)", rosTimes(ros), want, landing)
					}
					if r.ros.Overruns() != 0 {
						t.Fatalf("overruns %d after a backward jump", r.ros.Overruns())
					}
				})
			})
		}
	}
}

func TestForwardJumpIsABacklog(t *testing.T) {
	tests := []struct {
		policy    TimerOverrunPolicy
		wantFires int
	}{
		{OverrunSkip, 1},     // coalesced
		{OverrunCatchUp, 99}, // every missed period replayed
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, tt.policy, 100*time.Millisecond)
				defer r.stop()
				sim := r.play(100*sec, 1, 1, 250*time.Millisecond) // fires 100.1, 100.2; next 100.3
				pre, _ := r.snapshot()
				before := len(pre)
				// +9.9 s from 100.24: the deadlines 100.3 ... 110.1 are due (99)
				r.install(sim - 10*ms + 9900*ms)
				ros, _ := r.snapshot()
				if got := len(ros) - before; got != tt.wantFires {
					t.Fatalf("activations for the jump: %d, want %d", got, tt.wantFires)
				}
				if r.ros.Overruns() != 98 {
					t.Fatalf("overruns %d, want 98", r.ros.Overruns())
				}
				// The phase grid is kept: the next activation is at 110.2.
				if d, err := r.ros.TimeUntilNextCall(); err != nil || d != 60*time.Millisecond {
					t.Fatalf("time until next call %v, %v; want 60ms", d, err)
				}
			})
		})
	}
}

func TestCatchUpInterleavesWithOtherCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		e := NewExecutor(WithExecutorContext(ctx))
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(100 * sec))
		var order []string
		for _, name := range []string{"a", "b"} {
			if _, err := e.RegisterTimerOnClock(100*time.Millisecond, TimerClockRos, func() { order = append(order, name) },
				WithOverrunPolicy(OverrunCatchUp)); err != nil {
				t.Fatal(err)
			}
		}
		src.Install(TimeFromNanoseconds(100*sec + 500*ms)) // 5 periods due for each
		for range 5 {
			if err := e.SpinOnce(0); err != nil {
				t.Fatal(err)
			}
		}
		if got := fmt.Sprint(order); got != "[a b a b a b a b a b]" {
			t.Fatalf("order %s: a catch-up backlog must not starve the other timer", got)
		}
	})
}

func TestSourceSwitchIsNotABacklog(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, p, 100*time.Millisecond)
				defer r.stop()
				time.Sleep(250 * time.Millisecond) // on system time: two fires
				synctest.Wait()
				if pre, _ := r.snapshot(); len(pre) != 2 {
					n := len(pre)
					t.Fatalf("ROS timer on system time fired %d times, want 2", n)
				}
				// First sample: sim 100 s replaces system time (~9.5e8 s in the bubble).
				r.play(100*sec, 1, 1, 150*time.Millisecond)
				ros, _ := r.snapshot()
				if got := rosTimes(ros[2:]); !equalInts(got, []int64{100*sec + 100*ms}) {
					t.Fatalf("after the first sample: %v, want [100.1s] (restart, no fire at the switch)", got)
				}
				// Clearing hands back to system time: again a restart, not a jump
				// of 9.5e8 s forward.
				r.ctx.Clock().ClearRosTimeOverride()
				synctest.Wait()
				sys := time.Now().UnixNano()
				time.Sleep(150 * time.Millisecond)
				synctest.Wait()
				ros, _ = r.snapshot()
				if got := rosTimes(ros[3:]); !equalInts(got, []int64{sys + 100*ms}) {
					t.Fatalf("after clear: %v, want [%d]", got, sys+100*ms)
				}
				if r.ros.Overruns() != 0 {
					t.Fatalf("overruns %d: a source switch must not count as a backlog", r.ros.Overruns())
				}
			})
		})
	}
}

func TestDetachKeepsTheLastSimTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, OverrunSkip, 100*time.Millisecond)
		defer r.stop()
		sim := r.play(100*sec, 1, 1, 250*time.Millisecond)
		last := sim - 10*ms
		r.src.Detach()
		r.src.Detach() // twice is fine
		r.src.Install(TimeFromNanoseconds(500 * sec))
		c := r.node.Clock()
		pre, _ := r.snapshot()
		n := len(pre)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := c.Now().Nanoseconds(); got != last {
			t.Fatalf("Now after detach = %d, want the last sim time %d", got, last)
		}
		if !c.RosTimeIsActive() || !c.Started() {
			t.Fatal("a kept sim time must still report active and started")
		}
		if post, _ := r.snapshot(); len(post) != n {
			t.Fatal("ROS timer fired on a detached, frozen clock")
		}
		c.ClearRosTimeOverride()
		if c.RosTimeIsActive() || c.Started() {
			t.Fatal("clear must leave ROS time inactive")
		}
		if got := c.Now().Nanoseconds(); got != time.Now().UnixNano() {
			t.Fatalf("Now after clear = %d, want system time", got)
		}
	})
}

func TestRosTimerWakesOnTheCrossingSampleOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		e := NewExecutor(WithExecutorContext(ctx))
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(100 * sec))
		var mu sync.Mutex
		var fires []time.Time
		if _, err := e.RegisterTimerOnClock(time.Second, TimerClockRos, func() { mu.Lock(); fires = append(fires, time.Now()); mu.Unlock() }); err != nil {
			t.Fatal(err)
		}
		stop := spinInBackground(t, e)
		defer stop()
		synctest.Wait()
		base := e.loop.Passes()
		// 10 s of a paused simulation republishing at 1 kHz: no pass at all.
		for range 10000 {
			src.Install(TimeFromNanoseconds(100 * sec))
			time.Sleep(time.Millisecond)
		}
		synctest.Wait()
		if n := e.loop.Passes() - base; n != 0 {
			t.Fatalf("%d executor passes during a pause, want 0", n)
		}
		// Sim time creeping towards the deadline wakes nobody before it.
		for v := 100*sec + 100*ms; v < 101*sec; v += 100 * ms {
			src.Install(TimeFromNanoseconds(v))
			time.Sleep(time.Millisecond)
		}
		synctest.Wait()
		mu.Lock()
		nf := len(fires)
		mu.Unlock()
		if n := e.loop.Passes() - base; n != 0 || nf != 0 {
			t.Fatalf("%d passes, %d fires before the deadline", n, nf)
		}
		at := time.Now()
		src.Install(TimeFromNanoseconds(101 * sec))
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(fires) != 1 || !fires[0].Equal(at) {
			t.Fatalf("fires %v: want exactly one, at the crossing sample (%v), with no wall delay", fires, at)
		}
	})
}

// fakeSystem is a system clock that tests can step.
type fakeSystem struct{ offset atomic.Int64 }

func (f *fakeSystem) Now() int64 { return time.Now().UnixNano() + f.offset.Load() }

// context returns a context whose system clock is f.
func (f *fakeSystem) context() *Context { return NewContext(WithClockSources(nil, f.Now)) }

func TestSystemTimerStepsAndRosTimerWithoutSource(t *testing.T) {
	for _, src := range []TimerClockSource{TimerClockSystem, TimerClockRos} {
		for _, p := range policies {
			t.Run(src.String()+"/"+p.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					sys := &fakeSystem{}
					e := NewExecutor(WithExecutorContext(sys.context()))
					var n atomic.Int64
					tm, err := e.RegisterTimerOnClock(100*time.Millisecond, src, func() { n.Add(1) }, WithOverrunPolicy(p))
					if err != nil {
						t.Fatal(err)
					}
					stop := spinInBackground(t, e)
					defer stop()
					time.Sleep(250 * time.Millisecond)
					synctest.Wait()
					if n.Load() != 2 {
						t.Fatalf("fires %d, want 2", n.Load())
					}
					// The system clock is set back an hour: the period restarts.
					sys.offset.Add(-3600 * sec)
					time.Sleep(60 * time.Millisecond) // the pending wait ends at the old deadline
					synctest.Wait()
					time.Sleep(100 * time.Millisecond)
					synctest.Wait()
					if n.Load() != 3 || tm.Overruns() != 0 {
						t.Fatalf("after a backward step: fires %d overruns %d, want 3 and 0", n.Load(), tm.Overruns())
					}
					// Set forward 1 s: a backlog of 10 periods.
					sys.offset.Add(sec)
					e.Wake()
					synctest.Wait()
					want := map[TimerOverrunPolicy]int{OverrunSkip: 4, OverrunCatchUp: 13}[p]
					if int(n.Load()) != want {
						t.Fatalf("after a forward step: fires %d, want %d (overruns %d)", n.Load(), want, tm.Overruns())
					}
				})
			})
		}
	}
}

func TestSteadyTimerBacklogFromASlowCallback(t *testing.T) {
	for _, tt := range []struct {
		p         TimerOverrunPolicy
		wantFires int
	}{{OverrunSkip, 2}, {OverrunCatchUp, 4}} {
		t.Run(tt.p.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := NewExecutor(WithExecutorContext(NewContext()))
				var n atomic.Int64
				tm, err := e.RegisterTimerOnClock(100*time.Millisecond, TimerClockSteady, func() {
					if n.Add(1) == 1 {
						time.Sleep(350 * time.Millisecond) // blocks the executor
					}
				}, WithOverrunPolicy(tt.p))
				if err != nil {
					t.Fatal(err)
				}
				stop := spinInBackground(t, e)
				defer stop()
				time.Sleep(460 * time.Millisecond)
				synctest.Wait()
				if int(n.Load()) != tt.wantFires || tm.Overruns() != 2 {
					t.Fatalf("fires %d overruns %d, want %d and 2", n.Load(), tm.Overruns(), tt.wantFires)
				}
			})
		})
	}
}

func TestTimerControls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := NewExecutor(WithExecutorContext(NewContext()))
		var n atomic.Int64
		if _, err := e.RegisterTimerOnClock(0, TimerClockSteady, func() {}); !errors.Is(err, ErrBadPeriod) {
			t.Fatalf("zero period: %v", err)
		}
		if _, err := e.RegisterTimerOnClock(-time.Second, TimerClockRos, func() {}); !errors.Is(err, ErrBadPeriod) {
			t.Fatalf("negative period: %v", err)
		}
		if _, err := e.RegisterTimerOnClock(time.Second, TimerClockSource(9), func() {}); err == nil {
			t.Fatal("unknown clock source accepted")
		}
		tm, err := e.RegisterTimerOnClock(100*time.Millisecond, TimerClockSteady, func() { n.Add(1) })
		if err != nil {
			t.Fatal(err)
		}
		stop := spinInBackground(t, e)
		defer stop()
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		if d, _ := tm.TimeUntilNextCall(); d != 50*time.Millisecond {
			t.Fatalf("until next %v", d)
		}
		if !tm.Cancel() || tm.Cancel() {
			t.Fatal("Cancel must return true once, then false")
		}
		if _, err := tm.TimeUntilNextCall(); !errors.Is(err, ErrTimerCanceled) {
			t.Fatalf("canceled TimeUntilNextCall: %v", err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n.Load() != 1 {
			t.Fatalf("canceled timer fired: %d", n.Load())
		}
		if tm.Reset() {
			t.Fatal("Reset of a canceled timer must return false")
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n.Load() != 2 || !tm.Reset() {
			t.Fatalf("after reset: fires %d", n.Load())
		}
		if old, err := tm.SetPeriod(time.Second); err != nil || old != 100*time.Millisecond {
			t.Fatalf("SetPeriod: %v %v", old, err)
		}
		if _, err := tm.SetPeriod(0); !errors.Is(err, ErrBadPeriod) || tm.Period() != time.Second {
			t.Fatal("a zero period must be refused and change nothing")
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if n.Load() != 2 {
			t.Fatal("new period not honoured")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n.Load() != 3 {
			t.Fatalf("fires %d after the new period", n.Load())
		}

		// one-shot and autostart(false)
		var shots atomic.Int64
		one, _ := e.RegisterTimerOnClock(10*time.Millisecond, TimerClockSteady, func() { shots.Add(1) }, OneShot())
		idle, _ := e.RegisterTimerOnClock(10*time.Millisecond, TimerClockSteady, func() { shots.Add(100) }, WithAutostart(false))
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if shots.Load() != 1 || !one.IsCanceled() || one.Cancel() || !idle.IsCanceled() {
			t.Fatalf("one-shot/autostart: shots=%d", shots.Load())
		}
	})
}

func TestTimeUntilNextCallFrozenWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, OverrunSkip, 100*time.Millisecond)
		defer r.stop()
		r.play(100*sec, 1, 1, 50*time.Millisecond) // last sample 100.04
		d1, _ := r.ros.TimeUntilNextCall()
		time.Sleep(5 * time.Second)
		d2, _ := r.ros.TimeUntilNextCall()
		if d1 != d2 || d1 != 60*time.Millisecond {
			t.Fatalf("until next: %v then %v, want 60ms both", d1, d2)
		}
	})
}

func TestPanickingCallback(t *testing.T) {
	t.Run("continue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var reports []*CallbackPanicError
			e := NewExecutor(WithExecutorContext(NewContext()), WithPanicHandler(func(p *CallbackPanicError) { mu.Lock(); reports = append(reports, p); mu.Unlock() }))
			bad, _ := e.RegisterTimerOnClock(100*time.Millisecond, TimerClockSteady, func() { panic("boom") }, WithTimerName("bad"))
			var good atomic.Int64
			e.RegisterTimerOnClock(100*time.Millisecond, TimerClockSteady, func() { good.Add(1) })
			stop := spinInBackground(t, e)
			time.Sleep(350 * time.Millisecond)
			synctest.Wait()
			stop()
			if good.Load() != 3 || len(reports) != 3 {
				t.Fatalf("good fires %d, panic reports %d; want 3 and 3", good.Load(), len(reports))
			}
			p := reports[0]
			if p.Kind != "timer" || p.ID != bad.ID() || p.Name != "bad" || p.Value != "boom" || len(p.Stack) == 0 {
				t.Fatalf("report %+v", p)
			}
		})
	})
	t.Run("stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := NewExecutor(WithExecutorContext(NewContext()), WithPanicPolicy(PanicStop), WithPanicHandler(func(*CallbackPanicError) {}))
			e.RegisterTimerOnClock(100*time.Millisecond, TimerClockSteady, func() { panic(errors.New("bad state")) }, WithTimerName("x"))
			err := e.Spin(context.Background())
			var pe *CallbackPanicError
			if !errors.As(err, &pe) || pe.Name != "x" {
				t.Fatalf("Spin returned %v", err)
			}
			if time.Since(time.Unix(946684800, 0)) != 100*time.Millisecond {
				t.Fatalf("stopped at %v", time.Since(time.Unix(946684800, 0)))
			}
		})
	})
}

func TestConcurrentTimerChurnWhileSpinning(t *testing.T) {
	ctx := NewContext()
	e := NewExecutor(WithExecutorContext(ctx))
	src := ctx.AttachTimeSource()
	spinCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Spin(spinCtx) }()
	var fired atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			var mine []*Timer
			for i := range 300 {
				srcKind := TimerClockSource(i % 3)
				tm, err := e.RegisterTimerOnClock(time.Duration(1+rng.IntN(3))*time.Millisecond, srcKind, func() { fired.Add(1) },
					WithOverrunPolicy(TimerOverrunPolicy(i%2)))
				if err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, tm)
				if i%3 == 0 {
					mine[rng.IntN(len(mine))].Cancel()
				}
				if i%7 == 0 {
					mine[rng.IntN(len(mine))].Reset()
				}
				if i%11 == 0 {
					src.Install(TimeFromNanoseconds(int64(i) * ms))
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for fired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fired.Load() == 0 {
		t.Fatal("no timer fired")
	}
	if err := e.SpinOnce(0); err != nil {
		t.Fatal(err)
	}
}

func TestSpinTwiceIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := NewExecutor(WithExecutorContext(NewContext()))
		stop := spinInBackground(t, e)
		synctest.Wait()
		if err := e.SpinOnce(0); !errors.Is(err, ErrAlreadySpinning) {
			t.Fatalf("second spinner: %v", err)
		}
		stop()
	})
}

func TestOneExecutorTwoSimulations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := NewContext(), NewContext()
		e := NewExecutor(WithExecutorContext(a))
		srcA, srcB := a.AttachTimeSource(), b.AttachTimeSource()
		srcA.Install(TimeFromNanoseconds(100 * sec))
		srcB.Install(TimeFromNanoseconds(5000 * sec))
		na, _ := NewNode("a", WithContext(a))
		nb, _ := NewNode("b", WithContext(b))
		var mu sync.Mutex
		var fires []string
		rec := func(name string, c *Clock) func() {
			return func() {
				mu.Lock()
				fires = append(fires, fmt.Sprintf("%s@%d", name, c.Now().Nanoseconds()/ms))
				mu.Unlock()
			}
		}
		na.CreateTimer(na.Clock(), 100*time.Millisecond, rec("a", na.Clock()))
		nb.CreateTimer(nb.Clock(), 100*time.Millisecond, rec("b", nb.Clock()))
		e.AddNode(na)
		e.AddNode(nb)
		stop := spinInBackground(t, e)
		defer stop()
		srcA.Install(TimeFromNanoseconds(100*sec + 100*ms)) // only a's clock moves
		synctest.Wait()
		srcB.Install(TimeFromNanoseconds(5000*sec - 1*sec)) // b jumps back: restart, no fire
		synctest.Wait()
		srcB.Install(TimeFromNanoseconds(5000*sec - 1*sec + 100*ms))
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if got := fmt.Sprint(fires); got != "[a@100100 b@4999100]" {
			t.Fatalf("fires %s: each context's timers follow their own simulation", got)
		}
	})
}
