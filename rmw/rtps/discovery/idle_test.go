package discovery

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// idleSetup is a participant as the transport makes it on loopback: the
// SPDP multicast group as target, and the metatraffic ports of
// participant ids 0..31 (but its own) as probe targets.
func idleSetup(t *testing.T) (*Discovery, *recorder, wire.Locator) {
	t.Helper()
	group := wire.LocatorFromAddrPort(netip.MustParseAddrPort("239.255.0.1:7400"))
	var probes []wire.Locator
	for id := 1; id < 32; id++ {
		probes = append(probes, wire.LoopbackUDPv4(uint16(7410+2*id)))
	}
	rec := &recorder{}
	d, err := New(Config{
		Prefix: ourPrefix, Vendor: wire.VendorID{0x01, 0xff}, DomainID: 3,
		MetaUnicast:    []wire.Locator{wire.LoopbackUDPv4(7410)},
		DefaultUnicast: []wire.Locator{wire.LoopbackUDPv4(7411)},
		MetaMulticast:  []wire.Locator{group},
		Targets:        []wire.Locator{group},
		ProbeTargets:   probes,
		Output:         rec, Listener: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, rec, group
}

// runIdle runs d's timed work from `from` to `to` (simulated), calling
// step, if set, at every wake-up.
func runIdle(d *Discovery, from, to time.Duration, step func(now int64)) {
	for now := int64(from); now < int64(to); {
		if step != nil {
			step(now)
		}
		now = min(d.Tick(now), now+int64(time.Second))
	}
}

func count(sent [][]wire.Locator) (n int) {
	for _, to := range sent {
		n += len(to)
	}
	return n
}

// An idle participant alone sends, in the first simulated minute, the four
// initial announcements to the group and the 31 probe ports, then one to
// the group every 3 s, and to the 4 lowest probe ports (the ids a newcomer
// takes; TestProbeRoundsNearKnownIDs) after 30 s: 151 datagrams. The
// probes' gap then doubles up to 4 min: minutes 2-3 take 44, and from then
// on 10 minutes take 212 (0.35 a second). It sent 32 every 3 s before
// (10.7 a second, 640 a minute), whatever the graph, and every round went
// to all 31 ports until 2026-12-06 (178, 71, 293).
func TestIdleDatagramsPerMinute(t *testing.T) {
	d, rec, _ := idleSetup(t)
	runIdle(d, 0, time.Minute, nil)
	if n := count(rec.sent); n != 4*32+19+4 {
		t.Errorf("first minute: %d datagrams, want %d", n, 4*32+19+4)
	}
	rec.sent = nil
	runIdle(d, time.Minute, 3*time.Minute, nil)
	if n := count(rec.sent); n != 40+4 {
		t.Errorf("minutes 2-3: %d datagrams, want %d", n, 40+4)
	}
	runIdle(d, 3*time.Minute, 10*time.Minute, nil)
	rec.sent = nil
	runIdle(d, 10*time.Minute, 20*time.Minute, nil)
	if n := count(rec.sent); n != 200+3*4 {
		t.Errorf("minutes 11-20: %d datagrams, want %d", n, 200+3*4)
	}
}

// spdpTo counts the SPDP announcements sent to l.
func spdpTo(t *testing.T, rec *recorder, l wire.Locator) (n int) {
	t.Helper()
	for i, to := range rec.sent {
		if !slices.Contains(to, l) {
			continue
		}
		var r wire.Reader
		if err := r.Reset(rec.msgs[i]); err != nil {
			t.Fatal(err)
		}
		for {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
			if sm.ID == wire.SubmsgData && sm.Data.WriterID == wire.EntityIDSPDPWriter {
				n++
				break
			}
		}
	}
	return n
}

// A confirmed participant whose announcements come through the multicast
// group gets ours there only; one that is not heard there gets a unicast
// copy of every periodic announcement (as before), and a probe port that
// is a known participant's locator gets no probe besides.
func TestIdleAnnouncementsToPeers(t *testing.T) {
	for _, heardMC := range []bool{false, true} {
		d, rec, group := idleSetup(t)
		peer := wire.LoopbackUDPv4(7412) // participant id 1: also a probe port
		pd := remote()
		pd.LeaseDuration = wire.Duration{Seconds: 20}
		pd.MetatrafficUnicastLocators = []wire.Locator{peer}
		pd.MetatrafficMulticastLocators = []wire.Locator{group}
		sn := wire.SequenceNumber(1)
		runIdle(d, 0, time.Minute, func(now int64) {
			if now%int64(3*time.Second) != 0 && now != 0 {
				return
			}
			rs, sm := spdpFrom(t, pd, sn)
			sn++
			d.HandleSubmessage(now, rs, src, sm)
			if now == 0 {
				answer(t, d, theirPrefix, now)
			}
			if heardMC {
				d.HeardMulticast(now, theirPrefix)
			}
		})
		if p := d.Participant(theirPrefix); p == nil || !p.Confirmed() {
			t.Fatalf("heard by multicast %v: peer not confirmed", heardMC)
		}
		n := spdpTo(t, rec, peer)
		if heardMC && n > 1 { // the probe of the unconfirmed participant
			t.Errorf("peer on the group got %d unicast announcements in a minute, want at most 1", n)
		}
		if !heardMC && (n < 19 || n > 25) {
			t.Errorf("peer off the group got %d unicast announcements in a minute, want one per 3 s", n)
		}
		if g := spdpTo(t, rec, group); g != 23 {
			t.Errorf("heard by multicast %v: %d announcements to the group, want 23", heardMC, g)
		}
	}
}

// The periodic probe rounds (after the initial announcements) go only to
// the participant ids a peer we have not heard of can have: every vendor
// takes the lowest free id, so a newcomer sits in a gap or just above the
// highest id in use. With peers at ids 1-9 but 5 (we are 0), the round at
// 30 s goes to ids 5 and 10-13, not to all 22 unknown ports (each of which
// answers with an ICMP error).
func TestProbeRoundsNearKnownIDs(t *testing.T) {
	d, rec, group := idleSetup(t)
	var peers []wire.ParticipantData
	for id := 1; id <= 9; id++ {
		if id == 5 {
			continue
		}
		pd := remote()
		pd.GuidPrefix[11] = byte(id)
		pd.LeaseDuration = wire.Duration{Seconds: 20}
		pd.MetatrafficUnicastLocators = []wire.Locator{wire.LoopbackUDPv4(uint16(7410 + 2*id))}
		pd.MetatrafficMulticastLocators = []wire.Locator{group}
		peers = append(peers, pd)
	}
	sn := wire.SequenceNumber(1)
	last := int64(-1 << 62)
	feed := func(now int64) { // every peer announces itself every 3 s
		if now-last < int64(3*time.Second) {
			return
		}
		last = now
		for _, pd := range peers {
			rs, sm := spdpFrom(t, pd, sn)
			d.HandleSubmessage(now, rs, src, sm)
			if now == 0 {
				answer(t, d, pd.GuidPrefix, now)
			}
			d.HeardMulticast(now, pd.GuidPrefix)
		}
		sn++
	}
	runIdle(d, 0, 29*time.Second, feed)
	rec.sent, rec.msgs = nil, nil
	runIdle(d, 29*time.Second, 35*time.Second, feed)
	var probed []int
	for id := 1; id < 32; id++ {
		if spdpTo(t, rec, wire.LoopbackUDPv4(uint16(7410+2*id))) > 0 {
			probed = append(probed, id)
		}
	}
	if want := []int{5, 10, 11, 12, 13}; !slices.Equal(probed, want) {
		t.Fatalf("the probe round at 30 s went to ids %v, want %v", probed, want)
	}
}
