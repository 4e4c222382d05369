package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeMessage feeds arbitrary datagrams to the Reader. Whatever
// decodes must re-encode with the Builder and decode to the same values;
// discovery payloads and inline QoS found on the way are decoded too.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(testHeader())
	f.Add(allKindsMessage())
	hb := bw(false).ent(rdr).ent(wtr).sn(1).sn(3).u32(1).buf
	f.Add(msgOf(rawSub(SubmsgHeartbeat, 0, -1, hb), rawSub(0x80, 0, -1, hb), rawSub(SubmsgInfoReplyIP4, FlagInfoReplyMulticast, -1, make([]byte, 16)),
		rawSub(SubmsgAckNack, 0, -1, bw(false).ent(rdr).ent(wtr).raw(snSetBody(false, 1, 40, 1, 2)...).u32(3).buf)))
	f.Fuzz(func(t *testing.T, msg []byte) {
		h, subs, err := decodeAll(msg)
		for _, s := range subs {
			if d, ok := s.Value.(Data); ok {
				_, _ = DecodeInlineQos(d.InlineQos)
				if d.SerializedPayload != nil {
					var p ParticipantData
					var e EndpointData
					_ = p.Decode(d.SerializedPayload)
					_ = e.Decode(d.SerializedPayload, true)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		out, ok, err := reencode(h, subs)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !ok {
			return
		}
		_, subs2, err := decodeAll(out)
		if err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		if err := sameSubs(subs, subs2); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParameterList decodes arbitrary PL_CDR payloads as SPDP and SEDP
// data and as inline QoS. Whatever decodes must encode and decode to the
// same value, and encode again to the same bytes.
func FuzzParameterList(f *testing.F) {
	f.Add([]byte{0, 3, 0, 0, 1, 0, 0, 0})
	// A big-endian list with a security parameter (PID_IDENTITY_TOKEN).
	f.Add([]byte{0, 2, 0, 0, 0x10, 0x01, 0, 4, 1, 2, 3, 4, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		var p ParticipantData
		if p.Decode(payload) == nil {
			b1, err := p.Encode(nil)
			if err == nil {
				var p2 ParticipantData
				if err := p2.Decode(b1); err != nil {
					t.Fatalf("SPDP re-decode: %v", err)
				}
				// Security values keep their byte order; Encode writes them
				// as given into its little-endian list.
				p.SecurityBigEndian = false
				if !reflect.DeepEqual(p, p2) {
					t.Fatalf("SPDP round trip\n%+v\n%+v", p, p2)
				}
				if b2, _ := p2.Encode(nil); !bytes.Equal(b1, b2) {
					t.Fatal("SPDP encoding not stable")
				}
			} else if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("SPDP encode: %v", err)
			}
		}
		for _, writer := range []bool{false, true} {
			var e EndpointData
			if e.Decode(payload, writer) != nil {
				continue
			}
			b1, err := e.Encode(nil)
			if err != nil {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("SEDP encode: %v", err)
				}
				continue
			}
			var e2 EndpointData
			if err := e2.Decode(b1, writer); err != nil {
				t.Fatalf("SEDP re-decode: %v", err)
			}
			e.SecurityBigEndian = false
			if !reflect.DeepEqual(e, e2) {
				t.Fatalf("SEDP round trip\n%+v\n%+v", e, e2)
			}
			if b2, _ := e2.Encode(nil); !bytes.Equal(b1, b2) {
				t.Fatal("SEDP encoding not stable")
			}
		}
		if len(payload) < 4 {
			return
		}
		for _, be := range []bool{false, true} {
			q, err := DecodeInlineQos(ParameterList{Data: payload[4:], BigEndian: be})
			if err != nil {
				continue
			}
			q2, err := DecodeInlineQos(ParameterList{Data: q.Append(nil)})
			if err != nil || q2 != q {
				t.Fatalf("inline QoS round trip %+v %+v %v", q, q2, err)
			}
		}
	})
}

// allKindsMessage builds one message with every submessage the Builder writes.
func allKindsMessage() []byte {
	var b Builder
	b.Reset(nil, Header{Version: ProtocolVersion21, Vendor: VendorID{1, 0xff}, Prefix: testPrefix})
	b.InfoSrc(InfoSrc{Version: ProtocolVersion22, Vendor: VendorEProsima, Prefix: GuidPrefix{5}})
	b.InfoReply([]Locator{LoopbackUDPv4(7411)}, []Locator{LocatorUDPv4([4]byte{239, 255, 0, 1}, 7401)})
	b.InfoDst(testPrefix)
	b.InfoTS(Time{1, 2})
	qos := (&InlineQos{HasStatusInfo: true, StatusInfo: 1, HasKeyHash: true}).Append(nil)
	_ = b.Data(&Data{ReaderID: rdr, WriterID: wtr, WriterSN: 1, InlineQos: ParameterList{Data: qos}, SerializedPayload: []byte{0, 1, 0, 0, 1}})
	_ = b.DataFrag(&DataFrag{WriterID: wtr, WriterSN: 2, FragmentStartingNum: 1, FragmentsInSubmessage: 2, FragmentSize: 4, SampleSize: 10, Fragments: make([]byte, 8)})
	b.Heartbeat(&Heartbeat{WriterID: wtr, FirstSN: 1, LastSN: 2, Count: 1})
	b.HeartbeatFrag(&HeartbeatFrag{WriterID: wtr, WriterSN: 2, LastFragmentNum: 3, Count: 1})
	_ = b.AckNack(&AckNack{WriterID: wtr, ReaderSNState: SequenceNumberSet{Base: 1, NumBits: 64, Bitmap: [8]uint32{1, 2}}, Count: 1})
	_ = b.Gap(&Gap{WriterID: wtr, GapStart: 1, GapList: SequenceNumberSet{Base: 2}})
	_ = b.NackFrag(&NackFrag{WriterID: wtr, WriterSN: 2, FragmentNumberState: FragmentNumberSet{Base: 2, NumBits: 1, Bitmap: [8]uint32{1 << 31}}, Count: 1})
	b.InfoTSInvalidate()
	b.Pad(4)
	return b.Message()
}
