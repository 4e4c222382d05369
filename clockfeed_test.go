//go:build linux

package nros

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh"
	"github.com/nros-go/nros/rmw/zenoh/config"
)

// TestClockFeedInstallsOnTheSpinner: over real loopback sockets, a
// context's /clock subscription is an rmw.Feed (on DDS a socket of its
// own; on Zenoh the TCP link its samples come over), and an executor whose
// ROS timer waits on that clock reads it itself: once it spins, every
// sample is installed on its goroutine, and the timer fires there. A
// SleepUntil on another goroutine, while the executor runs a long
// callback, still sees the clock move (it wants the feed).
func TestClockFeedInstallsOnTheSpinner(t *testing.T) {
	t.Run("dds", func(t *testing.T) { testClockFeed(t, ddsSocketPair(t)) })
	t.Run("zenoh", func(t *testing.T) {
		mk := func(listen, connect []config.Endpoint) *zenoh.Transport {
			zc := config.Default()
			zc.Listen.Endpoints, zc.Connect.Endpoints = config.Unique(listen), config.Unique(connect)
			tr, err := zenoh.New(zenoh.Config{Zenoh: zc, Warnf: func(string, ...any) {}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			return tr
		}
		a := mk([]config.Endpoint{{Protocol: "tcp", Address: "127.0.0.1:0"}}, []config.Endpoint{})
		ep, err := config.ParseEndpoint(a.Listeners()[0])
		if err != nil {
			t.Fatal(err)
		}
		b := mk([]config.Endpoint{}, []config.Endpoint{ep})
		testClockFeed(t, []rmw.Transport{a, b})
	})
}

func testClockFeed(t *testing.T, trs []rmw.Transport) {
	a := NewContext(WithTransport(trs[0]), WithLogOutput(io.Discard))
	defer a.Shutdown()
	n, err := NewNode("user", WithContext(a), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if a.ov.Feed() == nil {
		t.Fatal("the /clock subscription has no feed")
	}

	var mu sync.Mutex
	var spinner uint64
	installsOn := map[bool]int{} // on the spinner?
	remove := a.ov.AddListener(func(clock.Change, int64, int64) {
		g := testGoid()
		mu.Lock()
		if spinner != 0 {
			installsOn[g == spinner]++
		}
		mu.Unlock()
	})
	defer remove()
	fired := make(chan uint64, 1000)
	block := make(chan struct{})
	blocked := make(chan struct{})
	var once sync.Once
	if _, err := n.CreateTimer(n.Clock(), 10*time.Millisecond, func() {
		fired <- testGoid()
		if n.Clock().Started() && n.Clock().Now().ns >= 150*sec {
			once.Do(func() { close(blocked); <-block }) // a long callback
		}
	}); err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(WithExecutorContext(a))
	defer e.Close()
	if err := e.AddNode(n); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	spun := make(chan error, 1)
	go func() {
		mu.Lock()
		spinner = testGoid()
		mu.Unlock()
		spun <- e.Spin(ctx)
	}()

	pub, err := trs[1].NewPublisher(rmw.NodeInfo{Name: "sim", Namespace: "/", Enclave: "/"}, DefaultClockTopic,
		(&rosgraph_msgs.Clock{}).TypeName(), ClockQoS(), rmw.EndpointOptions{TypeHash: (*rosgraph_msgs.Clock)(nil).TypeHash()})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	send := func(ns int64) {
		var m rosgraph_msgs.Clock
		m.Clock.Sec, m.Clock.Nanosec = int32(ns/sec), uint32(ns%sec)
		if err := pub.Publish(msg.Marshal(&m, true, nil)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for pub.MatchedSubscriptions() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no match")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Until the executor holds the feed, the transport reads it: warm up.
	for i := range 20 {
		send(100*sec + int64(i)*ms)
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	clear(installsOn)
	mu.Unlock()
	for i := range 100 {
		send(101*sec + int64(i)*20*ms)
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	on, off := installsOn[true], installsOn[false]
	mu.Unlock()
	if on < 90 || off > 0 {
		t.Fatalf("of 100 samples, %d installed on the spinning goroutine and %d elsewhere", on, off)
	}
	for len(fired) > 0 {
		if g := <-fired; g != spinner {
			t.Fatalf("timer fired on goroutine %d, the spinner is %d", g, spinner)
		}
	}

	// A long callback: a sleeper elsewhere still sees time move.
	send(150 * sec)
	select {
	case <-blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("the timer did not fire at 150 s")
	}
	slept := make(chan error, 1)
	go func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		slept <- n.Clock().SleepUntil(sctx, Time{160 * sec})
	}()
	for i := range 50 {
		send(150*sec + int64(i+1)*sec)
		time.Sleep(5 * time.Millisecond)
		select {
		case err := <-slept:
			if err != nil {
				t.Fatalf("SleepUntil during a long callback: %v", err)
			}
			close(block)
			cancel()
			if err := <-spun; err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
	}
	close(block)
	cancel()
	<-spun
	t.Fatal("SleepUntil did not return while the executor ran a long callback")
}
