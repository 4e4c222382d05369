package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

var testPrefix = GuidPrefix{0x01, 0xff, 0xaa, 0xbb, 0xcc, 0xdd, 0, 0, 0, 1, 0, 0}

func testHeader() []byte {
	return append([]byte{'R', 'T', 'P', 'S', 2, 1, 0x01, 0xff}, testPrefix[:]...)
}

// rawSub builds a submessage by hand. length < 0 means "use len(body)".
func rawSub(id SubmessageID, flags byte, length int, body []byte) []byte {
	if length < 0 {
		length = len(body)
	}
	out := []byte{byte(id), flags, 0, 0}
	if flags&FlagEndianness != 0 {
		binary.LittleEndian.PutUint16(out[2:], uint16(length))
	} else {
		binary.BigEndian.PutUint16(out[2:], uint16(length))
	}
	return append(out, body...)
}

// bodyWriter builds submessage bodies in either byte order.
type bodyWriter struct {
	bo  binary.AppendByteOrder
	buf []byte
}

func bw(little bool) *bodyWriter {
	if little {
		return &bodyWriter{bo: binary.LittleEndian}
	}
	return &bodyWriter{bo: binary.BigEndian}
}

var _ binary.AppendByteOrder = binary.LittleEndian

func (w *bodyWriter) raw(b ...byte) *bodyWriter { w.buf = append(w.buf, b...); return w }
func (w *bodyWriter) u16(v uint16) *bodyWriter  { w.buf = w.bo.AppendUint16(w.buf, v); return w }
func (w *bodyWriter) u32(v uint32) *bodyWriter  { w.buf = w.bo.AppendUint32(w.buf, v); return w }
func (w *bodyWriter) sn(s SequenceNumber) *bodyWriter {
	return w.u32(uint32(s.High())).u32(s.Low())
}
func (w *bodyWriter) ent(e EntityID) *bodyWriter { return w.raw(e[:]...) }

func msgOf(subs ...[]byte) []byte {
	m := testHeader()
	for _, s := range subs {
		m = append(m, s...)
	}
	return m
}

var (
	rdr = NewEntityID(0x000104, EntityKindReaderNoKey)
	wtr = NewEntityID(0x000103, EntityKindWriterNoKey)
)

func eflag(little bool) byte {
	if little {
		return FlagEndianness
	}
	return 0
}

func TestHeader(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		err  error
	}{
		{"ok", testHeader(), nil},
		{"short", testHeader()[:19], ErrTruncated},
		{"magic", append([]byte("RTPX"), testHeader()[4:]...), ErrNotRTPS},
		{"major 1", append([]byte{'R', 'T', 'P', 'S', 1, 0}, testHeader()[6:]...), ErrUnsupportedVersion},
		{"major 3", append([]byte{'R', 'T', 'P', 'S', 3, 0}, testHeader()[6:]...), ErrUnsupportedVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := DecodeHeader(tt.msg)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err == nil && (h.Prefix != testPrefix || h.Vendor != (VendorID{1, 0xff}) || h.Version != ProtocolVersion21) {
				t.Fatalf("header %+v", h)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v does not wrap ErrMalformed", err)
			}
		})
	}
}

func TestHeartbeatBothEndians(t *testing.T) {
	for _, little := range []bool{true, false} {
		body := bw(little).ent(rdr).ent(wtr).sn(SequenceNumberFromHighLow(1, 2)).sn(0x1_0000_0005).u32(7).buf
		msg := msgOf(rawSub(SubmsgHeartbeat, eflag(little)|FlagHeartbeatFinal|FlagHeartbeatLiveliness, -1, body))
		_, subs, err := decodeAll(msg)
		if err != nil {
			t.Fatal(err)
		}
		want := Heartbeat{ReaderID: rdr, WriterID: wtr, FirstSN: 1<<32 | 2, LastSN: 0x1_0000_0005, Count: 7, Final: true, Liveliness: true}
		if len(subs) != 1 || subs[0].Value != want {
			t.Fatalf("little=%v: %+v", little, subs)
		}
	}
}

func TestSubmessageFraming(t *testing.T) {
	le := true
	hb := bw(le).ent(rdr).ent(wtr).sn(1).sn(3).u32(1).buf
	hbBE := bw(false).ent(rdr).ent(wtr).sn(1).sn(3).u32(1).buf
	data := bw(le).u16(0).u16(16).ent(rdr).ent(wtr).sn(5).raw(0, 1, 0, 0, 0xaa, 0xbb).buf
	tsBody := bw(le).u32(10).u32(0x80000000).buf
	tests := []struct {
		name  string
		msg   []byte
		ids   []SubmessageID
		err   error
		check func(t *testing.T, subs []decodedSub)
	}{
		{name: "empty message", msg: msgOf(), ids: nil},
		{name: "mixed endianness", msg: msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb), rawSub(SubmsgHeartbeat, 0, -1, hbBE)),
			ids: []SubmessageID{SubmsgHeartbeat, SubmsgHeartbeat},
			check: func(t *testing.T, s []decodedSub) {
				if s[0].Value != s[1].Value {
					t.Errorf("%+v != %+v", s[0].Value, s[1].Value)
				}
			}},
		{name: "last DATA with octetsToNextHeader 0 extends to end", msg: msgOf(rawSub(SubmsgInfoTS, 1, -1, tsBody), rawSub(SubmsgData, 1|FlagDataData, 0, data)),
			ids: []SubmessageID{SubmsgInfoTS, SubmsgData},
			check: func(t *testing.T, s []decodedSub) {
				d := s[1].Value.(Data)
				if !bytes.Equal(d.SerializedPayload, []byte{0, 1, 0, 0, 0xaa, 0xbb}) || d.WriterSN != 5 {
					t.Errorf("%+v", d)
				}
				if !s[1].State.HaveTimestamp || s[1].State.Timestamp != (Time{10, 0x80000000}) {
					t.Errorf("state %+v", s[1].State)
				}
			}},
		{name: "INFO_TS invalidate with length 0 is not to-the-end", msg: msgOf(rawSub(SubmsgInfoTS, 1, -1, tsBody), rawSub(SubmsgInfoTS, 1|FlagInfoTSInvalidate, 0, nil), rawSub(SubmsgHeartbeat, 1, -1, hb)),
			ids: []SubmessageID{SubmsgInfoTS, SubmsgInfoTS, SubmsgHeartbeat},
			check: func(t *testing.T, s []decodedSub) {
				if s[2].State.HaveTimestamp {
					t.Error("timestamp not invalidated")
				}
			}},
		{name: "INFO_TS length 0 without I flag", msg: msgOf(rawSub(SubmsgInfoTS, 1, 0, nil), rawSub(SubmsgHeartbeat, 1, -1, hb)), err: ErrTruncated},
		{name: "PAD length 0 then HEARTBEAT", msg: msgOf(rawSub(SubmsgPad, 1, 0, nil), rawSub(SubmsgHeartbeat, 1, -1, hb)), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "PAD with body", msg: msgOf(rawSub(SubmsgPad, 0, -1, make([]byte, 8)), rawSub(SubmsgHeartbeat, 1, -1, hb)), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "vendor 0x80 skipped", msg: msgOf(rawSub(0x80, 1, -1, make([]byte, 12)), rawSub(SubmsgHeartbeat, 1, -1, hb)), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "vendor 0xff BE skipped", msg: msgOf(rawSub(0xff, 0, -1, make([]byte, 4)), rawSub(SubmsgHeartbeat, 1, -1, hb)), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "unknown 0x33 skipped", msg: msgOf(rawSub(0x33, 1, -1, make([]byte, 4)), rawSub(SubmsgHeartbeat, 1, -1, hb)), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "unknown last with length 0", msg: msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb), rawSub(0x33, 1, 0, make([]byte, 7))), ids: []SubmessageID{SubmsgHeartbeat}},
		{name: "extra body bytes ignored", msg: msgOf(rawSub(SubmsgHeartbeat, 1, -1, append(append([]byte{}, hb...), 1, 2, 3, 4)), rawSub(SubmsgHeartbeat, 1, -1, hb)),
			ids: []SubmessageID{SubmsgHeartbeat, SubmsgHeartbeat}},
		{name: "length beyond end", msg: msgOf(rawSub(SubmsgHeartbeat, 1, len(hb)+4, hb)), err: ErrTruncated},
		{name: "HEARTBEAT too short", msg: msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb[:27])), err: ErrTruncated},
		{name: "3 trailing bytes", msg: append(msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb)), 0, 0, 0), err: ErrTruncated},
		{name: "DATA with D and K", msg: msgOf(rawSub(SubmsgData, 1|FlagDataData|FlagDataKey, -1, data)), err: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, subs, err := decodeAll(tt.msg)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []SubmessageID
			for _, s := range subs {
				ids = append(ids, s.ID)
			}
			if !reflect.DeepEqual(ids, tt.ids) {
				t.Fatalf("ids %v, want %v", ids, tt.ids)
			}
			if tt.check != nil {
				tt.check(t, subs)
			}
		})
	}
}

func TestErrorIsSticky(t *testing.T) {
	hb := bw(true).ent(rdr).ent(wtr).sn(1).sn(3).u32(1).buf
	msg := msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb), rawSub(SubmsgHeartbeat, 1, -1, hb[:10]), rawSub(SubmsgHeartbeat, 1, -1, hb))
	var r Reader
	if err := r.Reset(msg); err != nil {
		t.Fatal(err)
	}
	if sm, err := r.Next(); err != nil || sm.ID != SubmsgHeartbeat {
		t.Fatal(sm, err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("errors %v, %v", err1, err2)
	}
	// Reset clears it.
	if err := r.Reset(msgOf(rawSub(SubmsgHeartbeat, 1, -1, hb))); err != nil {
		t.Fatal(err)
	}
	if sm, err := r.Next(); err != nil || sm == nil {
		t.Fatal(sm, err)
	}
}

func TestData(t *testing.T) {
	qos := (&InlineQos{HasStatusInfo: true, StatusInfo: 3, HasKeyHash: true, KeyHash: [16]byte{1, 2, 3}}).Append(nil)
	for _, little := range []bool{true, false} {
		var qosBody []byte
		{
			w := bw(little)
			w.u16(uint16(PIDKeyHash)).u16(16).raw(1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
			w.u16(uint16(PIDStatusInfo)).u16(4).raw(0, 0, 0, 3)
			w.u16(uint16(PIDSentinel)).u16(0)
			qosBody = w.buf
			if little && !bytes.Equal(qosBody, qos) {
				t.Fatalf("InlineQos.Append % x, want % x", qos, qosBody)
			}
		}
		e := eflag(little)
		tests := []struct {
			name    string
			flags   byte
			body    []byte
			payload []byte
			inline  bool
			key     bool
			err     error
		}{
			{"data", FlagDataData, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).raw(0, 1, 0, 0, 1, 2, 3, 4).buf, []byte{0, 1, 0, 0, 1, 2, 3, 4}, false, false, nil},
			{"no payload", 0, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).buf, nil, false, false, nil},
			{"D with empty payload", FlagDataData, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).buf, []byte{}, false, false, nil},
			{"inline qos + key", FlagDataInlineQos | FlagDataKey, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).raw(qosBody...).raw(0, 3, 0, 0).buf, []byte{0, 3, 0, 0}, true, true, nil},
			{"inline qos only", FlagDataInlineQos, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).raw(qosBody...).buf, nil, true, false, nil},
			{"octetsToInlineQos 20 skips 4 bytes", FlagDataData, bw(little).u16(0).u16(20).ent(rdr).ent(wtr).sn(9).u32(0xdeadbeef).raw(0, 1, 0, 0).buf, []byte{0, 1, 0, 0}, false, false, nil},
			{"octetsToInlineQos 12", FlagDataData, bw(little).u16(0).u16(12).ent(rdr).ent(wtr).sn(9).buf, nil, false, false, ErrMalformed},
			{"octetsToInlineQos beyond end", FlagDataData, bw(little).u16(0).u16(40).ent(rdr).ent(wtr).sn(9).buf, nil, false, false, ErrMalformed},
			{"inline qos without sentinel", FlagDataInlineQos, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).sn(9).raw(qosBody[:len(qosBody)-4]...).buf, nil, false, false, ErrNoSentinel},
			{"too short", FlagDataData, bw(little).u16(0).u16(16).ent(rdr).ent(wtr).u32(0).buf, nil, false, false, ErrTruncated},
		}
		for _, tt := range tests {
			_, subs, err := decodeAll(msgOf(rawSub(SubmsgData, e|tt.flags, -1, tt.body)))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("%s little=%v: err %v, want %v", tt.name, little, err, tt.err)
				}
				continue
			}
			if err != nil || len(subs) != 1 {
				t.Errorf("%s little=%v: %v %v", tt.name, little, subs, err)
				continue
			}
			d := subs[0].Value.(Data)
			if d.ReaderID != rdr || d.WriterID != wtr || d.WriterSN != 9 || d.Key != tt.key {
				t.Errorf("%s: %+v", tt.name, d)
			}
			if !bytes.Equal(d.SerializedPayload, tt.payload) || (d.SerializedPayload == nil) != (tt.payload == nil) {
				t.Errorf("%s: payload % x, want % x", tt.name, d.SerializedPayload, tt.payload)
			}
			if tt.inline {
				if !bytes.Equal(d.InlineQos.Data, qosBody) || d.InlineQos.BigEndian == little {
					t.Errorf("%s: inline % x", tt.name, d.InlineQos.Data)
				}
				q, err := DecodeInlineQos(d.InlineQos)
				if err != nil || !q.HasStatusInfo || q.StatusInfo != 3 || q.KeyHash != [16]byte{1, 2, 3} {
					t.Errorf("%s: inline QoS %+v %v", tt.name, q, err)
				}
			} else if !d.InlineQos.Empty() {
				t.Errorf("%s: unexpected inline QoS", tt.name)
			}
		}
	}
}

func TestDataFrag(t *testing.T) {
	// fragmentSize 4, sampleSize 10: fragments 1..3, the last has 2 bytes.
	frag := func(start uint32, n, size uint16, sample uint32, data []byte) []byte {
		return bw(true).u16(0).u16(28).ent(rdr).ent(wtr).sn(3).u32(start).u16(n).u16(size).u32(sample).raw(data...).buf
	}
	payload := []byte{0, 1, 0, 0, 5, 6, 7, 8, 9, 10, 0, 0}
	tests := []struct {
		name  string
		body  []byte
		frags []byte
		err   error
	}{
		{"first two", frag(1, 2, 4, 10, payload[:8]), payload[:8], nil},
		{"last short, padded", frag(3, 1, 4, 10, payload[8:12]), payload[8:10], nil},
		{"last short, count 2 beyond sample", frag(3, 2, 4, 10, payload[8:12]), payload[8:10], nil},
		{"extra bytes trimmed", frag(1, 1, 4, 10, payload[:12]), payload[:4], nil},
		{"missing bytes", frag(1, 2, 4, 10, payload[:7]), nil, ErrTruncated},
		{"start 0", frag(0, 1, 4, 10, payload[:4]), nil, ErrMalformed},
		{"fragment size 0", frag(1, 1, 0, 10, payload[:4]), nil, ErrMalformed},
		{"zero fragments", frag(1, 0, 4, 10, payload[:4]), nil, ErrMalformed},
		{"start beyond sample", frag(4, 1, 4, 10, payload[:4]), nil, ErrMalformed},
		{"header too short", frag(1, 1, 4, 10, nil)[:31], nil, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, subs, err := decodeAll(msgOf(rawSub(SubmsgDataFrag, 1, -1, tt.body)))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := subs[0].Value.(DataFrag)
			if !bytes.Equal(d.Fragments, tt.frags) || d.SampleSize != 10 || d.FragmentSize != 4 || d.WriterSN != 3 {
				t.Fatalf("%+v", d)
			}
		})
	}
}

func snSetBody(little bool, base SequenceNumber, numBits uint32, words ...uint32) []byte {
	w := bw(little).sn(base).u32(numBits)
	for _, x := range words {
		w.u32(x)
	}
	return w.buf
}

func TestAckNackSets(t *testing.T) {
	all8 := []uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}
	tests := []struct {
		name    string
		set     []byte
		err     error
		numBits uint32
		members []SequenceNumber
	}{
		{"numBits 0 (preemptive)", snSetBody(true, 1, 0), nil, 0, nil},
		{"base 0 accepted", snSetBody(true, 0, 0), nil, 0, nil},
		{"one bit", snSetBody(true, 5, 1, 0x80000000), nil, 1, []SequenceNumber{5}},
		{"bits beyond numBits masked", snSetBody(true, 5, 3, 0xffffffff), nil, 3, []SequenceNumber{5, 6, 7}},
		{"32 bits", snSetBody(true, 1, 32, 0x00000001), nil, 32, []SequenceNumber{32}},
		{"33 bits needs 2 words", snSetBody(true, 1, 33, 0, 0x80000000), nil, 33, []SequenceNumber{33}},
		{"256 bits", snSetBody(true, 1, 256, all8...), nil, 256, nil},
		{"257 bits", snSetBody(true, 1, 257, append(all8, 0xffffffff)...), ErrSetTooLarge, 0, nil},
		{"huge numBits", snSetBody(true, 1, 0xffffffff), ErrSetTooLarge, 0, nil},
		{"missing bitmap word", snSetBody(true, 1, 33, 0), ErrTruncated, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bw(true).ent(rdr).ent(wtr).raw(tt.set...).u32(4).buf
			_, subs, err := decodeAll(msgOf(rawSub(SubmsgAckNack, 1|FlagAckNackFinal, -1, body)))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := subs[0].Value.(AckNack)
			if a.ReaderSNState.NumBits != tt.numBits || a.Count != 4 || !a.Final {
				t.Fatalf("%+v", a)
			}
			got := a.ReaderSNState.AppendMembers(nil)
			if tt.numBits == 256 {
				if len(got) != 256 || got[255] != 256 {
					t.Fatalf("256 members: %d", len(got))
				}
				return
			}
			if !reflect.DeepEqual(got, tt.members) {
				t.Fatalf("members %v, want %v", got, tt.members)
			}
		})
	}
}

func TestGapNackFragHeartbeatFrag(t *testing.T) {
	for _, little := range []bool{true, false} {
		e := eflag(little)
		gap := bw(little).ent(rdr).ent(wtr).sn(3).raw(snSetBody(little, 10, 2, 0x40000000)...).buf
		nf := bw(little).ent(rdr).ent(wtr).sn(7).u32(2).u32(256).u32(0x80000000).raw(make([]byte, 28)...).u32(9).buf
		hbf := bw(little).ent(rdr).ent(wtr).sn(7).u32(12).u32(2).buf
		_, subs, err := decodeAll(msgOf(rawSub(SubmsgGap, e, -1, gap), rawSub(SubmsgNackFrag, e, -1, nf), rawSub(SubmsgHeartbeatFrag, e, -1, hbf)))
		if err != nil {
			t.Fatal(err)
		}
		g := subs[0].Value.(Gap)
		if g.GapStart != 3 || g.GapList.Base != 10 || !g.GapList.Contains(11) || g.GapList.Contains(10) {
			t.Errorf("gap %+v", g)
		}
		n := subs[1].Value.(NackFrag)
		if n.WriterSN != 7 || n.Count != 9 || !reflect.DeepEqual(n.FragmentNumberState.AppendMembers(nil), []uint32{2}) {
			t.Errorf("nackfrag %+v", n)
		}
		h := subs[2].Value.(HeartbeatFrag)
		if h != (HeartbeatFrag{ReaderID: rdr, WriterID: wtr, WriterSN: 7, LastFragmentNum: 12, Count: 2}) {
			t.Errorf("hbfrag %+v", h)
		}
	}
	// NACK_FRAG set errors.
	for _, tc := range []struct {
		numBits uint32
		words   int
		err     error
	}{{0, 0, nil}, {256, 8, nil}, {257, 9, ErrSetTooLarge}, {64, 1, ErrTruncated}} {
		w := bw(true).ent(rdr).ent(wtr).sn(7).u32(1).u32(tc.numBits)
		for range tc.words {
			w.u32(0xffffffff)
		}
		if tc.err != ErrTruncated {
			w.u32(1)
		}
		_, _, err := decodeAll(msgOf(rawSub(SubmsgNackFrag, 1, -1, w.buf)))
		if !errors.Is(err, tc.err) && (tc.err != nil || err != nil) {
			t.Errorf("numBits %d: err %v, want %v", tc.numBits, err, tc.err)
		}
	}
}

func TestReceiverState(t *testing.T) {
	other := GuidPrefix{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	dst := GuidPrefix{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
	hb := bw(true).ent(rdr).ent(wtr).sn(1).sn(3).u32(1).buf
	ts := bw(true).u32(5).u32(6).buf
	src := bw(true).u32(0).raw(2, 3, 0x01, 0x0f).raw(other[:]...).buf
	loc := LoopbackUDPv4(7411)
	locBytes := appendLocator(nil, loc)
	mloc := LocatorUDPv4([4]byte{239, 255, 0, 1}, 7401)
	reply := bw(true).u32(1).raw(locBytes...).u32(1).raw(appendLocator(nil, mloc)...).buf
	replyIP4 := bw(true).u32(0x7f000001).u32(7413).buf
	msg := msgOf(
		rawSub(SubmsgHeartbeat, 1, -1, hb),                           // 0: header state
		rawSub(SubmsgInfoTS, 1, -1, ts),                              // 1
		rawSub(SubmsgInfoDst, 1, -1, dst[:]),                         // 2
		rawSub(SubmsgInfoReply, 1|FlagInfoReplyMulticast, -1, reply), // 3
		rawSub(SubmsgHeartbeat, 1, -1, hb),                           // 4: ts, dst, reply
		rawSub(SubmsgInfoSrc, 1, -1, src),                            // 5: resets ts and reply, keeps dst
		rawSub(SubmsgHeartbeat, 1, -1, hb),                           // 6
		rawSub(SubmsgInfoReplyIP4, 1, -1, replyIP4),                  // 7
		rawSub(SubmsgInfoDst, 1, -1, make([]byte, 12)),               // 8
		rawSub(SubmsgHeartbeat, 1, -1, hb),                           // 9
	)
	_, subs, err := decodeAll(msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 10 {
		t.Fatalf("%d submessages", len(subs))
	}
	s0 := subs[0].State
	if s0.SourcePrefix != testPrefix || s0.SourceVendor != (VendorID{1, 0xff}) || s0.HaveTimestamp || !s0.DestPrefix.IsZero() {
		t.Errorf("initial state %+v", s0)
	}
	s4 := subs[4].State
	if !s4.HaveTimestamp || s4.Timestamp != (Time{5, 6}) || s4.DestPrefix != dst || s4.NumUnicastReply != 1 || s4.UnicastReply[0] != loc ||
		s4.NumMulticastReply != 1 || s4.MulticastReply[0] != mloc {
		t.Errorf("state after INFO_*: %+v", s4)
	}
	s6 := subs[6].State
	if s6.SourcePrefix != other || s6.SourceVendor != VendorEProsima || s6.SourceVersion != (ProtocolVersion{2, 3}) ||
		s6.HaveTimestamp || s6.NumUnicastReply != 0 || s6.DestPrefix != dst {
		t.Errorf("state after INFO_SRC: %+v", s6)
	}
	if g := s6.SourceGUID(wtr); g.Prefix != other || g.Entity != wtr {
		t.Errorf("SourceGUID %v", g)
	}
	s9 := subs[9].State
	if s9.NumUnicastReply != 1 || s9.UnicastReply[0] != LoopbackUDPv4(7413) || s9.NumMulticastReply != 0 || !s9.DestPrefix.IsZero() {
		t.Errorf("state after INFO_REPLY_IP4: %+v", s9)
	}
	// More reply locators than kept.
	many := bw(true).u32(6)
	for range 6 {
		many.raw(locBytes...)
	}
	_, subs, err = decodeAll(msgOf(rawSub(SubmsgInfoReply, 1, -1, many.buf), rawSub(SubmsgHeartbeat, 1, -1, hb)))
	if err != nil || subs[1].State.NumUnicastReply != MaxReplyLocators {
		t.Errorf("many reply locators: %v %+v", err, subs)
	}
	// Locator count beyond the body.
	_, _, err = decodeAll(msgOf(rawSub(SubmsgInfoReply, 1, -1, bw(true).u32(2).raw(locBytes...).buf)))
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("short INFO_REPLY: %v", err)
	}
}

// TestTruncatedCapture cuts every capture datagram at every length: the
// decoder must never panic, and must fail unless the cut falls on a
// submessage boundary.
func TestTruncatedCapture(t *testing.T) {
	for _, p := range captureRTPS(t) {
		msg := p.payload
		boundaries := map[int]bool{HeaderSize: true}
		toEnd := -1
		for off := HeaderSize; off+4 <= len(msg); {
			bo := binary.ByteOrder(binary.BigEndian)
			if msg[off+1]&1 != 0 {
				bo = binary.LittleEndian
			}
			n := int(bo.Uint16(msg[off+2:]))
			if n == 0 && msg[off] != byte(SubmsgPad) && msg[off] != byte(SubmsgInfoTS) {
				toEnd = off
				break
			}
			off += 4 + n
			boundaries[off] = true
		}
		for cut := 0; cut < len(msg); cut++ {
			_, _, err := decodeAll(msg[:cut:cut])
			if err == nil && !boundaries[cut] && (toEnd < 0 || cut < toEnd) {
				t.Fatalf("frame %d cut at %d of %d: no error", p.index, cut, len(msg))
			}
		}
	}
}

func TestTruncatedDiscoveryPayloads(t *testing.T) {
	for _, d := range captureData(t) {
		pl := d.data.SerializedPayload
		if pl == nil || !d.data.WriterID.IsBuiltin() {
			continue
		}
		for cut := 0; cut < len(pl); cut++ {
			var p ParticipantData
			var e EndpointData
			if err := p.Decode(pl[:cut:cut]); err == nil {
				t.Fatalf("frame %d: SPDP decode of %d/%d bytes succeeded", d.frame, cut, len(pl))
			}
			if err := e.Decode(pl[:cut:cut], true); err == nil {
				t.Fatalf("frame %d: SEDP decode of %d/%d bytes succeeded", d.frame, cut, len(pl))
			}
		}
	}
}
