package rtps

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// fakeClock is a manual monotonic Clock.
type fakeClock struct {
	mu      sync.Mutex
	now     int64
	waiters map[*fakeWaiter]bool
}

type fakeWaiter struct {
	at int64
	ch chan struct{}
}

func newFakeClock() *fakeClock { return &fakeClock{now: 1e9, waiters: map[*fakeWaiter]bool{}} }

func (c *fakeClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &fakeWaiter{at: c.now + int64(d), ch: make(chan struct{})}
	if d <= 0 {
		close(w.ch)
		return w.ch, func() {}
	}
	c.waiters[w] = true
	return w.ch, func() {
		c.mu.Lock()
		delete(c.waiters, w)
		c.mu.Unlock()
	}
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += int64(d)
	for w := range c.waiters {
		if w.at <= c.now {
			close(w.ch)
			delete(c.waiters, w)
		}
	}
}

// step advances the fake clock by total in increments of 50 ms, letting
// every goroutine of the bubble settle after each.
func (c *fakeClock) step(total time.Duration) {
	for d := time.Duration(0); d < total; d += 50 * time.Millisecond {
		c.Advance(50 * time.Millisecond)
		synctest.Wait()
	}
}

func TestLeaseExpiryAndRediscovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		nw := udp.NewMemNetwork()
		var cut atomic.Bool
		var bPrefix atomic.Value // prefix of the participant whose traffic is cut
		bPrefix.Store("")
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			return cut.Load() && len(b) >= 20 && string(b[8:20]) == bPrefix.Load().(string)
		}
		mk := func() *Transport {
			return newMem(t, nw, func(c *Config) {
				c.Clock = clk
				c.LeaseDuration = 5 * time.Second
				c.AnnouncePeriod = time.Second
			})
		}
		a := mk()
		defer a.Close()
		b := mk()
		defer b.Close()
		bp := b.GuidPrefix()
		bPrefix.Store(string(bp[:]))

		pev := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, pev)
		in := &inbox{t: t}
		mustSub(t, b, "/chatter", reliable, in)
		// and the other way round: A's reader will start afresh after
		// the expiry while B's writer keeps its proxy.
		back := &inbox{t: t}
		mustSub(t, a, "/back", reliable, back)
		bpub := mustPub(t, b, "/back", reliable, nil)
		clk.step(time.Second)
		bpub.Publish(str("b1"))
		if pub.MatchedSubscriptions() != 1 {
			t.Fatalf("not matched; A %+v", a.Stats().Discovery)
		}

		// Real time passing does nothing: leases run on the Clock only
		// (a paused simulation or a stopped fake clock drops nobody).
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(a.RemoteParticipants()) != 1 {
			t.Fatal("peer dropped without the clock moving")
		}

		// B falls silent: after its 5 s lease A drops it, not before.
		cut.Store(true)
		clk.step(4 * time.Second)
		if len(a.RemoteParticipants()) != 1 {
			t.Fatal("peer expired early")
		}
		clk.step(2 * time.Second)
		if len(a.RemoteParticipants()) != 0 {
			t.Fatal("peer did not expire")
		}
		if pub.MatchedSubscriptions() != 0 {
			t.Fatal("still matched after expiry")
		}
		if n, _ := pev.count(rmw.EventUnmatched); n != 1 {
			t.Fatalf("unmatched events %d", n)
		}
		if st := a.Stats().Discovery; st.ParticipantsExpired != 1 {
			t.Fatalf("expired count %d", st.ParticipantsExpired)
		}

		// B speaks again (same prefix): rediscovered and matched again.
		cut.Store(false)
		clk.step(2 * time.Second)
		if got := a.RemoteParticipants(); len(got) != 1 || got[0] != bp {
			t.Fatalf("not rediscovered: %v", got)
		}
		if pub.MatchedSubscriptions() != 1 {
			t.Fatalf("not rematched; A %+v\nB %+v", a.Stats().Discovery, b.Stats().Discovery)
		}
		pub.Publish(str("after"))
		clk.step(time.Second)
		if got := in.got(); !slices.Equal(got, []string{"after"}) {
			t.Fatalf("got %q", got)
		}
		bpub.Publish(str("b2"))
		clk.step(time.Second)
		// A's reader state for B was reset by the expiry, so b1 (still
		// in B's history) may arrive once more; b2 arrives exactly once.
		if got := back.got(); got[0] != "b1" || got[len(got)-1] != "b2" || slices.Index(got, "b2") != len(got)-1 {
			t.Fatalf("A got %q from B", got)
		}

		// B restarts: Close disposes it at once; the new participant (new
		// prefix) is discovered.
		b.Close()
		synctest.Wait()
		if len(a.RemoteParticipants()) != 0 {
			t.Fatal("closed participant not disposed")
		}
		if st := a.Stats().Discovery; st.ParticipantsDisposed != 1 {
			t.Fatalf("disposed count %d", st.ParticipantsDisposed)
		}
		b2 := mk()
		defer b2.Close()
		in2 := &inbox{t: t}
		mustSub(t, b2, "/chatter", reliable, in2)
		clk.step(time.Second)
		if got := a.RemoteParticipants(); len(got) != 1 || got[0] == bp || got[0] != b2.GuidPrefix() {
			t.Fatalf("restarted peer: %v", got)
		}
		pub.Publish(str("again"))
		clk.step(time.Second)
		if got := in2.got(); !slices.Equal(got, []string{"again"}) {
			t.Fatalf("restarted peer got %q", got)
		}
	})
}
