// Package bufpool keeps byte buffers in power-of-two classes from 256 B to
// 4 MiB, for copies of samples that must outlive the call that lent them
// (a transport's receive path, the executor's queue). A larger copy gets a
// buffer of its own, which Put ignores.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	minShift = 8
	maxShift = 22
)

var pools [maxShift - minShift + 1]sync.Pool

func class(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minShift
}

// Copy returns a buffer holding a copy of b: a pooled one, or a plain one
// when b is too large to pool.
func Copy(b []byte) *[]byte {
	k := class(len(b))
	if k >= len(pools) {
		c := append([]byte(nil), b...)
		return &c
	}
	p, _ := pools[k].Get().(*[]byte)
	if p == nil {
		s := make([]byte, 0, 1<<(k+minShift))
		p = &s
	}
	*p = append((*p)[:0], b...)
	return p
}

// Put returns a buffer of Copy to its pool; nil and buffers that are not
// of a pooled class are ignored.
func Put(p *[]byte) {
	if p == nil {
		return
	}
	c := cap(*p)
	k := class(c)
	if k >= len(pools) || c != 1<<(k+minShift) {
		return
	}
	*p = (*p)[:0]
	pools[k].Put(p)
}
