package rtps

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

// BenchmarkLoopbackReliable publishes 64-byte samples from one Transport to
// another over 127.0.0.1 (reliable, keep all: flow controlled, lossless)
// and reports the fraction that arrived. ns/op includes draining.
func BenchmarkLoopbackReliable(b *testing.B) {
	t := &testing.T{}
	a := newLoopback(t)
	defer a.Close()
	c := newLoopback(t)
	defer c.Close()
	q := rmw.QoS{Reliability: rmw.Reliable, History: rmw.KeepAll}
	var got atomic.Int64
	pub, _ := a.NewPublisher(node, "/bench", strType, q, rmw.EndpointOptions{})
	c.NewSubscription(node, "/bench", strType, q, func(rmw.Sample) { got.Add(1) }, rmw.EndpointOptions{})
	deadline := time.Now().Add(10 * time.Second)
	for pub.MatchedSubscriptions() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	data := str(string(make([]byte, 60)))
	b.ResetTimer()
	errs := 0
	for i := 0; i < b.N; i++ {
		if pub.Publish(data) != nil {
			errs++
		}
	}
	deadline = time.Now().Add(5 * time.Second)
	for got.Load() < int64(b.N-errs) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	if errs > 0 {
		b.Logf("%d of %d Publish calls timed out", errs, b.N)
	}
	b.ReportMetric(float64(got.Load())/float64(b.N), "delivered/op")
}
