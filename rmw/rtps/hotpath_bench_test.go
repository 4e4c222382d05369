package rtps

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
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

// hotWait waits for a signal on got, or fails after a second. The timer
// is reused so that it adds no allocation per message.
func hotWait(b *testing.B, got <-chan struct{}, i int) {
	if hotTimer == nil {
		hotTimer = time.NewTimer(time.Second)
	} else {
		hotTimer.Reset(time.Second)
	}
	select {
	case <-got:
		hotTimer.Stop()
	case <-hotTimer.C:
		b.Fatalf("sample %d: nothing within 1 s", i)
	}
}

// hotTimer is hotWait's timer (benchmarks run one at a time).
var hotTimer *time.Timer

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
					hotWait(b, got, i)
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
				hotWait(b, got, i)
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

// TestHotPathAllocs checks that a remote sample costs no allocation on
// its way from Publish through the sockets to deliver (the receive copy
// comes from a pool), for a small and a fragmented sample.
func TestHotPathAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("sockets")
	}
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	for _, size := range hotSizes {
		t.Run(sizeName(size), func(t *testing.T) {
			a, c := newLoopback(t), newLoopback(t)
			defer a.Close()
			defer c.Close()
			got := make(chan struct{}, 1)
			pub := mustPub(t, a, "/hot_allocs", reliable, nil)
			sub, err := c.NewSubscription(node, "/hot_allocs", strType, reliable, func(rmw.Sample) {
				select {
				case got <- struct{}{}:
				default:
				}
			}, rmw.EndpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "match", 10*time.Second, func() bool {
				return pub.MatchedSubscriptions() == 1 && sub.MatchedPublishers() == 1
			})
			data := hotSample(size)
			timer := time.NewTimer(time.Hour)
			lost := 0
			step := func() {
				if err := pub.Publish(data); err != nil {
					t.Fatal(err)
				}
				timer.Reset(2 * time.Second)
				select {
				case <-got:
					timer.Stop()
				case <-timer.C:
					lost++
				}
			}
			for range 50 { // warm the pools
				step()
			}
			// Discovery and the timer goroutine allocate now and then;
			// the average over many samples must stay well below one.
			avg := testing.AllocsPerRun(500, step)
			if lost > 0 {
				t.Fatalf("%d samples not delivered", lost)
			}
			if avg > 0.2 {
				t.Errorf("%.2f allocations per sample, want ~0", avg)
			}
		})
	}
}

// TestLocalDeliveryAllocs checks that a sample published to the one
// subscription of the same Transport costs no allocation either.
func TestLocalDeliveryAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	tr := newMem(t, udp.NewMemNetwork(), nil)
	defer tr.Close()
	n := 0
	pub := mustPub(t, tr, "/local_allocs", reliable, nil)
	if _, err := tr.NewSubscription(node, "/local_allocs", strType, reliable, func(s rmw.Sample) { n += len(s.Data) }, rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	data := hotSample(64)
	for range 20 {
		pub.Publish(data)
	}
	if avg := testing.AllocsPerRun(200, func() { pub.Publish(data) }); avg > 0.1 {
		t.Errorf("%.2f allocations per local sample, want 0", avg)
	}
	if want := (20 + 1 + 200) * len(data); n != want { // AllocsPerRun runs once more
		t.Errorf("delivered %d bytes, want %d", n, want)
	}
}

// BenchmarkHotPathServiceRoundTrip is a service call between two
// Transports (Cyclone's mapping, as between Go peers): the server answers
// from its handler with the request's bytes. ns/op is one call, allocs/op
// every allocation of the request and the response on both sides.
func BenchmarkHotPathServiceRoundTrip(b *testing.B) {
	for _, size := range hotSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			got := make(chan struct{}, 1)
			a, c := hotTransports(b)
			var srv rmw.ServiceServer
			srv, err := c.NewServiceServer(node, "/hot_svc", boolReq, boolResp, rmw.ServicesDefaultQoS, func(r rmw.Request) {
				if err := srv.SendResponse(r.ID, r.Data); err != nil {
					b.Error(err)
				}
			}, rmw.EndpointOptions{})
			if err != nil {
				b.Fatal(err)
			}
			cl, err := a.NewServiceClient(node, "/hot_svc", boolReq, boolResp, rmw.ServicesDefaultQoS, func(rmw.Response) {
				select {
				case got <- struct{}{}:
				default:
				}
			}, rmw.EndpointOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for end := time.Now().Add(10 * time.Second); !cl.ServiceAvailable(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(end) {
					b.Fatal("service not available")
				}
			}
			time.Sleep(100 * time.Millisecond) // the server matches the client's reader too
			data := hotSample(size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(data[4:], uint64(i))
				if _, err := cl.SendRequest(data); err != nil {
					b.Fatal(err)
				}
				hotWait(b, got, i)
			}
		})
	}
}
