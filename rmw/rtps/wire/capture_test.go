package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// decodedSub is a copy of one yielded submessage with the receiver state
// at that point, for comparisons.
type decodedSub struct {
	ID    SubmessageID
	Flags byte
	Value any
	State ReceiverState
}

// decodeAll walks a whole message and copies every submessage.
func decodeAll(msg []byte) (Header, []decodedSub, error) {
	var r Reader
	if err := r.Reset(msg); err != nil {
		return Header{}, nil, err
	}
	var out []decodedSub
	for {
		sm, err := r.Next()
		if err != nil {
			return r.Header, out, err
		}
		if sm == nil {
			return r.Header, out, nil
		}
		d := decodedSub{ID: sm.ID, Flags: sm.Flags, State: r.State}
		switch sm.ID {
		case SubmsgData:
			v := sm.Data
			v.InlineQos.Data = bytes.Clone(v.InlineQos.Data)
			if v.SerializedPayload != nil {
				v.SerializedPayload = bytes.Clone(v.SerializedPayload)
			}
			d.Value = v
		case SubmsgDataFrag:
			v := sm.DataFrag
			v.InlineQos.Data = bytes.Clone(v.InlineQos.Data)
			v.Fragments = bytes.Clone(v.Fragments)
			d.Value = v
		case SubmsgHeartbeat:
			d.Value = sm.Heartbeat
		case SubmsgAckNack:
			d.Value = sm.AckNack
		case SubmsgGap:
			d.Value = sm.Gap
		case SubmsgNackFrag:
			d.Value = sm.NackFrag
		case SubmsgHeartbeatFrag:
			d.Value = sm.HeartbeatFrag
		case SubmsgInfoTS:
			d.Value = sm.InfoTS
		case SubmsgInfoDst:
			d.Value = sm.InfoDst
		case SubmsgInfoSrc:
			d.Value = sm.InfoSrc
		}
		out = append(out, d)
	}
}

// reencode builds a message from decoded submessages with the Builder.
// ok is false if something cannot be re-encoded as such (big-endian inline
// QoS).
func reencode(h Header, subs []decodedSub) (msg []byte, ok bool, err error) {
	var b Builder
	b.Reset(nil, h)
	for _, s := range subs {
		switch v := s.Value.(type) {
		case Data:
			if v.InlineQos.BigEndian && len(v.InlineQos.Data) > 0 {
				return nil, false, nil
			}
			err = b.Data(&v)
		case DataFrag:
			if v.InlineQos.BigEndian && len(v.InlineQos.Data) > 0 {
				return nil, false, nil
			}
			err = b.DataFrag(&v)
		case Heartbeat:
			b.Heartbeat(&v)
		case AckNack:
			err = b.AckNack(&v)
		case Gap:
			err = b.Gap(&v)
		case NackFrag:
			err = b.NackFrag(&v)
		case HeartbeatFrag:
			b.HeartbeatFrag(&v)
		case InfoTS:
			if v.Invalidate {
				b.InfoTSInvalidate()
			} else {
				b.InfoTS(v.Timestamp)
			}
		case InfoDst:
			b.InfoDst(v.Prefix)
		case InfoSrc:
			b.InfoSrc(v)
		case nil: // INFO_REPLY / INFO_REPLY_IP4
			st := s.State
			var mc []Locator
			if st.NumMulticastReply > 0 || s.Flags&FlagInfoReplyMulticast != 0 {
				mc = append([]Locator{}, st.MulticastReply[:st.NumMulticastReply]...)
			}
			b.InfoReply(st.UnicastReply[:st.NumUnicastReply], mc)
		}
		if errors.Is(err, ErrTooLarge) {
			// Padding a to-the-end submessage can push it past 64 KiB.
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	return b.Message(), true, nil
}

// sameSubs compares two decodings, ignoring the raw flags, the id of
// INFO_REPLY_IP4 (re-encoded as INFO_REPLY) and zero padding added after
// a DATA payload.
func sameSubs(a, b []decodedSub) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d vs %d submessages", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID == SubmsgInfoReplyIP4 {
			x.ID = SubmsgInfoReply
		}
		// The typed values carry the meaningful flags; unknown flag bits
		// and the E flag are not reproduced.
		x.Flags, y.Flags = 0, 0
		if dx, ok := x.Value.(Data); ok {
			dy := y.Value.(Data)
			if !bytes.HasPrefix(dy.SerializedPayload, dx.SerializedPayload) ||
				len(dy.SerializedPayload)-len(dx.SerializedPayload) > 3 ||
				len(bytes.Trim(dy.SerializedPayload[len(dx.SerializedPayload):], "\x00")) != 0 {
				return fmt.Errorf("submessage %d: payload % x vs % x", i, dx.SerializedPayload, dy.SerializedPayload)
			}
			dx.SerializedPayload, dy.SerializedPayload = nil, nil
			dx.InlineQos.BigEndian, dy.InlineQos.BigEndian = false, false
			x.Value, y.Value = dx, dy
		}
		if dx, ok := x.Value.(DataFrag); ok {
			dy := y.Value.(DataFrag)
			dx.InlineQos.BigEndian, dy.InlineQos.BigEndian = false, false
			x.Value, y.Value = dx, dy
		}
		if !reflect.DeepEqual(x, y) {
			return fmt.Errorf("submessage %d:\n%+v\n%+v", i, x, y)
		}
	}
	return nil
}

func TestCaptureDecodeAll(t *testing.T) {
	pkts := captureRTPS(t)
	vendors := map[VendorID]int{}
	kinds := map[SubmessageID]int{}
	for _, p := range pkts {
		h, subs, err := decodeAll(p.payload)
		if err != nil {
			t.Fatalf("frame %d: %v", p.index, err)
		}
		vendors[h.Vendor]++
		if h.Version.Major != 2 {
			t.Errorf("frame %d: version %v", p.index, h.Version)
		}
		for _, s := range subs {
			kinds[s.ID]++
		}
		// Re-encode every message with the Builder and decode it again.
		msg, ok, err := reencode(h, subs)
		if err != nil {
			t.Fatalf("frame %d: re-encode: %v", p.index, err)
		}
		if !ok {
			continue
		}
		_, subs2, err := decodeAll(msg)
		if err != nil {
			t.Fatalf("frame %d: decode re-encoded: %v", p.index, err)
		}
		if err := sameSubs(subs, subs2); err != nil {
			t.Fatalf("frame %d: %v", p.index, err)
		}
	}
	t.Logf("%d RTPS datagrams, vendors %v, submessages %v", len(pkts), vendors, kinds)
	if vendors[VendorEclipse] == 0 || vendors[VendorEProsima] == 0 {
		t.Errorf("vendors seen: %v, want both 01.10 and 01.0f", vendors)
	}
	for _, k := range []SubmessageID{SubmsgData, SubmsgHeartbeat, SubmsgAckNack, SubmsgInfoTS, SubmsgInfoDst} {
		if kinds[k] == 0 {
			t.Errorf("no %v decoded", k)
		}
	}
}

// captureDiscovery collects the discovery and user DATA of the capture.
type captureDATA struct {
	frame  int
	vendor VendorID
	src    GuidPrefix
	data   Data
	ts     Time
	haveTS bool
}

func captureData(t *testing.T) []captureDATA {
	var out []captureDATA
	for _, p := range captureRTPS(t) {
		var r Reader
		if err := r.Reset(p.payload); err != nil {
			t.Fatal(err)
		}
		for {
			sm, err := r.Next()
			if err != nil {
				t.Fatalf("frame %d: %v", p.index, err)
			}
			if sm == nil {
				break
			}
			if sm.ID == SubmsgData {
				out = append(out, captureDATA{p.index, r.Header.Vendor, r.State.SourcePrefix, sm.Data, r.State.Timestamp, r.State.HaveTimestamp})
			}
		}
	}
	return out
}

func TestCaptureSPDP(t *testing.T) {
	found := map[VendorID]bool{}
	disposed := map[VendorID]bool{}
	for _, d := range captureData(t) {
		if d.data.WriterID != EntityIDSPDPWriter {
			continue
		}
		if d.data.SerializedPayload == nil {
			// Fast DDS dispose: KEY_HASH = participant GUID, STATUS_INFO 3.
			q, err := DecodeInlineQos(d.data.InlineQos)
			if err != nil || !q.HasKeyHash || GUIDFromBytes(q.KeyHash) != (GUID{d.src, EntityIDParticipant}) || q.StatusInfo != 3 {
				t.Errorf("frame %d: dispose inline QoS %+v %v", d.frame, q, err)
			}
			disposed[d.vendor] = true
			continue
		}
		var p ParticipantData
		if err := p.Decode(d.data.SerializedPayload); err != nil {
			t.Fatalf("frame %d: %v", d.frame, err)
		}
		if p.GuidPrefix != d.src {
			t.Errorf("frame %d: participant prefix %v, source %v", d.frame, p.GuidPrefix, d.src)
		}
		if d.data.Key {
			// Dispose (Cyclone): key-only payload and STATUS_INFO 3.
			q, err := DecodeInlineQos(d.data.InlineQos)
			if err != nil || !q.HasStatusInfo || q.StatusInfo != StatusInfoDisposed|StatusInfoUnregistered {
				t.Errorf("frame %d: dispose inline QoS %+v %v", d.frame, q, err)
			}
			disposed[d.vendor] = true
			continue
		}
		if err := p.Validate(); err != nil {
			t.Errorf("frame %d: %v", d.frame, err)
		}
		if p.VendorID != d.vendor {
			t.Errorf("frame %d: PID_VENDORID %v, header %v", d.frame, p.VendorID, d.vendor)
		}
		enc, ok := p.Enclave()
		if !ok || enc != "/" {
			t.Errorf("frame %d: enclave %q %v (user data %q)", d.frame, enc, ok, p.UserData)
		}
		switch d.vendor {
		case VendorEclipse:
			found[d.vendor] = true
			if string(p.UserData) != "enclave=/;" {
				t.Errorf("cyclone user data %q", p.UserData)
			}
			if p.LeaseDuration != (Duration{Seconds: 10}) || !p.HasDomainID || p.DomainID != 0 {
				t.Errorf("cyclone lease/domain %+v %v %v", p.LeaseDuration, p.HasDomainID, p.DomainID)
			}
			if len(p.MetatrafficMulticastLocators) != 1 || p.MetatrafficMulticastLocators[0] != LocatorUDPv4([4]byte{239, 255, 0, 1}, 7400) {
				t.Errorf("cyclone meta multicast %v", p.MetatrafficMulticastLocators)
			}
			if len(p.MetatrafficUnicastLocators) != 1 || !p.MetatrafficUnicastLocators[0].IsLoopback() {
				t.Errorf("cyclone meta unicast %v", p.MetatrafficUnicastLocators)
			}
			if p.BuiltinEndpoints&BuiltinEndpointsMinimal != BuiltinEndpointsMinimal {
				t.Errorf("cyclone builtin endpoints %#x", p.BuiltinEndpoints)
			}
		case VendorEProsima:
			found[d.vendor] = true
			if string(p.UserData) != "enclave=/;\x00" {
				t.Errorf("fast dds user data %q", p.UserData)
			}
			if p.LeaseDuration != (Duration{Seconds: 20}) || p.EntityName != "/" {
				t.Errorf("fast dds lease/name %+v %q", p.LeaseDuration, p.EntityName)
			}
			want := []Locator{LoopbackUDPv4(7410)}
			if !reflect.DeepEqual(p.MetatrafficUnicastLocators, want) ||
				!reflect.DeepEqual(p.DefaultUnicastLocators, []Locator{LoopbackUDPv4(7411)}) {
				t.Errorf("fast dds locators %v %v", p.MetatrafficUnicastLocators, p.DefaultUnicastLocators)
			}
			if p.ProtocolVersion.Major != 2 {
				t.Errorf("fast dds protocol version %v", p.ProtocolVersion)
			}
		}
		// Round trip.
		b1, err := p.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		var p2 ParticipantData
		if err := p2.Decode(b1); err != nil {
			t.Fatalf("frame %d: decode re-encoded: %v", d.frame, err)
		}
		if !reflect.DeepEqual(p, p2) {
			t.Errorf("frame %d: round trip\n%+v\n%+v", d.frame, p, p2)
		}
		b2, _ := p2.Encode(nil)
		if !bytes.Equal(b1, b2) {
			t.Errorf("frame %d: encoding not stable", d.frame)
		}
	}
	if !found[VendorEclipse] || !found[VendorEProsima] || !disposed[VendorEclipse] || !disposed[VendorEProsima] {
		t.Errorf("SPDP found for %v, disposals for %v", found, disposed)
	}
}

func TestCaptureSEDP(t *testing.T) {
	type key struct {
		vendor VendorID
		writer bool
	}
	clock := map[key]EndpointData{}
	for _, d := range captureData(t) {
		isPub := d.data.WriterID == EntityIDSEDPPublicationsWriter
		if !isPub && d.data.WriterID != EntityIDSEDPSubscriptionsWriter {
			continue
		}
		if d.data.SerializedPayload == nil {
			q, err := DecodeInlineQos(d.data.InlineQos)
			if err != nil || !q.HasKeyHash || GUIDFromBytes(q.KeyHash).Prefix != d.src || q.StatusInfo != 3 {
				t.Errorf("frame %d: dispose inline QoS %+v %v", d.frame, q, err)
			}
			continue
		}
		var e EndpointData
		if err := e.Decode(d.data.SerializedPayload, isPub); err != nil {
			t.Fatalf("frame %d: %v", d.frame, err)
		}
		if e.EndpointGUID.Prefix != d.src {
			t.Errorf("frame %d: endpoint %v from %v", d.frame, e.EndpointGUID, d.src)
		}
		if isPub != e.EndpointGUID.Entity.IsWriter() || isPub == e.EndpointGUID.Entity.IsReader() {
			t.Errorf("frame %d: kind of %v on %v", d.frame, e.EndpointGUID.Entity, d.data.WriterID)
		}
		if d.data.Key {
			continue
		}
		if err := e.Validate(); err != nil {
			t.Errorf("frame %d: %v", d.frame, err)
		}
		if e.TopicName == "rt/clock" {
			clock[key{d.vendor, isPub}] = e
		}
		b1, err := e.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		var e2 EndpointData
		if err := e2.Decode(b1, isPub); err != nil {
			t.Fatalf("frame %d: decode re-encoded: %v", d.frame, err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Errorf("frame %d: round trip\n%+v\n%+v", d.frame, e, e2)
		}
		b2, _ := e2.Encode(nil)
		if !bytes.Equal(b1, b2) {
			t.Errorf("frame %d: encoding not stable", d.frame)
		}
	}
	if len(clock) != 4 {
		t.Fatalf("rt/clock endpoints: %v", clock)
	}
	for k, e := range clock {
		if e.TypeName != "rosgraph_msgs::msg::dds_::Clock_" {
			t.Errorf("%v: type %q", k, e.TypeName)
		}
		if e.Reliability.Kind != ReliabilityBestEffort || e.Durability != DurabilityVolatile ||
			e.History != (History{HistoryKeepLast, 1}) {
			t.Errorf("%v: QoS %+v %v %+v", k, e.Reliability, e.Durability, e.History)
		}
		if e.EndpointGUID.Entity.HasKey() {
			t.Errorf("%v: keyed entity %v", k, e.EndpointGUID.Entity)
		}
		if k.vendor == VendorEProsima && (len(e.UnicastLocators) != 1 || e.UnicastLocators[0] != LoopbackUDPv4(7411)) {
			t.Errorf("%v: locators %v", k, e.UnicastLocators)
		}
	}
	// Fast DDS sends max_blocking_time 100 ms as a fraction; ours must be identical.
	if got := clock[key{VendorEProsima, false}].Reliability.MaxBlockingTime; got != DurationFromTime(100e6) {
		t.Errorf("fast dds max_blocking_time %+v, DurationFromTime(100ms) %+v", got, DurationFromTime(100e6))
	}
}

func TestCaptureClockData(t *testing.T) {
	n := 0
	for _, d := range captureData(t) {
		if d.data.WriterID.IsBuiltin() || d.data.WriterID.Key() != 1 {
			continue
		}
		// rosgraph_msgs/Clock: CDR_LE header + sec + nanosec.
		pl := d.data.SerializedPayload
		if len(pl) != 12 || !bytes.Equal(pl[:4], []byte{0, 1, 0, 0}) {
			t.Fatalf("frame %d: clock payload % x", d.frame, pl)
		}
		if !d.haveTS {
			t.Errorf("frame %d: no INFO_TS", d.frame)
		}
		sec := binary.LittleEndian.Uint32(pl[4:])
		if sec < 96 || sec > 108 {
			t.Errorf("frame %d: clock sec %d", d.frame, sec)
		}
		n++
	}
	if n != 60 {
		t.Errorf("%d clock samples, want 60", n)
	}
}
