package nros

import (
	"math/bits"
	"sync"
)

// Received samples wait for the executor as bytes (a transport's Sample.Data
// is only valid during deliver), in pooled buffers of power-of-two classes
// from 256 B to 4 MiB; the executor decodes them, so a message type's
// UnmarshalCDR runs on the goroutine that spins, and returns the buffer.
const (
	minQueuedShift = 8
	maxQueuedShift = 22
)

var queuedBufs [maxQueuedShift - minQueuedShift + 1]sync.Pool

func queuedClass(n int) int {
	if n <= 1<<minQueuedShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minQueuedShift
}

// copyQueued returns a pooled copy of b (a plain one when b is too large to
// pool).
func copyQueued(b []byte) *[]byte {
	k := queuedClass(len(b))
	if k >= len(queuedBufs) {
		c := append([]byte(nil), b...)
		return &c
	}
	p, _ := queuedBufs[k].Get().(*[]byte)
	if p == nil {
		s := make([]byte, 0, 1<<(k+minQueuedShift))
		p = &s
	}
	*p = append((*p)[:0], b...)
	return p
}

// releaseQueued returns a buffer of copyQueued to its pool.
func releaseQueued(p *[]byte) {
	if p == nil {
		return
	}
	c := cap(*p)
	k := queuedClass(c)
	if k >= len(queuedBufs) || c != 1<<(k+minQueuedShift) {
		return
	}
	*p = (*p)[:0]
	queuedBufs[k].Put(p)
}
