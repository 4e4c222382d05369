package endpoint

import (
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// maxKeptBuffer is the largest reassembly buffer kept for reuse after its
// sample is done.
const maxKeptBuffer = 4 << 20

const (
	slotEmpty uint8 = iota
	slotData
	slotGap
)

type slot struct {
	state   uint8
	sn      wire.SequenceNumber
	payload []byte
	qos     []byte
	qosBE   bool
	null    bool
	key     bool
	hasTS   bool
	ts      int64
}

type fragEntry struct {
	inUse      bool
	sn         wire.SequenceNumber
	sampleSize uint32
	fragSize   uint32
	numFrags   uint32
	received   uint32
	bits       []uint64
	buf        []byte
	qos        []byte
	qosBE      bool
	key        bool
	hasTS      bool
	ts         int64
}

func (e *fragEntry) has(f uint32) bool { return e.bits[(f-1)/64]&(1<<((f-1)%64)) != 0 }

type writerProxy struct {
	guid      wire.GUID
	locs      []wire.Locator
	reliable  bool
	implicit  bool
	lastHeard int64

	// best effort: highest SN delivered
	lastSN wire.SequenceNumber

	// reliable
	synced       bool
	next         wire.SequenceNumber
	bufLow       wire.SequenceNumber // unsynced: lowest buffered SN
	bufHigh      wire.SequenceNumber
	hbLast       wire.SequenceNumber
	gotHB        bool
	haveHBCount  bool
	hbCount      wire.Count
	haveHBFCount bool
	hbfCount     wire.Count
	hbAt         int64 // when the last HEARTBEAT was accepted
	hbfAt        int64 // when the last HEARTBEAT_FRAG was accepted
	syncAt       int64
	ackAt        int64
	preemptAt    int64
	preempts     int // preemptive ACKNACKs sent since the writer was last heard
	// slots is the out-of-order window (Window entries), allocated when
	// first needed: a proxy that only ever sees in-order traffic costs
	// no window.
	slots []slot
	nbuf  int

	// maxSN is the highest SN received in DATA or DATA_FRAG: the evidence
	// of what the writer has sent. HEARTBEAT and GAP can claim anything.
	maxSN wire.SequenceNumber
	// jumpFrom..jumpTo is an advance of next by a HEARTBEAT or GAP past
	// maxSN+1 not yet confirmed by DATA at or above jumpTo (0: none), and
	// jumpLost what it counted as lost. DATA from the writer in
	// [jumpFrom, jumpTo) proves the claim false (a forged or stale
	// HEARTBEAT): the proxy goes back to that DATA.
	jumpFrom, jumpTo wire.SequenceNumber
	jumpLost         uint64
	jumpHBLast       wire.SequenceNumber // hbLast before the jump
	jumpSync         bool                // the jump was the first sync
	jumpAt           int64               // when the pending advance was made
	jumpTrusted      bool                // acknowledged as if confirmed (see agreed)
	// claim is an advance past maxSN+1 that waits for DATA at or above
	// it (0: none): see claimedAdvance.
	claim   wire.SequenceNumber
	lastDel wire.SequenceNumber // reliable: last SN delivered

	frags []fragEntry
	// fragging: an entry of frags may be in use. Set when one is taken,
	// cleared by a sweep (sweepFrags) that finds none: an unfragmented
	// sample does not read the entries.
	fragging bool
}

// Reader is the RTPS reader state machine of one DDS DataReader. See the
// package documentation for its behaviour and concurrency contract (not
// safe for concurrent use).
type Reader struct {
	cfg     ReaderConfig
	out     Output
	deliver func(Sample)
	hdr     wire.Header

	proxies []*writerProxy
	nImpl   int

	rd    wire.Reader
	b     wire.Builder
	buf   []byte
	smp   Sample
	reasm int
	// ACKNACK and NACK_FRAG counts are reader-wide, so they keep
	// increasing for a writer that is unmatched and matched again.
	ackCount wire.Count
	nfCount  wire.Count

	st ReaderStats
}

func (c *ReaderConfig) setDefaults() error {
	if c.MaxImplicitWriters <= 0 {
		c.MaxImplicitWriters = DefaultMaxImplicitWriters
	}
	if c.AckDelay == 0 {
		c.AckDelay = DefaultAckDelay
	} else if c.AckDelay < 0 {
		c.AckDelay = 0
	}
	if c.PreemptiveAckPeriod <= 0 {
		c.PreemptiveAckPeriod = DefaultPreemptiveAckPeriod
	}
	if c.MaxPreemptiveAckPeriod <= 0 {
		c.MaxPreemptiveAckPeriod = max(DefaultMaxPreemptiveAckPeriod, c.PreemptiveAckPeriod)
	}
	if c.MaxPreemptiveAcks <= 0 {
		c.MaxPreemptiveAcks = DefaultMaxPreemptiveAcks
	}
	if c.InitialSyncTimeout == 0 {
		c.InitialSyncTimeout = DefaultInitialSyncTimeout
	} else if c.InitialSyncTimeout < 0 {
		c.InitialSyncTimeout = 0
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxSampleSize <= 0 {
		c.MaxSampleSize = DefaultMaxSampleSize
	}
	if c.MaxFragmentedSamples <= 0 {
		c.MaxFragmentedSamples = DefaultMaxFragmentedSamples
	}
	if c.MaxReassemblyBytes <= 0 {
		c.MaxReassemblyBytes = DefaultMaxReassemblyBytes
	}
	if c.Participant.Version == (wire.ProtocolVersion{}) {
		c.Participant.Version = wire.ProtocolVersion21
	}
	if c.Window > 1<<16 || c.MaxFragmentedSamples > MaxFragmentedSamplesLimit {
		return ErrConfig
	}
	return nil
}

// NewReader returns a Reader with cfg (zero fields take defaults) that
// sends ACKNACK and NACK_FRAG through out and delivers samples to deliver.
// deliver is called synchronously and must not call back into the Reader;
// the Sample's slices are valid only during the call. It fails with
// ErrConfig for a Window over 65536 or MaxFragmentedSamples over
// MaxFragmentedSamplesLimit.
func NewReader(cfg ReaderConfig, out Output, deliver func(Sample)) (*Reader, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	r := &Reader{
		cfg:     cfg,
		out:     out,
		deliver: deliver,
		hdr:     wire.Header{Version: cfg.Participant.Version, Vendor: cfg.Participant.Vendor, Prefix: cfg.GUID.Prefix},
		buf:     make([]byte, 0, 512),
	}
	return r, nil
}

// GUID returns the reader's GUID.
func (r *Reader) GUID() wire.GUID { return r.cfg.GUID }

func (r *Reader) find(g wire.GUID) (*writerProxy, int) {
	for i, p := range r.proxies {
		if p.guid == g {
			return p, i
		}
	}
	return nil, -1
}

func (r *Reader) newProxy(now int64, guid wire.GUID, reliable bool) *writerProxy {
	p := &writerProxy{
		guid:      guid,
		reliable:  reliable,
		lastHeard: now,
		syncAt:    Never,
		ackAt:     Never,
		preemptAt: Never,
		frags:     make([]fragEntry, r.cfg.MaxFragmentedSamples),
	}
	return p
}

// win is the out-of-order window of reliable proxies.
func (r *Reader) win() wire.SequenceNumber { return wire.SequenceNumber(r.cfg.Window) }

// peek returns the window slot of sn, nil if the window is not allocated.
func (p *writerProxy) peek(sn wire.SequenceNumber) *slot {
	if p.slots == nil {
		return nil
	}
	return &p.slots[int(sn%wire.SequenceNumber(len(p.slots)))]
}

// slotFor returns the window slot of sn, allocating the window.
func (r *Reader) slotFor(p *writerProxy, sn wire.SequenceNumber) *slot {
	if p.slots == nil {
		p.slots = make([]slot, r.cfg.Window)
	}
	return &p.slots[int(sn%wire.SequenceNumber(len(p.slots)))]
}

// MatchWriter adds (or updates the locators of) a matched writer proxy.
// locators are where ACKNACK and NACK_FRAG go. A reliable proxy sends a
// preemptive ACKNACK at once and repeats it until a HEARTBEAT arrives.
// Matching a writer already tracked implicitly (MatchAny) makes it
// explicit.
func (r *Reader) MatchWriter(now int64, guid wire.GUID, locators []wire.Locator, reliable bool) {
	if p, i := r.find(guid); p != nil {
		if p.implicit {
			r.removeAt(i)
		} else {
			p.locs = append(p.locs[:0], locators...)
			return
		}
	}
	p := r.newProxy(now, guid, reliable)
	p.locs = append([]wire.Locator(nil), locators...)
	r.proxies = append(r.proxies, p)
	if reliable {
		p.preemptAt = now
		r.sendAck(now, p)
	}
}

func (r *Reader) removeAt(i int) {
	p := r.proxies[i]
	for j := range p.frags {
		r.reasm -= cap(p.frags[j].buf) + 8*cap(p.frags[j].bits)
	}
	for j := range p.slots {
		r.reasm -= cap(p.slots[j].payload) + cap(p.slots[j].qos)
	}
	if p.implicit {
		r.nImpl--
	}
	copy(r.proxies[i:], r.proxies[i+1:])
	r.proxies[len(r.proxies)-1] = nil
	r.proxies = r.proxies[:len(r.proxies)-1]
}

// UnmatchWriter removes a writer proxy and its buffered samples; unknown
// GUIDs are ignored.
func (r *Reader) UnmatchWriter(guid wire.GUID) {
	if _, i := r.find(guid); i >= 0 {
		r.removeAt(i)
	}
}

// proxyFor returns the proxy of writer g, creating an implicit one in
// MatchAny mode, or nil.
func (r *Reader) proxyFor(now int64, g wire.GUID) *writerProxy {
	p, _ := r.find(g)
	if p == nil && r.cfg.MatchAny {
		if r.nImpl >= r.cfg.MaxImplicitWriters {
			oldest := -1
			for i, q := range r.proxies {
				if q.implicit && (oldest < 0 || q.lastHeard < r.proxies[oldest].lastHeard) {
					oldest = i
				}
			}
			r.removeAt(oldest)
		}
		p = r.newProxy(now, g, false)
		p.implicit = true
		r.nImpl++
		r.proxies = append(r.proxies, p)
	}
	if p == nil {
		r.st.UnknownWriter++
		return nil
	}
	p.lastHeard = now
	return p
}

// HandleMessage processes one received datagram: DATA, DATA_FRAG,
// HEARTBEAT, HEARTBEAT_FRAG and GAP whose readerId is this reader's entity
// id or ENTITYID_UNKNOWN, and whose INFO_DST is absent or this reader's
// prefix.
func (r *Reader) HandleMessage(now int64, msg []byte) {
	if err := r.rd.Reset(msg); err != nil {
		r.st.Malformed++
		return
	}
	me := r.cfg.GUID.Entity
	for {
		sm, err := r.rd.Next()
		if err != nil {
			r.st.Malformed++
			return
		}
		if sm == nil {
			return
		}
		rs := &r.rd.State
		if !rs.DestPrefix.IsZero() && rs.DestPrefix != r.cfg.GUID.Prefix {
			continue
		}
		_, to, ok := sm.WriterToReader()
		if !ok {
			continue
		}
		if to != wire.EntityIDUnknown && to != me {
			continue
		}
		r.HandleSubmessage(now, rs, sm)
	}
}

// HandleSubmessage processes one decoded submessage routed to this reader
// by the transport; rs is the receiver state of its message (source prefix
// and timestamp). Other kinds are ignored.
func (r *Reader) HandleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) {
	switch sm.ID {
	case wire.SubmsgData:
		r.handleData(now, rs, &sm.Data)
	case wire.SubmsgDataFrag:
		r.handleDataFrag(now, rs, &sm.DataFrag)
	case wire.SubmsgHeartbeat:
		r.handleHeartbeat(now, rs.SourceGUID(sm.Heartbeat.WriterID), &sm.Heartbeat)
	case wire.SubmsgHeartbeatFrag:
		r.handleHeartbeatFrag(now, rs.SourceGUID(sm.HeartbeatFrag.WriterID), &sm.HeartbeatFrag)
	case wire.SubmsgGap:
		r.handleGap(now, rs.SourceGUID(sm.Gap.WriterID), &sm.Gap)
	}
}

// incoming describes one complete sample on its way in.
type incoming struct {
	sn      wire.SequenceNumber
	payload []byte
	qos     []byte
	qosBE   bool
	null    bool
	key     bool
	hasTS   bool
	ts      int64
}

func (r *Reader) handleData(now int64, rs *wire.ReceiverState, d *wire.Data) {
	if d.WriterSN < 1 {
		r.st.Malformed++
		return
	}
	if len(d.SerializedPayload) > r.cfg.MaxSampleSize {
		r.st.TooLarge++
		return
	}
	p := r.proxyFor(now, rs.SourceGUID(d.WriterID))
	if p == nil {
		return
	}
	in := incoming{
		sn:      d.WriterSN,
		payload: d.SerializedPayload,
		qos:     d.InlineQos.Data,
		qosBE:   d.InlineQos.BigEndian,
		null:    d.SerializedPayload == nil,
		key:     d.Key,
		hasTS:   rs.HaveTimestamp,
	}
	if in.hasTS {
		in.ts = rs.Timestamp.Nanos()
	}
	r.dropFrag(p, d.WriterSN)
	r.accept(now, p, &in)
}

// heard notes DATA or DATA_FRAG with sn from p: evidence of what the
// writer sent, which confirms a claimed advance at or below it, and a sign
// of life that restarts the preemptive ACKNACK back-off.
func (r *Reader) heard(now int64, p *writerProxy, sn wire.SequenceNumber) {
	p.maxSN = max(p.maxSN, sn)
	if p.jumpTo != 0 && p.maxSN >= p.jumpTo {
		p.jumpFrom, p.jumpTo, p.jumpLost = 0, 0, 0 // confirmed
	}
	if p.claim != 0 && p.maxSN >= p.claim {
		target := p.claim
		p.claim = 0
		if p.synced && target > p.next {
			r.st.Lost += r.advanceTo(p, target)
			r.deliverChain(p)
		}
	}
	if p.reliable && !p.gotHB {
		if p.preempts >= r.cfg.MaxPreemptiveAcks && p.preemptAt == Never {
			p.preemptAt = now // silenced: prompt it again
		}
		p.preempts = 0
	}
}

// claimedAdvance moves next to target on the writer's word (a HEARTBEAT's
// firstSN or a GAP) and returns the SNs skipped without data. An advance
// to at most maxSN+1 is backed by DATA and applied. One beyond claims SNs
// no DATA has shown: while samples are buffered out of order it waits
// (claim) for DATA at or above target, so that nothing buffered is
// delivered past a hole on a false word; otherwise it is applied and
// remembered (jumpFrom..jumpTo) until DATA confirms it, and undone by DATA
// or a HEARTBEAT that contradicts it (revertJump). fromSync marks the first
// HEARTBEAT of an unsynchronised proxy.
func (r *Reader) claimedAdvance(now int64, p *writerProxy, target wire.SequenceNumber, hbLastBefore wire.SequenceNumber, fromSync bool) uint64 {
	backed := target <= p.maxSN+1
	if !backed && p.nbuf > 0 {
		p.claim = max(p.claim, target)
		if fromSync {
			// Start where the evidence is; the claim applies once
			// confirmed.
			r.sync(p, p.bufLow)
		}
		return 0
	}
	from := p.next
	var lost uint64
	if fromSync {
		r.sync(p, target)
	} else {
		lost = r.advanceTo(p, target)
	}
	if !backed {
		if p.jumpTo == 0 {
			p.jumpFrom, p.jumpLost, p.jumpHBLast, p.jumpSync = from, 0, hbLastBefore, fromSync
			p.jumpAt, p.jumpTrusted = now, fromSync
		}
		p.jumpTo = max(p.jumpTo, target)
		p.jumpLost += lost
	}
	return lost
}

// jumpTrustDelay: a pending advance that the writer's HEARTBEATs or GAPs
// keep claiming, uncontradicted, for this long is trusted enough to be
// acknowledged (see sendAck); DATA or a HEARTBEAT can still undo it until
// DATA confirms it.
const jumpTrustDelay = int64(1e9)

// agreed notes a HEARTBEAT or GAP that repeats the pending advance.
func (p *writerProxy) agreed(now int64, target wire.SequenceNumber) {
	if p.jumpTo != 0 && target >= p.jumpTo && now-p.jumpAt >= jumpTrustDelay {
		p.jumpTrusted = true
	}
}

// revertJump handles DATA with sn below next: if an unconfirmed advance
// skipped it (sn in [jumpFrom, jumpTo) and newer than anything delivered),
// the HEARTBEAT or GAP that claimed those SNs gone was false (forged, or
// from a writer that restarted its numbering): the proxy goes back to
// where it was and reports true; the caller then handles sn as usual.
func (r *Reader) revertJump(p *writerProxy, sn wire.SequenceNumber) bool {
	if p.jumpTo == 0 || sn < p.jumpFrom || sn >= p.jumpTo || sn <= p.lastDel {
		return false
	}
	r.undoJump(p)
	return true
}

// contradicted handles a HEARTBEAT saying the writer's last SN is last: a
// pending advance or claim to beyond last+1 cannot be true (the writer's
// first SN is at most its last + 1), so it is undone. The HEARTBEAT's
// count is not checked first: a forged huge count must not shield a forged
// claim from the writer's own HEARTBEATs.
func (r *Reader) contradicted(p *writerProxy, last wire.SequenceNumber) {
	if p.claim > last+1 {
		p.claim = 0
	}
	if p.jumpTo > last+1 {
		r.undoJump(p)
	}
}

// undoJump puts p back where it was before its pending advance.
func (r *Reader) undoJump(p *writerProxy) {
	r.st.JumpsReverted++
	r.st.Lost -= min(p.jumpLost, r.st.Lost)
	p.hbLast = max(p.jumpHBLast, p.maxSN)
	p.claim = 0
	// The counts the claim came with cannot be trusted either.
	p.haveHBCount, p.haveHBFCount = false, false
	if p.jumpSync {
		// Back to unsynchronised: the writer's real HEARTBEAT (or
		// InitialSyncTimeout) says where its history starts.
		p.synced, p.gotHB = false, false
		p.next = 0
		p.preemptAt = Never
	} else {
		p.next = max(p.jumpFrom, p.lastDel+1)
	}
	p.jumpFrom, p.jumpTo, p.jumpLost = 0, 0, 0
}

// accept runs one complete sample through p's ordering rules.
func (r *Reader) accept(now int64, p *writerProxy, in *incoming) {
	if !p.reliable {
		if in.sn <= p.lastSN {
			r.st.Duplicates++
			return
		}
		p.lastSN = in.sn
		r.sweepFrags(p, in.sn, true)
		r.deliverIn(p, in)
		return
	}
	r.heard(now, p, in.sn)
	if p.synced && in.sn < p.next {
		r.revertJump(p, in.sn)
	}
	if !p.synced {
		if p.nbuf == 0 {
			p.bufLow, p.bufHigh = in.sn, in.sn
			if r.cfg.InitialSyncTimeout == 0 {
				r.sync(p, in.sn)
			} else {
				p.syncAt = now + r.cfg.InitialSyncTimeout
				// prompt the writer for a HEARTBEAT
				if p.preemptAt > now {
					p.preemptAt = now
				}
			}
		} else {
			lo, hi := min(p.bufLow, in.sn), max(p.bufHigh, in.sn)
			if hi-lo >= r.win() {
				r.st.OutOfWindow++
				return
			}
			p.bufLow, p.bufHigh = lo, hi
		}
		if !p.synced {
			r.store(p, in)
			return
		}
	}
	if in.sn < p.next {
		r.st.Duplicates++
		return
	}
	if in.sn-p.next >= r.win() {
		r.st.OutOfWindow++
		return
	}
	if in.sn == p.next {
		if s := p.peek(in.sn); s != nil && s.state != slotEmpty && s.sn == in.sn {
			r.clearSlot(p, s)
		}
		p.next++
		r.deliverIn(p, in)
		r.deliverChain(p)
		return
	}
	r.store(p, in)
}

// store buffers in (copying it) unless its slot is taken.
func (r *Reader) store(p *writerProxy, in *incoming) {
	s := r.slotFor(p, in.sn)
	if s.state != slotEmpty {
		if s.sn == in.sn && s.state == slotData {
			r.st.Duplicates++
			return
		}
		if s.sn == in.sn { // gap: irrelevant
			r.st.Duplicates++
			return
		}
		r.clearSlot(p, s) // stale entry (cannot normally happen)
	}
	if len(in.qos) > maxInlineQos {
		in.qos = nil // not kept out of order; nothing ROS needs is that large
	}
	if grow := len(in.payload) + len(in.qos) - cap(s.payload) - cap(s.qos); grow > 0 && r.reasm+grow > r.cfg.MaxReassemblyBytes {
		r.trimIdle()
		if r.reasm+grow > r.cfg.MaxReassemblyBytes {
			r.st.OutOfWindow++
			return
		}
	}
	before := cap(s.payload) + cap(s.qos)
	s.state = slotData
	s.sn = in.sn
	s.payload = append(s.payload[:0], in.payload...)
	s.qos = append(s.qos[:0], in.qos...)
	r.reasm += cap(s.payload) + cap(s.qos) - before
	s.qosBE = in.qosBE
	s.null, s.key, s.hasTS, s.ts = in.null, in.key, in.hasTS, in.ts
	p.nbuf++
}

func (r *Reader) clearSlot(p *writerProxy, s *slot) {
	if s.state == slotData {
		p.nbuf--
	}
	s.state = slotEmpty
	r.trimSlot(s)
}

// trimSlot frees a large slot buffer instead of keeping it for reuse.
func (r *Reader) trimSlot(s *slot) {
	if cap(s.payload) > maxKeptBuffer {
		r.reasm -= cap(s.payload)
		s.payload = nil
	}
}

func (r *Reader) deliverIn(p *writerProxy, in *incoming) {
	r.smp = Sample{
		Writer:             p.guid,
		SN:                 in.sn,
		InlineQos:          wire.ParameterList{Data: in.qos, BigEndian: in.qosBE},
		Key:                in.key,
		HasSourceTimestamp: in.hasTS,
		SourceTimestamp:    in.ts,
	}
	if !in.null {
		r.smp.Payload = in.payload
	}
	if p.reliable {
		p.lastDel = in.sn
	}
	r.st.Delivered++
	r.deliver(r.smp)
}

func (r *Reader) deliverSlot(p *writerProxy, s *slot) {
	in := incoming{sn: s.sn, payload: s.payload, qos: s.qos, qosBE: s.qosBE, null: s.null, key: s.key, hasTS: s.hasTS, ts: s.ts}
	r.deliverIn(p, &in)
}

// deliverChain delivers buffered samples from p.next on while they are
// consecutive.
func (r *Reader) deliverChain(p *writerProxy) {
	if p.slots == nil {
		r.dropFragsBelow(p, p.next)
		return
	}
	w := wire.SequenceNumber(len(p.slots))
	for {
		s := &p.slots[int(p.next%w)]
		if s.state == slotEmpty || s.sn != p.next {
			break
		}
		p.next++
		if s.state == slotData {
			p.nbuf--
			s.state = slotEmpty
			r.deliverSlot(p, s)
		} else {
			s.state = slotEmpty
		}
		r.trimSlot(s)
	}
	r.dropFragsBelow(p, p.next)
}

// sync makes an unsynchronised proxy synchronised with next expected SN
// start; buffered samples below start are delivered first.
func (r *Reader) sync(p *writerProxy, start wire.SequenceNumber) {
	p.synced = true
	p.syncAt = Never
	if p.nbuf > 0 && p.bufLow < start {
		p.next = p.bufLow
		r.st.Lost += r.advanceTo(p, start)
	} else {
		p.next = start
	}
	r.deliverChain(p)
}

// acceptCount applies the RTPS rule that a HEARTBEAT (or HEARTBEAT_FRAG)
// with a count not above the last one is ignored, except that after
// HeartbeatCountTimeout any count is accepted again (as Cyclone DDS does):
// one forged or stale count cannot silence a writer for good.
func acceptCount(now int64, have *bool, last *wire.Count, at *int64, c wire.Count) bool {
	if *have && c <= *last && now-*at < HeartbeatCountTimeout {
		return false
	}
	*have, *last, *at = true, c, now
	return true
}

// advanceTo moves p.next to target: buffered samples below target are
// delivered in order. It returns how many SNs were skipped without data.
func (r *Reader) advanceTo(p *writerProxy, target wire.SequenceNumber) uint64 {
	if target <= p.next {
		return 0
	}
	var skipped uint64
	w := r.win()
	end := min(target, p.next+w)
	if p.slots == nil {
		end = p.next // nothing buffered
	}
	for sn := p.next; sn < end; sn++ {
		s := &p.slots[int(sn%w)]
		p.next = sn + 1
		if s.state != slotEmpty && s.sn == sn {
			if s.state == slotData {
				p.nbuf--
				s.state = slotEmpty
				r.deliverSlot(p, s)
			} else {
				s.state = slotEmpty
			}
			continue
		}
		skipped++
	}
	if target > p.next {
		skipped += uint64(target - p.next)
	}
	p.next = target
	r.dropFragsBelow(p, p.next)
	return skipped
}

func (r *Reader) handleHeartbeat(now int64, g wire.GUID, hb *wire.Heartbeat) {
	if hb.FirstSN < 1 || hb.LastSN < hb.FirstSN-1 || hb.LastSN < 0 {
		r.st.Malformed++
		return
	}
	p, _ := r.find(g)
	if p == nil {
		r.st.UnknownWriter++
		return
	}
	if !p.reliable {
		return
	}
	r.contradicted(p, hb.LastSN)
	if !acceptCount(now, &p.haveHBCount, &p.hbCount, &p.hbAt, hb.Count) {
		r.st.StaleCount++
		return
	}
	p.lastHeard = now
	r.st.Heartbeats++
	p.gotHB = true
	p.preemptAt = Never
	p.preempts = 0
	hbLast := p.hbLast
	if hb.LastSN > p.hbLast {
		p.hbLast = hb.LastSN
	}
	p.agreed(now, hb.FirstSN)
	if !p.synced {
		lost := r.st.Lost
		r.claimedAdvance(now, p, hb.FirstSN, hbLast, true)
		if p.jumpTo != 0 {
			p.jumpLost = r.st.Lost - lost
		}
	} else if hb.FirstSN > p.next {
		r.st.Lost += r.claimedAdvance(now, p, hb.FirstSN, hbLast, false)
		r.deliverChain(p)
	}
	if !hb.Final || p.next <= p.hbLast {
		if p.ackAt == Never {
			p.ackAt = now + r.cfg.AckDelay
		}
		if p.ackAt <= now {
			r.sendAck(now, p)
		}
	}
}

func (r *Reader) handleHeartbeatFrag(now int64, g wire.GUID, hf *wire.HeartbeatFrag) {
	if hf.WriterSN < 1 || hf.LastFragmentNum < 1 {
		r.st.Malformed++
		return
	}
	p, _ := r.find(g)
	if p == nil {
		r.st.UnknownWriter++
		return
	}
	if !p.reliable {
		return
	}
	if !acceptCount(now, &p.haveHBFCount, &p.hbfCount, &p.hbfAt, hf.Count) {
		r.st.StaleCount++
		return
	}
	if !p.synced {
		return
	}
	// the writer has written hf.WriterSN: it is no later than its lastSN
	p.hbLast = max(p.hbLast, hf.WriterSN)
	for i := range p.frags {
		if e := &p.frags[i]; e.inUse && e.sn == hf.WriterSN {
			if p.ackAt == Never {
				p.ackAt = now + r.cfg.AckDelay
			}
			if p.ackAt <= now {
				r.sendAck(now, p)
			}
			return
		}
	}
}

func (r *Reader) handleGap(now int64, g wire.GUID, gap *wire.Gap) {
	if gap.GapStart < 1 || gap.GapList.Base < 1 || gap.GapList.NumBits > wire.MaxSetBits {
		r.st.Malformed++
		return
	}
	p, _ := r.find(g)
	if p == nil {
		r.st.UnknownWriter++
		return
	}
	if !p.reliable || !p.synced {
		return
	}
	p.lastHeard = now
	w := r.win()
	start, end := gap.GapStart, gap.GapList.Base // [start, end)
	p.agreed(now, end)
	if start <= p.next && end > p.next {
		r.st.GapSNs += r.claimedAdvance(now, p, end, p.hbLast, false)
	} else if start > p.next {
		for sn := start; sn < end && sn < p.next+w; sn++ {
			r.markGap(p, sn)
		}
	}
	for i := uint32(0); i < gap.GapList.NumBits; i++ {
		sn := gap.GapList.Base + wire.SequenceNumber(i)
		if gap.GapList.Contains(sn) && sn >= p.next && sn < p.next+w {
			r.markGap(p, sn)
		}
	}
	r.deliverChain(p)
}

func (r *Reader) markGap(p *writerProxy, sn wire.SequenceNumber) {
	s := r.slotFor(p, sn)
	if s.state != slotEmpty && s.sn == sn {
		return
	}
	if s.state == slotData {
		p.nbuf--
	}
	s.state = slotGap
	s.sn = sn
	r.dropFrag(p, sn)
	r.st.GapSNs++
}

// handleDataFrag adds fragments to their sample and hands a completed
// sample to accept.
func (r *Reader) handleDataFrag(now int64, rs *wire.ReceiverState, d *wire.DataFrag) {
	if d.WriterSN < 1 || d.FragmentSize == 0 || d.SampleSize == 0 || d.FragmentStartingNum < 1 || d.FragmentsInSubmessage == 0 {
		r.st.Malformed++
		return
	}
	if int64(d.SampleSize) > int64(r.cfg.MaxSampleSize) {
		r.st.TooLarge++
		return
	}
	fs := uint32(d.FragmentSize)
	nf := (d.SampleSize + fs - 1) / fs
	last := uint64(d.FragmentStartingNum) + uint64(d.FragmentsInSubmessage) - 1
	if last > uint64(nf) {
		r.st.Malformed++
		return
	}
	off := uint64(d.FragmentStartingNum-1) * uint64(fs)
	want := min(uint64(d.FragmentsInSubmessage)*uint64(fs), uint64(d.SampleSize)-off)
	if uint64(len(d.Fragments)) != want {
		r.st.Malformed++
		return
	}
	p := r.proxyFor(now, rs.SourceGUID(d.WriterID))
	if p == nil {
		return
	}
	sn := d.WriterSN
	// relevance
	if !p.reliable {
		if sn <= p.lastSN {
			r.st.Duplicates++
			return
		}
	} else {
		r.heard(now, p, sn)
		if p.synced && sn < p.next && !r.revertJump(p, sn) {
			r.st.Duplicates++
			return
		}
		if p.synced {
			if sn-p.next >= r.win() {
				r.st.OutOfWindow++
				return
			}
			if s := p.peek(sn); s != nil && s.state != slotEmpty && s.sn == sn {
				r.st.Duplicates++
				return
			}
		}
	}
	e := r.fragEntryFor(p, sn, d)
	if e == nil {
		return
	}
	if e.sampleSize != d.SampleSize || e.fragSize != fs {
		r.st.FragmentsDropped++
		return
	}
	fresh := false
	for f := d.FragmentStartingNum; uint64(f) <= last; f++ {
		if !e.has(f) {
			e.bits[(f-1)/64] |= 1 << ((f - 1) % 64)
			e.received++
			fresh = true
		}
	}
	if !fresh {
		r.st.Duplicates++
		return
	}
	copy(e.buf[off:], d.Fragments)
	if len(e.qos) == 0 && !d.InlineQos.Empty() && len(d.InlineQos.Data) <= maxInlineQos {
		e.qos = append(e.qos[:0], d.InlineQos.Data...)
		e.qosBE = d.InlineQos.BigEndian
	}
	if !e.hasTS && rs.HaveTimestamp {
		e.hasTS, e.ts = true, rs.Timestamp.Nanos()
	}
	if e.key != d.Key {
		e.key = e.key || d.Key
	}
	if e.received < e.numFrags {
		return
	}
	in := incoming{sn: sn, payload: e.buf[:e.sampleSize], qos: e.qos, qosBE: e.qosBE, key: e.key, hasTS: e.hasTS, ts: e.ts}
	e.inUse = false // the buffer stays valid until the next fragment
	r.accept(now, p, &in)
	r.releaseFrag(e)
}

// fragEntryFor finds or makes the reassembly entry of sn, or returns nil
// (counted) when the bounds forbid it.
func (r *Reader) fragEntryFor(p *writerProxy, sn wire.SequenceNumber, d *wire.DataFrag) *fragEntry {
	free := -1
	victim := -1
	for i := range p.frags {
		e := &p.frags[i]
		if !e.inUse {
			if free < 0 || cap(e.buf) >= int(d.SampleSize) && cap(p.frags[free].buf) < int(d.SampleSize) {
				free = i
			}
			continue
		}
		if e.sn == sn {
			return e
		}
		if p.reliable {
			// keep the lowest SNs: they are delivered first
			if e.sn > sn && (victim < 0 || e.sn > p.frags[victim].sn) {
				victim = i
			}
		} else if e.sn < sn && (victim < 0 || e.sn < p.frags[victim].sn) {
			victim = i
		}
	}
	if free < 0 {
		if victim < 0 {
			r.st.FragmentsDropped++
			return nil
		}
		r.releaseFrag(&p.frags[victim])
		r.st.Superseded++
		free = victim
	}
	e := &p.frags[free]
	size := int(d.SampleSize)
	nf := (d.SampleSize + uint32(d.FragmentSize) - 1) / uint32(d.FragmentSize)
	words := int((nf + 63) / 64)
	need := max(size-cap(e.buf), 0) + 8*max(words-cap(e.bits), 0)
	if need > 0 && r.reasm+need > r.cfg.MaxReassemblyBytes {
		// try to give back idle buffers first
		r.trimIdle()
		need = max(size-cap(e.buf), 0) + 8*max(words-cap(e.bits), 0)
		if r.reasm+need > r.cfg.MaxReassemblyBytes {
			r.st.FragmentsDropped++
			return nil
		}
	}
	if cap(e.buf) < size {
		r.reasm -= cap(e.buf)
		e.buf = make([]byte, size)
		r.reasm += size
	}
	if cap(e.bits) < words {
		r.reasm += 8 * (words - cap(e.bits))
		e.bits = make([]uint64, words)
	} else {
		e.bits = e.bits[:words]
		clear(e.bits)
	}
	e.inUse = true
	p.fragging = true
	e.sn = sn
	e.sampleSize = d.SampleSize
	e.fragSize = uint32(d.FragmentSize)
	e.numFrags = nf
	e.received = 0
	e.qos = e.qos[:0]
	e.key = false
	e.hasTS = false
	e.ts = 0
	return e
}

// trimIdle frees the buffers of idle reassembly entries.
func (r *Reader) trimIdle() {
	for _, p := range r.proxies {
		for i := range p.frags {
			if e := &p.frags[i]; !e.inUse && (e.buf != nil || e.bits != nil) {
				r.reasm -= cap(e.buf) + 8*cap(e.bits)
				e.buf, e.bits = nil, nil
			}
		}
	}
}

func (r *Reader) releaseFrag(e *fragEntry) {
	e.inUse = false
	if cap(e.buf) > maxKeptBuffer {
		r.reasm -= cap(e.buf) + 8*cap(e.bits)
		e.buf, e.bits = nil, nil
	}
}

func (r *Reader) dropFrag(p *writerProxy, sn wire.SequenceNumber) {
	if !p.fragging {
		return
	}
	left := false
	for i := range p.frags {
		if e := &p.frags[i]; e.inUse && e.sn == sn {
			r.releaseFrag(e)
		} else if e.inUse {
			left = true
		}
	}
	p.fragging = left
}

func (r *Reader) dropFragsBelow(p *writerProxy, sn wire.SequenceNumber) { r.sweepFrags(p, sn, false) }

// sweepFrags releases p's partial samples below sn (counting them as
// superseded if superseded), and notes whether any is left.
func (r *Reader) sweepFrags(p *writerProxy, sn wire.SequenceNumber, superseded bool) {
	if !p.fragging {
		return
	}
	left := false
	for i := range p.frags {
		e := &p.frags[i]
		switch {
		case e.inUse && e.sn < sn:
			r.releaseFrag(e)
			if superseded {
				r.st.Superseded++
			}
		case e.inUse:
			left = true
		}
	}
	p.fragging = left
}

// syncPromptPeriod bounds the interval of the HEARTBEAT prompts of a
// reader holding data from a writer it has no HEARTBEAT from.
const syncPromptPeriod = 100e6

// sendAck sends p an ACKNACK (base = next expected SN, bits for what is
// missing up to the last HEARTBEAT) and a NACK_FRAG for every partially
// received sample the writer has.
func (r *Reader) sendAck(now int64, p *writerProxy) {
	p.ackAt = Never
	if !p.gotHB {
		// Preemptive: less and less often while the writer says
		// nothing (Cyclone DDS and Fast DDS back off too), and not at
		// all once MaxPreemptiveAcks went unanswered, until it shows up.
		p.preempts++
		switch {
		case p.preempts >= r.cfg.MaxPreemptiveAcks:
			p.preemptAt = Never
			r.st.WritersSilenced++
		default:
			p.preemptAt = now + backoff(r.cfg.PreemptiveAckPeriod, p.preempts-1, r.cfg.MaxPreemptiveAckPeriod)
		}
		if !p.synced && p.nbuf > 0 {
			// Holding data until a HEARTBEAT says where the writer's
			// history starts: a lost prompt or reply must not leave the
			// whole InitialSyncTimeout unused.
			p.preemptAt = now + min(max(r.cfg.InitialSyncTimeout/4, 1e6), syncPromptPeriod)
		}
	}
	if len(p.locs) == 0 {
		return
	}
	r.b.Reset(r.buf[:0], r.hdr)
	r.b.InfoDst(p.guid.Prefix)
	set := wire.SequenceNumberSet{Base: 1}
	switch {
	case p.jumpTo != 0 && !p.jumpTrusted:
		// An unconfirmed advance: acknowledge only what arrived (a
		// writer may take a base beyond its last SN for "everything",
		// as Cyclone DDS does) and ask for all from there, so that the
		// writer answers with DATA (which undoes a false advance) or
		// with GAP and DATA past it (which confirms a true one).
		set.Base = max(p.jumpFrom, p.lastDel+1)
		end := min(p.hbLast, set.Base+wire.MaxSetBits-1)
		for sn := set.Base; sn <= end; sn++ {
			set.Add(sn)
		}
	case p.synced:
		set.Base = p.next
		end := min(p.hbLast, p.next+wire.MaxSetBits-1, p.next+r.win()-1)
		for sn := p.next; sn <= end; sn++ {
			if s := p.peek(sn); s != nil && s.state != slotEmpty && s.sn == sn {
				continue
			}
			if r.fragInProgress(p, sn) {
				continue
			}
			set.Add(sn)
		}
	}
	r.ackCount++
	r.b.AckNack(&wire.AckNack{
		ReaderID:      r.cfg.GUID.Entity,
		WriterID:      p.guid.Entity,
		ReaderSNState: set,
		Count:         r.ackCount,
		Final:         set.Empty() && p.gotHB && p.jumpTo == 0,
	})
	r.st.AckNacksSent++
	if p.synced {
		for i := range p.frags {
			e := &p.frags[i]
			if !e.inUse || e.sn > p.hbLast || e.sn < p.next {
				continue
			}
			fset := wire.FragmentNumberSet{}
			for f := uint32(1); f <= e.numFrags; f++ {
				if (f-1)%64 == 0 && e.bits[(f-1)/64] == ^uint64(0) {
					f += 63
					continue
				}
				if e.has(f) {
					continue
				}
				if fset.Base == 0 {
					fset.Base = f
				}
				if !fset.Add(f) {
					break
				}
			}
			if fset.Base == 0 {
				continue
			}
			r.nfCount++
			if r.b.NackFrag(&wire.NackFrag{
				ReaderID:            r.cfg.GUID.Entity,
				WriterID:            p.guid.Entity,
				WriterSN:            e.sn,
				FragmentNumberState: fset,
				Count:               r.nfCount,
			}) == nil {
				r.st.NackFragsSent++
			}
		}
	}
	msg := r.b.Message()
	r.buf = msg[:0]
	r.out.Send(p.locs, msg)
}

func (r *Reader) fragInProgress(p *writerProxy, sn wire.SequenceNumber) bool {
	for i := range p.frags {
		if e := &p.frags[i]; e.inUse && e.sn == sn {
			return true
		}
	}
	return false
}

// Tick performs the timed work due at now (ACKNACK, NACK_FRAG, preemptive
// ACKNACK, initial sync) and returns NextDeadline.
func (r *Reader) Tick(now int64) int64 {
	for _, p := range r.proxies {
		if !p.reliable {
			continue
		}
		if !p.synced && p.syncAt <= now && p.nbuf > 0 {
			start := p.bufLow
			if r.cfg.Durable {
				start = max(1, p.bufHigh-r.win()+1)
			}
			r.sync(p, start)
		}
		if p.ackAt <= now || (!p.gotHB && p.preemptAt <= now) {
			r.sendAck(now, p)
		}
	}
	return r.NextDeadline()
}

// NextDeadline returns when Tick next has work to do, or Never.
func (r *Reader) NextDeadline() int64 {
	d := Never
	for _, p := range r.proxies {
		if !p.reliable {
			continue
		}
		d = min(d, p.ackAt)
		if !p.gotHB {
			d = min(d, p.preemptAt)
		}
		if !p.synced && p.nbuf > 0 {
			d = min(d, p.syncAt)
		}
	}
	return d
}

// Stats returns the reader's counters.
func (r *Reader) Stats() ReaderStats {
	s := r.st
	s.MatchedWriters = len(r.proxies) - r.nImpl
	s.ReassemblyBytes = r.reasm
	for _, p := range r.proxies {
		s.BufferedSamples += p.nbuf
	}
	return s
}
