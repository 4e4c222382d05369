package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestBuilderRoundTrip(t *testing.T) {
	h := Header{Version: ProtocolVersion21, Vendor: VendorID{1, 0xff}, Prefix: testPrefix}
	qos := (&InlineQos{HasRelatedSampleIdentity: true, RelatedSampleIdentity: SampleIdentity{GUID{testPrefix, rdr}, SequenceNumberUnknown}}).Append(nil)
	var acks SequenceNumberSet
	acks.Base = 3
	acks.Add(3)
	acks.Add(258)
	var frags FragmentNumberSet
	frags.Base = 1
	frags.Add(2)
	var b Builder
	b.Reset(make([]byte, 0, 1500), h)
	b.InfoDst(GuidPrefix{1})
	b.InfoTS(Time{1, 2})
	if err := b.Data(&Data{ReaderID: rdr, WriterID: wtr, WriterSN: 1, InlineQos: ParameterList{Data: qos}, SerializedPayload: []byte{0, 1, 0, 0, 'h', 'i', 0}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Data(&Data{WriterID: wtr, WriterSN: 2, SerializedPayload: []byte{0, 3, 0, 0, 1, 0, 0, 0}, Key: true}); err != nil {
		t.Fatal(err)
	}
	b.Heartbeat(&Heartbeat{ReaderID: rdr, WriterID: wtr, FirstSN: 1, LastSN: 2, Count: 3, Final: true})
	b.InfoTSInvalidate()
	if err := b.AckNack(&AckNack{ReaderID: rdr, WriterID: wtr, ReaderSNState: acks, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Gap(&Gap{ReaderID: rdr, WriterID: wtr, GapStart: 4, GapList: SequenceNumberSet{Base: 9}}); err != nil {
		t.Fatal(err)
	}
	if err := b.DataFrag(&DataFrag{ReaderID: rdr, WriterID: wtr, WriterSN: 5, FragmentStartingNum: 2, FragmentsInSubmessage: 1, FragmentSize: 3, SampleSize: 5, Fragments: []byte{4, 5}}); err != nil {
		t.Fatal(err)
	}
	if err := b.NackFrag(&NackFrag{ReaderID: rdr, WriterID: wtr, WriterSN: 5, FragmentNumberState: frags, Count: 2}); err != nil {
		t.Fatal(err)
	}
	b.HeartbeatFrag(&HeartbeatFrag{ReaderID: rdr, WriterID: wtr, WriterSN: 5, LastFragmentNum: 2, Count: 1})
	b.InfoSrc(InfoSrc{Version: ProtocolVersion22, Vendor: VendorEProsima, Prefix: GuidPrefix{5}})
	b.InfoReply([]Locator{LoopbackUDPv4(7411)}, nil)
	b.Pad(3)
	msg := b.Message()
	if len(msg)%4 != 0 {
		t.Fatalf("length %d", len(msg))
	}
	hh, subs, err := decodeAll(msg)
	if err != nil {
		t.Fatal(err)
	}
	if hh != h {
		t.Fatalf("header %+v", hh)
	}
	var ids []SubmessageID
	for _, s := range subs {
		ids = append(ids, s.ID)
		if s.Flags&FlagEndianness == 0 {
			t.Errorf("%v without E flag", s.ID)
		}
	}
	want := []SubmessageID{SubmsgInfoDst, SubmsgInfoTS, SubmsgData, SubmsgData, SubmsgHeartbeat, SubmsgInfoTS, SubmsgAckNack, SubmsgGap, SubmsgDataFrag, SubmsgNackFrag, SubmsgHeartbeatFrag, SubmsgInfoSrc, SubmsgInfoReply}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v", ids)
	}
	d := subs[2].Value.(Data)
	if subs[2].Flags != FlagEndianness|FlagDataInlineQos|FlagDataData || !bytes.Equal(d.SerializedPayload, []byte{0, 1, 0, 0, 'h', 'i', 0, 0}) {
		t.Errorf("data %+v flags %#x", d, subs[2].Flags)
	}
	if q, err := DecodeInlineQos(d.InlineQos); err != nil || q.RelatedSampleIdentity.SN != SequenceNumberUnknown || q.RelatedSampleIdentity.Writer.Entity != rdr {
		t.Errorf("inline QoS %+v %v", q, err)
	}
	if !subs[2].State.HaveTimestamp || subs[2].State.Timestamp != (Time{1, 2}) || subs[2].State.DestPrefix != (GuidPrefix{1}) {
		t.Errorf("state %+v", subs[2].State)
	}
	if subs[3].Flags != FlagEndianness|FlagDataKey || !subs[3].Value.(Data).Key {
		t.Errorf("key data flags %#x", subs[3].Flags)
	}
	if hb := subs[4].Value.(Heartbeat); hb != (Heartbeat{ReaderID: rdr, WriterID: wtr, FirstSN: 1, LastSN: 2, Count: 3, Final: true}) {
		t.Errorf("heartbeat %+v", hb)
	}
	if an := subs[6].Value.(AckNack); !reflect.DeepEqual(an.ReaderSNState.AppendMembers(nil), []SequenceNumber{3, 258}) || an.ReaderSNState.NumBits != 256 {
		t.Errorf("acknack %+v", an)
	}
	if subs[6].State.HaveTimestamp {
		t.Error("INFO_TS invalidate not applied")
	}
	if df := subs[8].Value.(DataFrag); !bytes.Equal(df.Fragments, []byte{4, 5}) {
		t.Errorf("datafrag %+v", df)
	}
	if nf := subs[9].Value.(NackFrag); !reflect.DeepEqual(nf.FragmentNumberState.AppendMembers(nil), []uint32{2}) {
		t.Errorf("nackfrag %+v", nf)
	}
	if st := subs[12].State; st.SourcePrefix != (GuidPrefix{5}) || st.NumUnicastReply != 1 || st.UnicastReply[0] != LoopbackUDPv4(7411) {
		t.Errorf("state %+v", st)
	}
}

func TestBuilderErrorsLeaveMessageUnchanged(t *testing.T) {
	var b Builder
	b.Reset(nil, Header{Version: ProtocolVersion21})
	b.Heartbeat(&Heartbeat{FirstSN: 1})
	n := b.Len()
	if err := b.AckNack(&AckNack{ReaderSNState: SequenceNumberSet{Base: 1, NumBits: 257}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("acknack 257: %v", err)
	}
	if err := b.Gap(&Gap{GapList: SequenceNumberSet{Base: 1, NumBits: 300}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("gap 300: %v", err)
	}
	if err := b.NackFrag(&NackFrag{FragmentNumberState: FragmentNumberSet{Base: 1, NumBits: 257}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("nackfrag 257: %v", err)
	}
	if err := b.Data(&Data{InlineQos: ParameterList{Data: []byte{1, 0, 0, 0}, BigEndian: true}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("BE inline QoS: %v", err)
	}
	if err := b.Data(&Data{InlineQos: ParameterList{Data: []byte{1, 0, 0}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unaligned inline QoS: %v", err)
	}
	if err := b.Data(&Data{SerializedPayload: make([]byte, 70000)}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("70000 byte payload: %v", err)
	}
	if b.Len() != n {
		t.Fatalf("length %d after errors, want %d", b.Len(), n)
	}
	if _, subs, err := decodeAll(b.Message()); err != nil || len(subs) != 1 {
		t.Fatalf("%v %v", subs, err)
	}
	// The largest DATA that fits.
	if err := b.Data(&Data{SerializedPayload: make([]byte, 0xfffc-20)}); err != nil {
		t.Errorf("max payload: %v", err)
	}
}

func TestBuilderBitsBeyondNumBitsNotSent(t *testing.T) {
	var b Builder
	b.Reset(nil, Header{Version: ProtocolVersion21})
	set := SequenceNumberSet{Base: 1, NumBits: 2, Bitmap: [8]uint32{0xffffffff, 0xffffffff}}
	if err := b.AckNack(&AckNack{ReaderSNState: set}); err != nil {
		t.Fatal(err)
	}
	msg := b.Message()
	// header 20 + sub header 4 + ids 8 + base 8 + numBits 4 + 1 word + count 4
	if len(msg) != 20+4+8+8+4+4+4 {
		t.Fatalf("length %d", len(msg))
	}
	if w := le.Uint32(msg[20+4+8+8+4:]); w != 0xc0000000 {
		t.Fatalf("bitmap word %#x", w)
	}
}

func TestBuilderAfterPrefix(t *testing.T) {
	// A message appended after 3 unrelated bytes still pads relative to its own start.
	var b Builder
	b.Reset([]byte{9, 9, 9}, Header{Version: ProtocolVersion21})
	if err := b.Data(&Data{WriterSN: 1, SerializedPayload: []byte{0, 1, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	b.Heartbeat(&Heartbeat{FirstSN: 1, LastSN: 1})
	if !bytes.Equal(b.Bytes()[:3], []byte{9, 9, 9}) {
		t.Fatal("prefix clobbered")
	}
	if _, subs, err := decodeAll(b.Message()); err != nil || len(subs) != 2 {
		t.Fatalf("%v %v", subs, err)
	}
}

func TestBuilderZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 2048)
	payload := []byte{0, 1, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0}
	var b Builder
	d := Data{ReaderID: rdr, WriterID: wtr, SerializedPayload: payload}
	hb := Heartbeat{ReaderID: rdr, WriterID: wtr, FirstSN: 1}
	an := AckNack{ReaderID: rdr, WriterID: wtr, ReaderSNState: SequenceNumberSet{Base: 1, NumBits: 40}}
	h := Header{Version: ProtocolVersion21, Vendor: VendorID{1, 0xff}, Prefix: testPrefix}
	var r Reader
	allocs := testing.AllocsPerRun(100, func() {
		b.Reset(buf[:0], h)
		b.InfoDst(testPrefix)
		b.InfoTS(Time{1, 2})
		d.WriterSN++
		_ = b.Data(&d)
		hb.LastSN = d.WriterSN
		b.Heartbeat(&hb)
		_ = b.AckNack(&an)
		_ = r.Reset(b.Message())
		for {
			sm, err := r.Next()
			if sm == nil || err != nil {
				break
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per encode+decode", allocs)
	}
}

// TestSPDPDocExample encodes the example of the wire notes (1.8) byte for byte.
func TestSPDPDocExample(t *testing.T) {
	p := ParticipantData{
		ProtocolVersion:            ProtocolVersion21,
		VendorID:                   VendorID{0x01, 0xff},
		GuidPrefix:                 testPrefix,
		BuiltinEndpoints:           BuiltinEndpointsMinimal,
		LeaseDuration:              DurationFromTime(20 * time.Second),
		HasDomainID:                true,
		MetatrafficUnicastLocators: []Locator{LoopbackUDPv4(7410)},
		DefaultUnicastLocators:     []Locator{LoopbackUDPv4(7411)},
		UserData:                   []byte("enclave=/;"),
	}
	got, err := p.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	zeros12 := make([]byte, 12)
	var want []byte
	add := func(b ...byte) { want = append(want, b...) }
	add(0x00, 0x03, 0x00, 0x00)
	add(0x15, 0x00, 0x04, 0x00, 0x02, 0x01, 0x00, 0x00)
	add(0x16, 0x00, 0x04, 0x00, 0x01, 0xff, 0x00, 0x00)
	add(0x50, 0x00, 0x10, 0x00)
	add(testPrefix[:]...)
	add(0x00, 0x00, 0x01, 0xc1)
	// The wire notes' example has BUILTIN_ENDPOINT_SET first; we write
	// the lease first, as both Cyclone DDS and Fast DDS do.
	add(0x02, 0x00, 0x08, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00)
	add(0x58, 0x00, 0x04, 0x00, 0x3f, 0x00, 0x00, 0x00)
	add(0x0f, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00)
	add(0x32, 0x00, 0x18, 0x00, 0x01, 0x00, 0x00, 0x00, 0xf2, 0x1c, 0x00, 0x00)
	add(zeros12...)
	add(0x7f, 0x00, 0x00, 0x01)
	add(0x31, 0x00, 0x18, 0x00, 0x01, 0x00, 0x00, 0x00, 0xf3, 0x1c, 0x00, 0x00)
	add(zeros12...)
	add(0x7f, 0x00, 0x00, 0x01)
	add(0x2c, 0x00, 0x10, 0x00, 0x0a, 0x00, 0x00, 0x00)
	add([]byte("enclave=/;")...)
	add(0x00, 0x00)
	add(0x01, 0x00, 0x00, 0x00)
	if len(want) != 148 {
		t.Fatalf("example is %d bytes", len(want))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n% x\nwant\n% x", got, want)
	}
	var back ParticipantData
	if err := back.Decode(got); err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("decode: %v\n%+v", err, back)
	}
}

func TestEndpointDataEncode(t *testing.T) {
	e := NewEndpointData(true)
	e.ProtocolVersion = ProtocolVersion21
	e.VendorID = VendorID{1, 0xff}
	e.EndpointGUID = GUID{testPrefix, wtr}
	e.ParticipantGUID = GUID{testPrefix, EntityIDParticipant}
	e.TopicName = "rt/clock"
	e.TypeName = "rosgraph_msgs::msg::dds_::Clock_"
	e.Reliability = Reliability{Kind: ReliabilityBestEffort, MaxBlockingTime: DurationFromTime(100 * time.Millisecond)}
	e.Durability = DurabilityTransientLocal
	e.History = History{Kind: HistoryKeepLast, Depth: 7}
	e.Deadline = DurationFromTime(time.Second)
	e.LatencyBudget = DurationFromTime(time.Millisecond)
	e.Liveliness = Liveliness{Kind: LivelinessManualByTopic, LeaseDuration: DurationFromTime(2 * time.Second)}
	e.Lifespan = DurationFromTime(10 * time.Second)
	e.Ownership = OwnershipExclusive
	e.OwnershipStrength = 5
	e.DestinationOrder = DestinationOrderBySource
	e.Presentation = Presentation{AccessScope: PresentationTopic, CoherentAccess: true}
	e.Partitions = []string{"a", "bcde", ""}
	e.UserData = []byte("typehash=RIHS01_00;")
	e.TopicData = []byte{1}
	e.GroupData = []byte{}
	e.DataRepresentation = []int16{DataRepresentationXCDR1}
	e.UnicastLocators = []Locator{LoopbackUDPv4(7411), LoopbackUDPv4(7413)}
	e.MulticastLocators = []Locator{LocatorUDPv4([4]byte{239, 255, 0, 1}, 7401)}
	e.HasTypeConsistency = true
	e.TypeConsistency = TypeConsistency{Kind: 1, IgnoreStringBounds: true, ForceTypeValidation: true}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := e.Encode([]byte{0xee})
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0xee {
		t.Fatal("prefix clobbered")
	}
	var back EndpointData
	if err := back.Decode(b[1:], false); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, e) {
		t.Fatalf("round trip\n%+v\n%+v", back, e)
	}
	// Every parameter is 4-aligned and the list ends with the sentinel.
	pl, _ := ParsePLPayload(b[1:])
	it := pl.Iter()
	for {
		if _, _, ok := it.Next(); !ok {
			break
		}
	}
	if it.Err() != nil || len(b[1:])%4 != 0 {
		t.Fatal(it.Err())
	}

	// Minimal: a default writer writes exactly the always-sent PIDs.
	m := NewEndpointData(true)
	m.EndpointGUID = e.EndpointGUID
	m.TopicName, m.TypeName = "t", "T"
	mb, _ := m.Encode(nil)
	pl, _ = ParsePLPayload(mb)
	var pids []ParameterID
	it = pl.Iter()
	for {
		pid, _, ok := it.Next()
		if !ok {
			break
		}
		pids = append(pids, pid)
	}
	want := []ParameterID{PIDTopicName, PIDTypeName, PIDReliability, PIDDurability, PIDHistory, PIDEndpointGUID}
	if !reflect.DeepEqual(pids, want) {
		t.Fatalf("pids %v, want %v", pids, want)
	}
	// A reader that leaves RELIABILITY out is best effort; a writer reliable.
	var r EndpointData
	noRel := []byte{0, 3, 0, 0, 1, 0, 0, 0}
	if err := r.Decode(noRel, false); err != nil || r.Reliability.Kind != ReliabilityBestEffort {
		t.Fatal(r.Reliability, err)
	}
	if err := r.Decode(noRel, true); err != nil || r.Reliability.Kind != ReliabilityReliable {
		t.Fatal(r.Reliability, err)
	}
	if r.Validate() == nil {
		t.Fatal("empty endpoint validated")
	}
	bad := e
	bad.ParticipantGUID.Prefix[0]++
	if bad.Validate() == nil {
		t.Fatal("mismatched participant GUID validated")
	}
}

func TestEncodeTooLarge(t *testing.T) {
	e := NewEndpointData(true)
	e.TopicName = string(make([]byte, 70000))
	if _, err := e.Encode(nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	p := ParticipantData{UserData: make([]byte, 65533)}
	if _, err := p.Encode(nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
}
