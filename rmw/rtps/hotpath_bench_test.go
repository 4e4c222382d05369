package rtps

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

// The hot-path benchmarks run two Transports in one process over real
// 127.0.0.1 sockets (run them inside interop/netns):
//
//	interop/netns go test ./rmw/rtps -run '^$' -bench HotPath -benchmem
//
// allocs/op and B/op count every goroutine of the process (publisher,
// both receive goroutines, timers), so they are the allocations per
// message of the whole send and receive path.

var hotSizes = []int{64, 64 << 10}

func sizeName(n int) string {
	if n >= 1<<10 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// hotTransports makes two loopback Transports closed when b ends.
func hotTransports(b *testing.B) (a, c *Transport) {
	b.Helper()
	t := &testing.T{}
	a, c = newLoopback(t), newLoopback(t)
	b.Cleanup(func() { a.Close(); c.Close() })
	return a, c
}

// hotPub and hotSub create endpoints or end the benchmark.
func hotPub(b *testing.B, tr *Transport, topic string, q rmw.QoS) rmw.Publisher {
	b.Helper()
	p, err := tr.NewPublisher(node, topic, strType, q, rmw.EndpointOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func hotSub(b *testing.B, tr *Transport, topic string, q rmw.QoS, deliver func(rmw.Sample)) rmw.Subscription {
	b.Helper()
	s, err := tr.NewSubscription(node, topic, strType, q, deliver, rmw.EndpointOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// hotMatched waits until every pub/sub pair is matched both ways, then a
// little more for the reliable handshake to settle.
func hotMatched(b *testing.B, pairs ...any) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i+1 < len(pairs); i += 2 {
		p, s := pairs[i].(rmw.Publisher), pairs[i+1].(rmw.Subscription)
		for p.MatchedSubscriptions() == 0 || s.MatchedPublishers() == 0 {
			if time.Now().After(deadline) {
				b.Fatal("no match")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
}

// hotPair makes a matched publisher on one Transport and subscription on
// another.
func hotPair(b *testing.B, topic string, q rmw.QoS, deliver func(rmw.Sample)) rmw.Publisher {
	a, c := hotTransports(b)
	pub := hotPub(b, a, topic, q)
	hotMatched(b, pub, hotSub(b, c, topic, q, deliver))
	return pub
}

// hotSample is a serialized sample (CDR header, int64 counter, data).
func hotSample(size int) []byte {
	b := make([]byte, 4+8+4+size)
	b[1] = 1 // CDR_LE
	binary.LittleEndian.PutUint32(b[12:], uint32(size))
	return b
}

// BenchmarkHotPathPublishDeliver publishes one sample and waits until the
// other Transport hands it to the deliver function: one-way latency
// (ns/op) and the allocations of publish → wire → deliver.
func BenchmarkHotPathPublishDeliver(b *testing.B) {
	for _, q := range []struct {
		name string
		qos  rmw.QoS
	}{{"reliable", reliable}, {"besteffort", bestEffort}} {
		for _, size := range hotSizes {
			b.Run(q.name+"/"+sizeName(size), func(b *testing.B) {
				got := make(chan struct{}, 1)
				pub := hotPair(b, "/hot_"+q.name, q.qos, func(rmw.Sample) {
					select {
					case got <- struct{}{}:
					default:
					}
				})
				data := hotSample(size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					binary.LittleEndian.PutUint64(data[4:], uint64(i))
					if err := pub.Publish(data); err != nil {
						b.Fatal(err)
					}
					select {
					case <-got:
					case <-time.After(time.Second):
						b.Fatalf("sample %d not delivered", i)
					}
				}
			})
		}
	}
}

// BenchmarkHotPathRoundTrip is ping-pong between two Transports, reliable
// KEEP_LAST 10 as ROS's default: pong republishes each sample from its
// deliver function. ns/op is one round trip.
func BenchmarkHotPathRoundTrip(b *testing.B) {
	for _, size := range hotSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			got := make(chan struct{}, 1)
			a, c := hotTransports(b)
			ping := hotPub(b, a, "/hot_ping", reliable)
			pong := hotPub(b, c, "/hot_pong", reliable)
			echo := hotSub(b, c, "/hot_ping", reliable, func(s rmw.Sample) { _ = pong.Publish(s.Data) })
			back := hotSub(b, a, "/hot_pong", reliable, func(rmw.Sample) {
				select {
				case got <- struct{}{}:
				default:
				}
			})
			hotMatched(b, ping, echo, pong, back)
			data := hotSample(size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(data[4:], uint64(i))
				if err := ping.Publish(data); err != nil {
					b.Fatal(err)
				}
				select {
				case <-got:
				case <-time.After(time.Second):
					b.Fatalf("round trip %d lost", i)
				}
			}
		})
	}
}

// BenchmarkHotPathFlood publishes best-effort 64-byte samples back to
// back and reports the fraction delivered (the receive side's ability to
// keep up with the send side, as pingpong's throughput mode).
func BenchmarkHotPathFlood(b *testing.B) {
	var n atomic.Int64
	done := make(chan struct{}, 1)
	pub := hotPair(b, "/hot_flood", bestEffort, func(rmw.Sample) {
		n.Add(1)
		select {
		case done <- struct{}{}:
		default:
		}
	})
	data := hotSample(64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.LittleEndian.PutUint64(data[4:], uint64(i))
		if err := pub.Publish(data); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	b.StopTimer()
	<-done
	b.ReportMetric(float64(n.Load())/float64(b.N), "delivered/op")
}
