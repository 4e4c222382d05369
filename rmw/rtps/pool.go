package rtps

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/rmw"
)

// callback is one entry of the Transport's hand-out queue: an event
// (onEvent) or a sample for a subscription. A remote sample's Data lives in
// a pooled buffer (buf) that goes back to the pool once deliver returns:
// rmw.Sample.Data belongs to the deliver function only for the call, so
// the receive path copies each sample once and allocates nothing. gate is
// the closed flag of the endpoint whose callback this is: once it is set
// the entry is dropped instead of handed out.
type callback struct {
	gate    *atomic.Bool
	onEvent func(rmw.Event)
	ev      rmw.Event
	sub     *Subscription
	smp     rmw.Sample
	buf     *[]byte
	id      rmw.RequestID // of a service sample (service.go)
}

// Sample buffers come in power-of-two classes from 256 B to 4 MiB; bigger
// samples get a buffer of their own.
const (
	minBufShift = 8
	maxBufShift = 22
)

var sampleBufs [maxBufShift - minBufShift + 1]sync.Pool

func bufClass(n int) int {
	if n <= 1<<minBufShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minBufShift
}

// sampleBuf returns a pooled buffer holding a copy of b, or nil (and a
// plain copy in *buf) when b is too large to pool.
func sampleBuf(b []byte) *[]byte {
	k := bufClass(len(b))
	if k >= len(sampleBufs) {
		c := append([]byte(nil), b...)
		return &c
	}
	p, _ := sampleBufs[k].Get().(*[]byte)
	if p == nil {
		s := make([]byte, 0, 1<<(k+minBufShift))
		p = &s
	}
	*p = append((*p)[:0], b...)
	return p
}

func putSampleBuf(p *[]byte) {
	c := cap(*p)
	k := bufClass(c)
	if k >= len(sampleBufs) || c != 1<<(k+minBufShift) {
		return // not one of ours
	}
	*p = (*p)[:0]
	sampleBufs[k].Put(p)
}
