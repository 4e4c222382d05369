package rtps

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// blockingSub is a subscription whose deliver function, on its first call,
// signals entered and blocks until release is closed; it counts calls.
type blockingSub struct {
	entered, release chan struct{}
	calls            atomic.Int32
	// then, if set, runs inside the first deliver after release.
	then func()
}

func newBlockingSub() *blockingSub {
	return &blockingSub{entered: make(chan struct{}), release: make(chan struct{})}
}

func (b *blockingSub) deliver(rmw.Sample) {
	if b.calls.Add(1) == 1 {
		close(b.entered)
		<-b.release
		if b.then != nil {
			b.then()
		}
	}
}

// closedBy runs fn on a goroutine and returns a channel closed when it
// returns.
func closedBy(fn func() error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		fn()
		close(done)
	}()
	return done
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestCloseWaitsForDeliver: a Subscription.Close (or Transport.Close) made
// while the subscription's deliver runs on another goroutine returns only
// after that deliver has returned, and no deliver runs afterwards, for a
// publisher of the same Transport and for a remote one.
func TestCloseWaitsForDeliver(t *testing.T) {
	for _, remote := range []bool{false, true} {
		for _, whole := range []bool{false, true} {
			name := map[bool]string{false: "local", true: "remote"}[remote] + map[bool]string{false: "/Subscription.Close", true: "/Transport.Close"}[whole]
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					nw := udp.NewMemNetwork()
					a := newMem(t, nw, nil)
					defer a.Close()
					b := a
					if remote {
						b = newMem(t, nw, nil)
						defer b.Close()
					}
					bs := newBlockingSub()
					sub, err := b.NewSubscription(node, "/block", strType, reliable, bs.deliver, rmw.EndpointOptions{})
					if err != nil {
						t.Fatal(err)
					}
					pub := mustPub(t, a, "/block", reliable, nil)
					time.Sleep(2 * time.Second)
					synctest.Wait()
					if pub.MatchedSubscriptions() != 1 {
						t.Fatal("not matched")
					}
					go pub.Publish(str("first"))
					<-bs.entered
					closer := sub.Close
					if whole {
						closer = b.Close
					}
					done := closedBy(closer)
					synctest.Wait()
					if isDone(done) {
						t.Fatal("Close returned while deliver was running")
					}
					close(bs.release)
					<-done
					for range 5 {
						pub.Publish(str("more"))
					}
					time.Sleep(time.Second)
					synctest.Wait()
					if n := bs.calls.Load(); n != 1 {
						t.Fatalf("deliver called %d times, want 1", n)
					}
				})
			})
		}
	}
}

// TestCloseFromInsideDeliver: Close of the subscription, or of the whole
// Transport, called from inside that subscription's deliver returns without
// waiting for itself, and nothing is delivered afterwards.
func TestCloseFromInsideDeliver(t *testing.T) {
	for _, remote := range []bool{false, true} {
		for _, whole := range []bool{false, true} {
			name := map[bool]string{false: "local", true: "remote"}[remote] + map[bool]string{false: "/Subscription.Close", true: "/Transport.Close"}[whole]
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					nw := udp.NewMemNetwork()
					a := newMem(t, nw, nil)
					defer a.Close()
					b := a
					if remote {
						b = newMem(t, nw, nil)
						defer b.Close()
					}
					var sub rmw.Subscription
					var calls atomic.Int32
					returned := make(chan struct{})
					deliver := func(rmw.Sample) {
						if calls.Add(1) == 1 {
							if whole {
								b.Close()
							} else {
								sub.Close()
							}
							close(returned)
						}
					}
					var err error
					sub, err = b.NewSubscription(node, "/self", strType, reliable, deliver, rmw.EndpointOptions{})
					if err != nil {
						t.Fatal(err)
					}
					pub := mustPub(t, a, "/self", reliable, nil)
					time.Sleep(2 * time.Second)
					synctest.Wait()
					pub.Publish(str("one"))
					time.Sleep(time.Second)
					synctest.Wait()
					if !isDone(returned) {
						t.Fatal("Close from inside deliver did not return")
					}
					for range 5 {
						pub.Publish(str("more"))
					}
					time.Sleep(time.Second)
					synctest.Wait()
					if n := calls.Load(); n != 1 {
						t.Fatalf("deliver called %d times, want 1", n)
					}
				})
			})
		}
	}
}

// TestPublisherCloseWaitsForOnEvent: Publisher.Close made while the
// publisher's OnEvent runs returns after it, and no event follows.
func TestPublisherCloseWaitsForOnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		onEvent := func(rmw.Event) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
		}
		pub, err := a.NewPublisher(node, "/ev", strType, reliable, rmw.EndpointOptions{OnEvent: onEvent})
		if err != nil {
			t.Fatal(err)
		}
		in := &inbox{t: t}
		go a.NewSubscription(node, "/ev", strType, reliable, in.deliver, rmw.EndpointOptions{}) // matched: OnEvent blocks
		<-entered
		done := closedBy(pub.Close)
		synctest.Wait()
		if isDone(done) {
			t.Fatal("Publisher.Close returned while OnEvent was running")
		}
		close(release)
		<-done
		mustSub(t, a, "/ev", reliable, &inbox{t: t})
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("OnEvent called %d times, want 1", n)
		}
	})
}
