package endpoint

import (
	"container/heap"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// The in-memory network of the tests: a deterministic, lossy, duplicating,
// reordering datagram link between endpoints addressed by locator, driven
// by a fake clock.

type packet struct {
	at  int64
	seq int
	to  wire.Locator
	msg []byte
}

type pktHeap []packet

func (h pktHeap) Len() int { return len(h) }
func (h pktHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h pktHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pktHeap) Push(x any)   { *h = append(*h, x.(packet)) }
func (h *pktHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type node interface {
	HandleMessage(now int64, msg []byte)
	Tick(now int64) int64
	NextDeadline() int64
}

type simnet struct {
	t        testing.TB
	rng      *rand.Rand
	now      int64
	drop     float64 // probability a datagram is lost (per destination)
	dup      float64 // probability it is delivered twice
	maxDelay int64   // uniform delivery delay in [minDelay, maxDelay]: reorders
	minDelay int64
	q        pktHeap
	seq      int
	nodes    map[wire.Locator]node
	order    []node
	sent     int
	blocked  map[wire.Locator]bool // destinations that drop everything
}

func newNet(t testing.TB, seed uint64, drop, dup float64, maxDelay int64) *simnet {
	return &simnet{
		t:        t,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now:      1e9,
		drop:     drop,
		dup:      dup,
		maxDelay: maxDelay,
		minDelay: 100e3,
		nodes:    map[wire.Locator]node{},
		blocked:  map[wire.Locator]bool{},
	}
}

func (n *simnet) attach(l wire.Locator, e node) {
	n.nodes[l] = e
	n.order = append(n.order, e)
}

// output returns the Output of an endpoint on this network.
func (n *simnet) output() Output {
	return OutputFunc(func(to []wire.Locator, msg []byte) {
		for _, l := range to {
			n.sent++
			if n.blocked[l] || n.rng.Float64() < n.drop {
				continue
			}
			copies := 1
			if n.rng.Float64() < n.dup {
				copies = 2
			}
			for range copies {
				d := n.minDelay
				if n.maxDelay > n.minDelay {
					d += n.rng.Int64N(n.maxDelay - n.minDelay + 1)
				}
				n.seq++
				heap.Push(&n.q, packet{at: n.now + d, seq: n.seq, to: l, msg: append([]byte(nil), msg...)})
			}
		}
	})
}

// run advances the clock to until, delivering datagrams and running Ticks
// in time order.
func (n *simnet) run(until int64) {
	for steps := 0; ; steps++ {
		if steps > 50_000_000 {
			n.t.Fatal("simulation does not settle")
		}
		next := Never
		if len(n.q) > 0 {
			next = n.q[0].at
		}
		for _, e := range n.order {
			next = min(next, e.NextDeadline())
		}
		if next > until {
			break
		}
		if next > n.now {
			n.now = next
		}
		if len(n.q) > 0 && n.q[0].at <= n.now {
			p := heap.Pop(&n.q).(packet)
			if e := n.nodes[p.to]; e != nil {
				e.HandleMessage(n.now, p.msg)
			}
			continue
		}
		for _, e := range n.order {
			if e.NextDeadline() <= n.now {
				e.Tick(n.now)
			}
		}
	}
	if n.now < until {
		n.now = until
	}
}

var (
	prefixW = wire.GuidPrefix{0x01, 0x99, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	prefixR = wire.GuidPrefix{0x01, 0x99, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	prefixS = wire.GuidPrefix{0x01, 0x99, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
	guidW   = wire.GUID{Prefix: prefixW, Entity: wire.NewEntityID(1, wire.EntityKindWriterNoKey)}
	guidR   = wire.GUID{Prefix: prefixR, Entity: wire.NewEntityID(1, wire.EntityKindReaderNoKey)}
	guidS   = wire.GUID{Prefix: prefixS, Entity: wire.NewEntityID(2, wire.EntityKindReaderNoKey)}
	locW    = wire.LoopbackUDPv4(7411)
	locR    = wire.LoopbackUDPv4(7413)
	locS    = wire.LoopbackUDPv4(7415)
)

// payloadFor makes a recognisable payload of n bytes (n >= 12) for sn.
func payloadFor(sn wire.SequenceNumber, n int) []byte {
	b := make([]byte, n)
	b[1] = 1 // CDR_LE
	binary.LittleEndian.PutUint64(b[4:], uint64(sn))
	x := uint32(sn) * 2654435761
	for i := 12; i < n; i++ {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func checkPayload(t testing.TB, s Sample, n int) {
	t.Helper()
	want := payloadFor(s.SN, n)
	got := s.Payload
	if len(got) < n || string(got[:n]) != string(want) {
		t.Fatalf("sample %d: payload mismatch (len %d, want %d)", s.SN, len(got), n)
	}
	for _, b := range got[n:] {
		if b != 0 {
			t.Fatalf("sample %d: non-zero padding", s.SN)
		}
	}
}

// collector records delivered samples.
type collector struct {
	t    testing.TB
	size int
	sns  []wire.SequenceNumber
	ts   []int64
}

func (c *collector) deliver(s Sample) {
	if c.size > 0 {
		checkPayload(c.t, s, c.size)
	}
	c.sns = append(c.sns, s.SN)
	c.ts = append(c.ts, s.SourceTimestamp)
}

type pair struct {
	net *simnet
	w   *Writer
	r   *Reader
	col *collector
}

func newPair(t testing.TB, n *simnet, wc WriterConfig, rc ReaderConfig, size int) *pair {
	t.Helper()
	wc.GUID = guidW
	rc.GUID = guidR
	w, err := NewWriter(wc, n.output())
	if err != nil {
		t.Fatal(err)
	}
	col := &collector{t: t, size: size}
	r, err := NewReader(rc, n.output(), col.deliver)
	if err != nil {
		t.Fatal(err)
	}
	n.attach(locW, w)
	n.attach(locR, r)
	return &pair{net: n, w: w, r: r, col: col}
}

func (p *pair) match(reliable, tl bool) {
	p.w.MatchReader(p.net.now, guidR, []wire.Locator{locR}, reliable, tl)
	p.r.MatchWriter(p.net.now, guidW, []wire.Locator{locW}, reliable)
}

// writeN writes samples with the given spacing, retrying on ErrWouldBlock
// while the network runs.
func (p *pair) writeN(t testing.TB, count, size int, spacing int64) {
	t.Helper()
	for i := 0; i < count; i++ {
		sn := p.w.LastSN() + 1
		pl := payloadFor(sn, size)
		for tries := 0; ; tries++ {
			_, err := p.w.Write(p.net.now, pl, p.net.now+1e18)
			if err == nil {
				break
			}
			if err != ErrWouldBlock || tries > 100000 {
				t.Fatalf("write %d: %v", sn, err)
			}
			p.net.run(p.net.now + spacing + 1e6)
		}
		p.net.run(p.net.now + spacing)
	}
}

func wantRange(t testing.TB, got []wire.SequenceNumber, from, to wire.SequenceNumber) {
	t.Helper()
	if len(got) != int(to-from+1) {
		t.Fatalf("delivered %d samples, want %d (%d..%d); first %v", len(got), to-from+1, from, to, head(got))
	}
	for i, sn := range got {
		if sn != from+wire.SequenceNumber(i) {
			t.Fatalf("delivery %d is SN %d, want %d", i, sn, from+wire.SequenceNumber(i))
		}
	}
}

func wantIncreasing(t testing.TB, got []wire.SequenceNumber) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("delivery %d: SN %d after %d", i, got[i], got[i-1])
		}
	}
}

func head(s []wire.SequenceNumber) []wire.SequenceNumber {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}

func wireSN(n int) wire.SequenceNumber { return wire.SequenceNumber(n) }
