package discovery

import (
	"math"
	"time"

	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Bounds on what announcements from anyone can make a Discovery hold and
// send (issue #19: 1024 forged SPDP datagrams made a node deaf to every
// later participant, and one forged SPDP made it send 21 500 datagrams/s to
// the locator it named, forever).
//
// A participant is unconfirmed from its first SPDP until it sends anything
// else of discovery (SEDP DATA, HEARTBEAT, ACKNACK, GAP, participant
// messages): until it has answered, it is a claim. Unconfirmed
// participants are not reported to the Listener, not matched with the
// SEDP endpoints and not sent periodic announcements; their lease is
// capped (UnconfirmedLease) even if they announce an infinite one; there
// are at most MaxUnconfirmed of them and, when a new one arrives, the
// oldest is evicted to make room, so a new real peer always gets in. A
// confirmed participant is evicted only when the whole table (bounded by
// MaxParticipants and by MaxParticipantBytes of estimated memory) has no
// unconfirmed entry left, the one heard from least recently first.
//
// What goes to an unconfirmed participant is a probe: one datagram with
// our SPDP DATA and, addressed to it, a non-final HEARTBEAT of each SEDP
// writer, so that a peer that does not know us learns of us and a peer
// that does answers (its ACKNACK confirms it). Probes are sent at its
// admission and 1, 2 and 4 s later, then once per fresh SPDP from it at
// most every 30 s; each locator is probed at most with an exponential
// back-off (1 s doubling to 30 s, for all participants naming it, as
// Cyclone DDS ages the locators it probes); and all probes together stay
// within 4 KiB plus 0.25 % of the SPDP bytes received from unconfirmed
// participants, both counted over a sliding window (1 min half-life). The
// probes of a participant that answers are given back to that budget: they
// reached a peer. So a flood of forged participants gets back well under
// a percent of what it sends, however fast or slow it is, while a launch
// of many real processes, whose peers answer, probes them all. A probe the
// budget holds back is tried again a second later and does not count
// against the participant's free probes. Probes only speed discovery up: a
// peer that gets none still learns of us from the periodic announcements
// and then answers.
//
// SEDP traffic to a confirmed participant's locators is paced per
// locator by a budget: 256 KiB to start with (a whole SEDP history of a
// big process), 16 KiB/s more, and 4 times the bytes the participants
// naming the locator sent us, up to 256 KiB;
// a datagram over budget is not sent (Stats.SEDPSendsLimited) and the
// reliable protocol asks for it again. Together with the endpoints'
// HEARTBEAT and ACKNACK back-off, a locator that never answers gets less
// and less, and never more than a bounded multiple of what was sent to us.
const (
	// DefaultMaxParticipantBytes bounds the estimated memory of the
	// remote participant table: announcements, endpoints and protocol
	// state. A quarter of it at most goes to unconfirmed participants.
	DefaultMaxParticipantBytes = 16 << 20
	// DefaultMaxUnconfirmed bounds the participants not confirmed yet.
	DefaultMaxUnconfirmed = 256
	// DefaultUnconfirmedLease caps the lease of a participant until it
	// is confirmed (its announced lease applies from then on).
	DefaultUnconfirmedLease = 20 * time.Second
	// MaxLocators bounds the unicast locators used per participant and
	// per endpoint (the first ones announced): an announcement listing
	// hundreds of addresses must not multiply what is sent.
	MaxLocators = 4

	// SEDPAllowance, SEDPRefill (per second), SEDPCredit (times the
	// bytes received) and SEDPBudgetCap define the per-locator budget of
	// SEDP traffic (see above).
	SEDPAllowance = 256 << 10
	SEDPRefill    = 16 << 10
	SEDPCredit    = 4
	SEDPBudgetCap = 256 << 10
)

// Probe pacing.
const (
	probeFree      = 4                  // probes without a fresh SPDP
	probeBase      = int64(time.Second) // first retry; doubles
	probeMaxGap    = int64(30 * time.Second)
	probeAllowance = 4 << 10   // probe bytes with nothing received
	probeShare     = 1.0 / 400 // of the unconfirmed SPDP bytes received
	probeHalfLife  = float64(time.Minute)
	probeLocQuiet  = int64(60 * time.Second) // a locator's back-off resets after this
	maxProbeLocs   = 4096
	budgetGCPeriod = int64(10 * time.Second)
	// quietCutoff: a confirmed participant not heard from for this long
	// gets no more periodic announcements (until it speaks again).
	quietCutoff = int64(time.Minute)
)

// Estimated memory of a participant: its decoded announcement (twice the
// payload), the table entry, and once confirmed the SEDP proxies in four
// endpoints; each endpoint likewise.
const (
	unconfirmedOverhead = 1 << 10
	confirmedOverhead   = 8 << 10
	endpointOverhead    = 512
)

// spdpOverhead is what an SPDP datagram carries besides its payload (RTPS
// header, INFO_TS, DATA header).
const spdpOverhead = 56

func participantCost(payload int) int { return unconfirmedOverhead + 2*payload }
func endpointCost(payload int) int    { return endpointOverhead + 2*payload }

// probeLoc is the back-off state of one probed locator.
type probeLoc struct {
	next  int64 // no probe before
	last  int64 // last probe
	level int
}

// probeAllowed reports whether a probe of size bytes may go to l now, and
// if so charges the global budget and the locator's back-off.
func (d *Discovery) probeAllowed(now int64, l wire.Locator, size int) bool {
	d.decayProbes(now)
	if d.probeSent+float64(size) > probeAllowance+probeShare*d.probeRecv {
		return false
	}
	s := d.probeLocs[l]
	if s != nil && now < s.next {
		return false
	}
	if s == nil {
		if len(d.probeLocs) >= maxProbeLocs {
			d.gcProbeLocs(now)
			if len(d.probeLocs) >= maxProbeLocs {
				return false
			}
		}
		s = &probeLoc{level: -1}
		d.probeLocs[l] = s
	}
	if now-s.last > probeLocQuiet {
		s.level = -1
	}
	s.level = min(s.level+1, 16)
	s.last = now
	s.next = now + min(probeBase<<s.level, probeMaxGap)
	d.probeSent += float64(size)
	return true
}

// decayProbes ages the probe bytes sent and the SPDP bytes received (the
// sliding window of the global probe budget).
func (d *Discovery) decayProbes(now int64) {
	if now <= d.probeAt {
		return
	}
	f := math.Exp2(-float64(now-d.probeAt) / probeHalfLife)
	d.probeSent *= f
	d.probeRecv *= f
	d.probeAt = now
}

// unconfirmedSPDP notes an announcement of size bytes from an unconfirmed
// participant: the global probe budget grows with what floods it.
func (d *Discovery) unconfirmedSPDP(now int64, size int) {
	d.decayProbes(now)
	d.probeRecv += float64(size)
}

func (d *Discovery) gcProbeLocs(now int64) {
	for l, s := range d.probeLocs {
		if now-s.last > probeLocQuiet {
			delete(d.probeLocs, l)
		}
	}
}

// probe sends p (unconfirmed) its probe as far as the limits allow, and
// schedules the next.
func (d *Discovery) probe(now int64, p *Participant) {
	d.b.Reset(d.buf[:0], d.hdr)
	if d.cfg.WallNow != nil {
		d.b.InfoTS(wire.TimeFromNanos(d.cfg.WallNow()))
	}
	_ = d.b.Data(&wire.Data{
		ReaderID:          wire.EntityIDSPDPReader,
		WriterID:          wire.EntityIDSPDPWriter,
		WriterSN:          d.spdpSN,
		SerializedPayload: d.spdpPayload,
	})
	bes := p.Data.BuiltinEndpoints
	if d.cfg.Secure != nil {
		bes = 0 // secure SEDP only after authentication
	}
	d.b.InfoDst(p.Data.GuidPrefix)
	if bes&wire.BuiltinPublicationsDetector != 0 {
		hb := d.pubW.ProbeHeartbeat(wire.EntityIDSEDPPublicationsReader)
		d.b.Heartbeat(&hb)
	}
	if bes&wire.BuiltinSubscriptionsDetector != 0 {
		hb := d.subW.ProbeHeartbeat(wire.EntityIDSEDPSubscriptionsReader)
		d.b.Heartbeat(&hb)
	}
	d.buf = d.b.Bytes()
	to := d.scratch[:0]
	for _, l := range p.MetaLocators() {
		if d.probeAllowed(now, l, len(d.buf)) {
			to = append(to, l)
		}
	}
	d.scratch = to[:0]
	if len(to) == 0 {
		// held back: again in a second, not counted as one of its probes
		d.st.ProbesLimited++
		p.nextProbe = now + probeBase
		return
	}
	p.probes++
	p.lastProbe = now
	p.probeBytes += len(d.buf) * len(to)
	if p.probes < probeFree {
		p.nextProbe = now + probeBase<<(p.probes-1)
	} else {
		p.nextProbe = endpoint.Never // until it announces itself again
	}
	d.cfg.Output.Send(to, d.buf)
	d.st.ProbesSent++
	d.st.SPDPSent++
}

// refundProbes gives the probes sent to p, which answered, back to the
// global probe budget.
func (d *Discovery) refundProbes(now int64, p *Participant) {
	d.decayProbes(now)
	d.probeSent = max(0, d.probeSent-float64(p.probeBytes))
	p.probeBytes = 0
}

// probeDue probes the unconfirmed participants whose probe is due.
func (d *Discovery) probeDue(now int64) {
	next := endpoint.Never
	for _, p := range d.parts {
		if p.confirmed {
			continue
		}
		if p.nextProbe <= now {
			d.probe(now, p)
		}
		next = min(next, p.nextProbe)
	}
	d.nextProbe = next
}

// spdpAgain notes a fresh SPDP from unconfirmed p: once its free probes
// are used, each announcement earns one more, at most every probeMaxGap.
func (d *Discovery) spdpAgain(p *Participant) {
	if p.nextProbe == endpoint.Never {
		p.nextProbe = p.lastProbe + probeMaxGap
		d.nextProbe = min(d.nextProbe, p.nextProbe)
	}
}

// answers remembers, for a while, the participants that sent discovery
// traffic before we knew them (their SPDP not arrived yet, or evicted
// during a flood): their announcement then confirms them at once.
type answers struct {
	at   map[wire.GuidPrefix]int64
	ring []wire.GuidPrefix
	head int
}

const (
	maxAnswers = 1024
	answerTTL  = int64(30 * time.Second)
)

func (a *answers) note(now int64, p wire.GuidPrefix) {
	if a.at == nil {
		a.at = map[wire.GuidPrefix]int64{}
	}
	if _, ok := a.at[p]; !ok {
		if len(a.ring) < maxAnswers {
			a.ring = append(a.ring, p)
		} else {
			delete(a.at, a.ring[a.head])
			a.ring[a.head] = p
			a.head = (a.head + 1) % maxAnswers
		}
	}
	a.at[p] = now
}

func (a *answers) recent(now int64, p wire.GuidPrefix) bool {
	t, ok := a.at[p]
	return ok && now-t <= answerTTL
}

// budget is the SEDP send budget of one locator.
type budget struct {
	tokens int64
	at     int64
}

func (d *Discovery) budgetOf(now int64, l wire.Locator) *budget {
	b := d.budgets[l]
	if b == nil {
		b = &budget{tokens: SEDPAllowance, at: now}
		d.budgets[l] = b
		return b
	}
	if now > b.at {
		b.tokens = min(b.tokens+(now-b.at)*SEDPRefill/1e9, SEDPBudgetCap)
		b.at = now
	}
	return b
}

// sedpOutput is the Output of the SEDP endpoints: it sends to each
// destination whose budget covers the datagram.
type sedpOutput struct{ d *Discovery }

func (o sedpOutput) Send(to []wire.Locator, msg []byte) {
	d := o.d
	d.settle(d.now)
	keep := d.sedpTo[:0]
	for _, l := range to {
		if b := d.budgetOf(d.now, l); b.tokens >= int64(len(msg)) {
			b.tokens -= int64(len(msg))
			keep = append(keep, l)
		} else {
			d.st.SEDPSendsLimited++
		}
	}
	d.sedpTo = keep[:0]
	if len(keep) > 0 {
		d.cfg.Output.Send(keep, msg)
	}
}

// credit adds what confirmed p sent (n bytes) to its locators' budgets.
func (d *Discovery) credit(now int64, p *Participant, n int64) {
	for _, l := range p.MetaLocators() {
		b := d.budgetOf(now, l)
		b.tokens = min(b.tokens+n*SEDPCredit, SEDPBudgetCap)
	}
}

// gcBudgets forgets the budgets of locators no confirmed participant
// names.
func (d *Discovery) gcBudgets() {
	d.settle(d.now)
	used := map[wire.Locator]bool{}
	for _, p := range d.parts {
		if p.confirmed {
			for _, l := range p.MetaLocators() {
				used[l] = true
			}
		}
	}
	for l := range d.budgets {
		if !used[l] {
			delete(d.budgets, l)
		}
	}
}
