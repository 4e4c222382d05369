package endpoint

import (
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// hostile inputs are dropped and counted, never delivered, never a panic.
func TestReaderHostileInput(t *testing.T) {
	src := wire.ReceiverState{SourcePrefix: prefixW}
	data := func(sn wire.SequenceNumber) wire.Submessage {
		return wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
	}
	hb := func(first, last wire.SequenceNumber, count wire.Count) wire.Submessage {
		return wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: first, LastSN: last, Count: count}}
	}
	frag := func(sn wire.SequenceNumber, start uint32, n uint16, fs uint16, size uint32, body int) wire.Submessage {
		return wire.Submessage{ID: wire.SubmsgDataFrag, DataFrag: wire.DataFrag{WriterID: guidW.Entity, WriterSN: sn,
			FragmentStartingNum: start, FragmentsInSubmessage: n, FragmentSize: fs, SampleSize: size, Fragments: make([]byte, body)}}
	}
	gap := func(start, base wire.SequenceNumber) wire.Submessage {
		return wire.Submessage{ID: wire.SubmsgGap, Gap: wire.Gap{WriterID: guidW.Entity, GapStart: start, GapList: wire.SequenceNumberSet{Base: base}}}
	}
	for _, tc := range []struct {
		name     string
		reliable bool
		in       []wire.Submessage
		check    func(t *testing.T, s ReaderStats, got []wire.SequenceNumber)
	}{
		{"sn zero and negative", true, []wire.Submessage{hb(1, 0, 1), data(0), data(-5), data(wire.SequenceNumberUnknown)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.Malformed != 3 || len(got) != 0 {
					t.Errorf("%+v %v", s, got)
				}
			}},
		{"heartbeat first > last+1", true, []wire.Submessage{hb(10, 5, 1), hb(0, 3, 2), hb(-4, -5, 3)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.Malformed != 3 || s.Heartbeats != 0 {
					t.Errorf("%+v", s)
				}
			}},
		{"stale heartbeat count", true, []wire.Submessage{hb(1, 0, 5), hb(1, 0, 5), hb(1, 0, 4)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.StaleCount != 2 || s.Heartbeats != 1 {
					t.Errorf("%+v", s)
				}
			}},
		{"fragment out of range", true, []wire.Submessage{hb(1, 0, 1), frag(1, 5, 1, 100, 300, 100), frag(1, 0, 1, 100, 300, 100), frag(1, 3, 2, 100, 300, 100), frag(1, 1, 1, 0, 300, 0)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.Malformed != 4 || s.ReassemblyBytes != 0 {
					t.Errorf("%+v", s)
				}
			}},
		{"fragment body length lies", true, []wire.Submessage{hb(1, 0, 1), frag(1, 1, 1, 100, 300, 50)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.Malformed != 1 {
					t.Errorf("%+v", s)
				}
			}},
		{"sample over limit", true, []wire.Submessage{hb(1, 0, 1), frag(1, 1, 1, 1000, 1<<31, 1000)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.TooLarge != 1 || s.ReassemblyBytes != 0 {
					t.Errorf("%+v", s)
				}
			}},
		{"inconsistent fragment sizes", true, []wire.Submessage{hb(1, 0, 1), frag(1, 1, 1, 100, 300, 100), frag(1, 2, 1, 100, 400, 100), frag(1, 2, 1, 50, 300, 50)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.FragmentsDropped != 2 || len(got) != 0 {
					t.Errorf("%+v", s)
				}
			}},
		{"huge gap", true, []wire.Submessage{hb(1, 0, 1), data(2), gap(1, 1<<62), data(1 << 62)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if len(got) != 2 || got[0] != 2 || got[1] != 1<<62 {
					t.Errorf("%+v %v", s, got)
				}
			}},
		{"gap with bad numbers", true, []wire.Submessage{hb(1, 0, 1), gap(0, 5), gap(-3, 5), gap(1, -1)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if s.Malformed != 3 {
					t.Errorf("%+v", s)
				}
			}},
		{"huge heartbeat", true, []wire.Submessage{hb(1, 1<<62, 1), data(1), data(300), hb(1<<61, 1<<62, 2), data(1 << 61)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if len(got) != 2 || got[0] != 1 || got[1] != 1<<61 || s.OutOfWindow != 1 {
					t.Errorf("%+v %v", s, got)
				}
			}},
		{"duplicates", true, []wire.Submessage{hb(1, 0, 1), data(2), data(2), data(1), data(1), data(2)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if len(got) != 2 || s.Duplicates != 3 {
					t.Errorf("%+v %v", s, got)
				}
			}},
		{"gap ranges and lists", true, []wire.Submessage{hb(1, 10, 1), data(1),
			{ID: wire.SubmsgGap, Gap: wire.Gap{WriterID: guidW.Entity, GapStart: 3, GapList: wire.SequenceNumberSet{Base: 5, NumBits: 3, Bitmap: [8]uint32{0x20000000}}}},
			data(4), data(6), data(5), data(2), data(7), data(8)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				want := []wire.SequenceNumber{1, 2, 5, 6, 8}
				if len(got) != len(want) || s.GapSNs != 3 || s.Duplicates != 2 {
					t.Fatalf("%+v %v", s, got)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("got %v want %v", got, want)
					}
				}
			}},
		{"best effort older dropped", false, []wire.Submessage{data(5), data(3), data(5), data(6)},
			func(t *testing.T, s ReaderStats, got []wire.SequenceNumber) {
				if len(got) != 2 || got[0] != 5 || got[1] != 6 || s.Duplicates != 2 {
					t.Errorf("%+v %v", s, got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []wire.SequenceNumber
			r, err := NewReader(ReaderConfig{GUID: guidR, InitialSyncTimeout: 1e9, MaxSampleSize: 1 << 20},
				OutputFunc(func([]wire.Locator, []byte) {}), func(s Sample) { got = append(got, s.SN) })
			if err != nil {
				t.Fatal(err)
			}
			r.MatchWriter(0, guidW, []wire.Locator{locW}, tc.reliable)
			for i := range tc.in {
				r.HandleSubmessage(int64(i), &src, &tc.in[i])
				r.Tick(int64(i))
			}
			tc.check(t, r.Stats(), got)
		})
	}
}

func TestWriterHostileInput(t *testing.T) {
	ack := func(base wire.SequenceNumber, count wire.Count, sns ...wire.SequenceNumber) wire.Submessage {
		set := wire.SequenceNumberSet{Base: base}
		for _, sn := range sns {
			set.Add(sn)
		}
		return wire.Submessage{ID: wire.SubmsgAckNack, AckNack: wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity, ReaderSNState: set, Count: count}}
	}
	nack := func(sn wire.SequenceNumber, base uint32, count wire.Count) wire.Submessage {
		set := wire.FragmentNumberSet{Base: base}
		set.Add(base)
		return wire.Submessage{ID: wire.SubmsgNackFrag, NackFrag: wire.NackFrag{ReaderID: guidR.Entity, WriterID: guidW.Entity, WriterSN: sn, FragmentNumberState: set, Count: count}}
	}
	for _, tc := range []struct {
		name  string
		src   wire.GuidPrefix
		in    []wire.Submessage
		check func(t *testing.T, s WriterStats)
	}{
		{"unknown reader", prefixS, []wire.Submessage{ack(1, 1)}, func(t *testing.T, s WriterStats) {
			if s.UnknownReader != 1 || s.AckNacks != 0 {
				t.Errorf("%+v", s)
			}
		}},
		{"ack beyond last", prefixR, []wire.Submessage{ack(100, 1), ack(-7, 2)}, func(t *testing.T, s WriterStats) {
			if s.Malformed != 2 || s.AckNacks != 0 {
				t.Errorf("%+v", s)
			}
		}},
		{"stale counts", prefixR, []wire.Submessage{ack(1, 5, 1), ack(1, 5, 1), ack(1, 3, 2)}, func(t *testing.T, s WriterStats) {
			if s.StaleCount != 2 || s.AckNacks != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{"fast dds base zero", prefixR, []wire.Submessage{ack(0, 1)}, func(t *testing.T, s WriterStats) {
			if s.AckNacks != 1 || s.Malformed != 0 {
				t.Errorf("%+v", s)
			}
		}},
		{"nack_frag out of range", prefixR, []wire.Submessage{nack(0, 1, 1), nack(50, 1, 2), nack(2, 0, 3), nack(2, 1000, 4)}, func(t *testing.T, s WriterStats) {
			if s.Malformed != 3 || s.NackFrags != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{"requests beyond last written", prefixR, []wire.Submessage{ack(2, 1, 2, 50, 200)}, func(t *testing.T, s WriterStats) {
			if s.Resends != 1 || s.AckNacks != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{"repairs", prefixR, []wire.Submessage{ack(1, 1, 1, 2, 3)}, func(t *testing.T, s WriterStats) {
			if s.Resends != 3 || s.AckNacks != 1 {
				t.Errorf("%+v", s)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, Depth: 10, FragmentSize: 100, MaxMessageSize: 2000, NackResponseDelay: -1}, OutputFunc(func([]wire.Locator, []byte) {}))
			if err != nil {
				t.Fatal(err)
			}
			w.MatchReader(0, guidR, []wire.Locator{locR}, true, false)
			for i := range 3 {
				w.Write(0, payloadFor(wire.SequenceNumber(i+1), 250), 0)
			}
			rs := wire.ReceiverState{SourcePrefix: tc.src}
			for i := range tc.in {
				w.HandleSubmessage(int64(i), &rs, &tc.in[i])
				w.Tick(int64(i))
			}
			tc.check(t, w.Stats())
		})
	}
}

func TestConfigErrors(t *testing.T) {
	out := OutputFunc(func([]wire.Locator, []byte) {})
	for _, wc := range []WriterConfig{
		{MaxMessageSize: 70000},
		{FragmentSize: 64000, MaxMessageSize: 65000},
		{KeepAll: true, MaxSamples: 1 << 21},
	} {
		if _, err := NewWriter(wc, out); err != ErrConfig {
			t.Errorf("%+v: %v", wc, err)
		}
	}
	if _, err := NewReader(ReaderConfig{Window: 1 << 20}, out, func(Sample) {}); err != ErrConfig {
		t.Error(err)
	}
	w, _ := NewWriter(WriterConfig{MaxSampleSize: 10}, out)
	if _, err := w.Write(0, make([]byte, 11), 0); err != ErrTooLarge {
		t.Error(err)
	}
	if _, err := w.WriteChange(0, &Change{Payload: []byte{0, 1, 0, 0}, InlineQos: make([]byte, 2000)}); err != ErrTooLarge {
		t.Error(err)
	}
}

// The reassembly budget is shared: idle buffers of one writer are given
// back when another writer needs the memory.
func TestReassemblyBudgetShared(t *testing.T) {
	var got []wire.GUID
	r, _ := NewReader(ReaderConfig{GUID: guidR, MatchAny: true, MaxReassemblyBytes: 10000}, OutputFunc(func([]wire.Locator, []byte) {}),
		func(s Sample) { got = append(got, s.Writer) })
	for i, pre := range []wire.GuidPrefix{prefixW, prefixS, prefixW} {
		src := wire.ReceiverState{SourcePrefix: pre}
		for f := uint32(1); f <= 2; f++ {
			sm := wire.Submessage{ID: wire.SubmsgDataFrag, DataFrag: wire.DataFrag{WriterID: guidW.Entity, WriterSN: wire.SequenceNumber(i + 1),
				FragmentStartingNum: f, FragmentsInSubmessage: 1, FragmentSize: 4000, SampleSize: 8000, Fragments: make([]byte, 4000)}}
			r.HandleSubmessage(0, &src, &sm)
			if s := r.Stats(); s.ReassemblyBytes > 10000 {
				t.Fatalf("budget exceeded: %+v", s)
			}
		}
	}
	if len(got) != 3 {
		t.Fatalf("delivered %d of 3: %+v", len(got), r.Stats())
	}
	// a sample that cannot fit is dropped and counted
	src := wire.ReceiverState{SourcePrefix: prefixS}
	sm := wire.Submessage{ID: wire.SubmsgDataFrag, DataFrag: wire.DataFrag{WriterID: guidW.Entity, WriterSN: 10,
		FragmentStartingNum: 1, FragmentsInSubmessage: 1, FragmentSize: 4000, SampleSize: 12000, Fragments: make([]byte, 4000)}}
	r.HandleSubmessage(0, &src, &sm)
	if s := r.Stats(); s.FragmentsDropped != 1 || s.ReassemblyBytes > 10000 {
		t.Fatalf("%+v", s)
	}
}
