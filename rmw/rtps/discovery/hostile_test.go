package discovery

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Tests of issue #19 items 1 and 2: forged SPDP must not lock a node out
// of discovery, and must not make it send much to the locators it names.

// meter is an Output counting datagrams and bytes per destination port.
type meter struct {
	dgrams map[uint32]int
	bytes  map[uint32]int
	at     map[uint32][]int64 // send times per port
	now    *int64
	last   []byte // the last datagram sent to a watched port
	watch  uint32
}

func newMeter(now *int64) *meter {
	return &meter{dgrams: map[uint32]int{}, bytes: map[uint32]int{}, at: map[uint32][]int64{}, now: now}
}

func (m *meter) Send(to []wire.Locator, msg []byte) {
	for _, l := range to {
		m.dgrams[l.Port]++
		m.bytes[l.Port] += len(msg)
		m.at[l.Port] = append(m.at[l.Port], *m.now)
		if l.Port == m.watch {
			m.last = slices.Clone(msg)
		}
	}
}

// sum adds up the counts of the ports in [lo, hi].
func sum(c map[uint32]int, lo, hi uint32) int {
	n := 0
	for p, v := range c {
		if p >= lo && p <= hi {
			n += v
		}
	}
	return n
}

func newHostile(t *testing.T, out *meter, l Listener) *Discovery {
	t.Helper()
	d, err := New(Config{
		Prefix: ourPrefix, Vendor: wire.VendorID{0x01, 0xff}, DomainID: 3,
		MetaUnicast:    []wire.Locator{wire.LoopbackUDPv4(8160)},
		DefaultUnicast: []wire.Locator{wire.LoopbackUDPv4(8161)},
		Targets:        []wire.Locator{target},
		UserData:       []byte("enclave=/;"),
		Output:         out, Listener: l,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// forged returns a forged SPDP datagram: participant i, infinite lease,
// every locator at port.
func forged(t *testing.T, i int, port uint16) []byte {
	t.Helper()
	var pre wire.GuidPrefix
	pre[0], pre[1] = 0xee, 0xee
	binary.BigEndian.PutUint64(pre[4:], uint64(i)+1)
	pd := wire.ParticipantData{
		ProtocolVersion: wire.ProtocolVersion21, VendorID: wire.VendorEclipse, GuidPrefix: pre,
		BuiltinEndpoints:           BuiltinEndpoints,
		LeaseDuration:              wire.DurationInfinite,
		MetatrafficUnicastLocators: []wire.Locator{wire.LoopbackUDPv4(port)},
		DefaultUnicastLocators:     []wire.Locator{wire.LoopbackUDPv4(port)},
		HasDomainID:                true, DomainID: 3,
	}
	payload, err := pd.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: pd.VendorID, Prefix: pre})
	b.Data(&wire.Data{ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: payload})
	return b.Bytes()
}

// realSPDP is the announcement of a real peer (prefix theirPrefix, port).
func realSPDP(t *testing.T, port uint16) []byte {
	t.Helper()
	pd := remote()
	pd.LeaseDuration = wire.Duration{Seconds: 20}
	pd.MetatrafficUnicastLocators = []wire.Locator{wire.LoopbackUDPv4(port)}
	payload, err := pd.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: pd.VendorID, Prefix: pd.GuidPrefix})
	b.Data(&wire.Data{ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: payload})
	return b.Bytes()
}

// runUntil ticks d until now reaches until.
func runUntil(d *Discovery, now *int64, until int64) {
	for *now < until {
		next := d.Tick(*now)
		*now = min(max(next, *now+1), until)
	}
	d.Tick(*now)
}

const sinkLo, sinkHi = 20000, 20015 // the forged locators' ports

// A flood of 20 000 forged participants with infinite leases, fast (in
// 1 s) or slow (in 100 s), naming 16 locators or one each: the table stays
// bounded, a real participant arriving after it gets in and is confirmed
// when it answers, what goes to the forged locators stays under 1 % of
// what the flood sent, and the forged entries all age out.
func TestSPDPFloodNoLockout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		perMilli int // datagrams per ms of simulated time
		every    int // or one every this many ms
		distinct bool
	}{
		{"fast", 20, 0, false},
		{"slow", 0, 5, false},
		{"fast distinct locators", 20, 0, true},
		{"slow distinct locators", 0, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := int64(0)
			out := newMeter(&now)
			rec := &recorder{}
			d := newHostile(t, out, rec)
			d.Tick(0)
			received := 0
			maxUnconf, maxBytes := 0, 0
			const flood = 20000
			port := func(i int) uint16 {
				if tc.distinct {
					return uint16(30000 + i)
				}
				return uint16(sinkLo + i%16)
			}
			for i := range flood {
				msg := forged(t, i, port(i))
				received += len(msg)
				feedMsg(t, d, now, msg)
				switch {
				case tc.perMilli > 0 && i%tc.perMilli == tc.perMilli-1:
					runUntil(d, &now, now+1e6)
				case tc.every > 0:
					runUntil(d, &now, now+int64(tc.every)*1e6)
				}
				st := d.Stats()
				maxUnconf, maxBytes = max(maxUnconf, st.Unconfirmed), max(maxBytes, st.ParticipantBytes)
			}
			if maxUnconf > DefaultMaxUnconfirmed || maxBytes > DefaultMaxParticipantBytes/4 {
				t.Fatalf("table grew to %d unconfirmed, %d bytes", maxUnconf, maxBytes)
			}
			if len(rec.found) != 0 {
				t.Fatalf("%d forged participants reported", len(rec.found))
			}
			// The real peer, after the flood.
			start := now
			feedMsg(t, d, now, realSPDP(t, 9000))
			if p := d.Participant(theirPrefix); p == nil {
				t.Fatal("the real participant did not get into the table")
			}
			// It hears our periodic announcement (or a probe) and answers
			// within 3 s: still in the table then.
			runUntil(d, &now, start+3e9)
			if d.Participant(theirPrefix) == nil {
				t.Fatal("the real participant was evicted before it could answer")
			}
			answer(t, d, theirPrefix, now)
			if !slices.Equal(rec.found, []wire.GuidPrefix{theirPrefix}) {
				t.Fatalf("found %v", rec.found)
			}
			// Later: every forged participant gone, the real one (announcing
			// itself every 3 s) still there.
			for end := now + 60e9; now < end; {
				runUntil(d, &now, now+3e9)
				feedMsg(t, d, now, realSPDP(t, 9000))
			}
			st := d.Stats()
			if st.Unconfirmed != 0 || st.Participants != 1 || st.UnconfirmedExpired+st.ParticipantsEvicted != flood {
				t.Fatalf("after a minute: %+v", st)
			}
			sent, dgrams := sum(out.bytes, sinkLo, sinkHi), sum(out.dgrams, sinkLo, sinkHi)
			if tc.distinct {
				sent, dgrams = sum(out.bytes, 30000, 50000), sum(out.dgrams, 30000, 50000)
			}
			t.Logf("flood %d B in %d datagrams; to the forged locators %d B in %d datagrams (%.3f %%); probes sent %d, limited %d",
				received, flood, sent, dgrams, 100*float64(sent)/float64(received), st.ProbesSent, st.ProbesLimited)
			if sent*100 >= received {
				t.Fatalf("sent %d bytes to the forged locators for %d received: over 1 %%", sent, received)
			}
		})
	}
}

// An unconfirmed participant announcing an infinite lease ages out; once
// confirmed its announced lease (infinite) applies.
func TestUnconfirmedLeaseCapped(t *testing.T) {
	now := int64(0)
	d := newHostile(t, newMeter(&now), &recorder{})
	feedMsg(t, d, now, forged(t, 0, 20000))
	feedMsg(t, d, now, forged(t, 1, 20001))
	var confirmed wire.GuidPrefix
	confirmed[0], confirmed[1] = 0xee, 0xee
	binary.BigEndian.PutUint64(confirmed[4:], 3)
	answer(t, d, confirmed, now)            // before its SPDP: remembered
	feedMsg(t, d, now, forged(t, 2, 20002)) // its SPDP
	if p := d.Participant(confirmed); p == nil || !p.Confirmed() {
		t.Fatal("a participant that sent SEDP before its SPDP is not confirmed by it")
	}
	runUntil(d, &now, int64(DefaultUnconfirmedLease)+1e9)
	st := d.Stats()
	if st.Unconfirmed != 0 || st.UnconfirmedExpired != 2 || st.Participants != 1 {
		t.Fatalf("stats %+v", st)
	}
	runUntil(d, &now, now+3600e9)
	if d.Participant(confirmed) == nil {
		t.Fatal("a confirmed participant with an infinite lease expired")
	}
}

// When the table is full, a new participant evicts an unconfirmed one,
// never a confirmed one while any unconfirmed one is left; when only
// confirmed ones are left, the one heard from least recently goes.
func TestEvictionPrefersPeersThatAnswer(t *testing.T) {
	now := int64(0)
	rec := &recorder{}
	d := newHostile(t, newMeter(&now), rec)
	prefixOf := func(i int) wire.GuidPrefix {
		var pre wire.GuidPrefix
		pre[0], pre[1] = 0xee, 0xee
		binary.BigEndian.PutUint64(pre[4:], uint64(i)+1)
		return pre
	}
	// MaxParticipants confirmed participants, each heard at its own time.
	for i := range MaxParticipants {
		now = int64(i) * 1e6
		feedMsg(t, d, now, forged(t, i, 20000))
		answer(t, d, prefixOf(i), now)
	}
	if st := d.Stats(); st.Participants != MaxParticipants {
		t.Fatalf("%d confirmed", st.Participants)
	}
	d.Heard(now, prefixOf(0), 100) // 0 is fresh now; 1 is the stalest
	// An unconfirmed newcomer gets in, evicting the stalest confirmed.
	now += 1e6
	feedMsg(t, d, now, forged(t, 5000, 20000))
	if d.Participant(prefixOf(5000)) == nil || d.Participant(prefixOf(1)) != nil || d.Participant(prefixOf(0)) == nil {
		t.Fatal("the newcomer did not replace the participant heard from least recently")
	}
	// Another newcomer: the unconfirmed one goes, the confirmed stay.
	feedMsg(t, d, now, forged(t, 5001, 20000))
	if d.Participant(prefixOf(5001)) == nil || d.Participant(prefixOf(5000)) != nil || d.Stats().Participants != MaxParticipants-1 {
		t.Fatalf("an unconfirmed newcomer evicted a confirmed participant: %+v", d.Stats())
	}
	if n := len(rec.lost); n != 1 {
		t.Fatalf("%d participants reported lost, want 1 (the evicted confirmed one)", n)
	}
}

// Big announcements are bounded by bytes, not only by count.
func TestTableBoundedByMemory(t *testing.T) {
	now := int64(0)
	d := newHostile(t, newMeter(&now), &recorder{})
	if d.cfg.MaxParticipantBytes != DefaultMaxParticipantBytes {
		t.Fatal("default bound not applied")
	}
	ud := make([]byte, 16<<10)
	for i := range 2000 {
		pd := remote()
		binary.BigEndian.PutUint64(pd.GuidPrefix[4:], uint64(i)+1)
		pd.UserData = ud
		rs, sm := spdpFrom(t, pd, 1)
		d.HandleSubmessage(now, rs, src, sm)
		if b := d.Stats().ParticipantBytes; b > DefaultMaxParticipantBytes/4 {
			t.Fatalf("after %d announcements of 16 KiB the table holds %d bytes", i+1, b)
		}
	}
	// A table of 256 KiB (64 KiB for unconfirmed participants) refuses
	// a 60 KiB announcement outright.
	small, err := New(Config{Prefix: ourPrefix, DomainID: 3, Output: newMeter(&now), Listener: &recorder{}, MaxParticipantBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	pd := remote()
	pd.UserData = make([]byte, 60<<10)
	rs, sm := spdpFrom(t, pd, 1)
	small.HandleSubmessage(now, rs, src, sm)
	if st := small.Stats(); st.ParticipantsRefused != 1 || st.Unconfirmed != 0 {
		t.Fatalf("a 60 KiB announcement was not refused: %+v", st)
	}
}

// One forged SPDP naming a sink: what the sink gets is bounded (a few
// probes, each later than the one before) and stops.
func TestReflectionBounded(t *testing.T) {
	now := int64(0)
	out := newMeter(&now)
	d := newHostile(t, out, &recorder{})
	feedMsg(t, d, now, forged(t, 1, 20000))
	runUntil(d, &now, 600e9)
	at := out.at[20000]
	if len(at) == 0 || len(at) > probeFree {
		t.Fatalf("the sink got %d datagrams (at %v), want 1..%d", len(at), at, probeFree)
	}
	for i := 2; i < len(at); i++ {
		if at[i]-at[i-1] <= at[i-1]-at[i-2] {
			t.Fatalf("not backing off: %v", at)
		}
	}
	if last := at[len(at)-1]; last > 10e9 {
		t.Fatalf("still sending %d s later", last/1e9)
	}
	// It keeps announcing every second for ten minutes: one probe per
	// 30 s at most, i.e. far less than it sends.
	n := len(at)
	for now < 1200e9 {
		feedMsg(t, d, now, forged(t, 1, 20000))
		runUntil(d, &now, now+1e9)
	}
	if got := len(out.at[20000]) - n; got > probeFree+600/30+1 {
		t.Fatalf("%d probes for 600 announcements", got)
	}
}

// A forged participant that also forges SEDP (so it is confirmed) and then
// never answers: the SEDP endpoints back off and stop, and forged
// ACKNACKs asking for the whole SEDP history again and again get no more
// than the locator's budget.
func TestForgedConfirmedParticipantBounded(t *testing.T) {
	now := int64(0)
	out := newMeter(&now)
	d := newHostile(t, out, &recorder{})
	// Plenty of SEDP history: 200 endpoints of ~1 KB.
	for i := range 200 {
		e := wire.NewEndpointData(true)
		e.EndpointGUID = wire.GUID{Prefix: ourPrefix, Entity: wire.NewEntityID(uint32(i+1), wire.EntityKindWriterNoKey)}
		e.TopicName, e.TypeName = "rt/topic_with_a_long_name_"+string(rune('a'+i%26)), "pkg::msg::dds_::Type_"
		e.UserData = make([]byte, 900)
		if err := d.Announce(now, &e); err != nil {
			t.Fatal(err)
		}
	}
	msg := forged(t, 1, 20000)
	feedMsg(t, d, now, msg)
	var pre wire.GuidPrefix
	copy(pre[:], msg[8:20])
	answer(t, d, pre, now) // forged SEDP: confirmed
	received := len(msg) + 64
	runUntil(d, &now, 130e9)
	quiet := out.dgrams[20000]
	runUntil(d, &now, 600e9)
	if more := out.dgrams[20000] - quiet; more > 0 {
		t.Fatalf("traffic to a locator that never answers goes on: %d datagrams in 130 s, %d more in the next 470 s", quiet, more)
	}
	// Forged ACKNACKs (new count each) asking for everything, 100 a second
	// for 10 s.
	before := out.bytes[20000]
	for i := range 1000 {
		var b wire.Builder
		b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: pre})
		b.InfoDst(ourPrefix)
		set := wire.SequenceNumberSet{Base: 1}
		for sn := wire.SequenceNumber(1); sn <= 200; sn++ {
			set.Add(sn)
		}
		b.AckNack(&wire.AckNack{ReaderID: wire.EntityIDSEDPPublicationsReader, WriterID: wire.EntityIDSEDPPublicationsWriter,
			ReaderSNState: set, Count: wire.Count(100 + i)})
		m := b.Bytes()
		received += len(m)
		d.Heard(now, pre, len(m))
		feedMsg(t, d, now, m)
		runUntil(d, &now, now+10e6)
	}
	sent := out.bytes[20000] - before
	bound := SEDPBudgetCap + SEDPCredit*received + 10*SEDPRefill
	t.Logf("forged ACKNACKs: %d B received, %d B sent, limited %d", received, sent, d.Stats().SEDPSendsLimited)
	if sent > bound {
		t.Fatalf("sent %d bytes for %d received (bound %d)", sent, received, bound)
	}
	if d.Stats().SEDPSendsLimited == 0 {
		t.Fatal("no SEDP send limited")
	}
}

// Announcements listing many locators are used only up to MaxLocators.
func TestLocatorsCapped(t *testing.T) {
	now := int64(0)
	out := newMeter(&now)
	d := newHostile(t, out, &recorder{})
	pd := remote()
	pd.MetatrafficUnicastLocators = nil
	for i := range 500 {
		pd.MetatrafficUnicastLocators = append(pd.MetatrafficUnicastLocators, wire.LoopbackUDPv4(uint16(40000+i)))
	}
	rs, sm := spdpFrom(t, pd, 1)
	d.HandleSubmessage(now, rs, src, sm)
	if n := sum(out.dgrams, 40000, 40499); n > MaxLocators {
		t.Fatalf("probe went to %d locators", n)
	}
	if got := d.Participant(theirPrefix).MetaLocators(); len(got) != MaxLocators {
		t.Fatalf("%d meta locators kept", len(got))
	}
}

// Heard owes its credit to the SEDP budgets lazily (settle): the bytes a
// confirmed participant sent count at the next send to it, as if credited
// at once, and a participant dropped and discovered again is the one Heard
// renews (not the one it looked at last).
func TestHeardCreditAndRenewal(t *testing.T) {
	now := int64(0)
	out := newMeter(&now)
	d := newHostile(t, out, &recorder{})
	msg := forged(t, 1, 20000)
	feedMsg(t, d, now, msg)
	var pre wire.GuidPrefix
	copy(pre[:], msg[8:20])
	answer(t, d, pre, now)
	loc := d.Participant(pre).MetaLocators()[0]
	send := sedpOutput{d}
	d.budgetOf(now, loc).tokens = 0
	sent, limited := out.dgrams[20000], d.Stats().SEDPSendsLimited
	send.Send([]wire.Locator{loc}, make([]byte, 300))
	if d.Stats().SEDPSendsLimited != limited+1 || out.dgrams[20000] != sent {
		t.Fatal("a 300 B send went out on an empty budget")
	}
	d.Heard(now, pre, 50)
	d.Heard(now, pre, 50) // 400 tokens of credit
	send.Send([]wire.Locator{loc}, make([]byte, 300))
	if out.dgrams[20000] != sent+1 {
		t.Fatalf("after 100 B heard (credit %d), a 300 B send was limited", 100*SEDPCredit)
	}
	if got := d.budgets[loc].tokens; got != 100 {
		t.Fatalf("budget %d after the send, want 100", got)
	}
	// Settled credit is not counted twice.
	send.Send([]wire.Locator{loc}, make([]byte, 300))
	if out.dgrams[20000] != sent+1 {
		t.Fatal("a second 300 B send went out on 100 tokens")
	}

	// Dropped while Heard remembers it, then discovered again: Heard
	// renews the new participant.
	d.Heard(now, pre, 10)
	d.Drop(now, pre)
	if d.Participant(pre) != nil {
		t.Fatal("still known after Drop")
	}
	d.Heard(now, pre, 10) // unknown now: nothing
	now = 5e9
	feedMsg(t, d, now, forged(t, 1, 20000))
	p := d.Participant(pre)
	if p == nil {
		t.Fatal("not discovered again")
	}
	p.lease = 20e9
	now = 7e9
	d.Heard(now, pre, 0)
	if p.heard != now || p.Expiry != now+20e9 {
		t.Fatalf("the participant discovered again: heard %d expiry %d, want %d and %d", p.heard, p.Expiry, now, now+int64(20e9))
	}
}
