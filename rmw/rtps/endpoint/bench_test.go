package endpoint

import (
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// queue is an allocation-free datagram queue between two endpoints (a
// synchronous loopback would re-enter the endpoints, which the contract
// forbids).
type queue struct {
	bufs [][]byte
	n    int
}

func (q *queue) Send(to []wire.Locator, msg []byte) {
	if q.n == len(q.bufs) {
		q.bufs = append(q.bufs, nil)
	}
	q.bufs[q.n] = append(q.bufs[q.n][:0], msg...)
	q.n++
}

func (q *queue) drain(now int64, e interface{ HandleMessage(int64, []byte) }) {
	for i := 0; i < q.n; i++ {
		e.HandleMessage(now, q.bufs[i])
	}
	q.n = 0
}

func benchLink(b *testing.B, reliable bool, size int, wc WriterConfig) {
	var toR, toW queue
	wc.GUID, wc.Reliable, wc.Depth = guidW, reliable, 16
	w, err := NewWriter(wc, &toR)
	if err != nil {
		b.Fatal(err)
	}
	delivered := 0
	r, _ := NewReader(ReaderConfig{GUID: guidR, AckDelay: -1}, &toW, func(s Sample) {
		if len(s.Payload) < size {
			b.Fatal("short payload")
		}
		delivered++
	})
	now := int64(1e9)
	w.MatchReader(now, guidR, []wire.Locator{locR}, reliable, false)
	r.MatchWriter(now, guidW, []wire.Locator{locW}, reliable)
	payload := payloadFor(1, size)
	step := func() {
		now += 1e5
		if _, err := w.Write(now, payload, now); err != nil {
			b.Fatal(err)
		}
		for toR.n > 0 || toW.n > 0 {
			toR.drain(now, r)
			toW.drain(now, w)
		}
		if w.NextDeadline() <= now {
			w.Tick(now)
		}
		if r.NextDeadline() <= now {
			r.Tick(now)
		}
	}
	for range 100 { // warm up buffers
		step()
	}
	delivered = 0
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.StopTimer()
	if delivered != b.N {
		b.Fatalf("delivered %d of %d", delivered, b.N)
	}
}

func BenchmarkBestEffort64B(b *testing.B)   { benchLink(b, false, 64, WriterConfig{}) }
func BenchmarkReliable64B(b *testing.B)     { benchLink(b, true, 64, WriterConfig{}) }
func BenchmarkBestEffort64KiB(b *testing.B) { benchLink(b, false, 64<<10, WriterConfig{}) }
func BenchmarkReliable64KiB(b *testing.B)   { benchLink(b, true, 64<<10, WriterConfig{}) }
func BenchmarkReliable64KiBLoopbackFragments(b *testing.B) {
	benchLink(b, true, 64<<10, WriterConfig{FragmentSize: 60000, MaxMessageSize: 65000})
}
