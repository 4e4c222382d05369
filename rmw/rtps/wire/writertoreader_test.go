package wire

import "testing"

func TestWriterToReader(t *testing.T) {
	w, r := EntityID{0, 0, 1, 2}, EntityID{0, 0, 1, 7}
	var sm Submessage
	sm.Data.WriterID, sm.Data.ReaderID = w, r
	sm.DataFrag.WriterID, sm.DataFrag.ReaderID = w, r
	sm.Heartbeat.WriterID, sm.Heartbeat.ReaderID = w, r
	sm.HeartbeatFrag.WriterID, sm.HeartbeatFrag.ReaderID = w, r
	sm.Gap.WriterID, sm.Gap.ReaderID = w, r
	sm.AckNack.WriterID, sm.AckNack.ReaderID = w, r
	sm.NackFrag.WriterID, sm.NackFrag.ReaderID = w, r
	for id, want := range map[SubmessageID]bool{SubmsgData: true, SubmsgDataFrag: true, SubmsgHeartbeat: true,
		SubmsgHeartbeatFrag: true, SubmsgGap: true, SubmsgAckNack: false, SubmsgNackFrag: false, SubmsgInfoTS: false} {
		sm.ID = id
		gw, gr, ok := sm.WriterToReader()
		if ok != want || (ok && (gw != w || gr != r)) {
			t.Errorf("%v: %v %v %v, want %v", id, gw, gr, ok, want)
		}
	}
}
