package zenoh

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/config"
)

// tcpPair is two transports over loopback TCP, b connected to a.
func tcpPair(t *testing.T) (a, b *Transport) {
	t.Helper()
	mk := func(listen, connect []config.Endpoint) *Transport {
		zc := config.Default()
		zc.Listen.Endpoints, zc.Connect.Endpoints = config.Unique(listen), config.Unique(connect)
		tr, err := New(Config{Zenoh: zc, Warnf: func(string, ...any) {}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	a = mk([]config.Endpoint{{Protocol: "tcp", Address: "127.0.0.1:0"}}, []config.Endpoint{})
	ep, err := config.ParseEndpoint(a.Listeners()[0])
	if err != nil {
		t.Fatal(err)
	}
	return a, mk([]config.Endpoint{}, []config.Endpoint{ep})
}

// TestFeedOneWaiter: a feed subscription over TCP leads the link its
// samples come over. Two goroutines holding it: the second's Wait does not
// lead (ok false) and leaves the first's alone, whose Pull delivers; the
// link is read as before once both let go. Closing the subscription ends
// a Wait in progress, and later Waits do not lead.
func TestFeedOneWaiter(t *testing.T) {
	a, b := tcpPair(t)
	ni := rmw.NodeInfo{Name: "n", Namespace: "/", Enclave: "/"}
	qos := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}
	var got atomic.Int32
	sub, err := b.NewSubscription(ni, "/clock_like", "std_msgs/msg/String", qos, func(rmw.Sample) { got.Add(1) }, rmw.EndpointOptions{Feed: true})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := sub.(rmw.Feed)
	if !ok {
		t.Fatalf("a subscription asked for a feed is a %T", sub)
	}
	pub, err := a.NewPublisher(ni, "/clock_like", "std_msgs/msg/String", qos, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	data := []byte{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	eventually(t, "a first sample (the feed learns its face)", func() bool {
		_ = pub.Publish(data)
		return got.Load() > 0
	})
	time.Sleep(20 * time.Millisecond) // samples still on their way
	n0 := got.Load()

	f.Hold(1) // loop A
	f.Hold(1) // loop B
	readable, ok := f.Wait(5*time.Second, func() bool { _ = pub.Publish(data); return true })
	if !readable || !ok {
		t.Fatalf("A's Wait = %v, %v", readable, ok)
	}
	if readable, ok := f.Wait(0, func() bool { return true }); readable || ok {
		t.Fatalf("B's Wait while A has a batch = %v, %v: want no lead", readable, ok)
	}
	f.Pull()
	if got.Load() != n0+1 {
		t.Fatalf("A's Pull delivered %d samples, want 1", got.Load()-n0)
	}
	f.Hold(-1)
	f.Hold(-1)
	n1 := got.Load()
	eventually(t, "a sample read by the link's reader again", func() bool {
		_ = pub.Publish(data)
		return got.Load() > n1
	})

	// Close ends a Wait in progress.
	f.Hold(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			readable, ok := f.Wait(-1, func() bool { return true })
			if !ok {
				return
			}
			if readable {
				f.Pull()
			}
		}
	}()
	time.Sleep(10 * time.Millisecond) // let it block (Close works either way)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a Wait blocked")
	}
	f.Hold(-1)
}
