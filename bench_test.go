package nros

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

func BenchmarkClockNow(b *testing.B) {
	driven := NewContext()
	driven.AttachTimeSource().Install(TimeFromNanoseconds(100 * sec))
	cases := []struct {
		name string
		c    *Clock
	}{
		{"ros-simulated", driven.Clock()},
		{"ros-no-source", NewContext().Clock()},
		{"system", driven.clockFor(SystemTime)},
		{"steady", driven.clockFor(SteadyTime)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				sink += tc.c.Now().Nanoseconds()
			}
			_ = sink
		})
	}
}

// BenchmarkActivation measures the cost of one timer activation (a full
// executor pass that finds and runs one due timer) while n-1 other timers
// that are not due are registered on the same clock.
func BenchmarkActivation(b *testing.B) {
	for _, src := range []TimerClockSource{TimerClockSteady, TimerClockRos} {
		for _, n := range []int{1, 1000, 100_000} {
			b.Run(fmt.Sprintf("%s/timers=%d", src, n), func(b *testing.B) {
				ctx := NewContext()
				ts := ctx.AttachTimeSource()
				ts.Install(TimeFromNanoseconds(sec))
				e := NewExecutor(WithExecutorContext(ctx))
				for i := 0; i < n-1; i++ {
					if _, err := e.RegisterTimerOnClock(time.Hour+time.Duration(i), src, func() {}); err != nil {
						b.Fatal(err)
					}
				}
				fired := 0
				if _, err := e.RegisterTimerOnClock(1, src, func() { fired++ }); err != nil {
					b.Fatal(err)
				}
				sim := int64(sec)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if src == TimerClockRos {
						sim++
						ts.Install(TimeFromNanoseconds(sim))
					}
					if err := e.SpinOnce(0); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if fired < b.N/2 {
					b.Fatalf("fired %d times in %d passes", fired, b.N)
				}
			})
		}
	}
}

// BenchmarkWakeLatency measures the time from a /clock install that makes a
// ROS-time timer due to the start of its callback, on a spinning executor.
func BenchmarkWakeLatency(b *testing.B) {
	ctx := NewContext()
	ts := ctx.AttachTimeSource()
	sim := int64(sec)
	ts.Install(TimeFromNanoseconds(sim))
	e := NewExecutor(WithExecutorContext(ctx))
	got := make(chan time.Time, 1)
	if _, err := e.RegisterTimerOnClock(time.Millisecond, TimerClockRos, func() { got <- time.Now() }); err != nil {
		b.Fatal(err)
	}
	spinCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Spin(spinCtx)
	lat := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		sim += int64(time.Millisecond)
		t0 := time.Now()
		ts.Install(TimeFromNanoseconds(sim))
		t1 := <-got
		lat = append(lat, t1.Sub(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(1), "max-µs")
}
