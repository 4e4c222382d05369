package endpoint

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Fuzz input format: a run of datagram bodies, each prefixed by a 2-byte
// little-endian length; the harness prepends an RTPS header from the
// matched peer so the fuzzer spends its time on submessages. Between
// datagrams the clock advances by 1 ms and the endpoint's Tick runs.

func splitDatagrams(data []byte, src wire.GuidPrefix, f func(msg []byte)) {
	var b wire.Builder
	for len(data) >= 2 {
		n := int(binary.LittleEndian.Uint16(data))
		data = data[2:]
		n = min(n, len(data))
		b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Prefix: src})
		msg := append(b.Message(), data[:n]...)
		data = data[n:]
		f(msg)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds() {
		f.Add(s)
	}
	f.Fuzz(runReaderInput)
}

func runReaderInput(t *testing.T, data []byte) {
	{
		const maxReasm = 1 << 20
		last := map[wire.GUID]wire.SequenceNumber{}
		check := func(s Sample) {
			if s.SN <= last[s.Writer] {
				t.Fatalf("SN %d delivered after %d", s.SN, last[s.Writer])
			}
			last[s.Writer] = s.SN
		}
		out := OutputFunc(func(to []wire.Locator, msg []byte) {
			var rd wire.Reader
			if err := rd.Reset(msg); err != nil {
				t.Fatalf("reader sent an undecodable datagram: %v", err)
			}
			for {
				sm, err := rd.Next()
				if err != nil {
					t.Fatalf("reader sent a malformed submessage: %v", err)
				}
				if sm == nil {
					break
				}
			}
		})
		rel, _ := NewReader(ReaderConfig{GUID: guidR, MaxReassemblyBytes: maxReasm, MaxSampleSize: 256 << 10, Window: 64}, out, check)
		rel.MatchWriter(0, guidW, []wire.Locator{locW}, true)
		lastAny := map[wire.GUID]wire.SequenceNumber{}
		anyR, _ := NewReader(ReaderConfig{GUID: guidR, MatchAny: true, MaxImplicitWriters: 4, MaxReassemblyBytes: maxReasm}, out, func(s Sample) {
			if s.SN <= lastAny[s.Writer] {
				t.Fatalf("best effort SN %d after %d", s.SN, lastAny[s.Writer])
			}
			lastAny[s.Writer] = s.SN
		})
		now := int64(1e9)
		splitDatagrams(data, prefixW, func(msg []byte) {
			rel.HandleMessage(now, msg)
			anyR.HandleMessage(now, msg)
			now += 1e6
			rel.Tick(now)
			anyR.Tick(now)
			for _, r := range []*Reader{rel, anyR} {
				s := r.Stats()
				if s.ReassemblyBytes > maxReasm || s.BufferedSamples > 256 {
					t.Fatalf("bounds: %+v", s)
				}
				if d := r.NextDeadline(); d < now {
					t.Fatalf("deadline %d in the past (now %d)", d, now)
				}
			}
		})
	}
}

func FuzzWriter(f *testing.F) {
	for _, s := range writerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sent := 0
		out := OutputFunc(func(to []wire.Locator, msg []byte) {
			sent++
			if len(msg) > 2000 {
				t.Fatalf("datagram of %d bytes over MaxMessageSize", len(msg))
			}
			var rd wire.Reader
			if err := rd.Reset(msg); err != nil {
				t.Fatalf("writer sent an undecodable datagram: %v", err)
			}
			for {
				sm, err := rd.Next()
				if err != nil {
					t.Fatalf("writer sent a malformed submessage: %v", err)
				}
				if sm == nil {
					break
				}
			}
		})
		w, err := NewWriter(WriterConfig{GUID: guidW, Reliable: true, TransientLocal: true, Depth: 8, FragmentSize: 100, MaxMessageSize: 2000}, out)
		if err != nil {
			t.Fatal(err)
		}
		w.MatchReader(0, guidR, []wire.Locator{locR}, true, true)
		w.MatchReader(0, guidS, []wire.Locator{locS}, true, false)
		now := int64(1e9)
		for i := range 12 {
			w.Write(now, payloadFor(wire.SequenceNumber(i+1), 60+40*i), 0)
		}
		splitDatagrams(data, prefixR, func(msg []byte) {
			w.HandleMessage(now, msg)
			now += 1e6
			w.Tick(now)
			if s := w.Stats(); s.HistorySize > 8 {
				t.Fatalf("history %d", s.HistorySize)
			}
			if d := w.NextDeadline(); d < now {
				t.Fatalf("deadline %d in the past (now %d)", d, now)
			}
		})
	})
}

// framed joins datagram bodies (messages without their RTPS header) in the
// fuzz input format.
func framed(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		if len(m) >= wire.HeaderSize {
			m = m[wire.HeaderSize:]
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(len(m)))
		out = append(out, m...)
	}
	return out
}

// readerSeeds are what a real writer sends: DATA, DATA_FRAG, HEARTBEAT and
// GAP, in order, shuffled and with a hostile tail.
func readerSeeds() [][]byte {
	var msgs [][]byte
	out := OutputFunc(func(to []wire.Locator, msg []byte) { msgs = append(msgs, append([]byte(nil), msg...)) })
	w, _ := NewWriter(WriterConfig{GUID: guidW, Reliable: true, Depth: 2, FragmentSize: 24, MaxMessageSize: 1500}, out)
	w.MatchReader(0, guidR, []wire.Locator{locR}, true, false)
	for i := range 6 {
		w.Write(int64(i), payloadFor(wire.SequenceNumber(i+1), 12+14*i), 1_700_000_000_000_000_000)
	}
	// make it GAP SN 1..4 and resend 5, 6
	ack := buildMsg(prefixR, func(b *wire.Builder) {
		set := wire.SequenceNumberSet{Base: 1}
		for sn := wire.SequenceNumber(1); sn <= 6; sn++ {
			set.Add(sn)
		}
		b.AckNack(&wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity, ReaderSNState: set, Count: 1})
		fs := wire.FragmentNumberSet{Base: 2}
		fs.Add(2)
		fs.Add(4)
		b.NackFrag(&wire.NackFrag{ReaderID: guidR.Entity, WriterID: guidW.Entity, WriterSN: 6, FragmentNumberState: fs, Count: 1})
	})
	w.HandleMessage(10, ack)
	w.Tick(1e9)
	rev := make([][]byte, len(msgs))
	for i, m := range msgs {
		rev[len(msgs)-1-i] = m
	}
	hostile := buildMsg(prefixW, func(b *wire.Builder) {
		b.Heartbeat(&wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 5, LastSN: 1, Count: 99})
		b.Gap(&wire.Gap{WriterID: guidW.Entity, GapStart: 1, GapList: wire.SequenceNumberSet{Base: 1 << 62}})
		b.DataFrag(&wire.DataFrag{WriterID: guidW.Entity, WriterSN: 1 << 62, FragmentStartingNum: 1, FragmentsInSubmessage: 1, FragmentSize: 8, SampleSize: 1 << 30, Fragments: make([]byte, 8)})
		b.HeartbeatFrag(&wire.HeartbeatFrag{WriterID: guidW.Entity, WriterSN: 6, LastFragmentNum: 3, Count: 1})
	})
	return [][]byte{framed(msgs...), framed(rev...), framed(append(msgs[:3:3], hostile)...)}
}

// writerSeeds are ACKNACK and NACK_FRAG sequences a reader could send.
func writerSeeds() [][]byte {
	acks := func(f func(b *wire.Builder)) []byte { return buildMsg(prefixR, f) }
	an := func(base wire.SequenceNumber, count wire.Count, sns ...wire.SequenceNumber) func(b *wire.Builder) {
		return func(b *wire.Builder) {
			set := wire.SequenceNumberSet{Base: base}
			for _, sn := range sns {
				set.Add(sn)
			}
			b.InfoDst(prefixW)
			b.AckNack(&wire.AckNack{ReaderID: guidR.Entity, WriterID: guidW.Entity, ReaderSNState: set, Count: count})
		}
	}
	nf := func(sn wire.SequenceNumber, count wire.Count, frags ...uint32) func(b *wire.Builder) {
		return func(b *wire.Builder) {
			set := wire.FragmentNumberSet{Base: frags[0]}
			for _, f := range frags {
				set.Add(f)
			}
			b.NackFrag(&wire.NackFrag{ReaderID: guidR.Entity, WriterID: guidW.Entity, WriterSN: sn, FragmentNumberState: set, Count: count})
		}
	}
	return [][]byte{
		framed(acks(an(1, 1)), acks(an(1, 2, 1, 2, 3, 7)), acks(an(13, 3))),
		framed(acks(an(0, 1)), acks(nf(12, 1, 1, 3, 5)), acks(nf(4, 2, 2)), acks(an(5, 2, 5, 6, 9, 12))),
		framed(acks(an(100, 1)), acks(an(-1, 2, 1)), acks(nf(0, 3, 1)), acks(nf(12, 4, 1000))),
	}
}

// TestFuzzSeedsCommitted checks that testdata/fuzz holds exactly the seeds
// readerSeeds and writerSeeds build, so a change to them cannot leave the
// committed corpus stale; NROS_WRITE_SEEDS=1 rewrites the files instead.
func TestFuzzSeedsCommitted(t *testing.T) {
	write := os.Getenv("NROS_WRITE_SEEDS") != ""
	for name, seeds := range map[string][][]byte{"FuzzReader": readerSeeds(), "FuzzWriter": writerSeeds()} {
		dir := filepath.Join("testdata", "fuzz", name)
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range seeds {
			path := filepath.Join(dir, fmt.Sprintf("seed%d", i))
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s)))
			if write {
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != body {
				t.Errorf("%s is missing or stale (%v): run NROS_WRITE_SEEDS=1 go test -run FuzzSeedsCommitted ./rmw/rtps/endpoint", path, err)
			}
		}
	}
}
