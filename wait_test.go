package nros

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// sleeper is a ROS-time timer whose callback sleeps on the ROS clock, on
// an executor spinning in the bubble, with a source driving the context.
type sleeper struct {
	ctx  *Context
	src  *TimeSource
	exec *Executor
	stop func()

	mu       sync.Mutex
	began    int64 // ROS time when the sleep began
	woke     int64 // ROS time when it returned
	wallTook time.Duration
	err      error
	returned bool
}

// newSleeper arms a one-shot ROS timer at sim 100.1 s whose callback runs
// sleep(clock).
func newSleeper(t *testing.T, sleep func(c *Clock) error) *sleeper {
	s := &sleeper{ctx: NewContext()}
	s.exec = NewExecutor(WithExecutorContext(s.ctx))
	s.src = s.ctx.AttachTimeSource()
	s.src.Install(TimeFromNanoseconds(100 * sec))
	c := s.ctx.Clock()
	_, err := s.exec.RegisterTimerOnClock(100*time.Millisecond, TimerClockRos, func() {
		began, w0 := c.Now().ns, time.Now()
		err := sleep(c)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.began, s.woke, s.wallTook, s.err, s.returned = began, c.Now().ns, time.Since(w0), err, true
	}, OneShot())
	if err != nil {
		t.Fatal(err)
	}
	s.stop = spinInBackground(t, s.exec)
	return s
}

// feed installs sim values every 10 ms of wall time from another goroutine
// (the transport's role) until the sleeping callback returns or the values
// run out, and reports whether it returned.
func (s *sleeper) feed(values []int64) bool {
	for _, v := range values {
		s.src.Install(TimeFromNanoseconds(v))
		synctest.Wait()
		if s.result().returned {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	synctest.Wait()
	return s.result().returned
}

func (s *sleeper) result() sleeper {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sleeper{began: s.began, woke: s.woke, wallTook: s.wallTook, err: s.err, returned: s.returned}
}

// ramp returns sim values from a to b (inclusive) in steps of step.
func ramp(a, b, step int64) []int64 {
	var out []int64
	for v := a; v <= b; v += step {
		out = append(out, v)
	}
	return out
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestSleepForInACallbackFollowsSimTime(t *testing.T) {
	for _, rate := range []struct {
		name string
		step int64 // sim per 10 ms of wall
		wall time.Duration
	}{{"1x", 10 * ms, time.Second}, {"0.5x", 5 * ms, 2 * time.Second}, {"2x", 20 * ms, 500 * time.Millisecond}} {
		t.Run(rate.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSleeper(t, func(c *Clock) error { return c.SleepFor(context.Background(), Duration(time.Second)) })
				defer s.stop()
				if !s.feed(ramp(100*sec+rate.step, 105*sec, rate.step)) {
					t.Fatal("SleepFor(1s) in a timer callback never returned while /clock advanced")
				}
				r := s.result()
				if r.err != nil || r.began != 100*sec+100*ms || r.woke != 101*sec+100*ms {
					t.Fatalf("slept from %d to %d (err %v), want 100.1 s to 101.1 s of sim time", r.began, r.woke, r.err)
				}
				// The wake-up comes with the crossing sample (10 ms of wall
				// per sample: the one at 100.1 s started the sleep).
				if want := rate.wall; r.wallTook != want {
					t.Fatalf("took %v of wall time, want %v", r.wallTook, want)
				}
			})
		})
	}
}

func TestSleepForPausedReturnsOnlyWhenCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSleeper(t, func(c *Clock) error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return c.SleepFor(ctx, Duration(time.Second))
		})
		defer s.stop()
		// Reach 100.5 s, then a paused simulation republishes 100.5 s at
		// 100 Hz for 20 s of wall time.
		if s.feed(ramp(100*sec+10*ms, 100*sec+500*ms, 10*ms)) || s.feed(repeat(100*sec+500*ms, 2000)) {
			t.Fatal("SleepFor returned while the clock was paused")
		}
		// Then nothing is published: the sleep waits, without a timer of
		// its own, until its context ends (30 s after it began).
		time.Sleep(15 * time.Second)
		synctest.Wait()
		r := s.result()
		if !r.returned || !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("after the context ended: returned %v, err %v; want context.DeadlineExceeded", r.returned, r.err)
		}
		if r.wallTook != 30*time.Second || r.woke != 100*sec+500*ms {
			t.Fatalf("returned after %v of wall time at sim %d, want 30s at 100.5 s", r.wallTook, r.woke)
		}
	})
}

func TestSleepForBagLoopReturnsTimeSourceChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSleeper(t, func(c *Clock) error { return c.SleepFor(context.Background(), Duration(time.Second)) })
		defer s.stop()
		// A step back that stays after the start of the sleep is only a
		// delay; the loop back to the bag's start (95 s) is a new timeline.
		vals := append(ramp(100*sec+10*ms, 100*sec+600*ms, 10*ms), 100*sec+300*ms, 100*sec+400*ms)
		if s.feed(vals) {
			t.Fatalf("a backward step after the start ended the sleep: %+v", s.result())
		}
		if !s.feed([]int64{95 * sec}) {
			t.Fatal("the bag loop did not end the sleep")
		}
		if r := s.result(); !errors.Is(r.err, ErrTimeSourceChanged) || r.woke != 95*sec {
			t.Fatalf("err %v at %d, want ErrTimeSourceChanged at 95 s", r.err, r.woke)
		}
	})
}

func TestSleepSourceChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(ctx *Context, src *TimeSource)
	}{
		{"clear", func(ctx *Context, _ *TimeSource) { ctx.Clock().ClearRosTimeOverride() }},
		{"clear and a new first sample", func(ctx *Context, src *TimeSource) {
			ctx.Clock().ClearRosTimeOverride()
			src.Install(TimeFromNanoseconds(500 * sec))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := NewContext()
				src := ctx.AttachTimeSource()
				src.Install(TimeFromNanoseconds(100 * sec))
				done := make(chan error, 1)
				go func() { done <- ctx.Clock().SleepFor(context.Background(), Duration(time.Second)) }()
				synctest.Wait()
				tc.change(ctx, src)
				synctest.Wait()
				select {
				case err := <-done:
					if !errors.Is(err, ErrTimeSourceChanged) {
						t.Fatalf("err %v, want ErrTimeSourceChanged", err)
					}
				default:
					t.Fatal("the sleep did not notice the source change")
				}
			})
		})
	}
}

func TestSleepOnSystemTime(t *testing.T) {
	// A ROS clock with no source, one whose source has not published yet,
	// and the system and steady clocks all sleep on a real timer.
	for _, tc := range []struct {
		name  string
		clock func(ctx *Context) *Clock
	}{
		{"ros without source", func(ctx *Context) *Clock { return ctx.Clock() }},
		{"ros before the first sample", func(ctx *Context) *Clock { ctx.AttachTimeSource(); return ctx.Clock() }},
		{"system", func(ctx *Context) *Clock { return ctx.clockFor(SystemTime) }},
		{"steady", func(ctx *Context) *Clock { return ctx.clockFor(SteadyTime) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tc.clock(NewContext())
				t0 := time.Now()
				if err := c.SleepFor(context.Background(), Duration(1500*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(t0); d != 1500*time.Millisecond {
					t.Fatalf("slept %v, want 1.5s", d)
				}
				if err := c.SleepUntil(context.Background(), c.Now()); err != nil {
					t.Fatalf("SleepUntil(now) = %v", err)
				}
				cctx, cancel := context.WithCancel(context.Background())
				go func() { time.Sleep(time.Second); cancel() }()
				if err := c.SleepFor(cctx, Duration(time.Hour)); !errors.Is(err, context.Canceled) {
					t.Fatalf("canceled sleep = %v", err)
				}
				if d := time.Since(t0); d != 2500*time.Millisecond {
					t.Fatalf("the canceled sleep returned at %v, want 2.5s", d)
				}
			})
		})
	}
}

func TestSleepFollowsASteppedSystemClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSystem{}
		c := f.context().clockFor(SystemTime)
		target := Time{c.Now().ns + 10*sec}
		done := make(chan error, 1)
		t0 := time.Now()
		go func() { done <- c.SleepUntil(context.Background(), target) }()
		time.Sleep(2 * time.Second)
		f.offset.Add(-5 * sec) // the system time is set 5 s back
		synctest.Wait()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// The timer armed for 10 s fires, sees 5 s left, and re-arms.
		if d := time.Since(t0); d != 15*time.Second {
			t.Fatalf("returned after %v, want 15s (the clock reads the target then)", d)
		}
	})
}

func TestSleepPreconditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(100 * sec))
		c := ctx.Clock()
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.SleepFor(canceled, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("a canceled context: %v", err)
		}
		if err := c.SleepUntil(context.Background(), TimeFromNanoseconds(99*sec)); err != nil {
			t.Fatalf("a past deadline: %v", err)
		}
		if err := c.SleepFor(context.Background(), -5); err != nil {
			t.Fatalf("a negative duration: %v", err)
		}
		// A duration past the end of time saturates instead of wrapping
		// into the past.
		d, cancel2 := WithRosTimeout(context.Background(), c, Duration(1<<63-1))
		defer cancel2()
		src.Install(TimeFromNanoseconds(1 << 62))
		if d.Err() != nil {
			t.Fatalf("an overflowing timeout ended: %v", context.Cause(d))
		}
	})
}

func TestWaitUntilStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		c := ctx.Clock()
		for _, other := range []*Clock{ctx.clockFor(SystemTime), ctx.clockFor(SteadyTime)} {
			if err := other.WaitUntilStarted(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		// Nothing publishes: the wall-time context bounds the wait.
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t0 := time.Now()
		if err := c.WaitUntilStarted(wctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != 5*time.Second {
			t.Fatalf("no source: %v after %v", err, time.Since(t0))
		}
		src := ctx.AttachTimeSource()
		done := make(chan error, 1)
		go func() { done <- c.WaitUntilStarted(context.Background()) }()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("returned %v before the first sample", err)
		default:
		}
		src.Install(TimeFromNanoseconds(7 * sec))
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("the first sample did not end the wait")
		}
		if err := c.WaitUntilStarted(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWithRosDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(100 * sec))
		c := ctx.Clock()

		dctx, cancel := WithRosTimeout(context.Background(), c, Duration(2*time.Second))
		defer cancel()
		if _, ok := dctx.Deadline(); ok {
			t.Fatal("a ROS deadline must not claim a wall deadline")
		}
		src.Install(TimeFromNanoseconds(101 * sec))
		time.Sleep(time.Hour) // wall time alone does nothing
		if dctx.Err() != nil {
			t.Fatalf("ended at 101 s / after an hour of wall time: %v", context.Cause(dctx))
		}
		src.Install(TimeFromNanoseconds(102 * sec))
		// Ended by the installing call itself: no goroutine in between.
		select {
		case <-dctx.Done():
		default:
			t.Fatal("not done once ROS time reached the deadline")
		}
		if !errors.Is(dctx.Err(), context.DeadlineExceeded) || context.Cause(dctx) != ErrClockDeadlineExceeded ||
			!errors.Is(context.Cause(dctx), context.DeadlineExceeded) {
			t.Fatalf("Err %v, Cause %v", dctx.Err(), context.Cause(dctx))
		}
		child, ccancel := context.WithCancel(dctx)
		defer ccancel()
		if context.Cause(child) != ErrClockDeadlineExceeded {
			t.Fatalf("child cause %v", context.Cause(child))
		}

		// A bag loop before the start ends it with the distinct cause.
		lctx, lcancel := WithRosDeadline(context.Background(), c, TimeFromNanoseconds(110*sec))
		defer lcancel()
		src.Install(TimeFromNanoseconds(101 * sec)) // back to before its start (102 s)
		if !errors.Is(context.Cause(lctx), ErrTimeSourceChanged) || errors.Is(lctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("after a jump back: Err %v, Cause %v", lctx.Err(), context.Cause(lctx))
		}

		// Canceling, or the parent ending, are ordinary cancellations.
		pctx, pcancel := context.WithCancel(context.Background())
		ectx, ecancel := WithRosDeadline(pctx, c, TimeFromNanoseconds(200*sec))
		defer ecancel()
		pcancel()
		if !errors.Is(ectx.Err(), context.Canceled) || context.Cause(ectx) != context.Canceled {
			t.Fatalf("parent canceled: Err %v, Cause %v", ectx.Err(), context.Cause(ectx))
		}
		// An already passed deadline ends the context at once.
		past, pastCancel := WithRosDeadline(context.Background(), c, TimeFromNanoseconds(50*sec))
		defer pastCancel()
		if context.Cause(past) != ErrClockDeadlineExceeded {
			t.Fatalf("past deadline: %v", context.Cause(past))
		}
		synctest.Wait()
	})
}

func TestWithRosTimeoutOnSystemTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext() // no source: ROS time reads system time
		t0 := time.Now()
		dctx, cancel := WithRosTimeout(context.Background(), ctx.Clock(), Duration(3*time.Second))
		defer cancel()
		<-dctx.Done()
		if time.Since(t0) != 3*time.Second || context.Cause(dctx) != ErrClockDeadlineExceeded {
			t.Fatalf("ended after %v with %v", time.Since(t0), context.Cause(dctx))
		}
		// A first sample while waiting on system time is a source change.
		src := ctx.AttachTimeSource()
		sctx, scancel := WithRosTimeout(context.Background(), ctx.Clock(), Duration(3*time.Second))
		defer scancel()
		src.Install(TimeFromNanoseconds(5 * sec))
		if context.Cause(sctx) != ErrTimeSourceChanged {
			t.Fatalf("first sample: %v", context.Cause(sctx))
		}
	})
}

// TestWaitsReleaseTheirListeners checks that finished and canceled waits
// leave nothing behind on the override: installs then call no listener.
func TestWaitsReleaseTheirListeners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(100 * sec))
		c := ctx.Clock()
		for range 100 {
			d, cancel := WithRosTimeout(context.Background(), c, Duration(time.Hour))
			cancel()
			<-d.Done()
			sctx, scancel := context.WithCancel(context.Background())
			scancel()
			_ = c.SleepFor(sctx, Duration(time.Hour))
		}
		synctest.Wait() // the AfterFunc goroutines remove their listeners
		if n := c.ov.Listeners(); n != 0 {
			t.Fatalf("%d listeners left on the override, want 0", n)
		}
	})
}

// The same through the transport: a node with use_sim_time true whose ROS
// timer callback sleeps while a simulator publishes /clock on the
// in-process transport (delivered on the publisher's goroutine, never the
// executor's).
func TestSleepForInACallbackOverClockTopic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		ctx := NewContext(WithTransport(tr), WithLogOutput(io.Discard))
		node, err := NewNode("sleepy", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		pub := rawClockPublisher(t, tr, "simulator", ClockQoS())
		publish := func(ns int64) {
			var m rosgraph_msgs.Clock
			m.Clock.Sec, m.Clock.Nanosec, _ = TimeFromNanoseconds(ns).SecNanosec()
			if err := pub.Publish(msg.Marshal(&m, true, nil)); err != nil {
				t.Fatal(err)
			}
		}
		publish(100 * sec)
		exec := NewExecutor(WithExecutorContext(ctx))
		if err := exec.AddNode(node); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var woke []int64
		var errs []error
		if _, err := node.CreateTimer(node.Clock(), 100*time.Millisecond, func() {
			err := node.Clock().SleepFor(context.Background(), Duration(time.Second))
			mu.Lock()
			woke, errs = append(woke, node.Clock().Now().Nanoseconds()), append(errs, err)
			mu.Unlock()
		}, OneShot()); err != nil {
			t.Fatal(err)
		}
		stop := spinInBackground(t, exec)
		defer stop()
		for v := 100*sec + 10*ms; v <= 102*sec; v += 10 * ms {
			time.Sleep(10 * time.Millisecond)
			publish(v)
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(woke) != 1 || woke[0] != 101*sec+100*ms || errs[0] != nil {
			t.Fatalf("woke at %v with %v, want once at 101.1 s with nil", woke, errs)
		}
	})
}
