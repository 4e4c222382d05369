package nros

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/intra"
)

const badReliability = "qos_overrides./clock.subscription.reliability"

// withinTest runs f on its own goroutine and fails the test if it has not
// returned after d (a deadlocked set fails fast instead of hanging).
func withinTest(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %v: the parameter set deadlocked", d)
	}
}

// A use_sim_time set whose /clock time source cannot be installed is
// refused with the reason and changes nothing, on every set path.
func TestUseSimTimeRefusedWhenTheClockCannotBeInstalled(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	defer ctx.Shutdown()
	n, err := NewNode("a", WithContext(ctx), WithArguments("--ros-args", "-p", badReliability+":=sometimes"))
	if err != nil {
		t.Fatal(err) // use_sim_time is false: the override is not read yet
	}
	defer n.Close()
	if _, err := n.DeclareParameter("other", IntegerValue(1)); err != nil {
		t.Fatal(err)
	}
	var posts int
	n.AddPostSetParametersCallback(func([]Parameter) { posts++ })
	refused := func(what string, r SetParametersResult) {
		t.Helper()
		if r.Successful {
			t.Fatalf("%s: use_sim_time=true accepted with an unusable /clock QoS", what)
		}
		for _, want := range []string{badReliability, `"sometimes"`, "best_effort, reliable, system_default"} {
			if !strings.Contains(r.Reason, want) {
				t.Fatalf("%s: reason %q does not name %s", what, r.Reason, want)
			}
		}
		if v, _ := n.GetParameter(UseSimTimeParameter); !v.Equal(BoolValue(false)) {
			t.Fatalf("%s: use_sim_time = %v after the refusal", what, v)
		}
		if v, _ := n.GetParameter("other"); !v.Equal(IntegerValue(1)) {
			t.Fatalf("%s: other = %v after the refusal", what, v)
		}
		if n.HasParameter(badReliability) {
			t.Fatalf("%s: the refused set left its QoS parameter declared", what)
		}
		if n.RosTimeSourceTopic() != "" || n.Clock().RosTimeIsActive() {
			t.Fatalf("%s: a time source is installed after the refusal", what)
		}
		if posts != 0 {
			t.Fatalf("%s: post-set callbacks ran for a refused set", what)
		}
	}
	simOn := Parameter{Name: UseSimTimeParameter, Value: BoolValue(true)}
	refused("SetParameter", n.SetParameter(simOn))
	rs := n.SetParameters([]Parameter{{Name: "other", Value: IntegerValue(2)}, simOn})
	if !rs[0].Successful {
		t.Fatalf("SetParameters: other refused: %+v", rs[0])
	}
	posts = 0
	if err := n.SetParameter(Parameter{Name: "other", Value: IntegerValue(1)}); !err.Successful {
		t.Fatal(err.Reason)
	}
	posts = 0
	refused("SetParameters", rs[1])
	refused("SetParametersAtomically", n.SetParametersAtomically([]Parameter{{Name: "other", Value: IntegerValue(3)}, simOn}))

	// Fixing nothing, setting it false works (and changes nothing).
	if r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(false)}); !r.Successful {
		t.Fatalf("use_sim_time=false refused: %+v", r)
	}
	if n.Clock().RosTimeIsActive() {
		t.Fatal("on simulated time after use_sim_time=false")
	}
}

// NewNode with use_sim_time:=true and a bad QoS override returns one error
// naming the parameter and the accepted values, and does not also log it.
func TestNewNodeReportsABadClockQoSOnce(t *testing.T) {
	var logs bytes.Buffer
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(&logs))
	defer ctx.Shutdown()
	n, err := NewNode("a", WithContext(ctx), WithArguments("--ros-args", "-p", "use_sim_time:=true", "-p", badReliability+":=sometimes"))
	if err == nil {
		n.Close()
		t.Fatal("NewNode accepted use_sim_time with an unusable /clock QoS")
	}
	for _, want := range []string{"/a", UseSimTimeParameter, badReliability, `"sometimes"`, "best_effort, reliable, system_default"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Count(err.Error(), "nros:") != 1 {
		t.Errorf("error %q repeats its prefix", err)
	}
	if logs.Len() != 0 {
		t.Errorf("the error was also logged:\n%s", logs.String())
	}
	if ctx.Clock().RosTimeIsActive() {
		t.Error("the failed node left a time source on the context")
	}
}

// A parameter callback that sets use_sim_time gets the nested-transaction
// error (rclcpp throws) instead of deadlocking the node.
func TestUseSimTimeSetFromACallbackIsRefused(t *testing.T) {
	for _, where := range []string{"validator", "post-set"} {
		t.Run(where, func(t *testing.T) {
			ctx := quietContext(WithTransport(intra.New()))
			defer ctx.Shutdown()
			n, err := NewNode("a", WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			if _, err := n.DeclareParameter("mode", StringValue("real")); err != nil {
				t.Fatal(err)
			}
			var nested *SetParametersResult
			cb := func(ps []Parameter) {
				if ps[0].Name == "mode" {
					r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(true)})
					nested = &r
				}
			}
			if where == "validator" {
				n.AddOnSetParametersCallback(func(ps []Parameter) SetParametersResult {
					cb(ps)
					return SetParametersResult{Successful: true}
				})
			} else {
				n.AddPostSetParametersCallback(cb)
			}
			var r SetParametersResult
			withinTest(t, 2*time.Second, func() { r = n.SetParameter(Parameter{Name: "mode", Value: StringValue("sim")}) })
			if !r.Successful {
				t.Fatalf("outer set refused: %+v", r)
			}
			if nested == nil || nested.Successful || !strings.Contains(nested.Reason, "cannot set parameters from inside a parameter callback") {
				t.Fatalf("nested set = %+v, want the nested-transaction refusal", nested)
			}
			if v, _ := n.GetParameter(UseSimTimeParameter); !v.Equal(BoolValue(false)) || n.Clock().RosTimeIsActive() {
				t.Fatal("the refused nested set turned simulated time on")
			}
			// After the set returns, the same change works.
			if r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(true)}); !r.Successful {
				t.Fatalf("use_sim_time=true after the callback: %+v", r)
			}
		})
	}
}

// use_sim_time set true at run time: the node follows the /clock of its
// context, and post-set callbacks run after the source is installed.
func TestUseSimTimeSetFollowsTheClock(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	defer ctx.Shutdown()
	n, err := NewNode("a", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var activeInPost bool
	n.AddPostSetParametersCallback(func([]Parameter) { activeInPost = n.Clock().RosTimeIsActive() })
	pub := clockPublisher(t, ctx, DefaultClockTopic, ClockQoS())
	if r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(true)}); !r.Successful {
		t.Fatalf("use_sim_time=true: %+v", r)
	}
	if !activeInPost {
		t.Error("post-set callback ran before the time source was installed")
	}
	if n.RosTimeSourceTopic() != DefaultClockTopic {
		t.Fatalf("time source on %q", n.RosTimeSourceTopic())
	}
	pub(42)
	if got := n.Clock().Now().Nanoseconds(); got != 42*sec {
		t.Fatalf("now = %v, want 42s from /clock", n.Clock().Now())
	}
	// The QoS parameters of the installed source are declared with it.
	if v, err := n.GetParameter(badReliability); err != nil || v.ValueString() != "best_effort" {
		t.Fatalf("%s = %v (%v)", badReliability, v, err)
	}
	if r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(false)}); !r.Successful {
		t.Fatalf("use_sim_time=false: %+v", r)
	}
	pub(50)
	if got := n.Clock().Now().Nanoseconds(); got != 42*sec {
		t.Fatalf("now = %v after use_sim_time=false, want the last sim time 42s kept", n.Clock().Now())
	}
}

// An atomic set that names use_sim_time twice leaves the time source as its
// last value says.
func TestUseSimTimeTwiceInOneAtomicSet(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	defer ctx.Shutdown()
	n, err := NewNode("a", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	on := Parameter{Name: UseSimTimeParameter, Value: BoolValue(true)}
	off := Parameter{Name: UseSimTimeParameter, Value: BoolValue(false)}
	for _, tt := range []struct {
		ps   []Parameter
		want bool
	}{{[]Parameter{on, off}, false}, {[]Parameter{off, on}, true}, {[]Parameter{on, off}, false}} {
		if r := n.SetParametersAtomically(tt.ps); !r.Successful {
			t.Fatal(r.Reason)
		}
		if v, _ := n.GetParameter(UseSimTimeParameter); !v.Equal(BoolValue(tt.want)) || (n.RosTimeSourceTopic() != "") != tt.want {
			t.Fatalf("use_sim_time=%v, source %q; want %v", v, n.RosTimeSourceTopic(), tt.want)
		}
	}
}
