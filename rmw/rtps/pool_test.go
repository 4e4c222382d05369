package rtps

import (
	"bytes"
	"testing"

	"github.com/nros-go/nros/rmw"
)

func TestSampleBuf(t *testing.T) {
	for _, tc := range []struct {
		n      int
		class  int
		pooled bool
	}{
		{0, 0, true},
		{1, 0, true},
		{256, 0, true},
		{257, 1, true},
		{512, 1, true},
		{513, 2, true},
		{65552, 9, true}, // a 64 KiB pingpong sample
		{4 << 20, 14, true},
		{4<<20 + 1, 15, false},
	} {
		if got := bufClass(tc.n); got != tc.class {
			t.Errorf("bufClass(%d) = %d, want %d", tc.n, got, tc.class)
		}
		src := make([]byte, tc.n)
		for i := range src {
			src[i] = byte(i*7 + 1)
		}
		p := sampleBuf(src)
		if !bytes.Equal(*p, src) {
			t.Fatalf("size %d: copy differs", tc.n)
		}
		if tc.n > 0 && &(*p)[0] == &src[0] {
			t.Fatalf("size %d: not a copy", tc.n)
		}
		if pooled := cap(*p) == 1<<(tc.class+minBufShift); pooled != tc.pooled {
			t.Errorf("size %d: cap %d, pooled %v, want %v", tc.n, cap(*p), pooled, tc.pooled)
		}
		putSampleBuf(p) // must not panic, pooled or not
	}
	// A buffer of a foreign capacity is not taken into a pool, so a
	// later sampleBuf never hands out a buffer smaller than its class.
	odd := make([]byte, 0, 300)
	putSampleBuf(&odd)
	for range 10 {
		p := sampleBuf(make([]byte, 400))
		if cap(*p) != 512 {
			t.Fatalf("class 1 buffer has cap %d", cap(*p))
		}
		putSampleBuf(p)
	}
}

// TestDispatchReusesQueue checks that handing out samples keeps the queue
// storage (no allocation per batch) and drops a burst's large storage.
func TestDispatchReusesQueue(t *testing.T) {
	tr := &Transport{}
	got := 0
	s := &Subscription{t: tr, deliver: func(smp rmw.Sample) { got += len(smp.Data) }}
	queue := func(n int) {
		tr.mu.Lock()
		for range n {
			buf := sampleBuf([]byte{1, 2, 3})
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
