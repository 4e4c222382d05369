package bufpool

import (
	"bytes"
	"testing"
)

func TestCopyAndPut(t *testing.T) {
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
		if got := class(tc.n); got != tc.class {
			t.Errorf("class(%d) = %d, want %d", tc.n, got, tc.class)
		}
		src := make([]byte, tc.n)
		for i := range src {
			src[i] = byte(i*7 + 1)
		}
		p := Copy(src)
		if !bytes.Equal(*p, src) {
			t.Fatalf("size %d: copy differs", tc.n)
		}
		if tc.n > 0 && &(*p)[0] == &src[0] {
			t.Fatalf("size %d: not a copy", tc.n)
		}
		if pooled := cap(*p) == 1<<(tc.class+minShift); pooled != tc.pooled {
			t.Errorf("size %d: cap %d, pooled %v, want %v", tc.n, cap(*p), pooled, tc.pooled)
		}
		Put(p) // must not panic, pooled or not
		Put(nil)
	}
	// A buffer of a foreign capacity is not taken into a pool, so a
	// later Copy never hands out a buffer smaller than its class.
	odd := make([]byte, 0, 300)
	Put(&odd)
	for range 10 {
		p := Copy(make([]byte, 400))
		if cap(*p) != 512 {
			t.Fatalf("class 1 buffer has cap %d", cap(*p))
		}
		Put(p)
	}
}
