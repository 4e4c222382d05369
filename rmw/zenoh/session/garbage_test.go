package session

import (
	"context"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// dialRawTCP connects a raw peer (our codec, driven by hand) to a session's
// loopback TCP listener and completes the handshake.
func dialRawTCP(t *testing.T, ep link.Endpoint) *rawPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := link.Dial(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	h, b, err := NewInitiator(lc(wire.Peer))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, link.MaxBatch)
	for !h.Done() {
		if err := l.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
		n, err := l.ReadBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		if b, _, err = h.Handle(buf[:n]); err != nil {
			t.Fatal(err)
		}
	}
	r := &rawPeer{t: t, l: l, p: h.Params(), tx: NewTx(h.Params()), rx: NewRx(h.Params(), 0), done: make(chan struct{})}
	go r.read()
	t.Cleanup(func() { l.Close(); <-r.done })
	return r
}

// waitEvents collects r's events until want has arrived (in order, as the
// last of them) or 10 s pass; it returns everything collected.
func waitEvents(r *rec, want string) []string {
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got = append(got, r.take()...)
		if slices.Contains(got, want) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

// TestGarbageOverTCP: a running session, listening on loopback TCP, gets
// from a peer that completed the handshake garbage batches (unknown message
// ids with random bodies, frames and fragments with stale sequence numbers
// and random bodies, broken varints) and every truncation of a valid
// frame carrying a sample. Each is dropped and counted in the session's
// Stats, nothing is delivered, nothing panics, the face stays up and the
// next valid sample arrives. Then a peer that sends half a batch and hangs
// up before its handshake, and one that hangs up after it: the session
// drops both cleanly and still serves the next peer.
func TestGarbageOverTCP(t *testing.T) {
	r := &rec{}
	s := open(t, wire.Peer, r, func(c *Config) { c.Listen = []string{"tcp/127.0.0.1:0"} })
	defer s.Close()
	s.DeclareSubscriber("a")
	ep := s.Listeners()[0]
	p := dialRawTCP(t, ep)
	if got := waitEvents(r, "up peer"); !slices.Contains(got, "up peer") {
		t.Fatalf("no face up: %q", got)
	}
	// A valid sample first: it sets the reliable channel's sequence
	// number (the initial one is random), which the stale frames reuse.
	if err := p.tx.Push(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{Payload: []byte("first")}}, true); err != nil {
		t.Fatal(err)
	}
	first := p.tx.Take()
	var sn uint32
	if len(first) != 1 || wire.DecodeBatch(first[0].B, func(m wire.TransportMessage) error {
		sn = m.(*wire.Frame).SN
		return nil
	}) != nil {
		t.Fatalf("first batch %v", first)
	}
	if err := p.l.WriteBatch(first[0].B); err != nil {
		t.Fatal(err)
	}
	if got := waitEvents(r, "put a 5"); !slices.Contains(got, "put a 5") {
		t.Fatalf("first sample: %q", got)
	}

	rng := rand.New(rand.NewPCG(17, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	var garbage [][]byte
	// unknown transport message ids (0x08..0x1f) with any flags and body
	for range 100 {
		garbage = append(garbage, append([]byte{byte(0x08+rng.UintN(0x18)) | byte(rng.UintN(8))<<5}, random(int(rng.UintN(200)))...))
	}
	// reliable frames and fragments whose sequence number is the last
	// one's again: dropped before their bodies
	for range 50 {
		mid := byte(wire.MidFrame)
		if rng.UintN(2) == 0 {
			mid = wire.MidFragment
		}
		garbage = append(garbage, append(wire.AppendZint([]byte{mid | 0x20}, uint64(sn)), random(int(rng.UintN(200)))...))
	}
	// broken varints and headers cut short
	garbage = append(garbage, []byte{wire.MidFrame | 0x20}, []byte{wire.MidFrame | 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		[]byte{wire.MidFragment, 0x80}, []byte{0xff}, []byte{0x25, 0x80})
	// every truncation of a valid frame carrying a sample: built by the
	// peer's own sender, so its sequence number is the next one
	if err := p.tx.Push(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{Payload: []byte("never delivered whole")}}, true); err != nil {
		t.Fatal(err)
	}
	valid := p.tx.Take()
	if len(valid) != 1 {
		t.Fatalf("%d batches", len(valid))
	}
	for n := 1; n < len(valid[0].B); n++ {
		garbage = append(garbage, valid[0].B[:n])
	}
	for _, g := range garbage {
		if err := p.l.WriteBatch(g); err != nil {
			t.Fatalf("the session closed the link on garbage: %v", err)
		}
	}
	p.send(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{Payload: []byte("ok")}})
	got := waitEvents(r, "put a 2")
	if !slices.Equal(got, []string{"put a 2"}) {
		t.Fatalf("after %d garbage batches: events %q, want only the next valid sample (malformed %d, out of order %d)", len(garbage), got, s.Stats.Malformed.Load(), s.Stats.OutOfOrder.Load())
	}
	// Each unknown id and broken header is one malformed batch; a
	// truncation is malformed or (cut inside its frame header, or after
	// the first of them took the sequence number) out of order or empty.
	if m, o := s.Stats.Malformed.Load(), s.Stats.OutOfOrder.Load(); m < 100+3 || o < 50 || m+o < uint64(len(garbage))-10 {
		t.Errorf("%d batches of garbage: %d counted malformed, %d out of order", len(garbage), m, o)
	} else {
		t.Logf("%d batches of garbage: %d counted malformed, %d out of order", len(garbage), m, o)
	}

	// Half a batch, then the connection closes: no face, no panic.
	c, err := net.Dial("tcp", strings.TrimPrefix(ep.String(), "tcp/"))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{0x00, 0x01, 0x01, 0x02})
	c.Close()
	// The raw peer hangs up: its face goes down.
	p.l.Close()
	if got := waitEvents(r, "down peer"); !slices.Equal(got, []string{"down peer"}) {
		t.Fatalf("after the peer hung up: %q", got)
	}
	// The session serves the next peer.
	q := dialRawTCP(t, ep)
	q.send(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{Payload: []byte("again")}})
	if got := waitEvents(r, "put a 5"); !slices.Contains(got, "up peer") || !slices.Contains(got, "put a 5") {
		t.Fatalf("next peer: %q", got)
	}
}
