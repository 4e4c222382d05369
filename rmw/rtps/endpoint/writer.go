package endpoint

import (
	"cmp"
	"slices"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Sizes used to plan datagrams.
const (
	sizeInfoDst     = 16
	sizeInfoTS      = 12
	sizeDataHdr     = 24 // submessage header + extraFlags..writerSN
	sizeDataFragHdr = 36
	sizeHeartbeat   = 32
	sizeGap         = 4 + 8 + 8 + 8 + 4 + 4*8 // worst case (full bitmap)
	// maxInlineQos bounds the inline QoS of one Change.
	maxInlineQos = 1024
	// planOverhead is what a datagram carrying one DATA/DATA_FRAG needs
	// besides the payload and inline QoS.
	planOverhead = wire.HeaderSize + sizeInfoDst + sizeInfoTS + sizeDataFragHdr + sizeHeartbeat
	// maxFragRequests bounds the pending NACK_FRAG requests per reader.
	maxFragRequests = 8
)

type change struct {
	sn      wire.SequenceNumber
	ts      int64
	payload []byte
	qos     []byte
	key     bool
	null    bool // neither D nor K
	hasInst bool
	inst    [16]byte
}

// history is a ring of changes in increasing SN order. It has no holes
// unless a keyed writer replaced samples of an instance.
type history struct {
	slots []change // grows up to capacity
	cap   int
	head  int
	n     int
	bytes int
}

func (h *history) at(i int) *change { return &h.slots[(h.head+i)%len(h.slots)] }

// first returns the oldest SN held, or def if the history is empty.
func (h *history) first(def wire.SequenceNumber) wire.SequenceNumber {
	if h.n == 0 {
		return def
	}
	return h.at(0).sn
}

func (h *history) get(sn wire.SequenceNumber) *change {
	lo, hi := 0, h.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if h.at(m).sn < sn {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < h.n && h.at(lo).sn == sn {
		return h.at(lo)
	}
	return nil
}

func (h *history) release(c *change) {
	h.bytes -= len(c.payload) + len(c.qos)
	c.payload = c.payload[:0]
	c.qos = c.qos[:0]
	c.hasInst = false
}

func (h *history) dropOldest() {
	h.release(h.at(0))
	h.head = (h.head + 1) % len(h.slots)
	h.n--
}

// remove drops entry i, keeping the order (buffers are kept for reuse).
func (h *history) remove(i int) {
	if i == 0 {
		h.dropOldest()
		return
	}
	h.release(h.at(i))
	for j := i; j < h.n-1; j++ {
		a, b := h.at(j), h.at(j+1)
		*a, *b = *b, *a
	}
	h.n--
}

func (h *history) push(sn wire.SequenceNumber) *change {
	if h.n == len(h.slots) {
		// grow (the caller made room if h.n == h.cap)
		ns := make([]change, min(max(2*len(h.slots), 16), h.cap))
		for i := 0; i < h.n; i++ {
			ns[i] = *h.at(i)
		}
		h.slots, h.head = ns, 0
	}
	i := (h.head + h.n) % len(h.slots)
	h.n++
	c := &h.slots[i]
	c.sn = sn
	return c
}

type fragRequest struct {
	sn  wire.SequenceNumber
	set wire.FragmentNumberSet
}

type readerProxy struct {
	guid     wire.GUID
	locs     []wire.Locator
	reliable bool
	tl       bool
	low      wire.SequenceNumber // first SN relevant to this reader
	acked    wire.SequenceNumber // every SN below is acknowledged

	haveCount     bool
	lastCount     wire.Count
	haveFragCount bool
	lastFragCount wire.Count

	req     wire.SequenceNumberSet // pending repair requests
	fragReq [maxFragRequests]fragRequest
	nFrag   int
	reqAt   int64

	nextHB  int64
	forceHB bool
	lastHB  int64
	// unanswered counts HEARTBEATs that asked for an answer since the
	// reader's last ACKNACK; silent is set when a reader that never
	// answered got MaxUnansweredHeartbeats of them.
	unanswered int
	silent     bool
}

// syncing reports whether p (reliable) may not have seen a HEARTBEAT yet:
// it has not answered one, or only with count 0, as a Cyclone DDS reader
// does before its first HEARTBEAT. Such a reader gets non-final
// HEARTBEATs until it answers: a volatile Cyclone DDS reader starts its
// session at the first HEARTBEAT it sees and never asks for what was
// written before that, so a lost HEARTBEAT must not wait for the first
// sample to be corrected.
func (p *readerProxy) syncing() bool {
	return p.reliable && (!p.haveCount || p.lastCount == 0)
}

// Writer is the RTPS writer state machine of one DDS DataWriter. See the
// package documentation for its behaviour and concurrency contract (not
// safe for concurrent use).
type Writer struct {
	cfg     WriterConfig
	out     Output
	hdr     wire.Header
	hist    history
	lastSN  wire.SequenceNumber
	hbCount wire.Count

	proxies   []*readerProxy
	allLocs   []wire.Locator
	nReliable int

	// datagram under construction
	b       wire.Builder
	buf     []byte
	to      []wire.Locator
	dst     wire.GuidPrefix
	started bool

	rd       wire.Reader
	members  []wire.SequenceNumber
	gaps     []wire.SequenceNumber
	fmembers []uint32

	st WriterStats
}

func (c *WriterConfig) setDefaults() error {
	if c.Depth <= 0 {
		c.Depth = 1
	}
	if c.MaxSamples <= 0 {
		c.MaxSamples = DefaultMaxSamples
	}
	if c.HeartbeatPeriod <= 0 {
		c.HeartbeatPeriod = DefaultHeartbeatPeriod
	}
	if c.MaxHeartbeatPeriod <= 0 {
		c.MaxHeartbeatPeriod = max(DefaultMaxHeartbeatPeriod, c.HeartbeatPeriod)
	}
	if c.MaxUnansweredHeartbeats <= 0 {
		c.MaxUnansweredHeartbeats = DefaultMaxUnansweredHeartbeats
	}
	if c.NackResponseDelay == 0 {
		c.NackResponseDelay = DefaultNackResponseDelay
	} else if c.NackResponseDelay < 0 {
		c.NackResponseDelay = 0
	}
	if c.FragmentSize <= 0 {
		c.FragmentSize = DefaultFragmentSize
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MaxSampleSize <= 0 {
		c.MaxSampleSize = DefaultMaxSampleSize
	}
	if c.MaxRepairBytes <= 0 {
		c.MaxRepairBytes = DefaultMaxRepairBytes
	}
	if c.Participant.Version == (wire.ProtocolVersion{}) {
		c.Participant.Version = wire.ProtocolVersion21
	}
	if c.MaxMessageSize > MaxMessageSizeLimit || c.FragmentSize+planOverhead+maxInlineQos > c.MaxMessageSize {
		return ErrConfig
	}
	if c.Depth > 1<<20 || c.MaxSamples > 1<<20 {
		return ErrConfig
	}
	return nil
}

// NewWriter returns a Writer with cfg (zero fields take defaults) that
// sends through out. It fails with ErrConfig if MaxMessageSize exceeds
// MaxMessageSizeLimit or cannot hold one fragment of FragmentSize with
// headers and 1 KiB of inline QoS, or if the history bound exceeds 2^20.
func NewWriter(cfg WriterConfig, out Output) (*Writer, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	capacity := cfg.Depth
	if cfg.KeepAll || cfg.Keyed {
		capacity = cfg.MaxSamples
	}
	w := &Writer{
		cfg: cfg,
		out: out,
		hdr: wire.Header{Version: cfg.Participant.Version, Vendor: cfg.Participant.Vendor, Prefix: cfg.GUID.Prefix},
	}
	w.hist.cap = capacity
	w.buf = make([]byte, 0, cfg.MaxMessageSize)
	return w, nil
}

// GUID returns the writer's GUID.
func (w *Writer) GUID() wire.GUID { return w.cfg.GUID }

func (w *Writer) find(g wire.GUID) (*readerProxy, int) {
	for i, p := range w.proxies {
		if p.guid == g {
			return p, i
		}
	}
	return nil, -1
}

func (w *Writer) recomputeLocs() {
	w.allLocs = w.allLocs[:0]
	w.nReliable = 0
	for _, p := range w.proxies {
		if p.reliable {
			w.nReliable++
		}
	outer:
		for _, l := range p.locs {
			for _, m := range w.allLocs {
				if m == l {
					continue outer
				}
			}
			w.allLocs = append(w.allLocs, l)
		}
	}
}

// effFirst is the first SN available to p.
func (w *Writer) effFirst(p *readerProxy) wire.SequenceNumber {
	return max(w.hist.first(w.lastSN+1), p.low)
}

// MatchReader adds (or updates the locators of) a matched reader proxy.
// locators are where its traffic goes (unicast preferred; the transport
// chooses). reliable and transientLocal are the reader's QoS; a
// transient-local reader of a transient-local writer gets the history
// (reliable: HEARTBEAT then repair; best effort: pushed at once). A new
// reliable reader gets a non-final HEARTBEAT at once.
func (w *Writer) MatchReader(now int64, guid wire.GUID, locators []wire.Locator, reliable, transientLocal bool) {
	if p, _ := w.find(guid); p != nil {
		p.locs = append(p.locs[:0], locators...)
		w.recomputeLocs()
		return
	}
	p := &readerProxy{
		guid:     guid,
		locs:     append([]wire.Locator(nil), locators...),
		reliable: reliable && w.cfg.Reliable,
		tl:       transientLocal && w.cfg.TransientLocal,
		reqAt:    Never,
		nextHB:   Never,
		lastHB:   -1 << 62,
	}
	if p.tl {
		p.low = 1
	} else {
		p.low = w.lastSN + 1
	}
	p.acked = p.low
	w.proxies = append(w.proxies, p)
	w.recomputeLocs()
	if p.reliable {
		w.sendHeartbeatTo(now, p, false)
		w.scheduleHB(now, p)
	} else if p.tl {
		w.begin(p.locs, p.guid.Prefix)
		for i := 0; i < w.hist.n; i++ {
			w.appendChange(w.hist.at(i), p.guid.Entity, 1, 0, false)
			w.st.Resends++
		}
		w.flush()
	}
}

// HeardFrom reports whether the matched reader guid has sent an ACKNACK:
// it has matched this writer, so a sample written now reaches it (a
// volatile reader that matches later starts after the samples written
// before). Best-effort and unknown readers report false.
func (w *Writer) HeardFrom(guid wire.GUID) bool {
	p, _ := w.find(guid)
	return p != nil && p.haveCount
}

// UnmatchReader removes a reader proxy; unknown GUIDs are ignored.
func (w *Writer) UnmatchReader(guid wire.GUID) {
	_, i := w.find(guid)
	if i < 0 {
		return
	}
	copy(w.proxies[i:], w.proxies[i+1:])
	w.proxies[len(w.proxies)-1] = nil
	w.proxies = w.proxies[:len(w.proxies)-1]
	w.recomputeLocs()
}

// minAcked returns the lowest acknowledgement of the reliable proxies
// (lastSN+1 if there is none).
func (w *Writer) minAcked() wire.SequenceNumber {
	m := w.lastSN + 1
	for _, p := range w.proxies {
		if p.reliable && p.acked < m {
			m = p.acked
		}
	}
	return m
}

// Write is WriteChange with only a payload and a source timestamp.
func (w *Writer) Write(now int64, payload []byte, sourceTimestamp int64) (wire.SequenceNumber, error) {
	c := Change{Payload: payload, SourceTimestamp: sourceTimestamp}
	return w.WriteChange(now, &c)
}

// WriteChange assigns the next sequence number to c, stores it in the
// history and sends it to every matched reader (followed by a HEARTBEAT if
// a reliable reader is matched). It returns ErrWouldBlock (KEEP_ALL history
// full of unacknowledged samples) or ErrTooLarge (payload over
// MaxSampleSize, inline QoS over 1 KiB) without consuming a sequence
// number.
func (w *Writer) WriteChange(now int64, c *Change) (wire.SequenceNumber, error) {
	if len(c.Payload) > w.cfg.MaxSampleSize || len(c.InlineQos) > maxInlineQos || len(c.InlineQos)%4 != 0 {
		return 0, ErrTooLarge
	}
	h := &w.hist
	if w.cfg.Keyed && !w.cfg.KeepAll && c.HasInstance {
		// KEEP_LAST depth per instance: drop the oldest of this instance
		cnt, oldest := 0, -1
		for i := 0; i < h.n; i++ {
			if e := h.at(i); e.hasInst && e.inst == c.Instance {
				if oldest < 0 {
					oldest = i
				}
				cnt++
			}
		}
		if cnt >= w.cfg.Depth {
			if h.at(oldest).sn >= w.minAcked() {
				w.st.Overwritten++
			}
			h.remove(oldest)
		}
	}
	if h.n == h.cap {
		if w.cfg.KeepAll {
			if h.at(0).sn >= w.minAcked() {
				w.st.WouldBlock++
				return 0, ErrWouldBlock
			}
		} else if h.at(0).sn >= w.minAcked() {
			w.st.Overwritten++
		}
		h.dropOldest()
	}
	w.lastSN++
	sn := w.lastSN
	ch := h.push(sn)
	ch.ts = c.SourceTimestamp
	ch.payload = append(ch.payload[:0], c.Payload...)
	ch.qos = append(ch.qos[:0], c.InlineQos...)
	ch.key = c.Key
	ch.null = c.Payload == nil
	ch.hasInst, ch.inst = c.HasInstance, c.Instance
	h.bytes += len(ch.payload) + len(ch.qos)
	w.st.Writes++
	if w.cfg.MaxHistoryBytes > 0 && !w.cfg.KeepAll && !w.cfg.Keyed {
		for h.n > 1 && h.bytes > w.cfg.MaxHistoryBytes {
			if h.at(0).sn >= w.minAcked() {
				w.st.Overwritten++
			}
			h.dropOldest()
		}
	}

	if len(w.allLocs) == 0 {
		return sn, nil
	}
	w.begin(w.allLocs, wire.GuidPrefixUnknown)
	w.appendChange(ch, wire.EntityIDUnknown, 1, 0, true)
	if w.nReliable > 0 {
		first := w.lastSN + 1
		for _, p := range w.proxies {
			if p.reliable {
				first = min(first, w.effFirst(p))
			}
		}
		final := !(w.cfg.KeepAll && h.n*2 >= h.cap)
		w.appendHeartbeat(wire.EntityIDUnknown, first, final)
		for _, p := range w.proxies {
			if p.reliable {
				w.scheduleHB(now, p)
			}
		}
	}
	w.flush()
	return sn, nil
}

// scheduleHB arms the periodic HEARTBEAT of p if it is behind (and has
// not been given up).
func (w *Writer) scheduleHB(now int64, p *readerProxy) {
	if (p.acked <= w.lastSN || p.syncing()) && p.nextHB == Never && !p.silent {
		p.nextHB = now + w.hbInterval(p)
	}
}

// hbInterval is the periodic HEARTBEAT interval of p: HeartbeatPeriod for
// the first three unanswered ones, then doubling up to MaxHeartbeatPeriod
// (Cyclone DDS lowers its rate in the same way after five).
func (w *Writer) hbInterval(p *readerProxy) int64 {
	return backoff(w.cfg.HeartbeatPeriod, p.unanswered-3, w.cfg.MaxHeartbeatPeriod)
}

// begin starts a datagram to locators to (addressed to participant dst if
// it is not zero) unless one to the same place is under way.
func (w *Writer) begin(to []wire.Locator, dst wire.GuidPrefix) {
	if w.started {
		w.flush()
	}
	w.to = to
	w.dst = dst
	w.b.Reset(w.buf[:0], w.hdr)
	if !dst.IsZero() {
		w.b.InfoDst(dst)
	}
	w.started = true
}

// ensure makes room for n more bytes, flushing and restarting the
// datagram if needed.
func (w *Writer) ensure(n int) {
	if !w.started {
		w.begin(w.to, w.dst)
		return
	}
	if w.b.Len()+n > w.cfg.MaxMessageSize && w.b.Len() > wire.HeaderSize+sizeInfoDst {
		w.flush()
		w.begin(w.to, w.dst)
	}
}

func (w *Writer) flush() {
	if !w.started {
		return
	}
	w.started = false
	msg := w.b.Message()
	w.buf = msg[:0]
	hdrLen := wire.HeaderSize
	if !w.dst.IsZero() {
		hdrLen += sizeInfoDst
	}
	if len(msg) <= hdrLen || len(w.to) == 0 {
		return
	}
	w.out.Send(w.to, msg)
}

func pad4(n int) int { return (n + 3) &^ 3 }

// fragmented reports whether c goes out as DATA_FRAG.
func (w *Writer) fragmented(c *change) bool {
	return len(c.payload) > w.cfg.FragmentSize
}

func (w *Writer) numFrags(c *change) uint32 {
	fs := w.cfg.FragmentSize
	return uint32((len(c.payload) + fs - 1) / fs)
}

// fragsPerMsg is how many fragments share a DATA_FRAG.
func (w *Writer) fragsPerMsg(c *change) int {
	k := (w.cfg.MaxMessageSize - planOverhead - len(c.qos)) / w.cfg.FragmentSize
	return max(k, 1)
}

// appendChange appends c (fragments [from, from+count) of it if
// fragmented; count 0 means all) to the datagram under way, splitting into
// several datagrams as needed.
func (w *Writer) appendChange(c *change, reader wire.EntityID, from, count uint32, keepRoomForHB bool) {
	reserve := 0
	if keepRoomForHB {
		reserve = sizeHeartbeat
	}
	if !w.fragmented(c) {
		w.ensure(sizeInfoTS + sizeDataHdr + len(c.qos) + pad4(len(c.payload)) + reserve)
		w.b.InfoTS(wire.TimeFromNanos(c.ts))
		d := wire.Data{
			ReaderID:  reader,
			WriterID:  w.cfg.GUID.Entity,
			WriterSN:  c.sn,
			InlineQos: wire.ParameterList{Data: c.qos},
			Key:       c.key,
		}
		if !c.null {
			d.SerializedPayload = c.payload
		}
		if err := w.b.Data(&d); err == nil {
			w.st.DataSent++
		}
		return
	}
	nf := w.numFrags(c)
	if count == 0 {
		count = nf
	}
	last := min(from+count-1, nf)
	k := uint32(w.fragsPerMsg(c))
	fs := w.cfg.FragmentSize
	for f := from; f >= 1 && f <= last; {
		n := min(k, last-f+1)
		off := int(f-1) * fs
		end := min(off+int(n)*fs, len(c.payload))
		var qos []byte
		if f == 1 {
			qos = c.qos
		}
		w.ensure(sizeInfoTS + sizeDataFragHdr + len(qos) + pad4(end-off) + reserve)
		w.b.InfoTS(wire.TimeFromNanos(c.ts))
		d := wire.DataFrag{
			ReaderID:              reader,
			WriterID:              w.cfg.GUID.Entity,
			WriterSN:              c.sn,
			FragmentStartingNum:   f,
			FragmentsInSubmessage: uint16(n),
			FragmentSize:          uint16(fs),
			SampleSize:            uint32(len(c.payload)),
			InlineQos:             wire.ParameterList{Data: qos},
			Fragments:             c.payload[off:end],
			Key:                   c.key,
		}
		if err := w.b.DataFrag(&d); err == nil {
			w.st.DataFragSent++
		}
		f += n
	}
}

func (w *Writer) nextHBCount() wire.Count {
	w.hbCount++
	return w.hbCount
}

func (w *Writer) appendHeartbeat(reader wire.EntityID, first wire.SequenceNumber, final bool) {
	w.ensure(sizeHeartbeat)
	if first > w.lastSN+1 {
		first = w.lastSN + 1
	}
	w.b.Heartbeat(&wire.Heartbeat{
		ReaderID: reader,
		WriterID: w.cfg.GUID.Entity,
		FirstSN:  first,
		LastSN:   w.lastSN,
		Count:    w.nextHBCount(),
		Final:    final,
	})
	w.st.Heartbeats++
}

// sendHeartbeatTo sends a directed HEARTBEAT to p.
func (w *Writer) sendHeartbeatTo(now int64, p *readerProxy, final bool) {
	if len(p.locs) == 0 {
		return
	}
	w.begin(p.locs, p.guid.Prefix)
	w.appendHeartbeat(p.guid.Entity, w.effFirst(p), final)
	w.flush()
	p.lastHB = now
	if !final {
		p.unanswered++
	}
}

// HandleMessage processes one received datagram: ACKNACK and NACK_FRAG
// addressed to this writer (writerId equal to its entity id, INFO_DST
// absent or equal to its prefix) are handled, everything else is ignored.
func (w *Writer) HandleMessage(now int64, msg []byte) {
	if err := w.rd.Reset(msg); err != nil {
		w.st.Malformed++
		return
	}
	for {
		sm, err := w.rd.Next()
		if err != nil {
			w.st.Malformed++
			return
		}
		if sm == nil {
			return
		}
		rs := &w.rd.State
		if !rs.DestPrefix.IsZero() && rs.DestPrefix != w.cfg.GUID.Prefix {
			continue
		}
		switch sm.ID {
		case wire.SubmsgAckNack:
			if sm.AckNack.WriterID != w.cfg.GUID.Entity {
				continue
			}
		case wire.SubmsgNackFrag:
			if sm.NackFrag.WriterID != w.cfg.GUID.Entity {
				continue
			}
		default:
			continue
		}
		w.HandleSubmessage(now, rs, sm)
	}
}

// HandleSubmessage processes one decoded submessage routed to this writer
// by the transport; rs is the receiver state of its message. Kinds other
// than ACKNACK and NACK_FRAG are ignored.
func (w *Writer) HandleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) {
	switch sm.ID {
	case wire.SubmsgAckNack:
		w.handleAckNack(now, rs.SourceGUID(sm.AckNack.ReaderID), &sm.AckNack)
	case wire.SubmsgNackFrag:
		w.handleNackFrag(now, rs.SourceGUID(sm.NackFrag.ReaderID), &sm.NackFrag)
	}
}

func (w *Writer) handleAckNack(now int64, g wire.GUID, a *wire.AckNack) {
	p, _ := w.find(g)
	if p == nil || !p.reliable {
		w.st.UnknownReader++
		return
	}
	base := a.ReaderSNState.Base
	if base == 0 {
		base = 1 // Fast DDS
	}
	if base < 0 || base > w.lastSN+1 || a.ReaderSNState.NumBits > wire.MaxSetBits {
		w.st.Malformed++
		return
	}
	// Cyclone DDS numbers every preemptive ACKNACK (sent once a second
	// until its reader has seen a HEARTBEAT) 0: a repeat, not a replay.
	preemptive := a.Count == 0 && a.ReaderSNState.NumBits == 0
	if p.haveCount && a.Count <= p.lastCount && !(preemptive && p.lastCount == 0) {
		w.st.StaleCount++
		return
	}
	firstAck := !p.haveCount
	p.haveCount, p.lastCount = true, a.Count
	p.unanswered, p.silent = 0, false
	w.st.AckNacks++
	if base > p.acked {
		p.acked = base
	}
	set := a.ReaderSNState
	set.Base = base
	// bits of a patched base 0 are shifted by one; drop bit 0 then
	if a.ReaderSNState.Base == 0 {
		set = wire.SequenceNumberSet{Base: 1}
		w.members = a.ReaderSNState.AppendMembers(w.members[:0])
		for _, sn := range w.members {
			if sn >= 1 {
				set.Add(sn)
			}
		}
	}
	// keep only SNs that were written
	if lim := w.lastSN + 1 - set.Base; lim < wire.SequenceNumber(set.NumBits) {
		clearFrom(&set, uint32(lim))
	}
	if !set.Empty() {
		p.req = set
		if p.reqAt == Never {
			p.reqAt = now + w.cfg.NackResponseDelay
		}
	} else if base <= w.lastSN || firstAck || preemptive {
		// behind, asking for nothing (preemptive ACKNACK, or SNs it does
		// not want), or its first ACKNACK: answer with a HEARTBEAT,
		// rate-limited (final if the reader is not behind)
		p.forceHB = true
		p.nextHB = min(p.nextHB, max(now, p.lastHB+w.cfg.HeartbeatPeriod/10))
	}
	if p.acked > w.lastSN && !p.forceHB && !p.syncing() {
		p.nextHB = Never
	}
	if p.reqAt <= now {
		w.repair(now, p)
	}
	if p.nextHB <= now {
		w.heartbeatDue(now, p)
	}
}

// clearFrom clears the bits of s from index i on and shrinks NumBits.
func clearFrom(s *wire.SequenceNumberSet, i uint32) {
	for j := i; j < s.NumBits && j < wire.MaxSetBits; j++ {
		s.Bitmap[j/32] &^= 1 << (31 - j%32)
	}
	if i < s.NumBits {
		s.NumBits = i
	}
}

func (w *Writer) handleNackFrag(now int64, g wire.GUID, n *wire.NackFrag) {
	p, _ := w.find(g)
	if p == nil || !p.reliable {
		w.st.UnknownReader++
		return
	}
	if n.WriterSN < 1 || n.WriterSN > w.lastSN || n.FragmentNumberState.Base < 1 || n.FragmentNumberState.NumBits > wire.MaxSetBits {
		w.st.Malformed++
		return
	}
	if p.haveFragCount && n.Count <= p.lastFragCount {
		w.st.StaleCount++
		return
	}
	p.haveFragCount, p.lastFragCount = true, n.Count
	w.st.NackFrags++
	if n.FragmentNumberState.Empty() {
		return
	}
	slot := -1
	for i := 0; i < p.nFrag; i++ {
		if p.fragReq[i].sn == n.WriterSN {
			slot = i
		}
	}
	if slot < 0 {
		if p.nFrag == maxFragRequests {
			w.st.Malformed++ // too many outstanding; the reader will ask again
			return
		}
		slot = p.nFrag
		p.nFrag++
	}
	p.fragReq[slot] = fragRequest{sn: n.WriterSN, set: n.FragmentNumberState}
	if p.reqAt == Never {
		p.reqAt = now + w.cfg.NackResponseDelay
	}
	if p.reqAt <= now {
		w.repair(now, p)
	}
}

// repair sends what p asked for: DATA/DATA_FRAG for what is in history,
// GAP for what is not, then a HEARTBEAT.
func (w *Writer) repair(now int64, p *readerProxy) {
	p.reqAt = Never
	if len(p.locs) == 0 {
		p.req = wire.SequenceNumberSet{}
		p.nFrag = 0
		return
	}
	first := w.effFirst(p)
	w.gaps = w.gaps[:0]
	w.begin(p.locs, p.guid.Prefix)
	w.members = p.req.AppendMembers(w.members[:0])
	p.req = wire.SequenceNumberSet{}
	frs := p.fragReq[:p.nFrag]
	slices.SortFunc(frs, func(a, b fragRequest) int { return cmp.Compare(a.sn, b.sn) })
	// lowest SNs first: they are what the reader delivers next
	budget := w.cfg.MaxRepairBytes
	mi, fi := 0, 0
	for mi < len(w.members) || fi < len(frs) {
		var sn wire.SequenceNumber
		var fr *fragRequest
		if fi < len(frs) && (mi == len(w.members) || frs[fi].sn < w.members[mi]) {
			fr = &frs[fi]
			sn = fr.sn
			fi++
		} else {
			sn = w.members[mi]
			mi++
			if fi < len(frs) && frs[fi].sn == sn {
				fi++ // the whole sample covers the fragments
			}
		}
		if sn < 1 || sn > w.lastSN {
			continue
		}
		c := w.hist.get(sn)
		if sn < first || c == nil {
			w.gaps = append(w.gaps, sn)
			continue
		}
		if budget <= 0 {
			w.st.RepairsDeferred++
			continue // asked again after the HEARTBEAT below
		}
		if !w.fragmented(c) {
			budget -= len(c.payload)
			w.appendChange(c, p.guid.Entity, 1, 0, false)
			w.st.Resends++
			continue
		}
		nf := w.numFrags(c)
		if fr == nil {
			// whole sample: the first budget's worth of fragments; the
			// reader asks for the rest with NACK_FRAG
			n := uint32(min(int64(nf), int64(budget/w.cfg.FragmentSize)+1))
			w.appendChange(c, p.guid.Entity, 1, n, false)
			budget -= int(n) * w.cfg.FragmentSize
			w.st.Resends++
			if n < nf {
				w.st.RepairsDeferred++
			}
			continue
		}
		w.fmembers = fr.set.AppendMembers(w.fmembers[:0])
		k := uint32(w.fragsPerMsg(c))
		for j := 0; j < len(w.fmembers) && budget > 0; {
			start := w.fmembers[j]
			if start < 1 || start > nf {
				j++
				continue
			}
			run := uint32(1)
			for j+int(run) < len(w.fmembers) && w.fmembers[j+int(run)] == start+run && run < k && start+run <= nf {
				run++
			}
			w.appendChange(c, p.guid.Entity, start, run, false)
			w.st.FragResends += uint64(run)
			budget -= int(run) * w.cfg.FragmentSize
			j += int(run)
		}
	}
	p.nFrag = 0
	w.appendGaps(p, first)
	w.appendHeartbeat(p.guid.Entity, first, false)
	w.flush()
	p.lastHB = now
	p.unanswered++
	p.forceHB = false
	p.nextHB = Never
	w.scheduleHB(now, p)
}

// appendGaps encodes w.gaps (SNs p cannot have: below first, or replaced)
// in as few GAP submessages as it can.
func (w *Writer) appendGaps(p *readerProxy, first wire.SequenceNumber) {
	slices.Sort(w.gaps)
	w.gaps = slices.Compact(w.gaps)
	g := w.gaps
	for i := 0; i < len(g); {
		start := g[i]
		end := start + 1
		if start < first {
			end = first // everything below first is gone
		}
		for i < len(g) && g[i] < end {
			i++
		}
		for i < len(g) && g[i] == end {
			end++
			i++
		}
		set := wire.SequenceNumberSet{Base: end}
		for i < len(g) && set.Add(g[i]) {
			i++
		}
		w.ensure(sizeGap)
		if err := w.b.Gap(&wire.Gap{
			ReaderID: p.guid.Entity,
			WriterID: w.cfg.GUID.Entity,
			GapStart: start,
			GapList:  set,
		}); err == nil {
			w.st.Gaps++
		}
	}
}

// heartbeatDue sends p its periodic (or requested) HEARTBEAT.
func (w *Writer) heartbeatDue(now int64, p *readerProxy) {
	behind, syncing := p.acked <= w.lastSN, p.syncing()
	if behind || syncing || p.forceHB {
		w.sendHeartbeatTo(now, p, !behind && !syncing)
	}
	p.forceHB = false
	p.nextHB = Never
	if !behind && !syncing {
		return
	}
	if !p.haveCount && p.unanswered >= w.cfg.MaxUnansweredHeartbeats {
		// Never answered: a reader that is not there (or a locator
		// taken from a forged announcement). Quiet until it speaks.
		p.silent = true
		w.st.ReadersSilenced++
		return
	}
	p.nextHB = now + w.hbInterval(p)
}

// Tick performs the timed work due at now (repairs, HEARTBEATs) and returns
// NextDeadline.
func (w *Writer) Tick(now int64) int64 {
	for _, p := range w.proxies {
		if p.reqAt <= now {
			w.repair(now, p)
		}
		if p.nextHB <= now {
			w.heartbeatDue(now, p)
		}
	}
	return w.NextDeadline()
}

// NextDeadline returns when Tick next has work to do, or Never.
func (w *Writer) NextDeadline() int64 {
	d := Never
	for _, p := range w.proxies {
		d = min(d, p.reqAt, p.nextHB)
	}
	return d
}

// ProbeHeartbeat returns a non-final HEARTBEAT for reader (an entity of a
// participant not matched yet) covering the whole history, with the
// writer's next HEARTBEAT count, for a caller that sends it in a datagram
// of its own: discovery asks a participant it has not heard answer yet
// whether it knows us, without matching it.
func (w *Writer) ProbeHeartbeat(reader wire.EntityID) wire.Heartbeat {
	w.st.Heartbeats++
	return wire.Heartbeat{
		ReaderID: reader,
		WriterID: w.cfg.GUID.Entity,
		FirstSN:  w.hist.first(w.lastSN + 1),
		LastSN:   w.lastSN,
		Count:    w.nextHBCount(),
	}
}

// LastSN returns the sequence number of the last sample written (0 if
// none).
func (w *Writer) LastSN() wire.SequenceNumber { return w.lastSN }

// Acknowledged reports whether every matched reliable reader has
// acknowledged sn (true if there is none).
func (w *Writer) Acknowledged(sn wire.SequenceNumber) bool { return sn < w.minAcked() }

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats {
	s := w.st
	s.HistorySize = w.hist.n
	s.HistoryBytes = w.hist.bytes
	s.MatchedReaders = len(w.proxies)
	s.ReliableReaders = w.nReliable
	return s
}
