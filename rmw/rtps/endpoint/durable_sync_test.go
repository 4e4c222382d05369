package endpoint

import (
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// A durable reader (TRANSIENT_LOCAL, SEDP) whose writer's first DATA and
// first HEARTBEAT were lost must not skip that DATA when InitialSyncTimeout
// passes: it starts at SN 1 and asks for it. A volatile reader keeps
// starting at the lowest SN it holds. Both repeat their HEARTBEAT prompt
// several times within the timeout.
func TestInitialSyncDurable(t *testing.T) {
	for _, durable := range []bool{false, true} {
		sr := newSyncReader(ReaderConfig{GUID: guidR, InitialSyncTimeout: 200e6, Durable: durable})
		r, data := sr.r, sr.data
		data(10e6, 2) // SN 1 was lost
		for now := int64(10e6); now <= 300e6; now += 5e6 {
			r.Tick(now)
		}
		if sr.prompts < 4 {
			t.Errorf("durable=%v: %d HEARTBEAT prompts while holding data, want at least 4", durable, sr.prompts)
		}
		if !durable {
			if len(sr.got) != 1 || sr.got[0] != 2 {
				t.Fatalf("volatile: delivered %v after the timeout, want [2]", sr.got)
			}
			continue
		}
		if len(sr.got) != 0 {
			t.Fatalf("durable: delivered %v without SN 1", sr.got)
		}
		sr.repairSN1(t, "durable: ", 310e6, 400e6, 410e6)
	}
}

// With the default InitialSyncTimeout, a volatile reader whose writer's
// first DATA was lost, and whose next HEARTBEAT comes only with the
// writer's periodic one (Fast DDS sends one every 3 s), waits for that
// HEARTBEAT and asks for SN 1 rather than starting at SN 2 and
// acknowledging an SN it never had (TestPeerChatterToGo/fastdds/
// reliable_20pct_loss: 19 of 20 strings, the publisher satisfied). It
// prompts the writer every 100 ms meanwhile.
func TestInitialSyncWaitsForSlowHeartbeat(t *testing.T) {
	sr := newSyncReader(ReaderConfig{GUID: guidR})
	r, data := sr.r, sr.data
	data(10e6, 2) // SN 1 was lost, and the HEARTBEAT after it
	for now := int64(10e6); now < 3e9; now += 10e6 {
		r.Tick(now)
	}
	if len(sr.got) != 0 {
		t.Fatalf("delivered %v before the writer's HEARTBEAT", sr.got)
	}
	if sr.prompts < 25 {
		t.Errorf("%d HEARTBEAT prompts in 3 s while holding data, want one per 100 ms", sr.prompts)
	}
	sr.repairSN1(t, "", 3e9, 3.1e9, 3.1e9)
}

// syncReader is a reliable reader matched with guidW that records what it
// delivers and the ACKNACKs it sends (counted from the match on).
type syncReader struct {
	r       *Reader
	src     wire.ReceiverState
	got     []wire.SequenceNumber
	prompts int
	lastAck wire.AckNack
}

func newSyncReader(cfg ReaderConfig) *syncReader {
	sr := &syncReader{src: wire.ReceiverState{SourcePrefix: prefixW}}
	sr.r, _ = NewReader(cfg, OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgAckNack {
				sr.prompts++
				sr.lastAck = sm.AckNack
			}
		})
	}), func(s Sample) { sr.got = append(sr.got, s.SN) })
	sr.r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	sr.prompts = 0
	return sr
}

// repairSN1 has the writer's HEARTBEAT (1..2) arrive at hb, which the
// ACKNACK sent by the Tick at tick must answer with a NACK of SN 1; the
// repair of SN 1 at data must then deliver [1 2] with nothing lost. what
// prefixes the failure messages.
func (sr *syncReader) repairSN1(t *testing.T, what string, hb, tick, data int64) {
	t.Helper()
	sm := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 1, LastSN: 2, Count: 1}}
	sr.r.HandleSubmessage(hb, &sr.src, &sm)
	sr.r.Tick(tick)
	if sr.lastAck.ReaderSNState.Base != 1 || !sr.lastAck.ReaderSNState.Contains(1) {
		t.Fatalf("%sACKNACK %+v does not ask for SN 1", what, sr.lastAck.ReaderSNState)
	}
	sr.data(data, 1)
	if len(sr.got) != 2 || sr.got[0] != 1 || sr.got[1] != 2 || sr.r.Stats().Lost != 0 {
		t.Fatalf("%sdelivered %v, stats %+v; want [1 2], nothing lost", what, sr.got, sr.r.Stats())
	}
}

// data hands the reader DATA sn of guidW at now.
func (sr *syncReader) data(now int64, sn wire.SequenceNumber) {
	sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
	sr.r.HandleSubmessage(now, &sr.src, &sm)
}
