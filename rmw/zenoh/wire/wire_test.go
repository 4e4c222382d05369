package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestZint(t *testing.T) {
	cases := []struct {
		v   uint64
		enc string
	}{
		{0, "00"},
		{1, "01"},
		{127, "7f"},
		{128, "8001"},
		{300, "ac02"},
		{16383, "ff7f"},
		{16384, "808001"},
		{0xffffffff, "ffffffff0f"},
		{1 << 56, "808080808080808001"},
		{1<<63 - 1, "ffffffffffffffff7f"},
		{^uint64(0), "ffffffffffffffffff"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(AppendZint(nil, c.v))
		if got != c.enc {
			t.Errorf("AppendZint(%d) = %s, want %s", c.v, got, c.enc)
		}
		if n := ZintLen(c.v); n != len(c.enc)/2 {
			t.Errorf("ZintLen(%d) = %d, want %d", c.v, n, len(c.enc)/2)
		}
		b, _ := hex.DecodeString(c.enc + "ee")
		v, n, err := DecodeZint(b)
		if err != nil || v != c.v || n != len(c.enc)/2 {
			t.Errorf("DecodeZint(%s) = %d, %d, %v", c.enc, v, n, err)
		}
	}
	// zenoh accepts non-minimal encodings
	if v, n, err := DecodeZint([]byte{0x80, 0x00}); v != 0 || n != 2 || err != nil {
		t.Errorf("non-minimal zero: %d %d %v", v, n, err)
	}
	for _, bad := range []string{"", "80", "ffffffff", "8080808080808080"} {
		b, _ := hex.DecodeString(bad)
		if _, _, err := DecodeZint(b); !errors.Is(err, ErrTruncated) {
			t.Errorf("DecodeZint(%q) error %v, want ErrTruncated", bad, err)
		}
	}
}

func TestZenohIDString(t *testing.T) {
	// zlivewatch printed "self aeed2eebc243ccbf6adc9db3f0c1d798" for the id
	// it sent as 98d7c1f0b39ddc6abfcc43c2eb2eedae (capture).
	b, _ := hex.DecodeString("98d7c1f0b39ddc6abfcc43c2eb2eedae")
	z, err := NewZenohID(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := z.String(); s != "aeed2eebc243ccbf6adc9db3f0c1d798" {
		t.Errorf("String = %s", s)
	}
	p, err := ParseZenohID(z.String())
	if err != nil || p != z {
		t.Errorf("ParseZenohID round trip: %v %v", p, err)
	}
	short, _ := NewZenohID([]byte{0x01, 0x0a, 0, 0})
	if short.Len() != 2 || short.String() != "a01" {
		t.Errorf("short id: len %d string %s", short.Len(), short.String())
	}
	if _, err := NewZenohID(make([]byte, 4)); err == nil {
		t.Error("zero id accepted")
	}
	if _, err := NewZenohID(make([]byte, 17)); err == nil {
		t.Error("17-byte id accepted")
	}
	for _, s := range []string{"", "xyz", "AB", strings.Repeat("1", 33), "0"} {
		if _, err := ParseZenohID(s); err == nil {
			t.Errorf("ParseZenohID(%q) accepted", s)
		}
	}
	r := RandomZenohID()
	if r.Len() != 16 || r.IsZero() {
		t.Errorf("random id %v", r)
	}
}

func TestQoS(t *testing.T) {
	var q QoS
	if q.Byte() != 5 || q.Priority() != PriorityData || q.CongestionControl() != Drop || q.Express() || !q.IsDefault() {
		t.Errorf("zero QoS = %#x", q.Byte())
	}
	q = MakeQoS(PriorityControl, Block, false)
	if q.Byte() != 0x08 || q != QoSDeclare {
		t.Errorf("declare QoS = %#x", q.Byte())
	}
	q = MakeQoS(PriorityRealTime, BlockFirst, true)
	if q.Byte() != 0x31 || q.Priority() != PriorityRealTime || q.CongestionControl() != BlockFirst || !q.Express() {
		t.Errorf("QoS %#x", q.Byte())
	}
}

// capture is one batch of a recorded zenoh-pico conversation.
type capture struct {
	file string
	line int
	dir  string
	b    []byte
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "pico", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var out []capture
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			dir, hx, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			b, err := hex.DecodeString(hx)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			out = append(out, capture{filepath.Base(f), n, dir, b})
		}
		fh.Close()
	}
	return out
}

// TestPicoCaptures decodes every batch zenoh-pico sent and checks that
// encoding the decoded messages gives back the same bytes.
func TestPicoCaptures(t *testing.T) {
	var kinds = map[string]int{}
	for _, c := range loadCaptures(t) {
		var re []byte
		err := DecodeBatch(c.b, func(m TransportMessage) error {
			kinds[reflect.TypeOf(m).Elem().Name()]++
			if f, ok := m.(*Frame); ok {
				var payload []byte
				err := DecodeFrame(f.Payload, func(n NetworkMessage) error {
					kinds[reflect.TypeOf(n).Elem().Name()]++
					if d, ok := n.(*Declare); ok {
						kinds[reflect.TypeOf(d.Body).Elem().Name()]++
					}
					var err error
					payload, err = AppendNetwork(payload, n)
					return err
				})
				if err != nil {
					return err
				}
				f2 := *f
				f2.Payload = payload
				m = &f2
			}
			var err error
			re, err = AppendTransport(re, m)
			return err
		})
		if err != nil {
			t.Errorf("%s:%d %s: %v", c.file, c.line, c.dir, err)
			continue
		}
		if !bytes.Equal(re, c.b) {
			t.Errorf("%s:%d: re-encoded\n %x\nwant\n %x", c.file, c.line, re, c.b)
		}
	}
	for _, k := range []string{"Init", "Open", "Frame", "Close", "KeepAlive", "Declare", "Push", "Interest",
		"DeclareKeyExpr", "DeclareSubscriber", "DeclareToken", "DeclareFinal", "UndeclareSubscriber",
		"UndeclareToken", "UndeclareKeyExpr"} {
		if kinds[k] == 0 {
			t.Errorf("captures hold no %s", k)
		}
	}
	t.Logf("decoded: %v", kinds)
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPicoHandshakeVectors(t *testing.T) {
	// InitSyn of zclocksub (--mode peer) as captured.
	m, n, err := DecodeTransport(mustHex(t, "c109f12adcba7de57497de35ea9ef6feea5b530a00082701"))
	if err != nil {
		t.Fatal(err)
	}
	in := m.(*Init)
	if n != 24 || in.Ack || in.Version != Version || in.WhatAmI != Peer || in.ZID.Len() != 16 ||
		in.Resolution != DefaultResolution || in.BatchSize != 2048 || in.Patch != PatchCurrent || in.QoS || len(in.Cookie) != 0 {
		t.Errorf("InitSyn = %+v", in)
	}
	// InitAck of zclockpub: empty cookie.
	m, _, err = DecodeTransport(mustHex(t, "e109f1cd159c34332cfdafd1c4eba7c2f507b40a0008002701"))
	if err != nil {
		t.Fatal(err)
	}
	if ack := m.(*Init); !ack.Ack || ack.Cookie == nil || len(ack.Cookie) != 0 || ack.BatchSize != 2048 {
		t.Errorf("InitAck = %+v", ack)
	}
	// OpenSyn: lease 10 s in seconds, initial sn 0, empty cookie.
	m, _, err = DecodeTransport(mustHex(t, "420a0000"))
	if err != nil {
		t.Fatal(err)
	}
	if o := m.(*Open); o.Ack || o.Lease != 10*time.Second || o.InitialSN != 0 {
		t.Errorf("OpenSyn = %+v", o)
	}
	// A PUSH of zclockpub: scope 3 in the sender's mapping, 33-byte
	// attachment, the CDR of rosgraph_msgs/Clock {1, 0}.
	m, _, err = DecodeTransport(mustHex(t, "25065d038143210100000000000000f7c1b4a24c7ded1810b3ce68cb96c5d9ec1a3d7d2d89c20efd0c000100000100000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	f := m.(*Frame)
	if !f.Reliable || f.SN != 6 || f.Priority != PriorityData {
		t.Errorf("frame = %+v", f)
	}
	nm, _, err := DecodeNetwork(f.Payload)
	if err != nil {
		t.Fatal(err)
	}
	p := nm.(*Push)
	put := p.Body.(*Put)
	if p.WireExpr != (WireExpr{Scope: 3, SenderMapping: true}) || !p.QoS.IsDefault() || len(put.Attachment) != 33 ||
		put.Attachment[16] != 0x10 || binary.LittleEndian.Uint64(put.Attachment) != 1 ||
		!bytes.Equal(put.Payload, mustHex(t, "000100000100000000000000")) {
		t.Errorf("push = %+v put = %+v", p, put)
	}
}

func roundTripTransport(t *testing.T, m TransportMessage) {
	t.Helper()
	b, err := AppendTransport(nil, m)
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	got, n, err := DecodeTransport(b)
	if err != nil {
		t.Fatalf("decode %T %x: %v", m, b, err)
	}
	if n != len(b) {
		t.Errorf("%T: decoded %d of %d bytes", m, n, len(b))
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("%T round trip:\n got %+v\nwant %+v", m, got, m)
	}
	b2, _ := AppendTransport(nil, got)
	if !bytes.Equal(b, b2) {
		t.Errorf("%T re-encoding differs: %x vs %x", m, b, b2)
	}
}

func roundTripNetwork(t *testing.T, m NetworkMessage) []byte {
	t.Helper()
	b, err := AppendNetwork(nil, m)
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	got, n, err := DecodeNetwork(b)
	if err != nil {
		t.Fatalf("decode %T %x: %v", m, b, err)
	}
	if n != len(b) {
		t.Errorf("%T: decoded %d of %d bytes", m, n, len(b))
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("%T round trip:\n got %#v\nwant %#v", m, got, m)
	}
	return b
}

func TestTransportRoundTrip(t *testing.T) {
	zid := RandomZenohID()
	short, _ := NewZenohID([]byte{7})
	roundTripTransport(t, &Init{Version: Version, WhatAmI: Client, ZID: zid, Resolution: DefaultResolution, BatchSize: 65535})
	roundTripTransport(t, &Init{Ack: true, Version: Version, WhatAmI: Router, ZID: short,
		Resolution: DefaultResolution.With(Bits16, Bits8), BatchSize: 1024, Cookie: []byte{1, 2, 3},
		QoS: true, LowLatency: true, Compression: true, Patch: PatchCurrent,
		Unknown: []Ext{{ID: 0x43, Buf: []byte("auth")}, {ID: 0x44, Buf: []byte{}}}})
	roundTripTransport(t, &Init{Version: Version, WhatAmI: Peer, ZID: zid, Resolution: DefaultResolution,
		BatchSize: 65535, HasQoSLink: true, QoSLink: 0x1234567, Cookie: nil})
	roundTripTransport(t, &Open{Lease: 10 * time.Second, InitialSN: 0x0fffffff, Cookie: []byte("cookie"), QoS: true})
	roundTripTransport(t, &Open{Ack: true, Lease: 2500 * time.Millisecond, InitialSN: 3, LowLatency: true,
		Unknown: []Ext{{ID: 0x22, Z64: 99}}})
	roundTripTransport(t, &Close{Session: true, Reason: CloseExpired})
	roundTripTransport(t, &Close{Reason: CloseMaxLinks})
	roundTripTransport(t, &KeepAlive{})
	roundTripTransport(t, &Frame{Reliable: true, SN: 1 << 27, Priority: PriorityData, Payload: []byte{0x1e, 0x1a}})
	roundTripTransport(t, &Frame{SN: 5, Priority: PriorityRealTime, Payload: []byte{}})
	roundTripTransport(t, &Fragment{Reliable: true, More: true, SN: 9, Priority: PriorityData, First: true, Payload: []byte{1, 2}})
	roundTripTransport(t, &Fragment{SN: 10, Priority: PriorityBackground, Drop: true, Payload: []byte{}})
	roundTripTransport(t, &Join{Version: Version, WhatAmI: Peer, ZID: zid, Resolution: DefaultResolution,
		BatchSize: 8192, Lease: 3 * time.Second, NextSN: PrioritySN{1, 2}})
	q := [NumPriorities]PrioritySN{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14}, {15, 16}}
	roundTripTransport(t, &Join{Version: Version, WhatAmI: Router, ZID: zid, Resolution: DefaultResolution.With(Bits64, Bits64),
		BatchSize: 2048, Lease: 1500 * time.Millisecond, NextSN: PrioritySN{1, 2}, QoS: &q, Shm: []byte{9}, Patch: 1})
	roundTripTransport(t, &TransportOAM{ID: 1, Priority: PriorityData, Body: Ext{ID: ExtEncZBuf, Buf: []byte("x")}})
	roundTripTransport(t, &TransportOAM{ID: 2, Priority: PriorityControl, Body: Ext{ID: ExtEncZ64, Z64: 7}})
}

func TestNetworkRoundTrip(t *testing.T) {
	zid := RandomZenohID()
	ts := &Timestamp{Time: 0x1234567890, ID: zid}
	att := make([]byte, 33)
	att[16] = 16
	roundTripNetwork(t, &Push{WireExpr: WireExpr{Suffix: "0/chatter/std_msgs::msg::dds_::String_/RIHS01_x"},
		Body: &Put{Attachment: att, Payload: []byte{0, 1, 0, 0}}})
	roundTripNetwork(t, &Push{WireExpr: WireExpr{Scope: 7, Suffix: "/x", SenderMapping: true},
		QoS: MakeQoS(PriorityRealTime, Block, true), Timestamp: ts, NodeID: 3,
		Body: &Put{Timestamp: ts, Encoding: Encoding{ID: 4, Schema: []byte("s")},
			SourceInfo: &SourceInfo{ID: EntityGlobalID{ZID: zid, EID: 77}, SN: 9}, Attachment: []byte{},
			Unknown: []Ext{{ID: 0x24, Z64: 1}}, Payload: []byte{}}})
	roundTripNetwork(t, &Push{WireExpr: WireExpr{Scope: 1}, Body: &Del{Timestamp: ts, Attachment: []byte{1}}})
	roundTripNetwork(t, &Request{ID: 42, WireExpr: WireExpr{Suffix: "@ros2_lv/0/**"}, QoS: QoSRequest,
		Target: TargetAll, Budget: 5, Timeout: 10 * time.Second, NodeID: 1,
		Query: &Query{Consolidation: ConsolidationNone, Parameters: "a=1;b=2",
			SourceInfo: &SourceInfo{ID: EntityGlobalID{ZID: zid, EID: 1}, SN: 2},
			Body:       &QueryBody{Encoding: Encoding{ID: 1}, Payload: []byte("body")}, Attachment: att}})
	roundTripNetwork(t, &Request{ID: 1, WireExpr: WireExpr{Suffix: "a"}, Query: &Query{}})
	roundTripNetwork(t, &Response{RequestID: 42, WireExpr: WireExpr{Suffix: "a/b"}, QoS: QoSResponse,
		ResponderID: &EntityGlobalID{ZID: zid, EID: 3},
		Body:        &Reply{Consolidation: ConsolidationLatest, Body: &Put{Attachment: att, Payload: []byte("r")}}})
	roundTripNetwork(t, &Response{RequestID: 43, WireExpr: WireExpr{Suffix: "a/b"},
		Body: &Err{Encoding: Encoding{ID: 8}, Payload: []byte("boom")}})
	roundTripNetwork(t, &ResponseFinal{RequestID: 42, QoS: QoSResponse})
	roundTripNetwork(t, &NetworkOAM{ID: 1, QoS: QoSOAM, Body: Ext{ID: ExtEncZBuf, Buf: []byte("ls")}})
	decls := []Declaration{
		&DeclareKeyExpr{ID: 1, WireExpr: WireExpr{Suffix: "0/clock/**"}},
		&UndeclareKeyExpr{ID: 1},
		&DeclareSubscriber{ID: 3, WireExpr: WireExpr{Scope: 3, SenderMapping: true}},
		&UndeclareSubscriber{ID: 3},
		&UndeclareSubscriber{ID: 3, WireExpr: &WireExpr{Suffix: "0/clock/*", SenderMapping: true}},
		&DeclareQueryable{ID: 4, WireExpr: WireExpr{Suffix: "q"}, Complete: true, Distance: 2},
		&DeclareQueryable{ID: 5, WireExpr: WireExpr{Suffix: "q"}},
		&UndeclareQueryable{ID: 4, WireExpr: &WireExpr{Scope: 2}},
		&DeclareToken{ID: 6, WireExpr: WireExpr{Suffix: "@ros2_lv/0/x"}},
		&UndeclareToken{ID: 6},
		&DeclareFinal{},
	}
	for i, d := range decls {
		m := &Declare{QoS: QoSDeclare, Body: d}
		if i%2 == 0 {
			m.HasInterestID, m.InterestID = true, uint32(i)
		}
		roundTripNetwork(t, m)
	}
	roundTripNetwork(t, &Declare{Timestamp: ts, NodeID: 9, Body: &DeclareFinal{}})
	roundTripNetwork(t, &Interest{ID: 1, Mode: InterestCurrentFuture, Options: InterestKeyExprs | InterestTokens,
		WireExpr: &WireExpr{Scope: 1, SenderMapping: true}})
	roundTripNetwork(t, &Interest{ID: 2, Mode: InterestCurrent, Options: InterestAll | InterestAggregate,
		WireExpr: &WireExpr{Suffix: "@ros2_lv/0/**"}, QoS: QoSDeclare})
	roundTripNetwork(t, &Interest{ID: 3, Mode: InterestFuture, Options: InterestSubscribers})
	roundTripNetwork(t, &Interest{ID: 3, Mode: InterestFinal})
}

// TestExtensions: an unknown optional extension is skipped (or kept),
// an unknown mandatory one fails, shared memory is refused.
func TestExtensions(t *testing.T) {
	// KEEP_ALIVE with an optional z64 extension then an optional zbuf.
	if _, n, err := DecodeTransport(mustHex(t, "84 a7 05 48 02 aa bb")); err != nil || n != 7 {
		t.Errorf("optional extensions: n=%d err=%v", n, err)
	}
	// KEEP_ALIVE with a mandatory unknown unit extension.
	if _, _, err := DecodeTransport(mustHex(t, "84 1a")); !errors.Is(err, ErrMandatoryExtension) {
		t.Errorf("mandatory: %v", err)
	}
	// Reserved encoding 0b11.
	if _, _, err := DecodeTransport(mustHex(t, "84 61")); !errors.Is(err, ErrMalformed) {
		t.Errorf("reserved encoding: %v", err)
	}
	// PUT kept an unknown optional extension.
	if _, _, err := DecodeNetwork(nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty input: %v", err)
	}
	push, _, err := DecodeNetwork(mustHex(t, "3d 00 01 61 81 24 07 00"))
	if err != nil {
		t.Fatal(err)
	}
	put := push.(*Push).Body.(*Put)
	if len(put.Unknown) != 1 || !reflect.DeepEqual(put.Unknown[0], Ext{ID: 0x24, Z64: 7}) {
		t.Errorf("unknown kept: %+v", put.Unknown)
	}
	// PUT in shared memory (mandatory shm extension 0x12).
	if _, _, err := DecodeNetwork(mustHex(t, "3d 00 01 61 81 12 00")); !errors.Is(err, ErrSharedMemory) {
		t.Errorf("shm put: %v", err)
	}
	// QUERY with a shared-memory body.
	if _, _, err := DecodeNetwork(mustHex(t, "3c 01 00 01 61 83 04")); !errors.Is(err, ErrSharedMemory) {
		t.Errorf("shm query: %v", err)
	}
	// Unknown network message id and unknown declaration.
	if _, _, err := DecodeNetwork([]byte{0x18}); !errors.Is(err, ErrUnknownMessage) {
		t.Errorf("unknown id: %v", err)
	}
	if _, _, err := DecodeNetwork([]byte{0x1e, 0x09}); !errors.Is(err, ErrUnknownMessage) {
		t.Errorf("unknown declaration: %v", err)
	}
	// A bounded field out of range: key scope > u16.
	if _, _, err := DecodeNetwork(mustHex(t, "1d 80 80 04 01 00")); !errors.Is(err, ErrMalformed) {
		t.Errorf("scope overflow: %v", err)
	}
	// A length beyond the input.
	if _, _, err := DecodeNetwork(mustHex(t, "3d 00 05 61 01 10 00")); !errors.Is(err, ErrTruncated) {
		t.Errorf("suffix beyond input: %v", err)
	}
	// Invalid UTF-8 suffix.
	if _, _, err := DecodeNetwork(mustHex(t, "3d 00 01 ff 01 00")); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad utf8: %v", err)
	}
	// Whatami code 3 in INIT.
	if _, _, err := DecodeTransport(mustHex(t, "01 09 03 01")); !errors.Is(err, ErrMalformed) {
		t.Errorf("whatami 3: %v", err)
	}
}

// TestTruncations: every strict prefix of a valid message fails cleanly
// (FRAME and FRAGMENT excepted: their payload runs to the end).
func TestTruncations(t *testing.T) {
	zid := RandomZenohID()
	msgs := []NetworkMessage{
		&Push{WireExpr: WireExpr{Suffix: "a/b"}, Timestamp: &Timestamp{Time: 1, ID: zid}, Body: &Put{Attachment: []byte{1}, Payload: []byte{2}}},
		&Request{ID: 1, WireExpr: WireExpr{Suffix: "a"}, Budget: 1, Query: &Query{Parameters: "x", Body: &QueryBody{Payload: []byte{1}}}},
		&Response{RequestID: 1, WireExpr: WireExpr{Suffix: "a"}, ResponderID: &EntityGlobalID{ZID: zid, EID: 1}, Body: &Err{Payload: []byte{1}}},
		&Declare{HasInterestID: true, InterestID: 5, Body: &UndeclareToken{ID: 1, WireExpr: &WireExpr{Suffix: "a"}}},
		&Interest{ID: 9, Mode: InterestCurrent, Options: InterestTokens, WireExpr: &WireExpr{Suffix: "a/**"}},
	}
	for _, m := range msgs {
		b, err := AppendNetwork(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(b); i++ {
			if _, _, err := DecodeNetwork(b[:i]); err == nil {
				t.Errorf("%T: prefix %d of %d decoded", m, i, len(b))
			}
		}
	}
	init, _ := AppendTransport(nil, &Init{Ack: true, Version: Version, WhatAmI: Peer, ZID: zid, Resolution: DefaultResolution, BatchSize: 100, Cookie: []byte{1}, Patch: 1})
	for i := 0; i < len(init); i++ {
		if _, _, err := DecodeTransport(init[:i]); err == nil {
			t.Errorf("init prefix %d decoded", i)
		}
	}
}
