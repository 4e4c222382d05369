package rtps

import (
	"testing"

	"github.com/nros-go/nros/internal/bufpool"
	"github.com/nros-go/nros/rmw"
)

// TestDispatchReusesQueue checks that handing out samples keeps the queue
// storage (no allocation per batch) and drops a burst's large storage.
func TestDispatchReusesQueue(t *testing.T) {
	tr := &Transport{}
	got := 0
	s := &Subscription{t: tr, deliver: func(smp rmw.Sample) { got += len(smp.Data) }}
	queue := func(n int) {
		tr.mu.Lock()
		for range n {
			buf := bufpool.Copy([]byte{1, 2, 3})
			tr.callbacks = append(tr.callbacks, callback{gate: &s.closed, sub: s, buf: buf, smp: rmw.Sample{Data: *buf}})
		}
		tr.mu.Unlock()
		tr.dispatch()
	}
	queue(8)
	if got != 24 || len(tr.callbacks) != 0 || cap(tr.spare) < 8 {
		t.Fatalf("delivered %d bytes, queue %d, spare cap %d", got, len(tr.callbacks), cap(tr.spare))
	}
	queue(maxSpareCallbacks + 1)
	if cap(tr.spare) > maxSpareCallbacks {
		t.Fatalf("spare cap %d kept after a burst", cap(tr.spare))
	}
}
