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
// the group every 3 s, and to the probe ports after 30 s: 178 datagrams.
// The probes' gap then doubles up to 4 min: minutes 2-3 take 71, and from
// then on 10 minutes take 293 (0.5 a second). It sent 32 every 3 s before
// (10.7 a second, 640 a minute), whatever the graph.
func TestIdleDatagramsPerMinute(t *testing.T) {
	d, rec, _ := idleSetup(t)
	runIdle(d, 0, time.Minute, nil)
	if n := count(rec.sent); n != 4*32+19+31 {
		t.Errorf("first minute: %d datagrams, want %d", n, 4*32+19+31)
	}
	rec.sent = nil
	runIdle(d, time.Minute, 3*time.Minute, nil)
	if n := count(rec.sent); n != 40+31 {
		t.Errorf("minutes 2-3: %d datagrams, want %d", n, 40+31)
	}
	runIdle(d, 3*time.Minute, 10*time.Minute, nil)
	rec.sent = nil
	runIdle(d, 10*time.Minute, 20*time.Minute, nil)
	if n := count(rec.sent); n != 200+3*31 {
		t.Errorf("minutes 11-20: %d datagrams, want %d", n, 200+3*31)
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
