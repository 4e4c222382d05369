package rtps

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// rawData is one DATA submessage as it sits on the wire.
type rawData struct {
	vendor       wire.VendorID
	prefix       wire.GuidPrefix
	flags        byte
	extraFlags   uint16
	octetsToQos  uint16
	writer       wire.EntityID
	inlinePIDs   []uint16 // nil: no inline QoS
	encap        [4]byte  // zero when there is no payload
	payloadPIDs  []uint16 // parameter ids of a PL_CDR payload, sentinel excluded
	sentinelLast bool     // the payload list ends with PID_SENTINEL and nothing follows
}

func (d rawData) alive() bool { return d.flags&wire.FlagDataData != 0 && d.flags&wire.FlagDataKey == 0 }

// plPIDs walks a little-endian parameter list; it returns the ids before the
// sentinel and whether the sentinel is the last thing in b.
func plPIDs(b []byte) (pids []uint16, rest []byte, ok bool) {
	for len(b) >= 4 {
		pid, n := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if pid == uint16(wire.PIDSentinel) {
			return pids, b[4:], true
		}
		if 4+n > len(b) {
			return pids, nil, false
		}
		pids = append(pids, pid)
		b = b[4+n:]
	}
	return pids, nil, false
}

// rawDATA walks an RTPS datagram by hand (not with package wire, whose
// reader this test must not trust) and returns its DATA submessages.
func rawDATA(t *testing.T, msg []byte) []rawData {
	t.Helper()
	if len(msg) < 20 || string(msg[:4]) != "RTPS" {
		return nil
	}
	var out []rawData
	var vendor wire.VendorID
	var prefix wire.GuidPrefix
	copy(vendor[:], msg[6:8])
	copy(prefix[:], msg[8:20])
	for b := msg[20:]; len(b) >= 4; {
		id, flags := b[0], b[1]
		var bo binary.ByteOrder = binary.BigEndian
		if flags&1 != 0 {
			bo = binary.LittleEndian
		}
		n := int(bo.Uint16(b[2:]))
		if n == 0 {
			n = len(b) - 4
		}
		if 4+n > len(b) {
			t.Fatalf("truncated submessage in % x", msg)
		}
		body := b[4 : 4+n]
		b = b[4+n:]
		if id != byte(wire.SubmsgData) {
			continue
		}
		if bo != binary.LittleEndian {
			t.Fatalf("big-endian DATA")
		}
		d := rawData{vendor: vendor, prefix: prefix, flags: flags,
			extraFlags: bo.Uint16(body), octetsToQos: bo.Uint16(body[2:])}
		copy(d.writer[:], body[8:12])
		rest := body[4+int(d.octetsToQos):]
		if flags&wire.FlagDataInlineQos != 0 {
			pids, r, ok := plPIDs(rest)
			if !ok {
				t.Fatalf("inline QoS without sentinel in % x", msg)
			}
			d.inlinePIDs, rest = append([]uint16{}, pids...), r
		}
		if flags&(wire.FlagDataData|wire.FlagDataKey) != 0 && len(rest) >= 4 {
			copy(d.encap[:], rest)
			if d.encap[1] == 2 || d.encap[1] == 3 { // PL_CDR_BE / PL_CDR_LE
				pids, r, ok := plPIDs(rest[4:])
				d.payloadPIDs, d.sentinelLast = pids, ok && len(r) == 0
			}
		}
		out = append(out, d)
	}
	return out
}

// vendorCapture returns the DATA submessages of the Cyclone DDS <-> Fast DDS
// capture kept by package wire.
func vendorCapture(t *testing.T) []rawData {
	t.Helper()
	b, err := os.ReadFile("wire/testdata/clock_cyclone_fastdds.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var out []rawData
	le := binary.LittleEndian
	for off := 0; off+12 <= len(b); {
		typ, blen := le.Uint32(b[off:]), int(le.Uint32(b[off+4:]))
		if blen < 12 || off+blen > len(b) {
			t.Fatalf("bad pcapng block at %d", off)
		}
		blk := b[off : off+blen]
		off += blen
		if typ != 6 || len(blk) < 28 {
			continue
		}
		frame := blk[28 : 28+int(le.Uint32(blk[20:]))]
		// Ethernet II, IPv4, UDP.
		if len(frame) < 14+20+8 || frame[12] != 0x08 || frame[13] != 0x00 || frame[14+9] != 17 {
			continue
		}
		ihl := int(frame[14]&0x0f) * 4
		out = append(out, rawDATA(t, frame[14+ihl+8:])...)
	}
	return out
}

// pidOrderAgreed returns the ordered pairs (a before b) on which every
// sample of every vendor agrees, among ids all of them send.
func pidOrderAgreed(samples [][]uint16) (common []uint16, before map[[2]uint16]bool) {
	common = slices.Clone(samples[0])
	for _, s := range samples[1:] {
		common = slices.DeleteFunc(common, func(p uint16) bool { return !slices.Contains(s, p) })
	}
	before = map[[2]uint16]bool{}
	for _, a := range common {
		for _, b := range common {
			agreed := a != b
			for _, s := range samples {
				if slices.Index(s, a) > slices.Index(s, b) {
					agreed = false
				}
			}
			if agreed {
				before[[2]uint16{a, b}] = true
			}
		}
	}
	return common, before
}

// TestDiscoveryWireShape builds our SPDP, SEDP and ros_discovery_info
// datagrams and compares them, field by field, with the DATA submessages of
// Cyclone DDS and Fast DDS in the capture: submessage id and flags,
// extraFlags and octetsToInlineQos, inline QoS presence, encapsulation kind
// and options, PID_SENTINEL last, every parameter id that both vendors
// always send, in the order they agree on. Disposals must look like one of
// the two vendors' disposals.
func TestDiscoveryWireShape(t *testing.T) {
	vendors := vendorCapture(t)
	var mu sync.Mutex
	var ours []rawData
	var ourPrefix wire.GuidPrefix
	var graphWriter wire.EntityID
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		nw.Drop = func(_, _ netip.AddrPort, b []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range rawDATA(t, b) {
				if d.prefix == ourPrefix {
					ours = append(ours, d)
				}
			}
			return false
		}
		a := newMem(t, nw, nil)
		mu.Lock()
		ourPrefix, graphWriter = a.GuidPrefix(), a.graph.guid.Entity
		mu.Unlock()
		b := newMem(t, nw, nil)
		defer b.Close()
		pub := mustPub(t, a, "/shape", reliable, nil)
		mustSub(t, a, "/shape_sub", rmw.QoS{Reliability: rmw.BestEffort}, &inbox{t: t})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		pub.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		a.Close()
		synctest.Wait()
	})

	kinds := []struct {
		name    string
		builtin bool
		writer  wire.EntityID
	}{
		{"SPDP", true, wire.EntityIDSPDPWriter},
		{"SEDP publications", true, wire.EntityIDSEDPPublicationsWriter},
		{"SEDP subscriptions", true, wire.EntityIDSEDPSubscriptionsWriter},
		{"ros_discovery_info (user DATA)", false, graphWriter},
	}
	for _, k := range kinds {
		pick := func(ds []rawData, alive bool, user bool) []rawData {
			var out []rawData
			for _, d := range ds {
				match := d.writer == k.writer
				if user {
					match = !d.writer.IsBuiltin()
				}
				if match && d.alive() == alive {
					out = append(out, d)
				}
			}
			return out
		}
		// The capture has no ros_discovery_info (its peers are plain DDS
		// programs): our graph DATA is compared with their user DATA.
		theirs := pick(vendors, true, !k.builtin)
		mine := pick(ours, true, false)
		seen := map[wire.VendorID]bool{}
		for _, d := range theirs {
			seen[d.vendor] = true
		}
		if !seen[wire.VendorEclipse] || !seen[wire.VendorEProsima] || len(mine) == 0 {
			t.Fatalf("%s: capture vendors %v, ours %d", k.name, seen, len(mine))
		}
		ref := theirs[0]
		var samples [][]uint16
		for _, d := range theirs {
			if d.flags != ref.flags || d.extraFlags != ref.extraFlags || d.octetsToQos != ref.octetsToQos ||
				(d.inlinePIDs == nil) != (ref.inlinePIDs == nil) || d.encap != ref.encap {
				t.Fatalf("%s: the vendors disagree: %+v vs %+v", k.name, d, ref)
			}
			if k.builtin {
				if !d.sentinelLast {
					t.Fatalf("%s: vendor list without final sentinel %+v", k.name, d)
				}
				samples = append(samples, d.payloadPIDs)
			}
		}
		var common []uint16
		var before map[[2]uint16]bool
		if k.builtin {
			common, before = pidOrderAgreed(samples)
		}
		for _, d := range mine {
			if d.flags != ref.flags {
				t.Errorf("%s: flags %#x, vendors %#x", k.name, d.flags, ref.flags)
			}
			if d.extraFlags != ref.extraFlags || d.octetsToQos != ref.octetsToQos {
				t.Errorf("%s: extraFlags %d octetsToInlineQos %d, vendors %d %d", k.name, d.extraFlags, d.octetsToQos, ref.extraFlags, ref.octetsToQos)
			}
			if (d.inlinePIDs == nil) != (ref.inlinePIDs == nil) {
				t.Errorf("%s: inline QoS %v, vendors %v", k.name, d.inlinePIDs, ref.inlinePIDs)
			}
			if d.encap != ref.encap {
				t.Errorf("%s: encapsulation % x, vendors % x", k.name, d.encap, ref.encap)
			}
			if !k.builtin {
				continue
			}
			if !d.sentinelLast {
				t.Errorf("%s: payload does not end with PID_SENTINEL", k.name)
			}
			for _, p := range common {
				if !slices.Contains(d.payloadPIDs, p) {
					t.Errorf("%s: parameter %#04x missing (both vendors always send it); ours %x", k.name, p, d.payloadPIDs)
				}
			}
			for pair := range before {
				ia, ib := slices.Index(d.payloadPIDs, pair[0]), slices.Index(d.payloadPIDs, pair[1])
				if ia >= 0 && ib >= 0 && ia > ib {
					t.Errorf("%s: parameter %#04x after %#04x; both vendors send it before", k.name, pair[0], pair[1])
				}
			}
		}
		t.Logf("%s: %d of ours vs %d vendor samples; common ids %x", k.name, len(mine), len(theirs), common)
	}

	// Disposals (participant on Close, endpoint on Publisher.Close): the
	// vendors differ here (Fast DDS: inline KEY_HASH+STATUS_INFO, no
	// payload; Cyclone: STATUS_INFO and a key-only payload), so ours must
	// match one of them in flags and carry the inline ids it carries.
	shape := func(d rawData) string {
		return fmt.Sprintf("flags=%#x inline=%x encap=% x", d.flags, d.inlinePIDs, d.encap)
	}
	for _, w := range []wire.EntityID{wire.EntityIDSPDPWriter, wire.EntityIDSEDPPublicationsWriter} {
		var theirShapes []rawData
		for _, d := range vendors {
			if d.writer == w && !d.alive() {
				theirShapes = append(theirShapes, d)
			}
		}
		n := 0
		for _, d := range ours {
			if d.writer != w || d.alive() {
				continue
			}
			n++
			ok := false
			for _, v := range theirShapes {
				sub := true
				for _, p := range d.inlinePIDs {
					sub = sub && slices.Contains(v.inlinePIDs, p)
				}
				if v.flags == d.flags && v.encap == d.encap && sub {
					ok = true
				}
			}
			if !ok {
				t.Errorf("disposal on %v: %s matches no vendor disposal", w, shape(d))
			}
		}
		if n == 0 {
			t.Errorf("no disposal of ours on %v", w)
		}
	}
}
