package endpoint

import (
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

func TestBestEffortSubsequence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint64
		drop  float64
		dup   float64
		delay int64
	}{
		{"clean", 11, 0, 0, 100e3},
		{"reorder", 14, 0, 0, 5e6},
		{"drop30-dup20", 12, 0.3, 0.2, 5e6},
		{"drop50", 13, 0.5, 0.1, 5e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNet(t, tc.seed, tc.drop, tc.dup, tc.delay)
			p := newPair(t, n, WriterConfig{Reliable: false, Depth: 1}, ReaderConfig{}, 64)
			p.match(false, false)
			const count = 2000
			p.writeN(t, count, 64, 1e6)
			n.run(n.now + 1e9)
			wantIncreasing(t, p.col.sns)
			got := float64(len(p.col.sns)) / count
			if tc.name == "clean" && len(p.col.sns) != count {
				t.Errorf("clean link delivered only %d of %d", len(p.col.sns), count)
			}
			if got < (1-tc.drop)*0.5 || len(p.col.sns) > count {
				t.Errorf("delivered fraction %.2f with drop %.2f", got, tc.drop)
			}
			ws := p.w.Stats()
			if ws.Heartbeats != 0 || p.r.Stats().AckNacksSent != 0 {
				t.Errorf("best effort sent HEARTBEAT %d / ACKNACK %d", ws.Heartbeats, p.r.Stats().AckNacksSent)
			}
			if ws.Resends != 0 {
				t.Errorf("best effort resent %d", ws.Resends)
			}
		})
	}
}

func TestFragmentedReliableUnderLoss(t *testing.T) {
	const size = 1 << 20
	for _, tc := range []struct {
		name string
		seed uint64
		drop float64
		frag int
		msg  int
	}{
		{"cyclone-sizes-drop20", 21, 0.2, 1344, 14720},
		{"cyclone-sizes-drop35", 22, 0.35, 1344, 14720},
		{"loopback-sizes-drop20", 23, 0.2, 60000, 65000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNet(t, tc.seed, tc.drop, 0.05, 2e6)
			wc := WriterConfig{Reliable: true, Depth: 10, FragmentSize: tc.frag, MaxMessageSize: tc.msg}
			p := newPair(t, n, wc, ReaderConfig{}, size)
			p.match(true, false)
			const count = 5
			p.writeN(t, count, size, 50e6)
			n.run(n.now + 60e9)
			wantRange(t, p.col.sns, 1, count)
			ws, rs := p.w.Stats(), p.r.Stats()
			t.Logf("writer %+v", ws)
			t.Logf("reader %+v", rs)
			if ws.FragResends == 0 {
				t.Error("no fragment resends under loss")
			}
			if rs.NackFragsSent == 0 {
				t.Error("reader sent no NACK_FRAG")
			}
			if rs.ReassemblyBytes > DefaultMaxReassemblyBytes {
				t.Errorf("reassembly memory %d", rs.ReassemblyBytes)
			}
		})
	}
}

func TestFragmentedBestEffort(t *testing.T) {
	const size = 64 << 10
	n := newNet(t, 31, 0, 0.2, 3e6)
	p := newPair(t, n, WriterConfig{Depth: 1}, ReaderConfig{}, size)
	p.match(false, false)
	const count = 50
	p.writeN(t, count, size, 1e6)
	n.run(n.now + 1e9)
	wantIncreasing(t, p.col.sns)
	if len(p.col.sns) < count/4 {
		t.Errorf("delivered %d of %d", len(p.col.sns), count)
	}
	// with loss nothing complete must be delivered out of order or broken
	n2 := newNet(t, 32, 0.01, 0.1, 3e6)
	p2 := newPair(t, n2, WriterConfig{Depth: 1}, ReaderConfig{MaxFragmentedSamples: 2}, size)
	p2.match(false, false)
	p2.writeN(t, count, size, 1e6)
	n2.run(n2.now + 1e9)
	wantIncreasing(t, p2.col.sns)
	if p2.r.Stats().Superseded == 0 {
		t.Error("no incomplete sample was superseded")
	}
}

func TestKeepLastDepthTransientLocalLateJoiner(t *testing.T) {
	for _, reliable := range []bool{true, false} {
		t.Logf("reliable %v", reliable)
		n := newNet(t, 41, 0.3, 0.1, 3e6)
		if !reliable {
			n.drop, n.maxDelay = 0, 0
		}
		wc := WriterConfig{Reliable: true, TransientLocal: true, Depth: 5}
		p := newPair(t, n, wc, ReaderConfig{}, 100)
		p.writeN(t, 20, 100, 1e6) // no reader yet
		if s := p.w.Stats(); s.HistorySize != 5 || s.HistoryBytes != 500 {
			t.Fatalf("history %d samples %d bytes, want 5/500", s.HistorySize, s.HistoryBytes)
		}
		p.match(reliable, true)
		n.run(n.now + 10e9)
		wantRange(t, p.col.sns, 16, 20)
		// then live samples continue in order (spaced so that repairs
		// finish before depth 5 overwrites them)
		p.writeN(t, 10, 100, 50e6)
		n.run(n.now + 10e9)
		wantRange(t, p.col.sns, 16, 30)
	}
}

func TestVolatileLateJoinerGetsOnlyNewSamples(t *testing.T) {
	n := newNet(t, 42, 0.3, 0.1, 3e6)
	wc := WriterConfig{Reliable: true, TransientLocal: true, Depth: 50}
	p := newPair(t, n, wc, ReaderConfig{}, 100)
	p.writeN(t, 20, 100, 1e6)
	p.match(true, false) // volatile reader
	p.writeN(t, 30, 100, 1e6)
	n.run(n.now + 10e9)
	wantRange(t, p.col.sns, 21, 50)
}

// A reader that missed samples the KEEP_LAST writer has overwritten gets a
// GAP for them and resumes with what is still there.
func TestGapForOverwrittenSamples(t *testing.T) {
	n := newNet(t, 51, 0, 0, 1e6)
	wc := WriterConfig{Reliable: true, Depth: 3}
	p := newPair(t, n, wc, ReaderConfig{}, 100)
	p.match(true, false)
	n.run(n.now + 100e6)
	p.writeN(t, 2, 100, 1e6) // 1, 2 delivered
	n.blocked[locR] = true
	p.writeN(t, 8, 100, 1e6) // 3..10 lost; history holds 8..10
	n.blocked[locR] = false
	// the reader asks for 3..10 (it saw the HEARTBEATs' lastSN only if they
	// arrive: send it an explicit ACKNACK as if it had)
	ack := buildMsg(prefixR, func(b *wire.Builder) {
		set := wire.SequenceNumberSet{Base: 3}
		for sn := wire.SequenceNumber(3); sn <= 10; sn++ {
			set.Add(sn)
		}
		b.InfoDst(prefixW)
		b.AckNack(&wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity, ReaderSNState: set, Count: 1000})
	})
	var seen []wire.Gap
	out := p.w.out
	p.w.out = OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgGap {
				seen = append(seen, sm.Gap)
			}
		})
		out.Send(to, msg)
	})
	p.w.HandleMessage(n.now, ack)
	n.run(n.now + 5e9)
	if len(seen) == 0 || seen[0].GapStart != 3 || seen[0].GapList.Base != 8 {
		t.Fatalf("GAPs %+v, want [3, 8)", seen)
	}
	if p.w.Stats().Gaps == 0 || p.w.Stats().Overwritten == 0 {
		t.Errorf("stats %+v", p.w.Stats())
	}
	got := p.col.sns
	if len(got) != 5 || got[0] != 1 || got[1] != 2 || got[2] != 8 || got[4] != 10 {
		t.Fatalf("delivered %v, want [1 2 8 9 10]", got)
	}
	if rs := p.r.Stats(); rs.GapSNs+rs.Lost != 5 {
		t.Errorf("gap %d + lost %d, want 5", rs.GapSNs, rs.Lost)
	}
}

// A reliable reader that never acknowledges must not make the writer's
// memory grow (KEEP_LAST), gets HEARTBEATs only until the writer gives it
// up, and makes a KEEP_ALL writer refuse writes.
func TestReaderThatNeverAcks(t *testing.T) {
	n := newNet(t, 61, 0, 0, 1e6)
	w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, Depth: 10}, n.output())
	if err != nil {
		t.Fatal(err)
	}
	n.attach(locW, w)
	w.MatchReader(n.now, guidR, []wire.Locator{locR}, true, false) // nobody at locR
	for i := range 100000 {
		if _, err := w.Write(n.now, payloadFor(wire.SequenceNumber(i+1), 256), 0); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			n.run(n.now + 50e6)
		}
	}
	n.run(n.now + 60e9)
	s := w.Stats()
	if s.HistorySize != 10 || s.HistoryBytes != 2560 {
		t.Fatalf("history %d / %d bytes", s.HistorySize, s.HistoryBytes)
	}
	if s.Overwritten == 0 {
		t.Error("overwrites of unacknowledged samples not counted")
	}
	// Nobody answers: HEARTBEATs backed off and then stopped (issue #19:
	// a locator from a forged announcement must not get them forever).
	if d := w.NextDeadline(); d != Never || s.ReadersSilenced != 1 {
		t.Errorf("still heartbeating a reader that never answered: next %d now %d, %+v", d, n.now, s)
	}

	ka, _ := NewWriter(WriterConfig{GUID: guidW, Reliable: true, KeepAll: true, MaxSamples: 8}, n.output())
	ka.MatchReader(n.now, guidR, []wire.Locator{locR}, true, false)
	for i := range 8 {
		if _, err := ka.Write(n.now, []byte{0, 1, 0, 0, byte(i)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ka.Write(n.now, []byte{0, 1, 0, 0}, 0); err != ErrWouldBlock {
		t.Fatalf("9th write: %v, want ErrWouldBlock", err)
	}
	if ka.LastSN() != 8 {
		t.Fatalf("LastSN %d after a refused write", ka.LastSN())
	}
	ka.UnmatchReader(guidR)
	if _, err := ka.Write(n.now, []byte{0, 1, 0, 0}, 0); err != nil {
		t.Fatalf("write after the reader left: %v", err)
	}
}

func TestMatchAny(t *testing.T) {
	n := newNet(t, 71, 0, 0, 1e6)
	var got []Sample
	r, _ := NewReader(ReaderConfig{GUID: guidR, MatchAny: true, MaxImplicitWriters: 2}, n.output(), func(s Sample) { got = append(got, s) })
	strict, _ := NewReader(ReaderConfig{GUID: guidR}, n.output(), func(Sample) { t.Error("delivered from unmatched writer") })
	for i, pre := range []wire.GuidPrefix{prefixW, prefixS, prefixR} {
		msg := buildMsg(pre, func(b *wire.Builder) {
			b.InfoTS(wire.TimeFromNanos(1_700_000_000_000_000_000))
			b.Data(&wire.Data{WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: []byte{0, 3, 0, 0, byte(i)}})
		})
		r.HandleMessage(n.now+int64(i), msg)
		strict.HandleMessage(n.now, msg)
	}
	if len(got) != 3 || got[2].Writer.Prefix != prefixR || !got[0].HasSourceTimestamp || got[0].SourceTimestamp/1e9 != 1_700_000_000 {
		t.Fatalf("got %+v", got)
	}
	if s := r.Stats(); s.MatchedWriters != 0 || len(r.proxies) != 2 {
		t.Errorf("implicit writers %d, want bounded at 2", len(r.proxies))
	}
	if s := strict.Stats(); s.UnknownWriter != 3 || s.Delivered != 0 {
		t.Errorf("strict reader %+v", s)
	}
}

func buildMsg(src wire.GuidPrefix, f func(b *wire.Builder)) []byte {
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Prefix: src})
	f(&b)
	return append([]byte(nil), b.Message()...)
}

func forEach(msg []byte, f func(rs *wire.ReceiverState, sm *wire.Submessage)) {
	var rd wire.Reader
	if rd.Reset(msg) != nil {
		return
	}
	for {
		sm, err := rd.Next()
		if err != nil || sm == nil {
			return
		}
		f(&rd.State, sm)
	}
}

// A writer that sends no HEARTBEAT (Fast DDS's first one can take a while)
// still gets its data delivered after InitialSyncTimeout, in order.
func TestInitialSyncWithoutHeartbeat(t *testing.T) {
	var got []wire.SequenceNumber
	var acks int
	r, _ := NewReader(ReaderConfig{GUID: guidR, InitialSyncTimeout: 50e6}, OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgAckNack {
				acks++
				if sm.AckNack.ReaderSNState.Base < 1 {
					t.Errorf("ACKNACK base %d", sm.AckNack.ReaderSNState.Base)
				}
			}
		})
	}), func(s Sample) { got = append(got, s.SN) })
	r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	if acks != 1 {
		t.Fatalf("no preemptive ACKNACK on match (%d)", acks)
	}
	src := wire.ReceiverState{SourcePrefix: prefixW}
	for _, sn := range []wire.SequenceNumber{12, 11, 13, 15} {
		sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
		r.HandleSubmessage(1e6, &src, &sm)
	}
	if len(got) != 0 {
		t.Fatalf("delivered %v before sync", got)
	}
	if d := r.NextDeadline(); d > 51e6 {
		t.Fatalf("next deadline %d", d)
	}
	r.Tick(51e6)
	if len(got) != 3 || got[0] != 11 || got[2] != 13 {
		t.Fatalf("after sync: %v", got)
	}
	// a HEARTBEAT then fills 14 by repair or declares it lost
	hb := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 15, LastSN: 15, Count: 1}}
	r.HandleSubmessage(60e6, &src, &hb)
	if len(got) != 4 || got[3] != 15 || r.Stats().Lost != 1 {
		t.Fatalf("after HEARTBEAT: %v %+v", got, r.Stats())
	}
}

func TestUnmatchFreesMemory(t *testing.T) {
	r, _ := NewReader(ReaderConfig{GUID: guidR}, OutputFunc(func([]wire.Locator, []byte) {}), func(Sample) {})
	r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	src := wire.ReceiverState{SourcePrefix: prefixW}
	hb := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 1, LastSN: 10, Count: 1}}
	r.HandleSubmessage(0, &src, &hb)
	for sn := wire.SequenceNumber(2); sn <= 10; sn++ {
		sm := wire.Submessage{ID: wire.SubmsgDataFrag, DataFrag: wire.DataFrag{WriterID: guidW.Entity, WriterSN: sn,
			FragmentStartingNum: 1, FragmentsInSubmessage: 1, FragmentSize: 1000, SampleSize: 100000, Fragments: make([]byte, 1000)}}
		r.HandleSubmessage(0, &src, &sm)
		d := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn + 100, SerializedPayload: make([]byte, 5000)}}
		r.HandleSubmessage(0, &src, &d)
	}
	s := r.Stats()
	if s.ReassemblyBytes == 0 || s.BufferedSamples != 9 || s.ReassemblyBytes > DefaultMaxFragmentedSamples*100000+9*5000+4096 {
		t.Fatalf("%+v", s)
	}
	r.UnmatchWriter(guidW)
	if s := r.Stats(); s.ReassemblyBytes != 0 || s.BufferedSamples != 0 || s.MatchedWriters != 0 {
		t.Fatalf("after unmatch %+v", s)
	}
}

// HEARTBEAT_FRAG makes a reliable reader ask for the missing fragments of
// a sample in progress.
func TestHeartbeatFragTriggersNackFrag(t *testing.T) {
	var nf []wire.NackFrag
	r, _ := NewReader(ReaderConfig{GUID: guidR, AckDelay: -1}, OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgNackFrag {
				nf = append(nf, sm.NackFrag)
			}
		})
	}), func(Sample) {})
	r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	src := wire.ReceiverState{SourcePrefix: prefixW}
	hb := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 1, LastSN: 0, Count: 1, Final: true}}
	r.HandleSubmessage(0, &src, &hb)
	df := wire.Submessage{ID: wire.SubmsgDataFrag, DataFrag: wire.DataFrag{WriterID: guidW.Entity, WriterSN: 1,
		FragmentStartingNum: 2, FragmentsInSubmessage: 1, FragmentSize: 100, SampleSize: 450, Fragments: make([]byte, 100)}}
	r.HandleSubmessage(0, &src, &df)
	hbf := wire.Submessage{ID: wire.SubmsgHeartbeatFrag, HeartbeatFrag: wire.HeartbeatFrag{WriterID: guidW.Entity, WriterSN: 1, LastFragmentNum: 5, Count: 1}}
	r.HandleSubmessage(1, &src, &hbf)
	if len(nf) == 0 {
		t.Fatal("no NACK_FRAG")
	}
	var m []uint32
	m = nf[len(nf)-1].FragmentNumberState.AppendMembers(m)
	if len(m) != 4 || m[0] != 1 || m[1] != 3 || m[3] != 5 {
		t.Fatalf("NACK_FRAG asks for %v, want [1 3 4 5]", m)
	}
}

// A keyed KEEP_LAST 1 writer (SEDP-style) keeps the latest sample of each
// instance; a late joiner gets those and GAPs for the replaced ones.
func TestKeyedHistoryLateJoiner(t *testing.T) {
	for i, tc := range []struct {
		keys string
		want []int
		gaps bool
	}{
		{"ABACADB", []int{4, 5, 6, 7}, false}, // C, A, D, B
		{"ABACA", []int{2, 4, 5}, true},       // B, C, A; GAP for 3
	} {
		n := newNet(t, 81+uint64(i), 0.3, 0.1, 3e6)
		wc := WriterConfig{Reliable: true, TransientLocal: true, Keyed: true, Depth: 1, MaxSamples: 100}
		p := newPair(t, n, wc, ReaderConfig{}, 0)
		for _, k := range []byte(tc.keys) {
			c := Change{Payload: []byte{0, 1, 0, 0, k}, HasInstance: true, Instance: [16]byte{15: k}}
			if _, err := p.w.WriteChange(n.now, &c); err != nil {
				t.Fatal(err)
			}
		}
		if s := p.w.Stats(); s.HistorySize != len(tc.want) {
			t.Fatalf("%s: history %d, want %d", tc.keys, s.HistorySize, len(tc.want))
		}
		p.match(true, true)
		n.run(n.now + 10e9)
		got := p.col.sns
		if len(got) != len(tc.want) {
			t.Fatalf("%s: delivered %v, want %v", tc.keys, got, tc.want)
		}
		for i := range tc.want {
			if int(got[i]) != tc.want[i] {
				t.Fatalf("%s: delivered %v, want %v", tc.keys, got, tc.want)
			}
		}
		if tc.gaps && (p.w.Stats().Gaps == 0 || p.r.Stats().GapSNs == 0) {
			t.Errorf("%s: no GAP for the replaced sample: %+v", tc.keys, p.w.Stats())
		}
		// an unkeyed change of a keyed writer is just kept
		c := Change{Payload: []byte{0, 1, 0, 0}}
		p.w.WriteChange(n.now, &c)
		if s := p.w.Stats(); s.HistorySize != len(tc.want)+1 {
			t.Fatalf("history %d", s.HistorySize)
		}
	}
}

// One writer, two reliable readers and a best-effort one on a lossy link;
// one reliable reader leaves half way.
func TestMultipleReaders(t *testing.T) {
	n := newNet(t, 91, 0.25, 0.1, 3e6)
	w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, KeepAll: true, MaxSamples: 32}, n.output())
	if err != nil {
		t.Fatal(err)
	}
	n.attach(locW, w)
	guidB := wire.GUID{Prefix: prefixS, Entity: wire.NewEntityID(3, wire.EntityKindReaderNoKey)}
	locB := wire.LoopbackUDPv4(7417)
	type rd struct {
		g        wire.GUID
		l        wire.Locator
		reliable bool
		col      *collector
		r        *Reader
	}
	rds := []*rd{{g: guidR, l: locR, reliable: true}, {g: guidS, l: locS, reliable: true}, {g: guidB, l: locB}}
	for _, x := range rds {
		x.col = &collector{t: t, size: 64}
		x.r, _ = NewReader(ReaderConfig{GUID: x.g}, n.output(), x.col.deliver)
		n.attach(x.l, x.r)
		w.MatchReader(n.now, x.g, []wire.Locator{x.l}, x.reliable, false)
		x.r.MatchWriter(n.now, guidW, []wire.Locator{locW}, x.reliable)
	}
	p := &pair{net: n, w: w}
	p.writeN(t, 500, 64, 1e6)
	w.UnmatchReader(guidS)
	rds[1].r.UnmatchWriter(guidW)
	p.writeN(t, 500, 64, 1e6)
	n.run(n.now + 10e9)
	wantRange(t, rds[0].col.sns, 1, 1000)
	if got := rds[1].col.sns; len(got) < 400 || len(got) > 500 {
		t.Fatalf("reader that left got %d", len(got))
	} else {
		wantRange(t, got, 1, got[len(got)-1])
	}
	wantIncreasing(t, rds[2].col.sns)
	if len(rds[2].col.sns) < 300 {
		t.Errorf("best effort got only %d", len(rds[2].col.sns))
	}
	if s := w.Stats(); s.WouldBlock == 0 || s.MatchedReaders != 2 || s.ReliableReaders != 1 {
		t.Errorf("writer %+v", s)
	}
}

// ACKNACK counts keep increasing across an unmatch and a new match of the
// same writer (the remote writer may still hold the old count).
func TestAckCountsSurviveRematch(t *testing.T) {
	var counts []wire.Count
	r, _ := NewReader(ReaderConfig{GUID: guidR}, OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgAckNack {
				counts = append(counts, sm.AckNack.Count)
			}
		})
	}), func(Sample) {})
	for i := range 3 {
		r.MatchWriter(int64(i)*10e9, guidW, []wire.Locator{locW}, true)
		r.Tick(int64(i)*10e9 + 2e9)
		r.UnmatchWriter(guidW)
	}
	if len(counts) < 6 {
		t.Fatalf("counts %v", counts)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] <= counts[i-1] {
			t.Fatalf("counts %v not increasing", counts)
		}
	}
}

// With InitialSyncTimeout negative a reliable proxy starts at the first SN
// it receives (Cyclone's behaviour for volatile readers).
func TestStartAtFirstReceived(t *testing.T) {
	var got []wire.SequenceNumber
	r, _ := NewReader(ReaderConfig{GUID: guidR, InitialSyncTimeout: -1}, OutputFunc(func([]wire.Locator, []byte) {}),
		func(s Sample) { got = append(got, s.SN) })
	r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	src := wire.ReceiverState{SourcePrefix: prefixW}
	for _, sn := range []wire.SequenceNumber{5, 4, 7, 6} {
		sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
		r.HandleSubmessage(0, &src, &sm)
	}
	if len(got) != 3 || got[0] != 5 || got[1] != 6 || got[2] != 7 || r.Stats().Duplicates != 1 {
		t.Fatalf("got %v %+v", got, r.Stats())
	}
}
