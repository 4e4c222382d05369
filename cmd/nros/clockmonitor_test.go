package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// syncBuf is an output the command writes from two goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestClockMonitorReportsRatePausesJumpsAndSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		var out, errb syncBuf
		e := &cliEnv{stdout: &out, stderr: &errb, ctxOpts: []nros.ContextOption{nros.WithTransport(tr)}, clock: realClock{}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- e.clockCmd(ctx, []string{"--monitor", "/sim/clock"}) }()
		synctest.Wait()

		// A Gazebo-like reliable publisher: 100 Hz, samples 5 ms off the
		// monitor's second marks.
		pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "sim", Namespace: "/", Enclave: "/"}, "/sim/clock",
			(&rosgraph_msgs.Clock{}).TypeName(), nros.QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 10}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close()
		sim := int64(100e9)
		send := func(n int, step int64) {
			for range n {
				var m rosgraph_msgs.Clock
				s, ns, _ := nros.TimeFromNanoseconds(sim).SecNanosec()
				m.Clock.Sec, m.Clock.Nanosec = s, ns
				if err := pub.Publish(msg.Marshal(&m, true, nil)); err != nil {
					t.Error(err)
				}
				time.Sleep(10 * time.Millisecond)
				sim += step
			}
		}
		time.Sleep(5 * time.Millisecond)
		send(150, 10e6) // 1.5 s at 1x: samples 100.00 ... 101.49
		sim -= 10e6
		send(50, 0) // 0.5 s paused at 101.49
		sim = 96e9
		send(100, 20e6) // a loop back to 96 s, then 1 s at 2x
		time.Sleep(3 * time.Second)
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errb.String())
		}
		// 2.000: the window so far is 1.005 .. 1.995, sim moving until the
		// pause at 1.505 (0.49 s over 0.99 s). 3.000: 99 samples of 20 ms
		// since the loop at 2.005. 4.000: a second of silence at 100 Hz.
		want := `[   0.000] listening on /sim/clock (best_effort, volatile, keep_last(1))
[   0.005] first sample: sim 100.000000000
[   1.000] rate 100.0 Hz, rtf 1.00, sim 100.990000000
[   1.505] paused at sim 101.490000000
[   2.000] rate 100.0 Hz, rtf 0.49, sim 101.490000000 (paused)
[   2.005] jump backward: 101.490000000 -> 96.000000000 (-5.490000000 s)
[   3.000] rate 100.0 Hz, rtf 2.00, sim 97.980000000
[   4.000] no sample for 1.0s (last sim 97.980000000)
`
		if got := out.String(); got != want {
			t.Fatalf("output:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestClockMonitorUsage(t *testing.T) {
	e, _, errb := testEnv(intra.New(), newFakeClock())
	if code := e.clockCmd(context.Background(), []string{"--monitor", "/a", "/b"}); code != 2 || !strings.Contains(errb.String(), "at most one topic") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
