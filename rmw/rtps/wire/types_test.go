package wire

import (
	"errors"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

func TestTimeConversions(t *testing.T) {
	tests := []struct {
		ns   int64
		want Time
	}{
		{0, Time{0, 0}},
		{500_000_000, Time{0, 0x80000000}},
		{1_500_000_000, Time{1, 0x80000000}},
		{100_000_000, Time{0, 429496730}}, // Fast DDS sends 100 ms like this
		{1, Time{0, 4}},
		{999_999_999, Time{0, 4294967292}},
		{-500_000_000, Time{-1, 0x80000000}},
		{math.MaxInt64, TimeInfinite},
	}
	for _, tt := range tests {
		if got := TimeFromNanos(tt.ns); got != tt.want {
			t.Errorf("TimeFromNanos(%d) = %+v, want %+v", tt.ns, got, tt.want)
		}
	}
	// Nanosecond round trips are exact.
	for _, ns := range []int64{0, 1, 2, 3, 999_999_999, 1_000_000_000, 1796156815701936708, 123_456_789, -1, -999_999_999} {
		if got := TimeFromNanos(ns).Nanos(); got != ns {
			t.Errorf("round trip %d -> %d", ns, got)
		}
	}
	for ns := int64(0); ns < 1_000_000_000; ns += 999_983 {
		if got := TimeFromNanos(ns).Nanos(); got != ns {
			t.Fatalf("round trip %d -> %d", ns, got)
		}
	}
	if TimeInfinite.Nanos() != math.MaxInt64 {
		t.Error("infinite")
	}
	tt := time.Unix(100, 250_000_000)
	if got := TimeFromTime(tt); got != (Time{100, 0x40000000}) {
		t.Errorf("TimeFromTime %+v", got)
	}
}

func TestDurationConversions(t *testing.T) {
	if d := DurationFromTime(100 * time.Millisecond); d != (Duration{0, 429496730}) {
		t.Errorf("100ms = %+v", d)
	}
	if d := DurationFromTime(20 * time.Second); d != (Duration{20, 0}) {
		t.Errorf("20s = %+v", d)
	}
	if d := DurationFromTime(-1); d != DurationZero {
		t.Errorf("negative = %+v", d)
	}
	if d := DurationFromTime(math.MaxInt64); !d.IsInfinite() {
		t.Errorf("max = %+v", d)
	}
	if DurationInfinite.Std() != math.MaxInt64 || !(Duration{0x7fffffff, 0}).IsInfinite() {
		t.Error("infinite")
	}
	if (Duration{-3, 0}).Std() != 0 {
		t.Error("negative Std")
	}
	for _, d := range []time.Duration{0, 1, time.Millisecond, 1500 * time.Millisecond, 10 * time.Hour} {
		if got := DurationFromTime(d).Std(); got != d {
			t.Errorf("round trip %v -> %v", d, got)
		}
	}
}

func TestSequenceNumber(t *testing.T) {
	sn := SequenceNumberFromHighLow(1, 5)
	if sn != 1<<32+5 || sn.High() != 1 || sn.Low() != 5 {
		t.Error(sn)
	}
	if SequenceNumberUnknown.High() != -1 || SequenceNumberUnknown.Low() != 0 {
		t.Error("unknown")
	}
}

func TestSets(t *testing.T) {
	var s SequenceNumberSet
	s.Base = 10
	if !s.Empty() || s.Contains(10) {
		t.Error("empty set")
	}
	for _, sn := range []SequenceNumber{10, 41, 42, 265} {
		if !s.Add(sn) {
			t.Errorf("Add(%d)", sn)
		}
	}
	if s.Add(9) || s.Add(266) {
		t.Error("out of range Add")
	}
	if s.NumBits != 256 || s.Empty() {
		t.Errorf("numBits %d", s.NumBits)
	}
	if got := s.AppendMembers(nil); !reflect.DeepEqual(got, []SequenceNumber{10, 41, 42, 265}) {
		t.Errorf("members %v", got)
	}
	if !s.Contains(42) || s.Contains(43) || s.Contains(266) {
		t.Error("Contains")
	}
	// Corrupt NumBits beyond 256 must not panic.
	s.NumBits = 1000
	_ = s.AppendMembers(nil)
	_ = s.Contains(300)
	_ = s.Empty()

	var f FragmentNumberSet
	f.Base = 1
	f.Add(1)
	f.Add(256)
	if f.Add(257) || f.Add(0) || !f.Contains(256) || f.Contains(2) {
		t.Error("fragment set")
	}
	if got := f.AppendMembers(nil); !reflect.DeepEqual(got, []uint32{1, 256}) {
		t.Errorf("members %v", got)
	}
	var bm [8]uint32
	for i := range bm {
		bm[i] = 0xffffffff
	}
	maskBitmap(&bm, 33)
	if bm != [8]uint32{0xffffffff, 0x80000000} {
		t.Errorf("mask %x", bm)
	}
}

func TestEntityID(t *testing.T) {
	tests := []struct {
		e                                  EntityID
		writer, reader, key, builtin, vend bool
	}{
		{EntityIDSPDPWriter, true, false, true, true, false},
		{EntityIDSEDPSubscriptionsReader, false, true, true, true, false},
		{NewEntityID(0x12, EntityKindWriterNoKey), true, false, false, false, false},
		{NewEntityID(0x12, EntityKindReaderNoKey), false, true, false, false, false},
		{NewEntityID(0x12, EntityKindReaderWithKey), false, true, true, false, false},
		{EntityIDParticipant, false, false, false, true, false},
		{EntityIDTypeLookupRequestReader, false, true, false, true, false},
		{EntityID{0, 0, 1, 0x43}, true, false, false, false, true},
	}
	for _, tt := range tests {
		if tt.e.IsWriter() != tt.writer || tt.e.IsReader() != tt.reader || tt.e.HasKey() != tt.key ||
			tt.e.IsBuiltin() != tt.builtin || tt.e.IsVendorSpecific() != tt.vend {
			t.Errorf("%v: writer %v reader %v key %v builtin %v vendor %v", tt.e, tt.e.IsWriter(), tt.e.IsReader(), tt.e.HasKey(), tt.e.IsBuiltin(), tt.e.IsVendorSpecific())
		}
	}
	e := NewEntityID(0xabcdef, 0x03)
	if e != (EntityID{0xab, 0xcd, 0xef, 0x03}) || e.Key() != 0xabcdef || e.Kind() != 3 || e.String() != "abcdef03" {
		t.Error(e)
	}
	g := GUID{testPrefix, e}
	if GUIDFromBytes(g.Bytes()) != g || g.IsZero() || !(GUID{}).IsZero() {
		t.Error(g)
	}
	if g.String() != "01ffaabb.ccdd0000.00010000|abcdef03" {
		t.Error(g.String())
	}
}

func TestLocator(t *testing.T) {
	l := LoopbackUDPv4(7410)
	if l.Kind != LocatorKindUDPv4 || l.Port != 7410 || l.Address != [16]byte{12: 127, 15: 1} {
		t.Errorf("%+v", l)
	}
	if !l.IsLoopback() || l.IsMulticast() || l.String() != "udpv4:127.0.0.1:7410" {
		t.Error(l)
	}
	ap, ok := l.AddrPort()
	if !ok || ap != netip.MustParseAddrPort("127.0.0.1:7410") {
		t.Error(ap)
	}
	if LocatorFromAddrPort(ap) != l {
		t.Error("from addrport")
	}
	if LocatorFromAddrPort(netip.MustParseAddrPort("[::ffff:127.0.0.1]:7410")) != l {
		t.Error("4in6")
	}
	mc := LocatorUDPv4([4]byte{239, 255, 0, 1}, 7400)
	if !mc.IsMulticast() {
		t.Error("multicast")
	}
	v6 := LocatorFromAddrPort(netip.MustParseAddrPort("[::1]:7411"))
	if v6.Kind != LocatorKindUDPv6 || !v6.IsLoopback() {
		t.Error(v6)
	}
	shm := Locator{Kind: LocatorKindSHM, Port: 1}
	if _, ok := shm.AddrPort(); ok || shm.IsLoopback() {
		t.Error("shm")
	}
	if _, ok := (Locator{Kind: LocatorKindUDPv4, Port: 70000}).AddrPort(); ok {
		t.Error("port > 65535")
	}
	_ = shm.String()
}

func TestUserDataValue(t *testing.T) {
	tests := []struct {
		ud, key, want string
		ok            bool
	}{
		{"enclave=/;", "enclave", "/", true},
		{"enclave=/;\x00", "enclave", "/", true},
		{"enclave=/", "enclave", "/", true},
		{"typehash=RIHS01_ab;enclave=/x;", "enclave", "/x", true},
		{"clientid=1.2.3;", "enclave", "", false},
		{"", "enclave", "", false},
		{"enclave", "enclave", "", false},
		{"a=b=c;", "a", "b=c", true},
	}
	for _, tt := range tests {
		got, ok := UserDataValue([]byte(tt.ud), tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("UserDataValue(%q, %q) = %q, %v", tt.ud, tt.key, got, ok)
		}
	}
}

func TestParameterList(t *testing.T) {
	mk := func(bigEndian bool, params ...[]byte) []byte {
		out := []byte{0, 3, 0, 0}
		if bigEndian {
			out[1] = 2
		}
		for _, p := range params {
			out = append(out, p...)
		}
		return out
	}
	p := func(bigEndian bool, pid ParameterID, val ...byte) []byte {
		w := bw(!bigEndian).u16(uint16(pid)).u16(uint16(len(val)))
		return w.raw(val...).buf
	}
	guid := append(append([]byte{}, testPrefix[:]...), 0, 0, 1, 0xc1)
	sentinel := []byte{1, 0, 0, 0}
	sentinelBE := []byte{0, 1, 0, 0}
	tests := []struct {
		name    string
		payload []byte
		err     error
		check   func(*ParticipantData) bool
	}{
		{"minimal", mk(false, p(false, PIDParticipantGUID, guid...), sentinel), nil,
			func(d *ParticipantData) bool {
				return d.GuidPrefix == testPrefix && d.LeaseDuration == DefaultLeaseDuration
			}},
		{"big endian", mk(true, p(true, PIDParticipantGUID, guid...), p(true, PIDBuiltinEndpointSet, 0, 0, 0, 0x3f),
			p(true, PIDParticipantLeaseDuration, 0, 0, 0, 20, 0, 0, 0, 0), sentinelBE), nil,
			func(d *ParticipantData) bool {
				return d.GuidPrefix == testPrefix && d.BuiltinEndpoints == 0x3f && d.LeaseDuration == (Duration{20, 0})
			}},
		{"PID_PAD skipped", mk(false, p(false, PIDPad, 0, 0, 0, 0), p(false, PIDParticipantGUID, guid...), sentinel), nil,
			func(d *ParticipantData) bool { return d.GuidPrefix == testPrefix }},
		{"unknown skipped", mk(false, p(false, 0x0bad, 1, 2, 3, 4), p(false, PIDParticipantGUID, guid...), sentinel), nil, nil},
		{"vendor skipped", mk(false, p(false, 0x8007, 1, 2, 3, 4), sentinel), nil, nil},
		{"vendor with must-understand bit skipped", mk(false, p(false, 0xc001, 1, 2, 3, 4), sentinel), nil, nil},
		{"unknown must-understand rejected", mk(false, p(false, 0x4001, 1, 2, 3, 4), sentinel), ErrMustUnderstand, nil},
		{"domain tag understood", mk(false, p(false, PIDDomainTag, 2, 0, 0, 0, 'x', 0, 0, 0), sentinel), nil,
			func(d *ParticipantData) bool { return d.DomainTag == "x" }},
		{"old builtin endpoints PID", mk(false, p(false, PIDParticipantBuiltinEndpoints, 0x3f, 0, 0, 0), sentinel), nil,
			func(d *ParticipantData) bool { return d.BuiltinEndpoints == 0x3f }},
		{"both builtin PIDs: 0x58 wins", mk(false, p(false, PIDBuiltinEndpointSet, 0x3f, 0, 0, 0), p(false, PIDParticipantBuiltinEndpoints, 1, 0, 0, 0), sentinel), nil,
			func(d *ParticipantData) bool { return d.BuiltinEndpoints == 0x3f }},
		{"unaligned length rounded up", mk(false, p(false, PIDUserData, 3, 0, 0, 0, 'a', 'b', 'c'), []byte{0}, sentinel), nil,
			func(d *ParticipantData) bool { return string(d.UserData) == "abc" }},
		{"no sentinel", mk(false, p(false, PIDParticipantGUID, guid...)), ErrNoSentinel, nil},
		{"length beyond end", mk(false, p(false, PIDParticipantGUID, guid...)[:12]), ErrTruncated, nil},
		{"short GUID", mk(false, p(false, PIDParticipantGUID, guid[:12]...), sentinel), ErrBadParameter, nil},
		{"short lease", mk(false, p(false, PIDParticipantLeaseDuration, 1, 0, 0, 0), sentinel), ErrBadParameter, nil},
		{"user data length too big", mk(false, p(false, PIDUserData, 9, 0, 0, 0, 'a', 'b', 'c', 'd'), sentinel), ErrBadParameter, nil},
		{"string length too big", mk(false, p(false, PIDEntityName, 9, 0, 0, 0, 'a', 'b', 'c', 0), sentinel), ErrBadParameter, nil},
		{"CDR encapsulation refused", append([]byte{0, 1, 0, 0}, sentinel...), ErrBadEncapsulation, nil},
		{"short encapsulation", []byte{0, 3}, ErrTruncated, nil},
		{"data after sentinel ignored", mk(false, sentinel, []byte{0xff, 0xff}), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d ParticipantData
			err := d.Decode(tt.payload)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v does not wrap ErrMalformed", err)
			}
			if tt.check != nil && !tt.check(&d) {
				t.Fatalf("%+v", d)
			}
		})
	}
}

func TestEndpointDataDecodeErrors(t *testing.T) {
	p := func(pid ParameterID, val ...byte) []byte {
		return append(bw(true).u16(uint16(pid)).u16(uint16(len(val))).raw(val...).buf, 1, 0, 0, 0)
	}
	enc := []byte{0, 3, 0, 0}
	tests := []struct {
		name string
		pl   []byte
		err  error
	}{
		{"reliability 0", p(PIDReliability, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrBadParameter},
		{"reliability 3", p(PIDReliability, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrBadParameter},
		{"reliability kind only", p(PIDReliability, 2, 0, 0, 0), nil},
		{"durability 4", p(PIDDurability, 4, 0, 0, 0), ErrBadParameter},
		{"history 2", p(PIDHistory, 2, 0, 0, 0, 1, 0, 0, 0), ErrBadParameter},
		{"liveliness 3", p(PIDLiveliness, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrBadParameter},
		{"ownership 2", p(PIDOwnership, 2, 0, 0, 0), ErrBadParameter},
		{"destination order 2", p(PIDDestinationOrder, 2, 0, 0, 0), ErrBadParameter},
		{"presentation 3", p(PIDPresentation, 3, 0, 0, 0, 0, 0, 0, 0), ErrBadParameter},
		{"partition count too big", p(PIDPartition, 3, 0, 0, 0, 1, 0, 0, 0), ErrBadParameter},
		{"partition empty", p(PIDPartition, 0, 0, 0, 0), nil},
		{"data representation too long", p(PIDDataRepresentation, 3, 0, 0, 0, 0, 0, 0, 0), ErrBadParameter},
		{"must understand", p(0x4abc), ErrMustUnderstand},
		{"short topic", p(PIDTopicName, 1, 0), ErrBadParameter},
	}
	for _, tt := range tests {
		var e EndpointData
		if err := e.Decode(append(append([]byte{}, enc...), tt.pl...), true); !errors.Is(err, tt.err) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.err)
		}
	}
}

func TestInlineQos(t *testing.T) {
	q := InlineQos{
		HasKeyHash: true, KeyHash: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 1, 0xc1},
		HasStatusInfo: true, StatusInfo: StatusInfoDisposed | StatusInfoUnregistered,
		HasRelatedSampleIdentity: true, RelatedSampleIdentity: SampleIdentity{GUID{testPrefix, rdr}, 42},
	}
	b := q.Append(nil)
	// key hash 20 + status 8 + 2 × related 28 + sentinel 4
	if len(b) != 20+8+56+4 {
		t.Fatalf("length %d", len(b))
	}
	// STATUS_INFO flags in the last byte whatever the list order.
	if b[20+7] != 3 || b[20+4] != 0 {
		t.Fatalf("status info % x", b[20:28])
	}
	got, err := DecodeInlineQos(ParameterList{Data: b})
	if err != nil || got != q {
		t.Fatalf("%+v %v", got, err)
	}
	allocs := testing.AllocsPerRun(100, func() { _, _ = DecodeInlineQos(ParameterList{Data: b}) })
	if allocs != 0 {
		t.Errorf("DecodeInlineQos allocates %v", allocs)
	}
	// 0x0083 wins over 0x800f whatever the order.
	legacyFirst := AppendParameter(nil, PIDFastDDSRelatedSampleIdentity, make([]byte, 24))
	rsi := make([]byte, 24)
	rsi[23] = 7 // SN low = 7<<24 in LE
	legacyFirst = AppendSentinel(AppendParameter(legacyFirst, PIDRelatedSampleIdentity, rsi))
	got, err = DecodeInlineQos(ParameterList{Data: legacyFirst})
	if err != nil || got.RelatedSampleIdentity.SN != 7<<24 {
		t.Fatalf("%+v %v", got, err)
	}
	// Errors.
	for name, list := range map[string][]byte{
		"must understand":   AppendSentinel(AppendParameter(nil, 0x4070, nil)),
		"short key hash":    AppendSentinel(AppendParameter(nil, PIDKeyHash, make([]byte, 12))),
		"short status info": AppendSentinel(AppendParameter(nil, PIDStatusInfo, nil)),
		"short related":     AppendSentinel(AppendParameter(nil, PIDRelatedSampleIdentity, make([]byte, 20))),
		"no sentinel":       AppendParameter(nil, PIDStatusInfo, make([]byte, 4)),
	} {
		if _, err := DecodeInlineQos(ParameterList{Data: list}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if b := (&InlineQos{}).Append(nil); len(b) != 4 {
		t.Errorf("empty inline QoS % x", b)
	}
	if v, ok := (ParameterList{Data: legacyFirst}).Find(PIDRelatedSampleIdentity); !ok || len(v) != 24 {
		t.Error("Find")
	}
	if _, ok := (ParameterList{Data: legacyFirst}).Find(PIDKeyHash); ok {
		t.Error("Find absent")
	}
}

func TestValidity(t *testing.T) {
	hbs := []struct {
		first, last SequenceNumber
		ok          bool
	}{{1, 0, true}, {1, 1, true}, {5, 4, true}, {5, 3, false}, {0, 0, false}, {1, -1, false}}
	for _, tt := range hbs {
		h := Heartbeat{FirstSN: tt.first, LastSN: tt.last}
		if h.Valid() != tt.ok {
			t.Errorf("heartbeat %d..%d valid=%v", tt.first, tt.last, h.Valid())
		}
	}
	if (&Gap{GapStart: 0, GapList: SequenceNumberSet{Base: 1}}).Valid() || !(&Gap{GapStart: 1, GapList: SequenceNumberSet{Base: 1}}).Valid() {
		t.Error("gap")
	}
	if (&AckNack{}).Valid() || !(&AckNack{ReaderSNState: SequenceNumberSet{Base: 1}}).Valid() {
		t.Error("acknack")
	}
	st := ReceiverState{}
	if !st.IsFor(testPrefix) {
		t.Error("unknown dest")
	}
	st.DestPrefix = GuidPrefix{1}
	if st.IsFor(testPrefix) || !st.IsFor(GuidPrefix{1}) {
		t.Error("dest")
	}
}

func TestKeyHashFallback(t *testing.T) {
	g := GUID{testPrefix, wtr}
	kh := g.Bytes()
	other := GUID{GuidPrefix{9}, rdr}.Bytes()
	pl := AppendSentinel(AppendParameter(AppendParameter([]byte{0, 3, 0, 0}, PIDKeyHash, kh[:]), PIDEndpointGUID, other[:]))
	var e EndpointData
	if err := e.Decode(pl, true); err != nil || e.EndpointGUID != GUIDFromBytes(other) {
		t.Fatalf("ENDPOINT_GUID must win: %v %v", e.EndpointGUID, err)
	}
	pl = AppendSentinel(AppendParameter([]byte{0, 3, 0, 0}, PIDKeyHash, kh[:]))
	if err := e.Decode(pl, true); err != nil || e.EndpointGUID != g {
		t.Fatalf("KEY_HASH fallback: %v %v", e.EndpointGUID, err)
	}
	var p ParticipantData
	if err := p.Decode(pl); err != nil || p.GuidPrefix != testPrefix {
		t.Fatalf("SPDP KEY_HASH fallback: %v %v", p.GuidPrefix, err)
	}
}
