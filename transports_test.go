package nros

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/zenoh"
	"github.com/nros-go/nros/rmw/zenoh/config"
)

// The tests that take a transport run over a table of them: a
// transportPair gives the transports of two contexts that see each other
// (the same in-process transport twice, or two sessions of a real
// transport on an in-memory network), so the same test checks the
// in-process path and a real wire, in virtual time.
type transportPair struct {
	name string
	// make returns two transports that see each other, closed at the
	// end of the test; a and b are the same one for an in-process
	// transport. Called inside the test's synctest bubble.
	make func(t *testing.T) (a, b rmw.Transport)
}

var memLinkSeq atomic.Int64

func zenohMemTransport(t *testing.T, listen, connect string) *zenoh.Transport {
	t.Helper()
	zc := config.Default()
	l, c := []config.Endpoint{}, []config.Endpoint{}
	if listen != "" {
		l = append(l, config.Endpoint{Protocol: "mem", Address: listen})
	}
	if connect != "" {
		c = append(c, config.Endpoint{Protocol: "mem", Address: connect})
	}
	zc.Listen.Endpoints, zc.Connect.Endpoints = config.Unique(l), config.Unique(c)
	tr, err := zenoh.New(zenoh.Config{Zenoh: zc, Warnf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

var (
	intraPair = transportPair{"intra", func(t *testing.T) (rmw.Transport, rmw.Transport) {
		tr := intra.New()
		t.Cleanup(func() { tr.Close() })
		return tr, tr
	}}
	// zenohPair is two zenoh peers, one listening on an in-memory link,
	// the other connected to it: Go to Go as rmw_zenoh nodes meet.
	zenohPair = transportPair{"zenoh", func(t *testing.T) (rmw.Transport, rmw.Transport) {
		name := fmt.Sprintf("nros-test-%d", memLinkSeq.Add(1))
		a := zenohMemTransport(t, name, "")
		b := zenohMemTransport(t, "", name)
		synctest.Wait() // the link is up
		return a, b
	}}
	rtpsPair = transportPair{"rtps", func(t *testing.T) (rmw.Transport, rmw.Transport) {
		nw := udp.NewMemNetwork()
		mk := func() rmw.Transport {
			tr, err := rtps.New(rtps.Config{Network: nw, ProbeParticipants: 4, MaxParticipantID: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			return tr
		}
		return mk(), mk()
	}}
)

// serviceTransports are the transports the service and parameter tests
// run over.
var serviceTransports = []transportPair{intraPair, zenohPair, rtpsPair}

// forTransports runs f once per transport pair, each in its own synctest
// bubble.
func forTransports(t *testing.T, pairs []transportPair, f func(t *testing.T, tp transportPair)) {
	t.Helper()
	for _, tp := range pairs {
		t.Run(tp.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, tp) })
		})
	}
}

// pairContexts returns the contexts of a transport pair: one context when
// the pair is one transport, else one each.
func pairContexts(t *testing.T, tp transportPair) (a, b *Context) {
	ta, tb := tp.make(t)
	a = NewContext(WithTransport(ta), WithLogHandler(slog.DiscardHandler))
	b = a
	if ta != tb {
		b = NewContext(WithTransport(tb), WithLogHandler(slog.DiscardHandler))
	}
	return a, b
}

// simClockScript is the /clock of the time-core tests over a transport, in
// steps of 10 ms of wall time: a frozen start, 1x, a pause, 2x, a backward
// jump, 1x, a forward jump, 1x (as the interop clock tests play it).
func simClockScript() []int64 {
	var v []int64
	sim := 100 * sec
	step := func(n int, rate float64) {
		for range n {
			v = append(v, sim)
			sim += int64(rate * float64(10*ms))
		}
	}
	step(30, 0)    // frozen at 100 s
	step(100, 1)   // 1x for 1 s
	step(100, 0)   // pause 1 s
	step(100, 2)   // 2x for 1 s
	sim -= 5 * sec // jump back
	step(100, 1)
	sim += 10 * sec // jump forward
	step(100, 1)
	return append(v, sim)
}

// The time core over a real wire: a /clock publisher in one context drives
// a use_sim_time node's ROS timer (skip and catch_up) in another, through
// pause, 2x and both jumps, and every transport gives the timer exactly the
// activations the in-process transport gives.
func TestSimTimeOverTransports(t *testing.T) {
	type fire struct{ ros, overruns int64 }
	run := func(t *testing.T, tp transportPair, policy TimerOverrunPolicy) []fire {
		simCtx, ctx := pairContexts(t, tp)
		sim, err := NewNode("sim", WithContext(simCtx))
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		pub, err := NewPublisher[rosgraph_msgs.Clock](sim, "/clock", ClockQoS())
		if err != nil {
			t.Fatal(err)
		}
		node, err := NewNode("follower", WithContext(ctx), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		var fires []fire
		var tm *Timer
		tm, err = node.CreateTimer(node.Clock(), 100*time.Millisecond, func() {
			fires = append(fires, fire{node.Clock().Now().Nanoseconds(), int64(tm.Overruns())})
		}, WithOverrunPolicy(policy))
		if err != nil {
			t.Fatal(err)
		}
		e := NewExecutor(WithExecutorContext(ctx))
		defer e.Close()
		e.AddNode(node)
		stop := spinInBackground(t, e)
		for deadline := time.Now().Add(10 * time.Second); pub.MatchedSubscriptions() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the /clock subscription never matched")
			}
		}
		for _, v := range simClockScript() {
			if err := pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(v / sec), Nanosec: uint32(v % sec)}}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			time.Sleep(10 * time.Millisecond)
		}
		synctest.Wait()
		stop()
		return fires
	}
	for _, policy := range []TimerOverrunPolicy{OverrunSkip, OverrunCatchUp} {
		var want []fire
		synctest.Test(t, func(t *testing.T) { want = run(t, intraPair, policy) })
		if len(want) < 40 || want[0].ros != 100*sec+100*ms {
			t.Fatalf("%v: the in-process reference fired %v", policy, want)
		}
		for _, tp := range []transportPair{zenohPair, rtpsPair} {
			t.Run(tp.name+"/"+policy.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					if got := run(t, tp, policy); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("fires\n got %v\nwant %v (in-process)", got, want)
					}
				})
			})
		}
	}
}

// Pub/sub over a real wire: typed messages in order, keep-last on the
// subscription side, transient local for a late joiner (as /rosout and
// /parameter_events subscribers need), and the match counts.
func TestPubSubOverTransports(t *testing.T) {
	forTransports(t, []transportPair{intraPair, zenohPair, rtpsPair}, func(t *testing.T, tp transportPair) {
		ca, cb := pairContexts(t, tp)
		na, err := NewNode("talker", WithContext(ca))
		if err != nil {
			t.Fatal(err)
		}
		defer na.Close()
		nb, err := NewNode("listener", WithContext(cb))
		if err != nil {
			t.Fatal(err)
		}
		defer nb.Close()
		latched := QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 3}
		lpub, err := NewPublisher[std_msgs.String](na, "/latched", latched)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			lpub.Publish(&std_msgs.String{Data: fmt.Sprint("old ", i)})
		}
		var got, late []string
		if _, err := NewSubscription[std_msgs.String](nb, "/chatter", KeepLast(4), func(m *std_msgs.String) { got = append(got, m.Data) }); err != nil {
			t.Fatal(err)
		}
		if _, err := NewSubscription[std_msgs.String](nb, "/latched", latched, func(m *std_msgs.String) { late = append(late, m.Data) }); err != nil {
			t.Fatal(err)
		}
		pub, err := NewPublisher[std_msgs.String](na, "/chatter", DefaultQoS())
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); pub.MatchedSubscriptions() != 1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no match")
			}
		}
		for i := range 10 {
			pub.Publish(&std_msgs.String{Data: fmt.Sprint(i)})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		e := NewExecutor(WithExecutorContext(cb))
		defer e.Close()
		e.AddNode(nb)
		for range 20 {
			e.SpinOnce(0)
		}
		if fmt.Sprint(got) != "[6 7 8 9]" {
			t.Errorf("keep last 4 of 10 queued: %v", got)
		}
		if fmt.Sprint(late) != "[old 2 old 3 old 4]" {
			t.Errorf("late joiner: %v", late)
		}
	})
}

// bubbleGoroutines counts the goroutines of the calling synctest bubble
// (what a test started and left behind), not the process's: a goroutine
// of the runtime or the race detector outside the bubble comes and goes
// on real time, which a bubble cannot wait for.
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return bytes.Count(buf, []byte(", synctest bubble "))
}
