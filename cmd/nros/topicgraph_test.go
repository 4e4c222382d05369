package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

func TestTopicListAndInfo(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	node := rmw.NodeInfo{Name: "talker", Namespace: "/demo", Enclave: "/"}
	if _, err := tr.NewPublisher(node, "/chatter", "std_msgs/msg/String", nros.DefaultQoS(), rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.NewSubscription(rmw.NodeInfo{Name: "listener", Namespace: "/"}, "/chatter", "std_msgs/msg/String", nros.DefaultQoS(), func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.NewPublisher(node, "/clock", "rosgraph_msgs/msg/Clock", nros.ClockQoS(), rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	e, out, errb := testEnv(tr, realClock{})
	if code := e.topicCmd(context.Background(), []string{"list", "-t"}); code != 0 {
		t.Fatalf("list: exit %d: %s", code, errb)
	}
	if got, want := out.String(), "/chatter [std_msgs/msg/String]\n/clock [rosgraph_msgs/msg/Clock]\n"; got != want {
		t.Fatalf("list -t printed %q, want %q", got, want)
	}
	out.Reset()
	if code := e.topicCmd(context.Background(), []string{"info", "chatter"}); code != 0 {
		t.Fatalf("info: exit %d: %s", code, errb)
	}
	if got, want := out.String(), "Type: std_msgs/msg/String\nPublisher count: 1\nSubscription count: 1\n"; got != want {
		t.Fatalf("info printed %q, want %q", got, want)
	}
	out.Reset()
	if code := e.topicCmd(context.Background(), []string{"info", "/chatter", "-v"}); code != 0 {
		t.Fatalf("info -v: exit %d: %s", code, errb)
	}
	for _, want := range []string{"Node name: talker\nNode namespace: /demo\nTopic type: std_msgs/msg/String\nEndpoint type: PUBLISHER",
		"Endpoint type: SUBSCRIPTION", "Reliability: RELIABLE", "History (Depth): KEEP_LAST (10)", "Durability: VOLATILE"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("info -v lacks %q:\n%s", want, out)
		}
	}
	if code := e.topicCmd(context.Background(), []string{"info", "/nothing"}); code != 1 || !strings.Contains(errb.String(), "unknown topic") {
		t.Fatalf("info of an unknown topic: exit %d, %q", code, errb)
	}
}

// publishEvery publishes m on topic every period until ctx ends; the
// returned channel closes when it has stopped.
func publishEvery(ctx context.Context, t *testing.T, tr rmw.Transport, topic, typ string, period time.Duration, next func() msg.Message) <-chan struct{} {
	pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "p", Namespace: "/"}, topic, typ, nros.DefaultQoS(), rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer pub.Close()
		for ctx.Err() == nil {
			pub.Publish(msg.Marshal(next(), true, nil))
			time.Sleep(period)
		}
	}()
	return stopped
}

func TestTopicHzAndBw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		ctx, cancel := context.WithCancel(context.Background())
		stopped := publishEvery(ctx, t, tr, "/chatter", "std_msgs/msg/String", 100*time.Millisecond,
			func() msg.Message { return &std_msgs.String{Data: "hello"} })
		defer func() { cancel(); <-stopped }()
		e, out, errb := testEnv(tr, realClock{})
		if code := e.topicCmd(ctx, []string{"hz", "/chatter", "--count", "2"}); code != 0 {
			t.Fatalf("hz: exit %d: %s", code, errb)
		}
		if strings.Count(out.String(), "average rate: 10.000\n\tmin: 0.100s max: 0.100s std dev: 0.00000s window: ") != 2 {
			t.Fatalf("hz printed %q", out)
		}
		out.Reset()
		if code := e.topicCmd(ctx, []string{"bw", "/chatter", "--count", "1"}); code != 0 {
			t.Fatalf("bw: exit %d: %s", code, errb)
		}
		// std_msgs/String "hello": 4 (encapsulation) + 4 (length) + 6 bytes.
		if !strings.HasPrefix(out.String(), "Subscribed to [/chatter]\n140.00 B/s from ") ||
			!strings.Contains(out.String(), "Message size mean: 14.00 B min: 14.00 B max: 14.00 B") {
			t.Fatalf("bw printed %q", out)
		}
	})
}

// With --use-sim-time, arrivals are timed on ROS time: a paused clock
// reads as no messages (nothing printed), not as an infinite rate; at 2x
// the ROS-time rate is half the wall rate.
func TestTopicHzOnSimTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		var moving atomic.Bool
		clockPub, err := tr.NewPublisher(rmw.NodeInfo{Name: "sim", Namespace: "/"}, "/clock", "rosgraph_msgs/msg/Clock", nros.ClockQoS(), rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		clockStopped := make(chan struct{})
		go func() { // /clock at 100 Hz: paused for 3 s, then 2x
			defer close(clockStopped)
			for ctx.Err() == nil {
				sim := int64(100 * time.Second)
				if w := time.Since(start); w > 3*time.Second {
					moving.Store(true)
					sim += 2 * int64(w-3*time.Second)
				}
				clockPub.Publish(msg.Marshal(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(sim / 1e9), Nanosec: uint32(sim % 1e9)}}, true, nil))
				time.Sleep(10 * time.Millisecond)
			}
		}()
		stopped := publishEvery(ctx, t, tr, "/chatter", "std_msgs/msg/String", 100*time.Millisecond,
			func() msg.Message { return &std_msgs.String{Data: "x"} })
		defer func() { cancel(); <-stopped; <-clockStopped }()
		e, out, errb := testEnv(tr, realClock{})
		done := make(chan int, 1)
		go func() {
			done <- e.topicCmd(ctx, []string{"hz", "/chatter", "--use-sim-time", "--window", "5", "--count", "1"})
		}()
		if code := <-done; code != 0 {
			t.Fatalf("hz: exit %d: %s", code, errb)
		}
		// The first report (--count 1) came only once the clock moved.
		if !moving.Load() || time.Since(start) < 3*time.Second {
			t.Fatalf("reported after %v, while the clock was paused: %q", time.Since(start), out)
		}
		// 10 Hz of wall time is 5 Hz of ROS time at 2x, give or take the
		// /clock step (20 ms of ROS time).
		var rate float64
		if _, err := fmt.Sscanf(out.String(), "average rate: %f", &rate); err != nil || rate < 4.5 || rate > 5.5 {
			t.Fatalf("hz on 2x sim time printed %q, want about 5 Hz of ROS time", out)
		}
	})
}

// discovering is an in-process transport that says its graph fills in
// through discovery, as DDS does.
type discovering struct{ *intra.Transport }

func (discovering) Discovering() bool { return true }

// TestSpinTimeOnlyForDiscovery: listing the graph waits --spin-time only
// on a transport whose graph fills in through discovery (rmw.Discovering).
func TestSpinTimeOnlyForDiscovery(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   rmw.Transport
		wait time.Duration
	}{{"in process", intra.New(), 0}, {"discovering", discovering{intra.New()}, 2500 * time.Millisecond}} {
		clk := newFakeClock()
		start := clk.Now()
		e, out, errb := testEnv(c.tr, clk)
		if code := e.topicCmd(context.Background(), []string{"list", "--spin-time", "2.5"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errb)
		}
		if got := clk.Now().Sub(start); got != c.wait {
			t.Errorf("%s: waited %v, want %v (listed %q)", c.name, got, c.wait, out)
		}
		c.tr.Close()
	}
}
