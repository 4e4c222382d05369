package wire

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"
)

// capturedPacket is one UDP datagram from a pcapng file.
type capturedPacket struct {
	index            int // 1-based frame number
	srcPort, dstPort uint16
	payload          []byte
}

// readPcapngUDP extracts the UDP payloads of Ethernet/IPv4 frames from a
// little-endian pcapng file. IP fragments other than complete datagrams
// are skipped.
func readPcapngUDP(data []byte) ([]capturedPacket, error) {
	var out []capturedPacket
	bo := binary.LittleEndian
	frame := 0
	for off := 0; off+12 <= len(data); {
		typ := bo.Uint32(data[off:])
		blen := int(bo.Uint32(data[off+4:]))
		if blen < 12 || off+blen > len(data) {
			return nil, fmt.Errorf("bad block at %d", off)
		}
		blk := data[off : off+blen]
		off += blen
		if typ == 0x0A0D0D0A {
			if bo.Uint32(blk[8:]) != 0x1A2B3C4D {
				return nil, fmt.Errorf("big-endian pcapng not supported")
			}
			continue
		}
		if typ != 6 { // Enhanced Packet Block
			continue
		}
		frame++
		capLen := int(bo.Uint32(blk[20:]))
		if 28+capLen > len(blk) {
			return nil, fmt.Errorf("bad EPB at frame %d", frame)
		}
		pkt := blk[28 : 28+capLen]
		if len(pkt) < 14 || binary.BigEndian.Uint16(pkt[12:]) != 0x0800 {
			continue
		}
		ip := pkt[14:]
		if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != 17 {
			continue
		}
		if fr := binary.BigEndian.Uint16(ip[6:]); fr&0x3fff != 0 { // MF or offset
			continue
		}
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if total > len(ip) || ihl+8 > total {
			continue
		}
		udp := ip[ihl:total]
		ulen := int(binary.BigEndian.Uint16(udp[4:]))
		if ulen < 8 || ulen > len(udp) {
			continue
		}
		out = append(out, capturedPacket{
			index:   frame,
			srcPort: binary.BigEndian.Uint16(udp[0:]),
			dstPort: binary.BigEndian.Uint16(udp[2:]),
			payload: udp[8:ulen],
		})
	}
	return out, nil
}

// captureRTPS returns the RTPS datagrams of the committed capture.
func captureRTPS(t testing.TB) []capturedPacket {
	t.Helper()
	data, err := os.ReadFile("testdata/clock_cyclone_fastdds.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	pkts, err := readPcapngUDP(data)
	if err != nil {
		t.Fatal(err)
	}
	var rtps []capturedPacket
	for _, p := range pkts {
		if len(p.payload) >= 4 && string(p.payload[:4]) == "RTPS" {
			rtps = append(rtps, p)
		}
	}
	if len(rtps) == 0 {
		t.Fatal("no RTPS packets in capture")
	}
	return rtps
}
