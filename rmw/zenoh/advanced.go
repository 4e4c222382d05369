package zenoh

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Transient local, as rmw_zenoh does it with zenoh-ext's advanced
// publisher and subscriber (ros/advanced.go has the wire facts).
//
// A transient-local publisher keeps its last depth samples and answers
// queries on <key>/@adv/pub/<zid>/<eid|uhlc>/_ (parameters _max and _sn),
// declares a liveliness token there, and when reliable numbers its samples
// (source info) and sends a heartbeat every 500 ms after publishing.
//
// A transient-local subscription queries <key>/@adv/** for the newest
// depth samples when it starts, queries every publisher token that appears
// later, declares its detection token, and when reliable follows the
// heartbeats to query what it missed. Samples are delivered in order per
// source (publisher id and sequence number, or zenoh timestamp), each
// once; while a query is in flight, live samples of a source not yet heard
// from wait for it, so a late joiner gets history first.

type cached struct {
	payload, att []byte
	ts           *wire.Timestamp
	src          *wire.SourceInfo
}

type advPub struct {
	t      *Transport
	cfg    ros.AdvancedPublisher
	key    string
	advKey string
	eid    uint32
	qbl    *queryable
	qblID  uint32
	tokID  uint32
	stop   chan struct{}
	done   chan struct{}

	mu    sync.Mutex
	cache []cached
	sn    uint32 // next sequence number
	dirty bool   // published since the last heartbeat
}

func (t *Transport) newAdvPubLocked(key string, cfg ros.AdvancedPublisher) (*advPub, error) {
	if cfg.CacheDepth == 0 {
		cfg.CacheDepth = ros.DefaultDepth
	}
	a := &advPub{t: t, cfg: cfg, key: key, eid: t.newEIDLocked(), stop: make(chan struct{}), done: make(chan struct{})}
	a.advKey = ros.AdvPublisherKey(key, t.zidStr, a.eid, cfg.Sequenced)
	a.qbl = &queryable{key: a.advKey, handle: a.onQuery}
	var err error
	if a.qblID, err = t.sess.DeclareQueryable(a.advKey, false); err != nil {
		return nil, err
	}
	if cfg.Detection {
		if a.tokID, err = t.sess.DeclareToken(a.advKey); err != nil {
			_ = t.sess.UndeclareQueryable(a.qblID)
			return nil, err
		}
	}
	t.addQueryableLocked(a.qbl)
	if !cfg.Heartbeat {
		close(a.done)
	}
	return a, nil
}

func (t *Transport) closeAdvPubLocked(a *advPub) {
	t.removeQueryableLocked(a.qbl)
	if t.closed {
		return
	}
	_ = t.sess.UndeclareQueryable(a.qblID)
	if a.cfg.Detection {
		_ = t.sess.UndeclareToken(a.tokID)
	}
}

// record numbers put (sequenced publishers) and keeps it in the cache.
func (a *advPub) record(put *wire.Put) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.Sequenced {
		put.SourceInfo = &wire.SourceInfo{ID: wire.EntityGlobalID{ZID: a.t.zid, EID: a.eid}, SN: a.sn}
		a.sn++
	}
	if uint64(len(a.cache)) >= a.cfg.CacheDepth {
		copy(a.cache, a.cache[1:])
		a.cache = a.cache[:len(a.cache)-1]
	}
	a.cache = append(a.cache, cached{payload: slices.Clone(put.Payload), att: put.Attachment, ts: put.Timestamp, src: put.SourceInfo})
	a.dirty = true
}

// onQuery answers a history query from the cache: the samples whose
// sequence number is in _sn (all when absent), the newest _max of them,
// oldest first.
func (a *advPub) onQuery(q *query) {
	var maxN uint64
	hasMax := false
	from, to := uint64(0), uint64(1<<32-1)
	hasRange := false
	for _, p := range strings.Split(q.params, ";") {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "_max":
			if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				maxN, hasMax = n, true
			}
		case "_sn":
			hasRange = true
			lo, hi, two := strings.Cut(v, "..")
			if n, err := strconv.ParseUint(lo, 10, 32); err == nil {
				from = n
			}
			if !two {
				to = from
			} else if n, err := strconv.ParseUint(hi, 10, 32); err == nil {
				to = n
			}
		}
	}
	a.mu.Lock()
	var sel []cached
	for _, c := range a.cache {
		if hasRange && (c.src == nil || uint64(c.src.SN) < from || uint64(c.src.SN) > to) {
			continue
		}
		sel = append(sel, c)
	}
	a.mu.Unlock()
	if hasMax && uint64(len(sel)) > maxN {
		sel = sel[uint64(len(sel))-maxN:]
	}
	for _, c := range sel {
		a.t.reply(q, a.key, &wire.Put{Timestamp: c.ts, SourceInfo: c.src, Attachment: c.att, Payload: c.payload})
	}
	a.t.finishQuery(q)
}

// heartbeats sends the sporadic heartbeat: every HeartbeatPeriod, the last
// sequence number sent, if something was published since the last one.
func (p *Publisher) heartbeats() {
	defer p.t.wg.Done()
	a := p.adv
	defer close(a.done)
	opts := p.opts
	opts.QoS = wire.MakeQoS(wire.PriorityData, wire.Block, false)
	for {
		ch, stop := p.t.cfg.Clock.After(ros.HeartbeatPeriod)
		select {
		case <-ch:
		case <-a.stop:
			stop()
			return
		case <-p.t.done:
			stop()
			return
		}
		a.mu.Lock()
		send, sn := a.dirty, a.sn-1
		a.dirty = false
		a.mu.Unlock()
		if send {
			p.t.sess.Put(a.advKey, &wire.Put{Timestamp: p.t.stamp(), Payload: ros.HeartbeatPayload(sn)}, opts)
		}
	}
}

func (a *advPub) stopHeartbeat() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
}

// srcKey identifies a source of samples: a sequenced publisher (zid, eid)
// or a session's timestamps.
type srcKey struct {
	zid wire.ZenohID
	eid uint32
	seq bool
}

type buffered struct {
	n       uint64
	payload []byte
	att     ros.Attachment
}

type srcState struct {
	has     bool
	last    uint64
	pending []buffered // sorted by n
	hbQuery bool       // a recovery query of this source is in flight
}

type advSub struct {
	s      *Subscription
	cfg    ros.AdvancedSubscriber
	eid    uint32
	tok    string
	tokID  uint32
	hb     *subscriber
	hbID   uint32
	intID  uint32
	hasInt bool

	mu      sync.Mutex // held while delivering: keeps the order
	queries int        // history and recovery queries in flight
	srcs    map[srcKey]*srcState
}

func newAdvSub(s *Subscription, cfg ros.AdvancedSubscriber) *advSub {
	if cfg.MaxSamples == 0 {
		cfg.MaxSamples = ros.DefaultDepth
	}
	return &advSub{s: s, cfg: cfg, srcs: map[srcKey]*srcState{}}
}

// startLocked declares the detection token, the heartbeat subscriber and
// the interest in late publishers (t.mu held).
func (a *advSub) startLocked() error {
	t := a.s.t
	a.eid = t.newEIDLocked()
	var err error
	if a.cfg.Detection {
		a.tok = ros.AdvSubscriberToken(a.s.key, t.zidStr, a.eid)
		if a.tokID, err = t.sess.DeclareToken(a.tok); err != nil {
			return err
		}
	}
	pubs := ros.AdvPublishersKey(a.s.key)
	if a.cfg.Recovery {
		a.hb = &subscriber{key: pubs, handle: a.onHeartbeat}
		t.addSubscriberLocked(a.hb)
		if a.hbID, err = t.sess.DeclareSubscriber(pubs); err != nil {
			return err
		}
	}
	// routers send the publisher tokens because of this (peers push them)
	if a.intID, err = t.sess.DeclareInterest(wire.InterestFuture, wire.InterestTokens|wire.InterestKeyExprs, pubs); err == nil {
		a.hasInt = true
	}
	return nil
}

func (a *advSub) closeLocked() {
	t := a.s.t
	if a.hb != nil {
		t.removeSubscriberLocked(a.hb)
	}
	if t.closed {
		return
	}
	if a.cfg.Detection && a.tokID != 0 {
		_ = t.sess.UndeclareToken(a.tokID)
	}
	if a.hb != nil && a.hbID != 0 {
		_ = t.sess.UndeclareSubscriber(a.hbID)
	}
	if a.hasInt {
		_ = t.sess.UndeclareInterest(a.intID)
	}
}

// queryHistory asks every cache for its newest samples.
func (a *advSub) queryHistory() {
	a.query(ros.AdvHistoryQueryKey(a.s.key), ros.AdvMaxParam(a.cfg.MaxSamples), nil)
}

// query runs one history or recovery query; samples of sources not heard
// from yet wait for it (and every other query in flight) to end.
func (a *advSub) query(key, params string, st *srcState) {
	t := a.s.t
	a.mu.Lock()
	a.queries++
	a.mu.Unlock()
	o := &outQuery{
		onReply: func(_ string, put *wire.Put) {
			a.s.handle(sample{key: a.s.key, payload: put.Payload, attachment: put.Attachment, ts: put.Timestamp, src: put.SourceInfo})
		},
		onFinal: func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if st != nil {
				st.hbQuery = false
			}
			if a.queries--; a.queries == 0 {
				a.flushLocked()
			}
		},
	}
	if err := t.query(key, params, nil, nil, wire.TargetAll, t.qTimeout, o); err != nil {
		a.mu.Lock()
		if a.queries--; a.queries == 0 {
			a.flushLocked()
		}
		a.mu.Unlock()
	}
}

// handle orders and deduplicates one sample of the subscription.
func (a *advSub) handle(sm sample, att ros.Attachment) {
	var k srcKey
	var n uint64
	switch {
	case sm.src != nil:
		k, n = srcKey{zid: sm.src.ID.ZID, eid: sm.src.ID.EID, seq: true}, uint64(sm.src.SN)
	case sm.ts != nil:
		k, n = srcKey{zid: sm.ts.ID}, sm.ts.Time
	default:
		a.s.emit(sm.payload, att)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.srcs[k]
	if st == nil {
		st = &srcState{}
		a.srcs[k] = st
	}
	if st.has && n <= st.last {
		return // already delivered (a history reply of a live sample, or a duplicate)
	}
	wait := a.queries > 0 && (!st.has || (k.seq && n != st.last+1))
	if !wait && k.seq && st.has && n != st.last+1 && a.cfg.Recovery && !st.hbQuery {
		// a gap: fetch what is missing from the publisher's cache first
		wait = true
		st.hbQuery = true
		a.mu.Unlock()
		a.recover(k, st, st.last+1, n-1)
		a.mu.Lock()
	}
	if wait {
		i, found := slices.BinarySearchFunc(st.pending, n, func(b buffered, n uint64) int { return cmpU64(b.n, n) })
		if !found {
			st.pending = slices.Insert(st.pending, i, buffered{n: n, payload: slices.Clone(sm.payload), att: att})
		}
		if uint64(len(st.pending)) > a.cfg.MaxSamples {
			a.flushSourceLocked(st, 1)
		}
		return
	}
	st.has, st.last = true, n
	a.s.emit(sm.payload, att)
	a.flushSourceLocked(st, 0)
}

// flushSourceLocked delivers a source's waiting samples in order: at
// least force of them, then every one that follows the last delivered.
func (a *advSub) flushSourceLocked(st *srcState, force int) {
	for len(st.pending) > 0 {
		b := st.pending[0]
		if st.has && b.n <= st.last {
			st.pending = st.pending[1:]
			continue
		}
		if force <= 0 && st.has && b.n != st.last+1 {
			return
		}
		force--
		st.pending = st.pending[1:]
		st.has, st.last = true, b.n
		a.s.emit(b.payload, b.att)
	}
}

// flushLocked delivers everything that waited for the queries.
func (a *advSub) flushLocked() {
	for _, st := range a.srcs {
		a.flushSourceLocked(st, len(st.pending))
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// recover queries a publisher's cache for the sequence numbers from..to.
func (a *advSub) recover(k srcKey, st *srcState, from, to uint64) {
	f, l := uint32(from), uint32(to)
	key := ros.AdvPublisherKey(a.s.key, k.zid.String(), k.eid, true)
	a.query(key, ros.AdvSNRangeParam(&f, &l), st)
}

// onHeartbeat follows a reliable publisher's heartbeat: if it sent past
// what was delivered, query the rest.
func (a *advSub) onHeartbeat(sm sample) {
	tok, err := ros.ParseAdvKey(sm.key)
	if err != nil || !tok.Publisher || !tok.Sequenced {
		return
	}
	hb, err := ros.ParseHeartbeat(sm.payload)
	if err != nil {
		return
	}
	id, n, err := ros.ParseZID(tok.ZID)
	if err != nil {
		return
	}
	zid, err := wire.NewZenohID(id[:n])
	if err != nil {
		return
	}
	k := srcKey{zid: zid, eid: tok.EID, seq: true}
	a.mu.Lock()
	st := a.srcs[k]
	if st == nil || !st.has || uint64(hb) <= st.last || st.hbQuery {
		a.mu.Unlock()
		return
	}
	st.hbQuery = true
	from := st.last + 1
	a.mu.Unlock()
	a.recover(k, st, from, uint64(hb))
}

// onAdvToken queries a transient-local publisher that appeared after the
// subscriptions of its topic started (zenoh-ext's late-publisher
// detection).
func (t *Transport) onAdvToken(key string, gone bool) {
	if gone {
		return
	}
	tok, err := ros.ParseAdvKey(key)
	if err != nil || !tok.Publisher || tok.ZID == t.zidStr {
		return
	}
	t.mu.Lock()
	var subs []*advSub
	for _, s := range t.subs[tok.Key] {
		if s.adv != nil {
			subs = append(subs, s.adv)
		}
	}
	t.mu.Unlock()
	for _, a := range subs {
		a.query(key, ros.AdvMaxParam(a.cfg.MaxSamples), nil)
	}
}
