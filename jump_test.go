package nros

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw/intra"
)

// TestJumpEvents: handlers see what their threshold selects, on the
// executor's goroutine, before the timers the same sample makes due; Remove
// stops them.
func TestJumpEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := quietContext(WithTransport(intra.New()))
		node, err := NewNode("j", WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		var log []string
		clk := node.Clock()
		all, err := clk.OnJump(JumpThreshold{OnClockChange: true, MinForward: Duration(500 * ms), MinBackward: Duration(sec)},
			func(j TimeJump) { log = append(log, fmt.Sprintf("jump %s %v", j.Change, time.Duration(j.Delta))) })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := node.CreateTimer(clk, 100*time.Millisecond, func() { log = append(log, fmt.Sprintf("timer %v", clk.Now())) }); err != nil {
			t.Fatal(err)
		}
		e := NewExecutor(WithExecutorContext(ctx))
		defer e.Close()
		if err := e.AddNode(node); err != nil {
			t.Fatal(err)
		}
		stop := spinInBackground(t, e)
		defer stop()
		src := ctx.AttachTimeSource()
		step := func(ns int64) {
			src.Install(TimeFromNanoseconds(ns))
			synctest.Wait()
		}
		step(100 * sec)            // activated (the delta is from system time: not checked)
		step(100*sec + 50*ms)      // small forward: not a jump
		step(101 * sec)            // forward 0.95 s: the jump, then the timer it makes due
		step(100*sec + 500*ms)     // back 0.5 s: under the 1 s threshold
		step(95 * sec)             // back 5.5 s: a bag loop
		step(95*sec + 100*ms)      // the restarted period
		clk.ClearRosTimeOverride() // cleared
		synctest.Wait()
		all.Remove()
		all.Remove()
		step(200 * sec)
		got := strings.Join(log, "\n")
		if !strings.HasPrefix(log[0], "jump activated") {
			t.Fatalf("first event %q, want the activation", log[0])
		}
		want := strings.Join([]string{
			"jump no_change 950ms",
			"timer 101.000000000",
			"jump no_change -5.5s",
			"timer 95.100000000",
		}, "\n")
		if !strings.Contains(got, want) {
			t.Fatalf("events:\n%s\nwant, in order:\n%s", got, want)
		}
		if n := strings.Count(got, "jump cleared"); n != 1 {
			t.Fatalf("events:\n%s\nwant one cleared jump", got)
		}
		if strings.Count(got, "jump ") != 4 {
			t.Fatalf("events:\n%s\nwant exactly 4 jumps (activated, +0.95 s, -5.5 s, cleared); none after Remove", got)
		}
	})
}

// TestJumpDeactivatedOnUseSimTimeFalse: removing the source (use_sim_time
// false) is a deactivation that keeps the time.
func TestJumpDeactivatedOnUseSimTimeFalse(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	node, err := NewNode("d", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	var got []TimeJump
	if _, err := node.Clock().OnJump(JumpThreshold{OnClockChange: true}, func(j TimeJump) { got = append(got, j) }); err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(WithExecutorContext(ctx))
	defer e.Close()
	e.AddNode(node)
	pub := clockPublisher(t, ctx, "/clock", ClockQoS())
	pub(50)
	if r := node.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(false)}); !r.Successful {
		t.Fatal(r.Reason)
	}
	e.SpinSome()
	if len(got) != 2 || got[0].Change != RosTimeActivated || got[1].Change != RosTimeDeactivated || got[1].Delta != 0 ||
		got[1].After.Nanoseconds() != 50*sec {
		t.Fatalf("jumps %+v; want activated, then deactivated at 50 s with no delta", got)
	}
}

func TestOnJumpNeedsARosClock(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	if _, err := ctx.clockFor(SystemTime).OnJump(JumpThreshold{OnClockChange: true}, func(TimeJump) {}); err == nil {
		t.Fatal("OnJump on a system clock accepted")
	}
	if _, err := ctx.Clock().OnJump(JumpThreshold{}, nil); err == nil {
		t.Fatal("nil callback accepted")
	}
}

// A panicking jump handler follows the executor's panic policy.
func TestJumpHandlerPanic(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	e := NewExecutor(WithExecutorContext(ctx), WithPanicPolicy(PanicStop), WithPanicHandler(func(*CallbackPanicError) {}))
	defer e.Close()
	if _, err := ctx.Clock().OnJump(JumpThreshold{OnClockChange: true, MinForward: 1}, func(TimeJump) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	src := ctx.AttachTimeSource()
	src.Install(TimeFromNanoseconds(sec))
	// The call that ran the handler returns its panic (#19 item 7), as a
	// panicking timer's does.
	_, err := e.SpinSome()
	var perr *CallbackPanicError
	if !errors.As(err, &perr) || perr.Kind != "jump" {
		t.Fatalf("SpinSome: err %v, want the jump handler's panic", err)
	}
	if _, err := e.SpinSome(); err != nil {
		t.Fatalf("the next SpinSome: err %v, want nil", err)
	}
	src.Install(TimeFromNanoseconds(2 * sec))
	if err := e.SpinOnce(0); !errors.As(err, &perr) || perr.Kind != "jump" {
		t.Fatalf("SpinOnce: err %v, want the jump handler's panic", err)
	}
	if err := e.SpinOnce(0); err != nil {
		t.Fatalf("the next SpinOnce: err %v, want nil", err)
	}
}
