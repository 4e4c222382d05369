package intra

import (
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/nros-go/nros/rmw"
)

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
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

// TestCloseWaitsForDeliver: Subscription.Close (or Transport.Close) made
// while a Publish on another goroutine is inside the subscription's deliver
// returns only after that deliver returns, and later Publish calls never
// reach deliver.
func TestCloseWaitsForDeliver(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(map[bool]string{false: "Subscription.Close", true: "Transport.Close"}[whole], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := New()
				defer tr.Close()
				entered, release := make(chan struct{}), make(chan struct{})
				var calls atomic.Int32
				deliver := func(rmw.Sample) {
					if calls.Add(1) == 1 {
						close(entered)
						<-release
					}
				}
				sub, err := tr.NewSubscription(node, "/b", strType, rmw.QoS{}, deliver, rmw.EndpointOptions{})
				if err != nil {
					t.Fatal(err)
				}
				p := mustPub(t, tr, "/b", strType, rmw.QoS{}, nil)
				go p.Publish(msg(1))
				<-entered
				closer := sub.Close
				if whole {
					closer = tr.Close
				}
				done := closedBy(closer)
				synctest.Wait()
				if isDone(done) {
					t.Fatal("Close returned while deliver was running")
				}
				close(release)
				<-done
				for i := 2; i < 5; i++ {
					p.Publish(msg(i))
				}
				if n := calls.Load(); n != 1 {
					t.Fatalf("deliver called %d times, want 1", n)
				}
			})
		})
	}
}

// TestCloseFromInsideDeliver: Close of the subscription or of the transport
// from inside the subscription's own deliver returns (no deadlock) and
// nothing is delivered afterwards; a second goroutine delivering to the
// same subscription at that moment is still waited for.
func TestCloseFromInsideDeliver(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(map[bool]string{false: "Subscription.Close", true: "Transport.Close"}[whole], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := New()
				defer tr.Close()
				var sub rmw.Subscription
				var calls atomic.Int32
				otherIn, otherRelease := make(chan struct{}), make(chan struct{})
				closeReturned := make(chan struct{})
				deliver := func(smp rmw.Sample) {
					switch calls.Add(1) {
					case 1: // another goroutine, blocked while we close
						close(otherIn)
						<-otherRelease
					case 2:
						if whole {
							tr.Close()
						} else {
							sub.Close()
						}
						close(closeReturned)
					}
				}
				var err error
				sub, err = tr.NewSubscription(node, "/s", strType, rmw.QoS{}, deliver, rmw.EndpointOptions{})
				if err != nil {
					t.Fatal(err)
				}
				p := mustPub(t, tr, "/s", strType, rmw.QoS{}, nil)
				go p.Publish(msg(1))
				<-otherIn
				selfDone := closedBy(func() error { return p.Publish(msg(2)) })
				synctest.Wait()
				if isDone(closeReturned) {
					t.Fatal("Close from inside deliver returned while another deliver ran")
				}
				close(otherRelease)
				<-closeReturned
				<-selfDone
				p.Publish(msg(3))
				if n := calls.Load(); n != 2 {
					t.Fatalf("deliver called %d times, want 2", n)
				}
			})
		})
	}
}

// TestCloseWaitsForOnEvent: Publisher.Close and Subscription.Close made
// while that endpoint's OnEvent runs return after it, and a Close from
// inside its own OnEvent does not deadlock.
func TestCloseWaitsForOnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New()
		defer tr.Close()
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		onEvent := func(rmw.Event) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
		}
		p, err := tr.NewPublisher(node, "/e", strType, rmw.QoS{}, rmw.EndpointOptions{OnEvent: onEvent})
		if err != nil {
			t.Fatal(err)
		}
		r0 := &recorder{}
		go tr.NewSubscription(node, "/e", strType, rmw.QoS{}, r0.deliver, rmw.EndpointOptions{}) // EventMatched blocks
		<-entered
		done := closedBy(p.Close)
		synctest.Wait()
		if isDone(done) {
			t.Fatal("Publisher.Close returned while OnEvent was running")
		}
		close(release)
		<-done
		mustSub(t, tr, "/e", strType, rmw.QoS{}, &recorder{})
		if n := calls.Load(); n != 1 {
			t.Fatalf("OnEvent called %d times, want 1", n)
		}

		// Close from inside the subscription's own OnEvent.
		var sub rmw.Subscription
		var evs atomic.Int32
		sub, err = tr.NewSubscription(node, "/f", strType, rmw.QoS{}, func(rmw.Sample) {},
			rmw.EndpointOptions{OnEvent: func(rmw.Event) { evs.Add(1); sub.Close() }})
		if err != nil {
			t.Fatal(err)
		}
		mustPub(t, tr, "/f", strType, rmw.QoS{}, nil)
		mustPub(t, tr, "/f", strType, rmw.QoS{}, nil)
		if n := evs.Load(); n != 1 {
			t.Fatalf("OnEvent after Close from inside OnEvent: %d calls", n)
		}
	})
}

// TestKeepLastHugeDepth: a keep-last history deeper than what is stored
// drops the oldest samples, never the newest.
func TestKeepLastHugeDepth(t *testing.T) {
	tr := New()
	defer tr.Close()
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: math.MaxInt}
	var live recorder
	mustSub(t, tr, "/deep", strType, q, &live)
	p := mustPub(t, tr, "/deep", strType, q, nil)
	const n = KeepAllLimit + 5
	for i := 1; i <= n; i++ {
		if err := p.Publish(msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := live.seqs(); len(got) != n || got[n-1] != n {
		t.Fatalf("live subscription got %d samples, last %v", len(got), got[len(got)-1:])
	}
	var late recorder
	mustSub(t, tr, "/deep", strType, q, &late)
	want := make([]int, 0, KeepAllLimit)
	for i := n - KeepAllLimit + 1; i <= n; i++ {
		want = append(want, i)
	}
	if got := late.seqs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("late joiner got %d samples from %v, want %d..%d", len(got), got[:1], want[0], n)
	}
}

// TestSubscriptionHearsIncompatibleQoS: the subscription side of a refused
// pair gets EventIncompatibleQoS naming the policy, whichever endpoint
// comes first.
func TestSubscriptionHearsIncompatibleQoS(t *testing.T) {
	cases := []struct {
		w, r   rmw.QoS
		policy string
	}{
		{rmw.QoS{Reliability: rmw.BestEffort}, rmw.QoS{Reliability: rmw.Reliable}, "RELIABILITY"},
		{rmw.QoS{Durability: rmw.Volatile}, rmw.QoS{Durability: rmw.TransientLocal}, "DURABILITY"},
	}
	for _, c := range cases {
		for _, subFirst := range []bool{true, false} {
			tr := New()
			var r recorder
			if subFirst {
				mustSub(t, tr, "/q", strType, c.r, &r)
				mustPub(t, tr, "/q", strType, c.w, nil)
			} else {
				mustPub(t, tr, "/q", strType, c.w, nil)
				mustSub(t, tr, "/q", strType, c.r, &r)
			}
			r.mu.Lock()
			evs := r.events
			r.mu.Unlock()
			if len(evs) != 1 || evs[0].Kind != rmw.EventIncompatibleQoS || evs[0].Policy != c.policy {
				t.Errorf("%s (subscription first %v): events %+v", c.policy, subFirst, evs)
			}
			tr.Close()
		}
	}
}
