package rtps

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// A deliver may offload work to the goroutine that received the sample
// (rmw.Sample.Offload): that goroutine hands its socket to a new one first,
// so the work may block until a later sample arrives on the same socket
// without holding up the transport (the inline /clock path depends on it).
func TestOffloadedWorkMayBlockOnLaterSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		second := make(chan struct{})
		finished := make(chan string, 1)
		n := 0
		_, err := b.NewSubscription(rmw.NodeInfo{Name: "l", Namespace: "/"}, "/c", strType, reliable, func(s rmw.Sample) {
			n++
			switch n {
			case 1:
				if s.Offload == nil {
					finished <- "no Offload on a received sample"
					return
				}
				ok := s.Offload(func() {
					select {
					case <-second: // delivered by the goroutine that took over
						finished <- "ok"
					case <-time.After(10 * time.Second):
						finished <- "the offloaded work starved the socket"
					}
				})
				if !ok || s.Offload(func() {}) {
					finished <- "Offload must take exactly one fn per datagram"
				}
			case 2:
				close(second)
			}
		}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pub := mustPub(t, a, "/c", reliable, nil)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		pub.Publish(str("one"))
		synctest.Wait()
		pub.Publish(str("two"))
		if got := <-finished; got != "ok" {
			t.Fatal(got)
		}
	})
}

// Close from offloaded work does not wait for itself.
func TestCloseFromOffloadedWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		done := make(chan struct{})
		_, err := b.NewSubscription(rmw.NodeInfo{Name: "l", Namespace: "/"}, "/c", strType, reliable, func(s rmw.Sample) {
			if s.Offload != nil {
				s.Offload(func() { b.Close(); close(done) })
			}
		}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pub := mustPub(t, a, "/c", reliable, nil)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		pub.Publish(str("x"))
		<-done
	})
}
