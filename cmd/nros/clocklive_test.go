package main

import (
	"bytes"
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

// The live clock: keys pause, double and halve the rate, jump back 5 s and
// forward 10 s, and quit; the status line shows sim time, rate and the
// observed real-time factor.
func TestLiveClockKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		var mu sync.Mutex
		var latest int64
		sub, err := tr.NewSubscription(rmw.NodeInfo{Name: "probe", Namespace: "/"}, "/clock", "rosgraph_msgs/msg/Clock", nros.ClockQoS(),
			func(s rmw.Sample) {
				var m rosgraph_msgs.Clock
				if msg.Unmarshal(s.Data, &m) == nil {
					mu.Lock()
					latest = int64(m.Clock.Sec)*1e9 + int64(m.Clock.Nanosec)
					mu.Unlock()
				}
			}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		c := nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(&bytes.Buffer{}))
		defer c.Shutdown()
		node, err := nros.NewNode("live", nros.WithContext(c))
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		pub, err := nros.NewPublisher[rosgraph_msgs.Clock](node, "/clock", nros.ClockQoS())
		if err != nil {
			t.Fatal(err)
		}
		e, _, _ := testEnv(tr, realClock{})
		keys := make(chan byte)
		var status bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- e.runLive(context.Background(), pub, keys, 100, 100*int64(time.Second), 1, &status) }()
		defer func() {
			if t.Failed() { // stop the clock so that the bubble can end
				select {
				case <-done:
				default:
					close(keys)
					<-done
				}
			}
		}()
		press := func(after time.Duration, k byte) {
			time.Sleep(after)
			keys <- k
		}
		last := func() int64 {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return latest
		}
		press(time.Second+5*time.Millisecond, ' ') // 1 s at 1x, then pause
		if v := last(); v < 100_950*1e6 || v > 101_050*1e6 {
			t.Fatalf("after 1 s at 1x: %d", v)
		}
		press(time.Second, ' ') // paused for a second: no change
		if v := last(); v < 100_950*1e6 || v > 101_050*1e6 {
			t.Fatalf("paused moved the clock: %d", v)
		}
		press(0, '+') // 2x
		press(time.Second, 'b')
		if v := last(); v < 97_950*1e6 || v > 98_100*1e6 { // 101 + 2 - 5
			t.Fatalf("after 1 s at 2x and b: %d", v)
		}
		press(0, 'f')
		press(0, '-')
		press(0, '-') // 0.5x
		time.Sleep(2 * time.Second)
		if v := last(); v < 108_950*1e6 || v > 109_100*1e6 { // 98 + 10 + 1
			t.Fatalf("after f and 2 s at 0.5x: %d", v)
		}
		keys <- 'q'
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		done <- nil // for the deferred check
		if !strings.Contains(status.String(), "rate 0.5x  RTF 0.50") || !strings.Contains(status.String(), "paused") {
			t.Fatalf("status line: %q", status.String()[max(0, status.Len()-300):])
		}
	})
}
