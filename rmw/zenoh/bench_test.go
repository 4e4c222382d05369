package zenoh

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

// pubSubPair makes two Transports joined by an in-memory link, a
// best-effort publisher on one and a subscription on the other, and waits
// until a sample gets through. publish sends one 64-byte sample and
// returns once the subscription's handler ran.
func pubSubPair(tb testing.TB) (publish func()) {
	tb.Helper()
	name := fmt.Sprintf("bench-%d", memSeq.Add(1))
	mk := func(cfg Config) *Transport {
		tr, err := New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { tr.Close() })
		return tr
	}
	a := mk(memConfig(name, ""))
	c := mk(memConfig("", name))
	q := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	pub, err := a.NewPublisher(rmw.NodeInfo{Name: "p"}, "/bench", "std_msgs/msg/String", q, rmw.EndpointOptions{TypeHash: hashString})
	if err != nil {
		tb.Fatal(err)
	}
	got := make(chan struct{}, 1)
	_, err = c.NewSubscription(rmw.NodeInfo{Name: "s"}, "/bench", "std_msgs/msg/String", q, func(rmw.Sample) {
		select {
		case got <- struct{}{}:
		default:
		}
	}, rmw.EndpointOptions{TypeHash: hashString})
	if err != nil {
		tb.Fatal(err)
	}
	data := make([]byte, 64)
	data[1] = 1
	// Wait for the match: publish until a sample arrives.
	deadline := time.Now().Add(10 * time.Second)
	for matched := false; !matched; {
		if time.Now().After(deadline) {
			tb.Fatal("no match in 10 s")
		}
		if err := pub.Publish(data); err != nil {
			tb.Fatal(err)
		}
		select {
		case <-got:
			matched = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() {
		if err := pub.Publish(data); err != nil {
			tb.Fatal(err)
		}
		<-got
	}
}

// BenchmarkPublishDeliver measures one best-effort 64-byte sample from a
// publisher of one Transport to the subscription of another, over an
// in-memory link: encoding, the link, the receiving session's decode and
// routing, and the delivery to the handler.
func BenchmarkPublishDeliver(b *testing.B) {
	publish := pubSubPair(b)
	b.ReportAllocs()
	b.SetBytes(64)
	b.ResetTimer()
	for b.Loop() {
		publish()
	}
}

// TestPublishDeliverAllocs bounds what one sample allocates from publish
// to delivery (both sessions, the in-memory link's copy included): until
// the batch buffers were reused every sample cost a 64 KiB batch (66 744 B
// and 17 allocations); then 947 B and 10; now ~544 B and 5, all on the
// publishing side (the receiving session decodes into structures it
// reuses, wire.Scratch).
func TestPublishDeliverAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	publish := pubSubPair(t)
	for range 100 {
		publish() // warm up: buffers, maps, the scheduler
	}
	const n = 2000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		publish()
	}
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / n
	bytes := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("per sample: %.1f allocations, %.0f B", allocs, bytes)
	if allocs > 6 || bytes > 1024 {
		t.Errorf("per sample: %.1f allocations and %.0f B, want at most 6 and 1024 B", allocs, bytes)
	}
}
