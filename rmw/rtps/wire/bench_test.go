package wire

import "testing"

// clockMessage returns a captured Cyclone datagram carrying a /clock DATA.
func clockMessage(b *testing.B) []byte {
	for _, p := range captureRTPS(b) {
		var r Reader
		if r.Reset(p.payload) != nil {
			continue
		}
		for {
			sm, err := r.Next()
			if sm == nil || err != nil {
				break
			}
			if sm.ID == SubmsgData && sm.Data.WriterID.Key() == 1 && !sm.Data.WriterID.IsBuiltin() && r.Header.Vendor == VendorEclipse {
				return p.payload
			}
		}
	}
	b.Fatal("no clock message")
	return nil
}

func BenchmarkDecodeData(b *testing.B) {
	msg := clockMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var r Reader
	n := 0
	for b.Loop() {
		if err := r.Reset(msg); err != nil {
			b.Fatal(err)
		}
		for {
			sm, err := r.Next()
			if err != nil {
				b.Fatal(err)
			}
			if sm == nil {
				break
			}
			if sm.ID == SubmsgData {
				n += len(sm.Data.SerializedPayload)
			}
		}
	}
	if n == 0 {
		b.Fatal("no DATA")
	}
}

func BenchmarkEncodeDataHeartbeat(b *testing.B) {
	buf := make([]byte, 0, 1500)
	payload := []byte{0, 1, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0}
	h := Header{Version: ProtocolVersion21, Vendor: VendorID{1, 0xff}, Prefix: testPrefix}
	d := Data{ReaderID: EntityIDUnknown, WriterID: wtr, SerializedPayload: payload}
	hb := Heartbeat{WriterID: wtr, FirstSN: 1}
	var bld Builder
	b.ReportAllocs()
	for b.Loop() {
		bld.Reset(buf[:0], h)
		bld.InfoTS(Time{1, 2})
		d.WriterSN++
		if err := bld.Data(&d); err != nil {
			b.Fatal(err)
		}
		hb.LastSN = d.WriterSN
		hb.Count++
		bld.Heartbeat(&hb)
		buf = bld.Bytes()
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeSPDP(b *testing.B) {
	var payload []byte
	for _, p := range captureRTPS(b) {
		var r Reader
		_ = r.Reset(p.payload)
		for {
			sm, _ := r.Next()
			if sm == nil {
				break
			}
			if sm.ID == SubmsgData && sm.Data.WriterID == EntityIDSPDPWriter && sm.Data.SerializedPayload != nil && !sm.Data.Key {
				payload = sm.Data.SerializedPayload
			}
		}
	}
	b.ReportAllocs()
	var pd ParticipantData
	for b.Loop() {
		if err := pd.Decode(payload); err != nil {
			b.Fatal(err)
		}
	}
}
