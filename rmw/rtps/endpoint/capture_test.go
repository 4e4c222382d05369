package endpoint

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// capturePath is the Cyclone DDS + Fast DDS /clock capture committed with
// the wire codec.
const capturePath = "../wire/testdata/clock_cyclone_fastdds.pcapng"

// udpPayloads returns the UDP payloads of the Ethernet/IPv4 frames of a
// little-endian pcapng file (unfragmented datagrams only).
func udpPayloads(t *testing.T, data []byte) [][]byte {
	le, be := binary.LittleEndian, binary.BigEndian
	var out [][]byte
	for off := 0; off+12 <= len(data); {
		typ, n := le.Uint32(data[off:]), int(le.Uint32(data[off+4:]))
		if n < 12 || off+n > len(data) {
			t.Fatalf("bad pcapng block at %d", off)
		}
		blk := data[off : off+n]
		off += n
		if typ != 6 || len(blk) < 28 {
			continue
		}
		caplen := int(le.Uint32(blk[20:]))
		if 28+caplen > len(blk) {
			continue
		}
		pkt := blk[28 : 28+caplen]
		if len(pkt) < 34 || be.Uint16(pkt[12:]) != 0x0800 {
			continue
		}
		ip := pkt[14:]
		ihl, total := int(ip[0]&0xf)*4, int(be.Uint16(ip[2:]))
		if ip[9] != 17 || be.Uint16(ip[6:])&0x3fff != 0 || total > len(ip) || ihl+8 > total {
			continue
		}
		udp := ip[ihl:total]
		if ul := int(be.Uint16(udp[4:])); ul >= 8 && ul <= len(udp) {
			out = append(out, udp[8:ul])
		}
	}
	return out
}

// Replays the traffic of real Cyclone DDS and Fast DDS participants into
// readers, the way a transport routes submessages: SPDP through a
// match-any reader, SEDP publications through reliable readers matched on
// SPDP, /clock through a match-any reader.
func TestCaptureReplay(t *testing.T) {
	data, err := os.ReadFile(capturePath)
	if err != nil {
		t.Skip("capture not available:", err)
	}
	nop := OutputFunc(func([]wire.Locator, []byte) {})
	participants := map[wire.GuidPrefix]wire.VendorID{}
	topics := map[string]int{}
	disposals := 0
	var spdp, pubs, user *Reader
	now := int64(0)
	spdp, _ = NewReader(ReaderConfig{GUID: wire.GUID{Prefix: prefixR, Entity: wire.EntityIDSPDPReader}, MatchAny: true}, nop, func(s Sample) {
		if s.Payload == nil {
			disposals++ // participant leaving
			return
		}
		var pd wire.ParticipantData
		if err := pd.Decode(s.Payload); err != nil {
			t.Fatalf("SPDP from %v: %v", s.Writer, err)
		}
		if _, ok := participants[pd.GuidPrefix]; !ok {
			participants[pd.GuidPrefix] = pd.VendorID
			pubs.MatchWriter(now, wire.GUID{Prefix: pd.GuidPrefix, Entity: wire.EntityIDSEDPPublicationsWriter}, pd.MetatrafficUnicastLocators, true)
		}
	})
	pubs, _ = NewReader(ReaderConfig{GUID: wire.GUID{Prefix: prefixR, Entity: wire.EntityIDSEDPPublicationsReader}}, nop, func(s Sample) {
		if s.Payload == nil {
			// dispose/unregister: no payload, key hash and status in inline QoS
			q, err := wire.DecodeInlineQos(s.InlineQos)
			if err != nil || !q.HasKeyHash || !q.HasStatusInfo || q.StatusInfo == 0 {
				t.Fatalf("SEDP %v SN %d without payload: %+v %v", s.Writer, s.SN, q, err)
			}
			disposals++
			return
		}
		ed := wire.NewEndpointData(true)
		if err := ed.Decode(s.Payload, true); err != nil {
			t.Fatalf("SEDP %v SN %d: %v", s.Writer, s.SN, err)
		}
		topics[ed.TopicName]++
	})
	clockSamples := 0
	user, _ = NewReader(ReaderConfig{GUID: guidR, MatchAny: true}, nop, func(s Sample) {
		if s.Writer.Entity.IsBuiltin() {
			return
		}
		if len(s.Payload) < 12 || !s.HasSourceTimestamp {
			t.Errorf("user sample %d from %v: % x", s.SN, s.Writer, s.Payload)
		}
		if s.Writer.Entity.Key() == 1 { // the /clock writers (the others are ros_discovery_info)
			clockSamples++
		}
	})
	var rd wire.Reader
	for _, msg := range udpPayloads(t, data) {
		now += 1e6
		if rd.Reset(msg) != nil {
			continue
		}
		for {
			sm, err := rd.Next()
			if err != nil || sm == nil {
				break
			}
			var writer wire.EntityID
			switch sm.ID {
			case wire.SubmsgData:
				writer = sm.Data.WriterID
			case wire.SubmsgDataFrag:
				writer = sm.DataFrag.WriterID
			case wire.SubmsgHeartbeat:
				writer = sm.Heartbeat.WriterID
			case wire.SubmsgGap:
				writer = sm.Gap.WriterID
			default:
				continue
			}
			switch {
			case writer == wire.EntityIDSPDPWriter:
				spdp.HandleSubmessage(now, &rd.State, sm)
			case writer == wire.EntityIDSEDPPublicationsWriter:
				pubs.HandleSubmessage(now, &rd.State, sm)
			case !writer.IsBuiltin():
				user.HandleSubmessage(now, &rd.State, sm)
			}
		}
		for _, r := range []*Reader{spdp, pubs, user} {
			if r.NextDeadline() <= now {
				r.Tick(now)
			}
		}
	}
	t.Logf("participants %v topics %v disposals %d clock samples %d", participants, topics, disposals, clockSamples)
	t.Logf("spdp %+v", spdp.Stats())
	t.Logf("sedp %+v", pubs.Stats())
	t.Logf("user %+v", user.Stats())
	vendors := map[wire.VendorID]bool{}
	for _, v := range participants {
		vendors[v] = true
	}
	if !vendors[wire.VendorEclipse] || !vendors[wire.VendorEProsima] {
		t.Errorf("participants %v", participants)
	}
	if topics["rt/clock"] == 0 {
		t.Errorf("no SEDP publication of rt/clock delivered: %v", topics)
	}
	if disposals == 0 {
		t.Error("no SEDP dispose delivered")
	}
	if clockSamples != 60 {
		t.Errorf("%d clock samples, want the 60 of the capture", clockSamples)
	}
	if s := pubs.Stats(); s.Malformed != 0 {
		t.Errorf("SEDP reader: %+v", s)
	}
}
