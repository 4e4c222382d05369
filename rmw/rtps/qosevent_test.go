package rtps

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// TestSubscriptionHearsIncompatibleQoS: a subscription that cannot match a
// publisher on its topic gets EventIncompatibleQoS naming the policy, once,
// whether the publisher is remote (discovered through SEDP) or of the same
// Transport, and whichever of the two was created first.
func TestSubscriptionHearsIncompatibleQoS(t *testing.T) {
	cases := []struct {
		w, r   rmw.QoS
		policy string
	}{
		{bestEffort, reliable, "RELIABILITY"},
		{reliable, rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1}, "DURABILITY"},
	}
	for _, c := range cases {
		for _, remote := range []bool{true, false} {
			for _, subFirst := range []bool{true, false} {
				name := c.policy + map[bool]string{true: "/remote", false: "/local"}[remote] + map[bool]string{true: "/subscription first", false: "/publisher first"}[subFirst]
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
						in := &inbox{t: t}
						var sub rmw.Subscription
						if subFirst {
							sub = mustSub(t, b, "/q", c.r, in)
						}
						pub := mustPub(t, a, "/q", c.w, nil)
						if !subFirst {
							sub = mustSub(t, b, "/q", c.r, in)
						}
						time.Sleep(2 * time.Second)
						synctest.Wait()
						pub.Publish(str("x"))
						time.Sleep(time.Second)
						synctest.Wait()
						n, pol := in.count(rmw.EventIncompatibleQoS)
						if n != 1 || pol[0] != c.policy {
							t.Fatalf("subscription heard %d incompatible-QoS events %q, want 1 %s", n, pol, c.policy)
						}
						if sub.MatchedPublishers() != 0 || len(in.got()) != 0 {
							t.Fatal("incompatible pair matched")
						}
					})
				})
			}
		}
	}
}

// TestKeepLastHugeDepth: keep-last with a depth far beyond what is stored
// keeps publishing (the writer drops its oldest sample) and a late joiner
// of the same Transport gets the newest samples.
func TestKeepLastHugeDepth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: math.MaxInt}
		pub := mustPub(t, a, "/deep", q, nil)
		const n = localHistoryLimit + 5
		for i := 1; i <= n; i++ {
			if err := pub.Publish(str("m" + strconv.Itoa(i))); err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
		in := &inbox{t: t}
		mustSub(t, a, "/deep", q, in)
		synctest.Wait()
		if got, want := in.got(), seq("m", n)[n-localHistoryLimit:]; !slices.Equal(got, want) {
			t.Fatalf("late joiner got %d samples %q .. , want %q .. %q", len(got), got[:min(len(got), 1)], want[0], want[len(want)-1])
		}
	})
}
