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
		var got []wire.SequenceNumber
		prompts := 0
		var lastAck wire.AckNack
		r, _ := NewReader(ReaderConfig{GUID: guidR, InitialSyncTimeout: 200e6, Durable: durable}, OutputFunc(func(to []wire.Locator, msg []byte) {
			forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
				if sm.ID == wire.SubmsgAckNack {
					prompts++
					lastAck = sm.AckNack
				}
			})
		}), func(s Sample) { got = append(got, s.SN) })
		r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
		src := wire.ReceiverState{SourcePrefix: prefixW}
		data := func(now int64, sn wire.SequenceNumber) {
			sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
			r.HandleSubmessage(now, &src, &sm)
		}
		prompts = 0
		data(10e6, 2) // SN 1 was lost
		for now := int64(10e6); now <= 300e6; now += 5e6 {
			r.Tick(now)
		}
		if prompts < 4 {
			t.Errorf("durable=%v: %d HEARTBEAT prompts while holding data, want at least 4", durable, prompts)
		}
		if !durable {
			if len(got) != 1 || got[0] != 2 {
				t.Fatalf("volatile: delivered %v after the timeout, want [2]", got)
			}
			continue
		}
		if len(got) != 0 {
			t.Fatalf("durable: delivered %v without SN 1", got)
		}
		// The writer's HEARTBEAT (1..2) is answered with a NACK of SN 1.
		hb := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 1, LastSN: 2, Count: 1}}
		r.HandleSubmessage(310e6, &src, &hb)
		r.Tick(400e6)
		if lastAck.ReaderSNState.Base != 1 || !lastAck.ReaderSNState.Contains(1) {
			t.Fatalf("durable: ACKNACK %+v does not ask for SN 1", lastAck.ReaderSNState)
		}
		data(410e6, 1)
		if len(got) != 2 || got[0] != 1 || got[1] != 2 || r.Stats().Lost != 0 {
			t.Fatalf("durable: delivered %v, stats %+v; want [1 2], nothing lost", got, r.Stats())
		}
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
	var got []wire.SequenceNumber
	prompts := 0
	var lastAck wire.AckNack
	r, _ := NewReader(ReaderConfig{GUID: guidR}, OutputFunc(func(to []wire.Locator, msg []byte) {
		forEach(msg, func(rs *wire.ReceiverState, sm *wire.Submessage) {
			if sm.ID == wire.SubmsgAckNack {
				prompts++
				lastAck = sm.AckNack
			}
		})
	}), func(s Sample) { got = append(got, s.SN) })
	r.MatchWriter(0, guidW, []wire.Locator{locW}, true)
	src := wire.ReceiverState{SourcePrefix: prefixW}
	data := func(now int64, sn wire.SequenceNumber) {
		sm := wire.Submessage{ID: wire.SubmsgData, Data: wire.Data{WriterID: guidW.Entity, WriterSN: sn, SerializedPayload: []byte{0, 1, 0, 0}}}
		r.HandleSubmessage(now, &src, &sm)
	}
	prompts = 0
	data(10e6, 2) // SN 1 was lost, and the HEARTBEAT after it
	for now := int64(10e6); now < 3e9; now += 10e6 {
		r.Tick(now)
	}
	if len(got) != 0 {
		t.Fatalf("delivered %v before the writer's HEARTBEAT", got)
	}
	if prompts < 25 {
		t.Errorf("%d HEARTBEAT prompts in 3 s while holding data, want one per 100 ms", prompts)
	}
	hb := wire.Submessage{ID: wire.SubmsgHeartbeat, Heartbeat: wire.Heartbeat{WriterID: guidW.Entity, FirstSN: 1, LastSN: 2, Count: 1}}
	r.HandleSubmessage(3e9, &src, &hb)
	r.Tick(3.1e9)
	if lastAck.ReaderSNState.Base != 1 || !lastAck.ReaderSNState.Contains(1) {
		t.Fatalf("ACKNACK %+v does not ask for SN 1", lastAck.ReaderSNState)
	}
	data(3.1e9, 1)
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || r.Stats().Lost != 0 {
		t.Fatalf("delivered %v, stats %+v; want [1 2], nothing lost", got, r.Stats())
	}
}
