package nros

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
)

var benchSizes = []int{64, 64 << 10}

func sizeName(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkInProcessLatency measures publish -> subscription callback on a
// spinning executor over the in-process transport, one message in flight.
func BenchmarkInProcessLatency(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			ctx := NewContext(WithLogOutput(io.Discard))
			n, _ := NewNode("bench", WithContext(ctx))
			got := make(chan time.Time, 1)
			NewSubscription[std_msgs.String](n, "/chatter", DefaultQoS(), func(*std_msgs.String) { got <- time.Now() })
			pub, _ := NewPublisher[std_msgs.String](n, "/chatter", DefaultQoS())
			e := NewExecutor(WithExecutorContext(ctx))
			e.AddNode(n)
			spinCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go e.Spin(spinCtx)
			m := &std_msgs.String{Data: strings.Repeat("x", size)}
			lat := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				pub.Publish(m)
				lat = append(lat, (<-got).Sub(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}

// BenchmarkInProcessThroughput floods a keep-all subscription while the
// executor drains it on another goroutine.
func BenchmarkInProcessThroughput(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			ctx := NewContext(WithLogOutput(io.Discard))
			n, _ := NewNode("bench", WithContext(ctx))
			done := make(chan struct{})
			want := int64(0)
			var count atomic.Int64
			q := QoS{Reliability: rmw.Reliable, History: rmw.KeepAll}
			NewSubscription[std_msgs.String](n, "/flood", q, func(*std_msgs.String) {
				if count.Add(1) == want {
					close(done)
				}
			})
			pub, _ := NewPublisher[std_msgs.String](n, "/flood", q)
			e := NewExecutor(WithExecutorContext(ctx))
			e.AddNode(n)
			m := &std_msgs.String{Data: strings.Repeat("x", size)}
			want = int64(b.N)
			spinCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go e.Spin(spinCtx)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			start := time.Now()
			for i := 0; i < b.N; i++ {
				pub.Publish(m)
				if half := keepAllCap / 2; i%half == half-1 {
					// stay under the keep-all bound: at most half queued
					// before the next half is published
					for count.Load() < int64(i+1-half) {
						time.Sleep(time.Millisecond)
					}
				}
			}
			<-done
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
