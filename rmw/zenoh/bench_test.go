package zenoh

import (
	"fmt"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

// BenchmarkPublishDeliver measures one best-effort 64-byte sample from a
// publisher of one Transport to the subscription of another, over an
// in-memory link: encoding, the link, the receiving session's decode and
// routing, and the delivery to the handler.
func BenchmarkPublishDeliver(b *testing.B) {
	name := fmt.Sprintf("bench-%d", memSeq.Add(1))
	mk := func(cfg Config) *Transport {
		tr, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { tr.Close() })
		return tr
	}
	a := mk(memConfig(name, ""))
	c := mk(memConfig("", name))
	q := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	pub, err := a.NewPublisher(rmw.NodeInfo{Name: "p"}, "/bench", "std_msgs/msg/String", q, rmw.EndpointOptions{TypeHash: hashString})
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan struct{}, 1)
	_, err = c.NewSubscription(rmw.NodeInfo{Name: "s"}, "/bench", "std_msgs/msg/String", q, func(rmw.Sample) {
		select {
		case got <- struct{}{}:
		default:
		}
	}, rmw.EndpointOptions{TypeHash: hashString})
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 64)
	data[1] = 1
	// Wait for the match: publish until a sample arrives.
	deadline := time.Now().Add(10 * time.Second)
	for matched := false; !matched; {
		if time.Now().After(deadline) {
			b.Fatal("no match in 10 s")
		}
		if err := pub.Publish(data); err != nil {
			b.Fatal(err)
		}
		select {
		case <-got:
			matched = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if err := pub.Publish(data); err != nil {
			b.Fatal(err)
		}
		<-got
	}
}
