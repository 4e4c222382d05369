package router

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/hlc"
	"github.com/nros-go/nros/rmw/zenoh/keyexpr"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Limits on what one face may hold in the router.
const (
	maxInterests      = 1 << 16 // future interests per face
	maxPendingQueries = 1 << 16 // queries forwarded to one face and not final
	maxRouteCache     = 4096    // keys whose push route is remembered
)

// port is where the router sends a face's messages: a *session.Face, or a
// recorder in tests. Send never blocks.
type port interface {
	Send(m wire.NetworkMessage, reliable bool) bool
}

// Kinds of declarations, as indexes.
const (
	kSub = iota
	kQbl
	kTok
	nKinds
)

func kindIndex(k session.DeclKind) int {
	switch k {
	case session.KindSubscriber:
		return kSub
	case session.KindQueryable:
		return kQbl
	}
	return kTok
}

var kindOption = [nKinds]wire.InterestOptions{wire.InterestSubscribers, wire.InterestQueryables, wire.InterestTokens}

// qinfo is a queryable's info (zero for subscribers and tokens).
type qinfo struct {
	complete bool
	distance uint16
}

// merge combines the infos of two queryables on one key as zenoh does:
// complete if either is, at the distance of the complete one (the nearer
// when both or neither are).
func merge(a, b qinfo) qinfo {
	d := min(a.distance, b.distance)
	if a.complete != b.complete {
		if a.complete {
			d = a.distance
		} else {
			d = b.distance
		}
	}
	return qinfo{complete: a.complete || b.complete, distance: d}
}

type remoteDecl struct {
	key  string
	info qinfo
}

// face is the router's view of one face.
type face struct {
	id      uint64
	zid     wire.ZenohID
	whatami wire.WhatAmI
	out     port
	ridMask uint32
	gone    bool

	// what the face declared, by kind: its id -> key and info, and by key
	// its ids on that key
	decls [nKinds]map[uint32]remoteDecl
	byKey [nKinds]map[string]map[uint32]qinfo

	// its future interests
	interests map[uint32]*interest
	nFuture   [nKinds]int // future interests asking for each kind

	// what the router declared to it, by kind and key
	declared [nKinds]map[string]*localDecl
	nextID   uint32

	// queries forwarded to it, by the request id the router gave them
	pending map[uint32]*pending
	nextRID uint32
}

type interest struct {
	options   wire.InterestOptions
	key       string // "" = every key
	aggregate bool
}

func (i *interest) wants(k int) bool { return i.options&kindOption[k] != 0 }

func (i *interest) matches(key string) bool { return i.key == "" || keyexpr.Intersects(i.key, key) }

type localDecl struct {
	id   uint32
	info qinfo
}

// query is a request routed to one or more faces.
type query struct {
	src       *face
	srcRID    uint32
	remaining int
}

type pending struct {
	q     *query
	timer session.Timer
}

func (f *face) newID() uint32 {
	f.nextID++
	if f.nextID == 0 {
		f.nextID = 1 // 0 answers current-only interests
	}
	return f.nextID
}

// Stats counts what the router routed and dropped.
type Stats struct {
	Pushes        atomic.Uint64 // PUSH forwarded (one per destination face)
	PushesNoRoute atomic.Uint64 // PUSH nobody subscribes to
	Queries       atomic.Uint64 // REQUEST forwarded (one per destination face)
	QueryTimeouts atomic.Uint64 // forwarded requests finalized by the timeout
	UnknownReply  atomic.Uint64 // RESPONSE or RESPONSE_FINAL to no pending request
	FutureStamps  atomic.Uint64 // puts timestamped too far ahead of the router's clock (dropped or restamped)
	Overflow      atomic.Uint64 // interests or queries beyond a face's limits
	SendFailed    atomic.Uint64 // messages a face's link refused (closing or congested)
}

// tables is the routing state: faces, their declarations and interests,
// and the queries in flight, sans IO. One mutex guards it; sends happen
// under it (they never block).
type tables struct {
	queryTimeout time.Duration
	stats        *Stats
	clock        session.Clock // times routed queries
	// hlc, when set, stamps the puts that come without a timestamp and
	// checks the others (dropping or restamping those too far ahead)
	hlc        *hlc.Clock
	dropFuture bool

	mu     sync.Mutex
	closed bool
	faces  map[uint64]*face
	// index: the faces with at least one entity of a kind on a key
	index [nKinds]map[string]map[uint64]*face
	// pushRoutes remembers the subscriber faces matching a key
	pushRoutes map[string][]*face
}

func newTables(queryTimeout time.Duration, stats *Stats) *tables {
	t := &tables{queryTimeout: queryTimeout, stats: stats, faces: map[uint64]*face{}, pushRoutes: map[string][]*face{},
		clock: session.SystemClock{}}
	for k := range t.index {
		t.index[k] = map[string]map[uint64]*face{}
	}
	return t
}

func (t *tables) send(f *face, m wire.NetworkMessage, reliable bool) {
	if f.gone {
		return
	}
	if !f.out.Send(m, reliable) {
		t.stats.SendFailed.Add(1)
	}
}

func (t *tables) declare(f *face, interestID uint32, hasInterest bool, body wire.Declaration) {
	t.send(f, &wire.Declare{HasInterestID: hasInterest, InterestID: interestID, QoS: wire.QoSDeclare, Body: body}, true)
}

// brokers reports whether what src declares or sends is routed to dst.
// Clients and peers are served by every other face: this router does not
// learn (by gossip) which peers are linked directly, so it brokers between
// all of them; other routers are not linked to each other through it
// (router-to-router link state is not implemented).
func brokers(src, dst *face) bool {
	return src != dst && !(src.whatami == wire.Router && dst.whatami == wire.Router)
}

// faceUp adds a face. The router declares nothing to it until it asks.
func (t *tables) faceUp(id uint64, zid wire.ZenohID, whatami wire.WhatAmI, out port, ridBits wire.Bits) *face {
	f := &face{id: id, zid: zid, whatami: whatami, out: out, ridMask: uint32(ridBits.SNMask()),
		interests: map[uint32]*interest{}, pending: map[uint32]*pending{}}
	if f.ridMask == 0 {
		f.ridMask = ^uint32(0)
	}
	for k := range nKinds {
		f.decls[k] = map[uint32]remoteDecl{}
		f.byKey[k] = map[string]map[uint32]qinfo{}
		f.declared[k] = map[string]*localDecl{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		f.gone = true
		return f
	}
	t.faces[id] = f
	clear(t.pushRoutes)
	return f
}

// faceDown removes a face: what it still declared is undeclared, the
// queries waiting for it are finalized, its interests dropped.
func (t *tables) faceDown(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.faces[id]
	if f == nil {
		return
	}
	f.gone = true
	for k := range nKinds {
		for rid := range f.decls[k] {
			t.removeLocked(f, k, rid)
		}
	}
	delete(t.faces, id)
	clear(t.pushRoutes)
	for rid, p := range f.pending {
		p.timer.Stop()
		delete(f.pending, rid)
		t.finalizeLocked(p.q)
	}
}

// close stops the query timers; nothing is sent afterwards.
func (t *tables) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, f := range t.faces {
		f.gone = true
		for _, p := range f.pending {
			p.timer.Stop()
		}
	}
}

func (t *tables) face(id uint64) *face {
	f := t.faces[id]
	if f == nil || f.gone {
		return nil
	}
	return f
}

// ---- declarations ----

// declared handles a face's declaration or undeclaration.
func (t *tables) declared(id uint64, d session.Decl) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.face(id)
	if f == nil {
		return
	}
	k := kindIndex(d.Kind)
	if d.Undeclare {
		t.removeLocked(f, k, d.ID)
		return
	}
	info := qinfo{}
	if k == kQbl {
		info = qinfo{complete: d.Complete, distance: d.Distance}
	}
	if old, ok := f.decls[k][d.ID]; ok {
		if old.key == d.Key && old.info == info {
			return
		}
		if old.key != d.Key {
			t.removeLocked(f, k, d.ID)
		}
	}
	f.decls[k][d.ID] = remoteDecl{key: d.Key, info: info}
	ids := f.byKey[k][d.Key]
	if ids == nil {
		ids = map[uint32]qinfo{}
		f.byKey[k][d.Key] = ids
	}
	ids[d.ID] = info
	faces := t.index[k][d.Key]
	if faces == nil {
		faces = map[uint64]*face{}
		t.index[k][d.Key] = faces
	}
	faces[f.id] = f
	if k == kSub {
		clear(t.pushRoutes)
	}
	t.changedLocked(k, d.Key, f, true)
}

func (t *tables) removeLocked(f *face, k int, id uint32) {
	old, ok := f.decls[k][id]
	if !ok {
		return
	}
	delete(f.decls[k], id)
	ids := f.byKey[k][old.key]
	delete(ids, id)
	if len(ids) == 0 {
		delete(f.byKey[k], old.key)
		faces := t.index[k][old.key]
		delete(faces, f.id)
		if len(faces) == 0 {
			delete(t.index[k], old.key)
		}
	}
	if k == kSub {
		clear(t.pushRoutes)
	}
	t.changedLocked(k, old.key, f, false)
}

// sourcesLocked reports whether a face other than dst, routed to dst, has
// an entity of kind k on key, and their merged info.
func (t *tables) sourcesLocked(k int, key string, dst *face) (qinfo, bool) {
	var info qinfo
	found := false
	for _, src := range t.index[k][key] {
		if !brokers(src, dst) {
			continue
		}
		for _, i := range src.byKey[k][key] {
			if found {
				info = merge(info, i)
			} else {
				info, found = i, true
			}
		}
	}
	return info, found
}

// aggregateLocked reports whether some entity of kind k routed to dst
// intersects the aggregate key agg, and the aggregate's info: complete
// when a complete queryable includes agg.
func (t *tables) aggregateLocked(k int, agg string, dst *face) (qinfo, bool) {
	var info qinfo
	found := false
	for key := range t.index[k] {
		if !keyexpr.Intersects(agg, key) {
			continue
		}
		i, ok := t.sourcesLocked(k, key, dst)
		if !ok {
			continue
		}
		i.complete = i.complete && keyexpr.Includes(key, agg)
		if found {
			info = merge(info, i)
		} else {
			info, found = i, true
		}
	}
	return info, found
}

// desiredLocked is what the router should have declared to dst on key for
// kind k given dst's future interests: a simple interest matching key
// wants the key while some other face has it; an aggregate interest on
// key wants it while anything routed to dst intersects it.
func (t *tables) desiredLocked(dst *face, k int, key string) (qinfo, bool) {
	simple, agg := false, false
	for _, i := range dst.interests {
		if !i.wants(k) {
			continue
		}
		if i.aggregate && k != kTok {
			agg = agg || i.key == key
		} else if i.matches(key) {
			simple = true
		}
	}
	var info qinfo
	found := false
	if simple {
		info, found = t.sourcesLocked(k, key, dst)
	}
	if agg {
		if ai, ok := t.aggregateLocked(k, key, dst); ok {
			if found {
				info = merge(info, ai)
			} else {
				info, found = ai, true
			}
		}
	}
	return info, found
}

// reconcileLocked brings what dst was told about key in line with what
// it should know, sending the (un)declarations. A token, once declared to
// a face, stays declared while it lives (as zenoh keeps it).
func (t *tables) reconcileLocked(dst *face, k int, key string) {
	want, ok := t.desiredLocked(dst, k, key)
	cur := dst.declared[k][key]
	if k == kTok && cur != nil && !ok {
		_, ok = t.sourcesLocked(k, key, dst)
	}
	switch {
	case ok && cur == nil:
		cur = &localDecl{id: dst.newID(), info: want}
		dst.declared[k][key] = cur
		t.declare(dst, 0, false, declBody(k, cur.id, key, want))
	case ok && cur.info != want:
		cur.info = want // a queryable's completeness or distance changed
		t.declare(dst, 0, false, declBody(k, cur.id, key, want))
	case !ok && cur != nil:
		delete(dst.declared[k], key)
		t.declare(dst, 0, false, undeclBody(k, cur.id, key))
	}
}

// changedLocked propagates a change of kind k on key made by src (added:
// a declaration, else an undeclaration) to the faces whose interests it
// concerns.
func (t *tables) changedLocked(k int, key string, src *face, added bool) {
	for _, dst := range t.faces {
		if dst.gone || (added && dst == src) {
			continue
		}
		had := dst.declared[k][key] != nil
		if dst.nFuture[k] > 0 || len(dst.declared[k]) > 0 {
			t.reconcileLocked(dst, k, key)
			if k != kTok {
				for _, i := range dst.interests {
					if i.aggregate && i.wants(k) && i.key != key && keyexpr.Intersects(i.key, key) {
						t.reconcileLocked(dst, k, i.key)
					}
				}
			}
		}
		// a token dst never heard of ended while dst listens to its key
		// (a future-only interest newer than the token): zenoh tells it
		// with a fresh id and the key
		if k == kTok && !added && dst != src && !had && len(t.index[k][key]) == 0 {
			for _, i := range dst.interests {
				if i.wants(kTok) && i.matches(key) {
					t.declare(dst, 0, false, &wire.UndeclareToken{ID: dst.newID(), WireExpr: &wire.WireExpr{Suffix: key}})
					break
				}
			}
		}
	}
}

func declBody(k int, id uint32, key string, info qinfo) wire.Declaration {
	w := wire.WireExpr{Suffix: key}
	switch k {
	case kSub:
		return &wire.DeclareSubscriber{ID: id, WireExpr: w}
	case kQbl:
		return &wire.DeclareQueryable{ID: id, WireExpr: w, Complete: info.complete, Distance: info.distance}
	}
	return &wire.DeclareToken{ID: id, WireExpr: w}
}

func undeclBody(k int, id uint32, key string) wire.Declaration {
	w := &wire.WireExpr{Suffix: key}
	switch k {
	case kSub:
		return &wire.UndeclareSubscriber{ID: id, WireExpr: w}
	case kQbl:
		return &wire.UndeclareQueryable{ID: id, WireExpr: w}
	}
	return &wire.UndeclareToken{ID: id, WireExpr: w}
}

// ---- interests ----

// interest answers a face's INTEREST from every other face's declarations
// (the router knows them all: no other router is asked), then
// DeclareFinal; a future interest is kept and drives later declarations.
func (t *tables) interest(id uint64, key string, m *wire.Interest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	dst := t.face(id)
	if dst == nil {
		return
	}
	if m.Mode == wire.InterestFinal {
		t.dropInterestLocked(dst, m.ID)
		return
	}
	if old := dst.interests[m.ID]; old != nil {
		t.dropInterestLocked(dst, m.ID)
	}
	future := m.Mode.Future()
	if future && len(dst.interests) >= maxInterests {
		t.stats.Overflow.Add(1)
		future = false
	}
	i := &interest{options: m.Options, key: key, aggregate: m.Options&wire.InterestAggregate != 0}
	// zenoh aggregates for clients only, and only on a key
	if i.aggregate && (dst.whatami != wire.Client || key == "") {
		i.aggregate = false
	}
	if future {
		dst.interests[m.ID] = i
		for k := range nKinds {
			if i.wants(k) {
				dst.nFuture[k]++
			}
		}
	}
	current := m.Mode.Current()
	for k := range nKinds {
		if !i.wants(k) {
			continue
		}
		if i.aggregate && k != kTok {
			info, ok := t.aggregateLocked(k, key, dst)
			if !ok {
				continue
			}
			rid := uint32(0)
			if future {
				cur := dst.declared[k][key]
				if cur == nil {
					// recorded as declared even when only future
					// declarations were asked: later changes are
					// relative to it, as in zenoh
					cur = &localDecl{id: dst.newID(), info: info}
					dst.declared[k][key] = cur
				}
				rid = cur.id
			}
			if current {
				t.declare(dst, m.ID, true, declBody(k, rid, key, info))
			}
			continue
		}
		if !current {
			continue
		}
		for _, x := range t.sortedKeysLocked(k) {
			if !i.matches(x) {
				continue
			}
			info, ok := t.sourcesLocked(k, x, dst)
			if !ok {
				continue
			}
			rid := uint32(0)
			cur := dst.declared[k][x]
			switch {
			case future && cur == nil:
				cur = &localDecl{id: dst.newID(), info: info}
				dst.declared[k][x] = cur
				rid = cur.id
			case future:
				cur.info = info
				rid = cur.id
			case k == kTok && cur != nil:
				// a token the face already knows keeps its id (zenoh-pico
				// files tokens by id alone)
				rid = cur.id
			}
			t.declare(dst, m.ID, true, declBody(k, rid, x, info))
		}
	}
	if current {
		t.declare(dst, m.ID, true, &wire.DeclareFinal{})
	}
}

// sortedKeysLocked lists the keys of kind k in order, so that answers are
// deterministic.
func (t *tables) sortedKeysLocked(k int) []string {
	keys := make([]string, 0, len(t.index[k]))
	for key := range t.index[k] {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// dropInterestLocked ends a future interest. As zenoh, the subscribers
// and queryables declared for it alone are forgotten without
// undeclaration (the face no longer listens); tokens stay declared while
// they live.
func (t *tables) dropInterestLocked(f *face, id uint32) {
	i := f.interests[id]
	if i == nil {
		return
	}
	delete(f.interests, id)
	for k := range nKinds {
		if !i.wants(k) {
			continue
		}
		f.nFuture[k]--
		if k == kTok {
			continue
		}
		for key := range f.declared[k] {
			if _, ok := t.desiredLocked(f, k, key); !ok {
				delete(f.declared[k], key)
			}
		}
	}
}

// ---- data ----

// push forwards a PUT or DEL to every other face with a matching
// subscriber.
func (t *tables) push(id uint64, key string, m *wire.Push, reliable bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	src := t.face(id)
	if src == nil {
		return
	}
	route, ok := t.pushRoutes[key]
	if !ok {
		for _, f := range t.faces {
			if f.gone {
				continue
			}
			for k := range f.byKey[kSub] {
				if keyexpr.Intersects(k, key) {
					route = append(route, f)
					break
				}
			}
		}
		sort.Slice(route, func(a, b int) bool { return route[a].id < route[b].id })
		if len(t.pushRoutes) >= maxRouteCache {
			clear(t.pushRoutes)
		}
		t.pushRoutes[key] = route
	}
	body := m.Body
	if p, ok := body.(*wire.Put); ok && t.hlc != nil {
		// as a zenoh router with timestamping on
		c := *p
		if p.Timestamp == nil {
			ts := t.hlc.Now()
			c.Timestamp = &ts
		} else if err := t.hlc.Update(*p.Timestamp); err != nil {
			t.stats.FutureStamps.Add(1)
			if t.dropFuture {
				return
			}
			ts := t.hlc.Now()
			c.Timestamp = &ts
		}
		body = &c
	}
	out := &wire.Push{WireExpr: wire.WireExpr{Suffix: key}, QoS: m.QoS, Timestamp: m.Timestamp, Body: body}
	n := 0
	for _, f := range route {
		if brokers(src, f) {
			t.send(f, out, reliable)
			n++
		}
	}
	if n == 0 {
		t.stats.PushesNoRoute.Add(1)
	}
	t.stats.Pushes.Add(uint64(n))
}

// ---- queries ----

type target struct {
	f        *face
	complete bool
}

// request forwards a query to the faces with a matching queryable as its
// target asks (best matching: one complete queryable if there is one,
// else all; all complete; all), each under a request id of that face,
// and answers ResponseFinal at once when there is none.
func (t *tables) request(id uint64, key string, m *wire.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	src := t.face(id)
	if src == nil {
		return
	}
	var targets []target
	ids := make([]uint64, 0, len(t.faces))
	for fid := range t.faces {
		ids = append(ids, fid)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, fid := range ids {
		f := t.faces[fid]
		if f.gone || !brokers(src, f) {
			continue
		}
		found, complete := false, false
		for y, qs := range f.byKey[kQbl] {
			if !keyexpr.Intersects(y, key) {
				continue
			}
			found = true
			if !complete && keyexpr.Includes(y, key) {
				for _, i := range qs {
					if i.complete {
						complete = true
						break
					}
				}
			}
		}
		if found {
			targets = append(targets, target{f, complete})
		}
	}
	switch m.Target {
	case wire.TargetBestMatching:
		for _, tg := range targets {
			if tg.complete {
				targets = []target{tg}
				break
			}
		}
	case wire.TargetAllComplete:
		var c []target
		for _, tg := range targets {
			if tg.complete {
				c = append(c, tg)
			}
		}
		targets = c
	}
	final := &wire.ResponseFinal{RequestID: m.ID, QoS: wire.QoSResponse}
	if len(targets) == 0 {
		t.send(src, final, true)
		return
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = t.queryTimeout
	}
	q := &query{src: src, srcRID: m.ID}
	for _, tg := range targets {
		f := tg.f
		if len(f.pending) >= maxPendingQueries {
			t.stats.Overflow.Add(1)
			continue
		}
		rid := t.newRIDLocked(f)
		out := &wire.Request{ID: rid, WireExpr: wire.WireExpr{Suffix: key}, QoS: m.QoS, Timestamp: m.Timestamp,
			Target: m.Target, Budget: m.Budget, Timeout: m.Timeout, Query: m.Query}
		if !f.out.Send(out, true) {
			t.stats.SendFailed.Add(1)
			continue
		}
		t.stats.Queries.Add(1)
		q.remaining++
		p := &pending{q: q}
		f.pending[rid] = p
		p.timer = t.clock.AfterFunc(timeout, func() { t.timeout(f, rid, p) })
	}
	if q.remaining == 0 {
		t.send(src, final, true)
	}
}

func (t *tables) newRIDLocked(f *face) uint32 {
	for range 1 << 10 {
		f.nextRID = (f.nextRID + 1) & f.ridMask
		if f.pending[f.nextRID] == nil {
			break
		}
	}
	return f.nextRID
}

// timeout ends a forwarded query a face did not finalize in time: the
// querier gets zenoh's "Timeout" error from that face, then its final when
// it was the last.
func (t *tables) timeout(f *face, rid uint32, p *pending) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || f.pending[rid] != p {
		return
	}
	delete(f.pending, rid)
	t.stats.QueryTimeouts.Add(1)
	t.send(p.q.src, &wire.Response{RequestID: p.q.srcRID, QoS: wire.QoSResponse,
		ResponderID: &wire.EntityGlobalID{ZID: f.zid}, Body: &wire.Err{Payload: []byte("Timeout")}}, true)
	t.finalizeLocked(p.q)
}

func (t *tables) finalizeLocked(q *query) {
	q.remaining--
	if q.remaining == 0 {
		t.send(q.src, &wire.ResponseFinal{RequestID: q.srcRID, QoS: wire.QoSResponse}, true)
	}
}

// response routes a reply from a face back to the querier.
func (t *tables) response(id uint64, key string, m *wire.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.face(id)
	if f == nil {
		return
	}
	p := f.pending[m.RequestID]
	if p == nil {
		t.stats.UnknownReply.Add(1)
		return
	}
	out := &wire.Response{RequestID: p.q.srcRID, QoS: m.QoS, Timestamp: m.Timestamp, ResponderID: m.ResponderID, Body: m.Body}
	if key != "" {
		out.WireExpr = wire.WireExpr{Suffix: key}
	}
	t.send(p.q.src, out, true)
}

// responseFinal: a face answered all it will to a forwarded query; the
// querier gets its final when every face did.
func (t *tables) responseFinal(id uint64, rid uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.face(id)
	if f == nil {
		return
	}
	p := f.pending[rid]
	if p == nil {
		t.stats.UnknownReply.Add(1)
		return
	}
	p.timer.Stop()
	delete(f.pending, rid)
	t.finalizeLocked(p.q)
}
