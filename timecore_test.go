package nros

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// The tests in this file are the numbered behaviours of the time-core
// hardening issue: each failed before the executor became a run loop whose
// timers are bound to their clock when they are made.

// Issue 7.1: a ROS timer made before its node joins an executor sees the
// first sample (a source switch) and backward jumps that land in between,
// exactly as an attached timer would; so does TimeUntilNextCall.
func TestTimerBeforeAddNodeSeesRestarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []int64 // samples installed between CreateTimer and AddNode (ns)
	}{
		{"first sample (switch)", []int64{100 * sec}},
		{"switch then backward jump", []int64{500 * sec, 100 * sec}},
		{"switch, forward, backward", []int64{90 * sec, 110 * sec, 100 * sec}},
	} {
		for _, p := range policies {
			t.Run(tc.name+"/"+p.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx := quietContext(WithTransport(intra.New()))
					src := ctx.AttachTimeSource()
					node, err := NewNode("early", WithContext(ctx))
					if err != nil {
						t.Fatal(err)
					}
					var fires []int64
					tm, err := node.CreateTimer(node.Clock(), 100*time.Millisecond, func() {
						fires = append(fires, node.Clock().Now().Nanoseconds())
					}, WithOverrunPolicy(p))
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range tc.before {
						src.Install(TimeFromNanoseconds(v))
					}
					// Before AddNode, the timer already counts from the landing point.
					if d, err := tm.TimeUntilNextCall(); err != nil || d != 100*time.Millisecond {
						t.Fatalf("TimeUntilNextCall before AddNode = %v, %v; want 100ms from the landing point", d, err)
					}
					e := NewExecutor(WithExecutorContext(ctx))
					defer e.Close()
					if err := e.AddNode(node); err != nil {
						t.Fatal(err)
					}
					stop := spinInBackground(t, e)
					defer stop()
					for v := 100*sec + 50*ms; v <= 100*sec+300*ms; v += 50 * ms {
						src.Install(TimeFromNanoseconds(v))
						synctest.Wait()
					}
					want := []int64{100*sec + 100*ms, 100*sec + 200*ms, 100*sec + 300*ms}
					if !equalInts(fires, want) || tm.Overruns() != 0 {
						t.Fatalf("fires %v overruns %d; want %v and 0", fires, tm.Overruns(), want)
					}
				})
			})
		}
	}
}

// Issue 7.2: a canceled timer, or one made with autostart off, that misses
// a restart of its clock does not replay it on Reset or SetPeriod: the next
// activation is one period from the reset, with no backlog.
func TestResetForgetsWhatHappenedWhileStopped(t *testing.T) {
	type stop int
	const (
		canceled stop = iota
		notStarted
	)
	for _, how := range []stop{canceled, notStarted} {
		for _, restart := range []string{"Reset", "SetPeriod"} {
			for _, jump := range []string{"switch", "backward"} {
				for _, p := range policies {
					name := fmt.Sprintf("%v/%s/%s/%s", map[stop]string{canceled: "canceled", notStarted: "autostart-off"}[how], restart, jump, p)
					t.Run(name, func(t *testing.T) {
						synctest.Test(t, func(t *testing.T) {
							ctx := quietContext(WithTransport(intra.New()))
							src := ctx.AttachTimeSource()
							if jump == "backward" {
								src.Install(TimeFromNanoseconds(1000 * sec))
							}
							e := NewExecutor(WithExecutorContext(ctx))
							defer e.Close()
							n := 0
							opts := []TimerOption{WithOverrunPolicy(p)}
							if how == notStarted {
								opts = append(opts, WithAutostart(false))
							}
							tm, err := e.RegisterTimerOnClock(100*time.Millisecond, TimerClockRos, func() { n++ }, opts...)
							if err != nil {
								t.Fatal(err)
							}
							if how == canceled {
								tm.Cancel()
							}
							stopSpin := spinInBackground(t, e)
							defer stopSpin()
							synctest.Wait()
							// While stopped: a switch from system time (decades back) or
							// a jump back of 900 s, then time moves on a little.
							src.Install(TimeFromNanoseconds(100 * sec))
							src.Install(TimeFromNanoseconds(100*sec + 30*ms))
							synctest.Wait()
							if restart == "Reset" {
								tm.Reset()
							} else {
								if _, err := tm.SetPeriod(100 * time.Millisecond); err != nil {
									t.Fatal(err)
								}
								tm.Reset()
							}
							synctest.Wait()
							if n != 0 || tm.Overruns() != 0 {
								t.Fatalf("after %s: %d activations, %d overruns; want none", restart, n, tm.Overruns())
							}
							src.Install(TimeFromNanoseconds(100*sec + 129*ms))
							synctest.Wait()
							if n != 0 {
								t.Fatalf("fired %d before one period after the reset", n)
							}
							src.Install(TimeFromNanoseconds(100*sec + 130*ms))
							synctest.Wait()
							if n != 1 || tm.Overruns() != 0 {
								t.Fatalf("one period after the reset: %d activations, %d overruns; want 1 and 0", n, tm.Overruns())
							}
						})
					})
				}
			}
		}
	}
}

// Issue 7.3: a looping bag (a clock that jumps back over and over) must not
// make a just-restarted timer look late. Ten ROS timers run while the clock
// plays 5 ms laps thousands of times, each lap landing 1 s below the one
// before (a backward jump every 5 samples): no timer's period (>= 10 ms)
// ever fits in a lap, so there must be no activation and no overrun at all.
// A pass that read the time of one lap with the restart of the next would
// see a timer restarted 1 s below "now": ~100 periods late. Real goroutines:
// the race is between the installing goroutine and the spinning one.
func TestLoopingClockGivesNoFalseActivations(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	src := ctx.AttachTimeSource()
	const top = 1_000_000 * sec
	src.Install(TimeFromNanoseconds(top))
	e := NewExecutor(WithExecutorContext(ctx))
	defer e.Close()
	var fired atomic.Int64
	var timers []*Timer
	for i := range 10 {
		tm, err := e.RegisterTimerOnClock(time.Duration(10+i)*time.Millisecond, TimerClockRos, func() { fired.Add(1) },
			WithOverrunPolicy(policies[i%2]))
		if err != nil {
			t.Fatal(err)
		}
		timers = append(timers, tm)
	}
	stop := spinInBackground(t, e)
	defer stop()
	deadline := time.Now().Add(time.Second)
	laps := 0
	for ; laps < 200_000 && time.Now().Before(deadline); laps++ {
		land := top - int64(laps+1)*sec
		for i := int64(0); i < 5; i++ {
			src.Install(TimeFromNanoseconds(land + i*ms))
		}
		runtime.Gosched() // let the executor interleave
	}
	var over uint64
	for _, tm := range timers {
		over += tm.Overruns()
	}
	if fired.Load() != 0 || over != 0 {
		t.Fatalf("%d laps: %d false activations, %d overruns; want 0 and 0", laps, fired.Load(), over)
	}
	if laps < 1000 {
		t.Fatalf("only %d laps in 3 s", laps)
	}
}

// Issue 7.5: an executor is closable: Spin returns, its clock waiters are
// gone from the context, no callback starts after Close returns, Close from
// another goroutine waits for a running callback, and Close from inside a
// callback does not deadlock.
func TestExecutorClose(t *testing.T) {
	t.Run("waiters and spin", func(t *testing.T) {
		ctx := quietContext(WithTransport(intra.New()))
		src := ctx.AttachTimeSource()
		src.Install(TimeFromNanoseconds(sec))
		e := NewExecutor(WithExecutorContext(ctx))
		var n atomic.Int64
		if _, err := e.RegisterTimerOnClock(time.Millisecond, TimerClockRos, func() { n.Add(1) }); err != nil {
			t.Fatal(err)
		}
		if ctx.ov.Waiters() != 1 {
			t.Fatalf("%d waiters, want the executor's 1", ctx.ov.Waiters())
		}
		done := make(chan error, 1)
		go func() { done <- e.Spin(context.Background()) }()
		for n.Load() == 0 { // spinning
			src.Install(TimeFromNanoseconds(sec + 5*ms + time.Now().UnixNano()%1000*ms))
			time.Sleep(time.Millisecond)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Spin after Close: %v", err)
		}
		if ctx.ov.Waiters() != 0 {
			t.Fatalf("%d waiters left on the context after Close", ctx.ov.Waiters())
		}
		before := n.Load()
		src.Install(TimeFromNanoseconds(2 * sec))
		if err := e.Spin(context.Background()); !errors.Is(err, ErrExecutorClosed) {
			t.Fatalf("Spin on a closed executor: %v", err)
		}
		if err := e.SpinOnce(0); !errors.Is(err, ErrExecutorClosed) {
			t.Fatalf("SpinOnce on a closed executor: %v", err)
		}
		if n.Load() != before {
			t.Fatal("a callback ran after Close returned")
		}
		if err := e.Close(); err != nil {
			t.Fatal("second Close:", err)
		}
	})
	t.Run("waits for a running callback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := NewExecutor(WithExecutorContext(quietContext(WithTransport(intra.New()))))
			entered, release := make(chan struct{}), make(chan struct{})
			var finished atomic.Bool
			if _, err := e.RegisterTimerOnClock(time.Millisecond, TimerClockSteady, func() {
				if finished.Load() {
					return
				}
				close(entered)
				<-release
				finished.Store(true)
			}); err != nil {
				t.Fatal(err)
			}
			go e.Spin(context.Background())
			<-entered
			closed := make(chan struct{})
			go func() { e.Close(); close(closed) }()
			synctest.Wait()
			select {
			case <-closed:
				t.Fatal("Close returned while a callback was running")
			default:
			}
			close(release)
			<-closed
			if !finished.Load() {
				t.Fatal("Close returned before the callback did")
			}
		})
	})
	t.Run("from inside a callback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := NewExecutor(WithExecutorContext(quietContext(WithTransport(intra.New()))))
			var n atomic.Int64
			if _, err := e.RegisterTimerOnClock(time.Millisecond, TimerClockSteady, func() {
				n.Add(1)
				e.Close()
			}); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- e.Spin(context.Background()) }()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
			if n.Load() != 1 {
				t.Fatalf("%d activations, want 1", n.Load())
			}
		})
	})
}

// panicky is a message whose decoder panics (a bug in user message code).
type panicky struct{ std_msgs.String }

func (*panicky) TypeName() string { return "std_msgs/msg/String" }
func (*panicky) UnmarshalCDR(*cdr.Decoder) error {
	panic("decoder bug")
}

// Issue 7.5: a panic in code a transport runs on its own goroutine goes
// through the executor's panic policy instead of killing the process.
func TestPanicsOnTransportGoroutines(t *testing.T) {
	for _, kind := range []string{"decode", "dropped", "event"} {
		t.Run(kind, func(t *testing.T) {
			tr := intra.New()
			ctx := quietContext(WithTransport(tr))
			node, err := NewNode("victim", WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer node.Close()
			var reports []*CallbackPanicError
			e := NewExecutor(WithExecutorContext(ctx), WithPanicPolicy(PanicStop),
				WithPanicHandler(func(p *CallbackPanicError) { reports = append(reports, p) }))
			defer e.Close()
			if err := e.AddNode(node); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "decode":
				if _, err := NewSubscription[panicky](node, "/p", DefaultQoS(), func(*panicky) {}); err != nil {
					t.Fatal(err)
				}
			case "dropped":
				if _, err := NewSubscription[std_msgs.String](node, "/p", DefaultQoS(), func(*std_msgs.String) {},
					WithDroppedHandler(func(error) { panic("handler bug") })); err != nil {
					t.Fatal(err)
				}
			case "event":
				if _, err := NewSubscription[std_msgs.String](node, "/p", DefaultQoS(), func(*std_msgs.String) {},
					WithEndpointEvents(func(rmw.Event) { panic("handler bug") })); err != nil {
					t.Fatal(err)
				}
			}
			pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "x", Namespace: "/"}, "/p", "std_msgs/msg/String", DefaultQoS(), rmw.EndpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pub.Publish([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f}) // a lying length: dropped
			err = e.SpinOnce(0)
			var perr *CallbackPanicError
			if !errors.As(err, &perr) || perr.Kind != kind || len(reports) != 1 {
				t.Fatalf("SpinOnce = %v (reports %d); want the %s panic under PanicStop", err, len(reports), kind)
			}
			if perr.Name != "/p" {
				t.Fatalf("panic names %q, want the topic", perr.Name)
			}
		})
	}
}

// reentrant is a message whose decoder publishes on a publisher of its own
// type (user code running inside Publish, on the in-process transport).
type reentrant struct {
	std_msgs.String
}

var reentrantPub atomic.Pointer[Publisher[reentrant]]

func (*reentrant) TypeName() string { return "std_msgs/msg/String" }
func (m *reentrant) UnmarshalCDR(d *cdr.Decoder) error {
	if err := m.String.UnmarshalCDR(d); err != nil {
		return err
	}
	if p := reentrantPub.Load(); p != nil && m.Data == "outer" {
		return p.Publish(&reentrant{std_msgs.String{Data: "inner"}})
	}
	return nil
}

// Issue 7.5: a publisher holds no lock while the transport runs user code.
func TestPublisherHoldsNoLockDuringDelivery(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	node, err := NewNode("re", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	var got []string
	if _, err := NewSubscription[reentrant](node, "/r", KeepLast(10), func(m *reentrant) { got = append(got, m.Data) }); err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[reentrant](node, "/r", KeepLast(10))
	if err != nil {
		t.Fatal(err)
	}
	reentrantPub.Store(pub)
	defer reentrantPub.Store(nil)
	done := make(chan error, 1)
	go func() { done <- pub.Publish(&reentrant{std_msgs.String{Data: "outer"}}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Publish deadlocked: the publisher held its lock while the subscription decoded")
	}
	e := NewExecutor(WithExecutorContext(ctx))
	defer e.Close()
	e.AddNode(node)
	for {
		if n, _ := e.SpinSome(); n == 0 {
			break
		}
	}
	// The executor decodes: outer's decoder publishes inner, queued behind.
	if strings.Join(got, ",") != "outer,inner" {
		t.Fatalf("got %v", got)
	}
}

// Issue 7.5: keep-last with a depth as large as the keep-all bound still
// drops the oldest message, never the newest.
func TestKeepLastOfAnyDepthDropsTheOldest(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	node, err := NewNode("deep", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	var first *builtin_interfaces.Time
	sub, err := NewSubscription[rosgraph_msgs.Clock](node, "/deep", KeepLast(keepAllCap), func(m *rosgraph_msgs.Clock) {
		if first == nil {
			first = &m.Clock
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[rosgraph_msgs.Clock](node, "/deep", KeepLast(keepAllCap))
	if err != nil {
		t.Fatal(err)
	}
	for i := range keepAllCap + 2 {
		pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(i)}})
	}
	e := NewExecutor(WithExecutorContext(ctx))
	defer e.Close()
	e.AddNode(node)
	e.SpinSome()
	if sub.Lost() != 2 || first == nil || first.Sec != 2 {
		t.Fatalf("lost %d, first kept %v; want the two oldest lost", sub.Lost(), first)
	}
}

// Issue 7.5: a second node asking for another /clock QoS on the context's
// shared subscription is told so.
func TestSharedClockSubscriptionWithAnotherQoSIsLogged(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(&lockedWriter{mu: &mu, w: &logs}))
	a, err := NewNode("a", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rel := ClockQoS()
	rel.Reliability = rmw.Reliable
	b, err := NewNode("b", WithContext(ctx), WithClockQoS(rel), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mu.Lock()
	defer mu.Unlock()
	if out := logs.String(); !strings.Contains(out, "another QoS") || !strings.Contains(out, "/clock") || !strings.Contains(out, "reliable") {
		t.Fatalf("no warning about the second QoS:\n%s", out)
	}
}

// Issue 7.7: a /clock sample before the epoch is dropped and counted with
// one warning naming the topic; the clock keeps its value. A nanosec field
// of 1e9 or more is carried into seconds.
func TestNegativeAndDenormalClockSamples(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(&lockedWriter{mu: &mu, w: &logs}))
	node, err := NewNode("follower", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	simNode, err := NewNode("sim", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer simNode.Close()
	pub, err := NewPublisher[rosgraph_msgs.Clock](simNode, "/clock", ClockQoS())
	if err != nil {
		t.Fatal(err)
	}
	send := func(sec int32, nsec uint32) {
		if err := pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: sec, Nanosec: nsec}}); err != nil {
			t.Fatal(err)
		}
	}
	send(10, 0)
	send(-1, 0)
	send(-5, 999_999_999)
	if got := node.Clock().Now().Nanoseconds(); got != 10*sec {
		t.Fatalf("clock %d after negative samples, want it kept at 10 s", got)
	}
	if ctx.ClockSamplesRejected() != 2 {
		t.Fatalf("rejected %d, want 2", ctx.ClockSamplesRejected())
	}
	send(1, 1_500_000_000)
	if got := node.Clock().Now().Nanoseconds(); got != 2500*ms {
		t.Fatalf("{1 s, 1.5e9 ns} = %d, want 2.5 s (carried)", got)
	}
	send(-1, 500_000_000) // -0.5 s: still before the epoch
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "before the epoch"); n != 1 || !strings.Contains(logs.String(), "/clock") {
		t.Fatalf("%d warnings, want exactly one naming /clock:\n%s", n, logs.String())
	}
	// TimeSource.Install follows the same rule.
	src := ctx.AttachTimeSource()
	src.Install(TimeFromNanoseconds(-1))
	if got := node.Clock().Now().Nanoseconds(); got != 2500*ms || ctx.ClockSamplesRejected() != 4 {
		t.Fatalf("TimeSource.Install(-1): clock %d rejected %d", got, ctx.ClockSamplesRejected())
	}
	src.Detach()
}

// Issue 7: no goroutine is left once the executor, the nodes and the context
// are closed (in-process transport; the DDS transport's own tests check its
// goroutines).
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	base := runtime.NumGoroutine()
	nw := udp.NewMemNetwork() // the DDS transport, over an in-memory network: no socket
	for i := range 4 {
		var tr rmw.Transport = intra.New()
		if i%2 == 1 {
			dds, err := rtps.New(rtps.Config{Network: nw})
			if err != nil {
				t.Fatal(err)
			}
			tr = dds
		}
		ctx := quietContext(WithTransport(tr))
		if _, err := ctx.Init([]string{"--ros-args", "-p", "use_sim_time:=true"}); err != nil {
			t.Fatal(err)
		}
		node, err := NewNode("leaky", WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := node.CreateTimer(node.Clock(), time.Millisecond, func() {}); err != nil {
			t.Fatal(err)
		}
		if _, err := node.CreateWallTimer(time.Millisecond, func() {}); err != nil {
			t.Fatal(err)
		}
		if _, err := NewSubscription[std_msgs.String](node, "/x", DefaultQoS(), func(*std_msgs.String) {}); err != nil {
			t.Fatal(err)
		}
		e := NewExecutor(WithExecutorContext(ctx))
		e.AddNode(node)
		done := make(chan struct{})
		go func() { e.Spin(context.Background()); close(done) }()
		time.Sleep(5 * time.Millisecond)
		e.Close()
		<-done
		node.Close()
		ctx.Shutdown()
		tr.Close()
		if ctx.ov.Waiters() != 0 {
			t.Fatalf("%d clock waiters left", ctx.ov.Waiters())
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left (was %d):\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// Issue 8.1: a nil *Node (NewNode failed) says so instead of a nil-pointer
// crash: methods panic with ErrNilNode, calls with an error result return it.
func TestNilNode(t *testing.T) {
	var n *Node
	for name, f := range map[string]func(){
		"Clock":        func() { n.Clock() },
		"Name":         func() { n.Name() },
		"GetParameter": func() { n.GetParameter("x") },
		"SetParameter": func() { n.SetParameter(Parameter{Name: "x", Value: BoolValue(true)}) },
		"Logger":       func() { n.Logger() },
	} {
		func() {
			defer func() {
				if v := recover(); v != ErrNilNode {
					t.Errorf("%s on a nil *Node: panic %v, want ErrNilNode", name, v)
				}
			}()
			f()
		}()
	}
	if _, err := n.CreateTimer(NewClock(SystemTime), time.Second, func() {}); err != ErrNilNode {
		t.Errorf("CreateTimer: %v", err)
	}
	if _, err := NewPublisher[std_msgs.String](n, "/x", DefaultQoS()); err != ErrNilNode {
		t.Errorf("NewPublisher: %v", err)
	}
	if err := NewExecutor().AddNode(n); err != ErrNilNode {
		t.Errorf("AddNode: %v", err)
	}
	if err := n.Close(); err != ErrNilNode {
		t.Errorf("Close: %v", err)
	}
}

// A ROS timer callback may block on ROS time: it runs on the spinning
// goroutine, never on the DDS transport's receiving one, so the /clock
// samples it waits for still arrive (over the in-memory network, in
// virtual time).
func TestCallbackMayBlockOnRosTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		mk := func() *Context {
			tr, err := rtps.New(rtps.Config{Network: nw, ProbeParticipants: 4, MaxParticipantID: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			return quietContext(WithTransport(tr))
		}
		simCtx, ctx := mk(), mk()
		sim, err := NewNode("sim", WithContext(simCtx))
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		pub, err := NewPublisher[rosgraph_msgs.Clock](sim, "/clock", ClockQoS())
		if err != nil {
			t.Fatal(err)
		}
		node, err := NewNode("sleeper", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		slept := make(chan error, 1)
		var woke atomic.Int64
		tm, err := node.CreateTimer(node.Clock(), 100*time.Millisecond, func() {
			if woke.Load() != 0 {
				return
			}
			err := node.Clock().SleepFor(context.Background(), Duration(time.Second))
			woke.Store(node.Clock().Now().Nanoseconds())
			slept <- err
		})
		if err != nil {
			t.Fatal(err)
		}
		e := NewExecutor(WithExecutorContext(ctx))
		defer e.Close()
		e.AddNode(node)
		stop := spinInBackground(t, e)
		defer stop()
		time.Sleep(2 * time.Second) // discovery
		for ms := int64(10_000); ms <= 12_000; ms += 10 {
			pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(ms / 1000), Nanosec: uint32(ms%1000) * 1e6}})
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case err := <-slept:
			if err != nil || woke.Load() < 11_100*ms {
				t.Fatalf("SleepFor in a callback: %v, woke at %d", err, woke.Load())
			}
		default:
			t.Fatalf("the callback never woke: the clock starved (timer fired %d)", tm.Activations())
		}
	})
}

// Issue 8.5: a /clock subscription that cannot match a publisher says so at
// once on the subscriber's side, naming the topic and the policy.
func TestClockSubscriptionReportsIncompatibleQoS(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(&lockedWriter{mu: &mu, w: &logs}))
	node, err := NewNode("follower", WithContext(ctx), WithArguments("--ros-args", "-p", "use_sim_time:=true",
		"-p", "qos_overrides./clock.subscription.reliability:=reliable"))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	clockPublisher(t, ctx, "/clock", ClockQoS()) // best effort, as simulators and rosbag2 publish
	mu.Lock()
	defer mu.Unlock()
	out := logs.String()
	if !strings.Contains(out, "incompatible QoS") || !strings.Contains(out, "/clock") || !strings.Contains(out, "RELIABILITY") ||
		!strings.Contains(out, "subscription") {
		t.Fatalf("no subscriber-side report naming /clock and RELIABILITY:\n%s", out)
	}
}

// Issue 8: a remap rule whose target only overflows once expanded makes the
// endpoint fail with the rule named, instead of silently keeping the
// original topic.
func TestRemapOverflowIsAnError(t *testing.T) {
	ctx := quietContext(WithTransport(intra.New()))
	node, err := NewNode(strings.Repeat("n", 150), WithContext(ctx),
		WithArguments("--ros-args", "-r", "chatter:=~/"+strings.Repeat("x", 100)))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if _, err := NewPublisher[std_msgs.String](node, "chatter", DefaultQoS()); err == nil || !strings.Contains(err.Error(), "remap rule chatter:=~/") {
		t.Fatalf("NewPublisher: %v; want the remap rule named", err)
	}
	if _, err := NewPublisher[std_msgs.String](node, "other", DefaultQoS()); err != nil {
		t.Fatalf("an unrelated topic: %v", err)
	}
}
