package endpoint

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Tests of what a forged or unresponsive peer can make an endpoint do (issue
// #19): a HEARTBEAT or GAP claiming SNs the writer never sent must not cut
// the writer off; endpoints that never answer are contacted less and less
// and then not at all.

// spoofRig is a reliable reader matched with guidW, fed submessages by
// hand, recording what it delivers and what it sends.
type spoofRig struct {
	r    *Reader
	got  []wire.SequenceNumber
	sent int
	src  wire.ReceiverState
}

func newSpoofRig(t *testing.T, cfg ReaderConfig) *spoofRig {
	t.Helper()
	g := &spoofRig{src: wire.ReceiverState{SourcePrefix: prefixW}}
	cfg.GUID = guidR
	var err error
	g.r, err = NewReader(cfg, OutputFunc(func([]wire.Locator, []byte) { g.sent++ }), func(s Sample) { g.got = append(g.got, s.SN) })
	if err != nil {
		t.Fatal(err)
	}
	g.r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	return g
}

func (g *spoofRig) data(now int64, sn wire.SequenceNumber) {
	sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
	g.r.HandleSubmessage(now, &g.src, &sm)
	g.r.Tick(now)
}

func (g *spoofRig) hb(now int64, first, last wire.SequenceNumber, count wire.Count) {
	sm := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: first, LastSN: last, Count: count}}
	g.r.HandleSubmessage(now, &g.src, &sm)
	g.r.Tick(now)
}

func (g *spoofRig) gap(now int64, start, end wire.SequenceNumber) {
	sm := wire.Submessage{ID: wire.SubmsgGap, Gap: wire.Gap{WriterID: guidW.Entity, GapStart: start, GapList: wire.SequenceNumberSet{Base: end}}}
	g.r.HandleSubmessage(now, &g.src, &sm)
	g.r.Tick(now)
}

func wantSNs(t *testing.T, got []wire.SequenceNumber, from, to wire.SequenceNumber) {
	t.Helper()
	if len(got) != int(to-from+1) {
		t.Fatalf("delivered %v, want %d..%d", got, from, to)
	}
	for i, sn := range got {
		if sn != from+wire.SequenceNumber(i) {
			t.Fatalf("delivered %v, want %d..%d", got, from, to)
		}
	}
}

// A forged HEARTBEAT with the writer's GUID claiming that its history starts
// 10^6 ahead: the real writer's next DATA shows the claim was false, and the
// reader goes on from it without losing a sample.
func TestForgedHeartbeatDoesNotSilenceWriter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count wire.Count // the forger's count
	}{
		{"next count", 3},
		{"huge count", 1<<31 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newSpoofRig(t, ReaderConfig{})
			now := int64(0)
			g.hb(now, 1, 0, 1)
			for sn := wire.SequenceNumber(1); sn <= 10; sn++ {
				now += 10e6
				g.data(now, sn)
			}
			g.hb(now, 1, 10, 2)
			now += 1e6
			g.hb(now, 1e6, 1e6+10, tc.count) // the forgery
			for sn := wire.SequenceNumber(11); sn <= 100; sn++ {
				now += 10e6
				g.data(now, sn)
				if sn%10 == 0 { // the real writer's heartbeats go on
					g.hb(now, 1, sn, 3+wire.Count(sn))
				}
			}
			wantSNs(t, g.got, 1, 100)
			s := g.r.Stats()
			if s.JumpsReverted != 1 || s.Lost != 0 {
				t.Fatalf("stats %+v: want one reverted jump and nothing lost", s)
			}
		})
	}
}

// The same with a forged GAP, and with the forgery arriving before the
// first real HEARTBEAT (the proxy not yet synchronised).
func TestForgedGapAndEarlyHeartbeat(t *testing.T) {
	t.Run("gap", func(t *testing.T) {
		g := newSpoofRig(t, ReaderConfig{})
		g.hb(0, 1, 0, 1)
		g.data(1e6, 1)
		g.gap(2e6, 2, 1e6)
		for sn := wire.SequenceNumber(2); sn <= 50; sn++ {
			g.data(int64(sn)*10e6, sn)
		}
		wantSNs(t, g.got, 1, 50)
	})
	t.Run("before sync", func(t *testing.T) {
		g := newSpoofRig(t, ReaderConfig{})
		g.hb(0, 1e6, 1e6, 1<<30) // forged: the first HEARTBEAT the proxy sees
		g.hb(1e6, 1, 0, 1)       // the real one, count lower
		for sn := wire.SequenceNumber(1); sn <= 50; sn++ {
			g.data(2e6+int64(sn)*10e6, sn)
		}
		wantSNs(t, g.got, 1, 50)
	})
}

// A genuine advance stays: a KEEP_LAST writer that dropped SNs the reader
// missed says so with HEARTBEAT firstSN; what follows is delivered from
// there, and a late straggler below it is not delivered twice or out of
// order.
func TestGenuineHeartbeatAdvanceKept(t *testing.T) {
	g := newSpoofRig(t, ReaderConfig{})
	g.hb(0, 1, 0, 1)
	g.data(1e6, 1)
	g.data(2e6, 2)
	// 3..20 lost on the way and overwritten at the writer.
	g.hb(3e6, 21, 22, 2)
	g.data(4e6, 21)
	g.data(5e6, 22)
	g.data(6e6, 7) // a straggler from before the advance
	g.data(7e6, 23)
	want := []wire.SequenceNumber{1, 2, 21, 22, 23}
	if len(g.got) != len(want) {
		t.Fatalf("delivered %v, want %v", g.got, want)
	}
	for i := range want {
		if g.got[i] != want[i] {
			t.Fatalf("delivered %v, want %v", g.got, want)
		}
	}
	if s := g.r.Stats(); s.Lost != 18 || s.JumpsReverted != 0 {
		t.Fatalf("stats %+v: want 18 lost, no revert", s)
	}
}

// A forged HEARTBEAT with a huge count does not make the writer's real
// HEARTBEATs stale for good: after HeartbeatCountTimeout a lower count is
// accepted again (as Cyclone DDS does).
func TestStaleCountTimesOut(t *testing.T) {
	g := newSpoofRig(t, ReaderConfig{})
	g.hb(0, 1, 0, 1<<31-1)
	g.hb(1e6, 1, 0, 5)
	if s := g.r.Stats(); s.StaleCount != 1 || s.Heartbeats != 1 {
		t.Fatalf("within the timeout: %+v", s)
	}
	g.hb(HeartbeatCountTimeout+1e6, 1, 0, 6)
	if s := g.r.Stats(); s.Heartbeats != 2 {
		t.Fatalf("after the timeout: %+v", s)
	}
}

// A matched writer that never answers gets preemptive ACKNACKs less and
// less often (1 s, 2 s, 4 s, ... up to MaxPreemptiveAckPeriod), then none
// once MaxPreemptiveAcks went unanswered; DATA from it wakes the reader up.
func TestPreemptiveAckBackoff(t *testing.T) {
	var at []int64
	now := int64(0)
	r, err := NewReader(ReaderConfig{GUID: guidR}, OutputFunc(func([]wire.Locator, []byte) { at = append(at, now) }), func(Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	r.MatchWriter(now, guidW, []wire.Locator{locW}, true)
	for now < 3600e9 {
		next := r.Tick(now)
		if next == Never {
			break
		}
		now = max(next, now+1)
	}
	if len(at) != DefaultMaxPreemptiveAcks {
		t.Fatalf("%d preemptive ACKNACKs at %v, want %d", len(at), at, DefaultMaxPreemptiveAcks)
	}
	for i := 1; i < len(at); i++ {
		gap, want := at[i]-at[i-1], min(DefaultPreemptiveAckPeriod<<(i-1), DefaultMaxPreemptiveAckPeriod)
		if gap != want {
			t.Fatalf("ACKNACK %d came %d ns after the previous, want %d (all at %v)", i, gap, want, at)
		}
	}
	if s := r.Stats(); s.WritersSilenced != 1 {
		t.Fatalf("stats %+v: want 1 silenced writer", s)
	}
	// The writer shows up: DATA prompts an ACKNACK at once.
	n := len(at)
	now += 1e9
	src := wire.ReceiverState{SourcePrefix: prefixW}
	sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: 1, SerializedPayload: []byte{0, 1, 0, 0}}}
	r.HandleSubmessage(now, &src, &sm)
	r.Tick(now)
	if len(at) != n+1 {
		t.Fatalf("no ACKNACK after the writer's DATA (%d sent)", len(at)-n)
	}
}

// A reliable proxy that never needs its out-of-order window does not
// allocate it: memory per matched writer stays small (the SEDP readers
// have one proxy per remote participant).
func TestReorderWindowAllocatedLazily(t *testing.T) {
	g := newSpoofRig(t, ReaderConfig{})
	g.hb(0, 1, 0, 1)
	for sn := wire.SequenceNumber(1); sn <= 20; sn++ {
		g.data(int64(sn)*1e6, sn)
	}
	if p, _ := g.r.find(guidW); p == nil || p.slots != nil {
		t.Fatal("in-order traffic allocated the reorder window")
	}
	g.data(30e6, 22) // out of order: buffered
	g.data(31e6, 21)
	wantSNs(t, g.got, 1, 22)
}

// hbTimes runs w's timers alone (nobody answers) until it has nothing left
// to do or until stop, and returns when it sent directed HEARTBEATs.
func hbTimes(t *testing.T, now *int64, stop int64, w *Writer, sent *[]int64) {
	t.Helper()
	for *now < stop {
		next := w.Tick(*now)
		if next == Never {
			return
		}
		*now = max(next, *now+1)
	}
}

// heartbeatsTo is a writer Output that calls rec for every HEARTBEAT
// addressed to reader.
func heartbeatsTo(reader wire.EntityID, rec func(*wire.Heartbeat)) Output {
	return OutputFunc(func(_ []wire.Locator, msg []byte) {
		var rd wire.Reader
		if rd.Reset(msg) != nil {
			return
		}
		for {
			sm, err := rd.Next()
			if err != nil || sm == nil {
				return
			}
			if sm.ID == wire.SubmsgHeartbeat && sm.Heartbeat.ReaderID == reader {
				rec(&sm.Heartbeat)
			}
		}
	})
}

// A reliable reader that never answers gets HEARTBEATs less and less often
// (three at HeartbeatPeriod, then doubling up to MaxHeartbeatPeriod, as
// Cyclone DDS backs off), none after MaxUnansweredHeartbeats, and the
// writer takes up again at its first ACKNACK. A reader that did answer once
// and then went quiet is backed off but not given up (its lease decides).
func TestHeartbeatBackoff(t *testing.T) {
	var at []int64
	now := int64(0)
	w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, TransientLocal: true, Depth: 4},
		heartbeatsTo(guidR.Entity, func(*wire.Heartbeat) { at = append(at, now) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(now, []byte{0, 1, 0, 0}, 0); err != nil {
		t.Fatal(err)
	}
	w.MatchReader(now, guidR, []wire.Locator{locR}, true, true)
	hbTimes(t, &now, 3600e9, w, &at)
	if len(at) != DefaultMaxUnansweredHeartbeats {
		t.Fatalf("%d HEARTBEATs at %v, want %d", len(at), at, DefaultMaxUnansweredHeartbeats)
	}
	for i := 1; i < len(at); i++ {
		want := min(DefaultHeartbeatPeriod<<max(i-3, 0), DefaultMaxHeartbeatPeriod)
		if gap := at[i] - at[i-1]; gap != want {
			t.Fatalf("HEARTBEAT %d came %d ns after the previous, want %d (all at %v)", i, gap, want, at)
		}
	}
	if s := w.Stats(); s.ReadersSilenced != 1 || w.NextDeadline() != Never {
		t.Fatalf("stats %+v, next deadline %d: want the reader given up", s, w.NextDeadline())
	}
	// Writing more does not wake the HEARTBEATs up: only the reader does.
	if _, err := w.Write(now, []byte{0, 1, 0, 0}, 0); err != nil {
		t.Fatal(err)
	}
	if w.NextDeadline() != Never {
		t.Fatal("a write re-armed HEARTBEATs to a reader that never answered")
	}
	// The reader answers (a preemptive ACKNACK): HEARTBEATs at the base
	// period again.
	src := wire.ReceiverState{SourcePrefix: prefixR}
	an := wire.Submessage{ID: wire.SubmsgAckNack, AckNack: wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity,
		ReaderSNState: wire.SequenceNumberSet{Base: 1}, Count: 1}}
	w.HandleSubmessage(now, &src, &an)
	at = at[:0]
	start := now
	hbTimes(t, &now, now+1e9, w, &at)
	if len(at) < 5 || at[0]-start > DefaultHeartbeatPeriod {
		t.Fatalf("after the reader's ACKNACK: HEARTBEATs at %v (from %d)", at, start)
	}
	// It acknowledges nothing more and stays quiet: backed off to
	// MaxHeartbeatPeriod, never given up.
	at = at[:0]
	hbTimes(t, &now, now+120e9, w, &at)
	if n := len(at); n < 10 || at[n-1]-at[n-2] != DefaultMaxHeartbeatPeriod || w.NextDeadline() == Never {
		t.Fatalf("a reader that answered once: HEARTBEATs at %v, next %d", at, w.NextDeadline())
	}
}

// forger is a node of the simulated network that sends the reader, now
// and then, a forged HEARTBEAT or GAP with the writer's GUID claiming SNs
// far ahead are gone (and a random count).
type forger struct {
	n    *simnet
	rng  *rand.Rand
	next int64
	sent int
}

func (f *forger) HandleMessage(int64, []byte) {}
func (f *forger) NextDeadline() int64         { return f.next }
func (f *forger) Tick(now int64) int64 {
	if now < f.next {
		return f.next
	}
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: prefixW})
	first := wire.SequenceNumber(1 + f.rng.Int64N(1e6))
	if f.rng.IntN(2) == 0 {
		b.Heartbeat(&wire.Heartbeat{WriterID: guidW.Entity, FirstSN: first, LastSN: first + wire.SequenceNumber(f.rng.IntN(100)),
			Count: wire.Count(f.rng.Int32())})
	} else {
		b.Gap(&wire.Gap{WriterID: guidW.Entity, GapStart: 1, GapList: wire.SequenceNumberSet{Base: first}})
	}
	f.n.output().Send([]wire.Locator{locR}, b.Bytes())
	f.sent++
	f.next = now + 1e6 + f.rng.Int64N(200e6)
	return f.next
}

// Random lossy links with forged HEARTBEATs and GAPs thrown in: a reliable
// writer whose history cannot overwrite anything still gets every sample
// to the reader exactly once and in order; one whose KEEP_LAST history
// overwrites (so true advances happen among the false ones) gets an
// increasing subsequence through, up to its last sample.
func TestPropertyForgedClaims(t *testing.T) {
	seeds := 30
	if s := os.Getenv("NROS_PROPERTY_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		seeds = 6
	}
	var forged, reverted uint64
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 91))
		drop := rng.Float64() * 0.3
		n := newNet(t, seed, drop, rng.Float64()*0.2, int64(rng.IntN(10)+1)*1e6)
		const count = 300
		wc := WriterConfig{Reliable: true, KeepAll: rng.IntN(2) == 0, MaxSamples: 16 + rng.IntN(64), Depth: count + 1}
		shallow := !wc.KeepAll && rng.IntN(3) == 0 // KEEP_LAST that overwrites: true advances happen too
		if shallow {
			wc.Depth = 1 + rng.IntN(8)
		}
		rc := ReaderConfig{Window: 16 + rng.IntN(300)}
		p := newPair(t, n, wc, rc, 64)
		f := &forger{n: n, rng: rand.New(rand.NewPCG(seed, 3)), next: n.now + 10e6}
		n.attach(wire.LoopbackUDPv4(1), f)
		p.match(true, false)
		p.writeN(t, count, 64, int64(rng.IntN(5)+1)*1e6)
		n.run(n.now + 120e9)
		forged += uint64(f.sent)
		reverted += p.r.Stats().JumpsReverted
		if shallow {
			// An increasing subsequence that reaches the last sample.
			wantIncreasing(t, p.col.sns)
			if k := len(p.col.sns); k == 0 || p.col.sns[k-1] != count {
				t.Fatalf("seed %d (depth %d): the last sample never arrived; reader %+v", seed, wc.Depth, p.r.Stats())
			}
			continue
		}
		if len(p.col.sns) != count {
			t.Logf("seed %d: drop %.2f wc %+v rc %+v", seed, drop, wc, rc)
			t.Logf("reader %+v", p.r.Stats())
		}
		wantRange(t, p.col.sns, 1, wireSN(count))
	}
	t.Logf("%d forgeries, %d advances reverted", forged, reverted)
	if reverted == 0 {
		t.Fatal("no forgery was taken in: the test proves nothing")
	}
}

// A Cyclone DDS reader starts a volatile session at the first HEARTBEAT it
// sees and, until then, sends a preemptive ACKNACK every second, each with
// count 0. The writer answers every one of them (not only the first: they
// are not stale repeats) and, while the reader has said nothing but count
// 0, keeps offering non-final HEARTBEATs at HeartbeatPeriod, so that a lost
// HEARTBEAT does not leave the reader unsynchronised until the first sample
// (whose loss it would then never ask for). A count-1 ACKNACK, sent after
// a HEARTBEAT, ends it: with nothing written, no more HEARTBEATs.
func TestPreemptiveAckNackSync(t *testing.T) {
	var at []int64
	var finals []bool
	now := int64(0)
	w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, Depth: 4}, heartbeatsTo(guidR.Entity, func(hb *wire.Heartbeat) {
		at = append(at, now)
		finals = append(finals, hb.Final)
	}))
	if err != nil {
		t.Fatal(err)
	}
	w.MatchReader(now, guidR, []wire.Locator{locR}, true, false)
	if len(at) != 1 {
		t.Fatalf("%d HEARTBEATs on match, want 1", len(at))
	}
	src := wire.ReceiverState{SourcePrefix: prefixR}
	ack := func(count wire.Count) {
		an := wire.Submessage{ID: wire.SubmsgAckNack, AckNack: wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity,
			ReaderSNState: wire.SequenceNumberSet{Base: 1}, Count: count}}
		w.HandleSubmessage(now, &src, &an)
	}
	for i := range 3 {
		at, finals = at[:0], finals[:0]
		start := now
		ack(0) // lost HEARTBEATs: the reader asks again, count 0 each time
		hbTimes(t, &now, start+1e9, w, &at)
		if len(at) < 5 || at[0]-start > DefaultHeartbeatPeriod/10 {
			t.Fatalf("preemptive ACKNACK %d at %d: HEARTBEATs at %v", i, start, at)
		}
		for j, f := range finals {
			if f {
				t.Fatalf("preemptive ACKNACK %d: HEARTBEAT %d is final", i, j)
			}
		}
		now = start + 1e9
	}
	if s := w.Stats(); s.StaleCount != 0 {
		t.Fatalf("count-0 ACKNACKs counted stale: %+v", s)
	}
	ack(1)
	at = at[:0]
	hbTimes(t, &now, now+10e9, w, &at)
	if len(at) > 1 || w.NextDeadline() != Never {
		t.Fatalf("after the reader's count-1 ACKNACK: HEARTBEATs at %v, next %d", at, w.NextDeadline())
	}
}
