package zenoh

import (
	"strings"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh/ros"
)

// The graph, as rmw_zenoh's graph cache keeps it: every liveliness token
// of the domain (this transport's own entities added as they are made,
// the others' from the session's declarations), parsed into nodes, topic
// endpoints and services.
//
// Events follow rmw_zenoh: a publisher and a subscription are matched when
// their data keys are equal (topic, type and type hash: zenoh delivers
// whatever their QoS), a client when a server of the same service name and
// type exists. rmw_zenoh reports no incompatible-QoS event; neither does
// this transport. MatchedSubscriptions and MatchedPublishers count, as
// rmw_zenoh's, the endpoints of the same topic and type whose QoS is
// compatible.

// gEntity is one entity of the graph.
type gEntity struct {
	ent   *ros.Entity
	token string
	gid   [16]byte
	local bool
	key   string           // data key of an endpoint
	info  rmw.EndpointInfo // publishers and subscriptions
	srcs  map[declSrc]struct{}
	// a local endpoint's event sink
	g       *guard
	onEvent func(rmw.Event)
}

// declSrc identifies one remote declaration of a token.
type declSrc struct {
	face uint64
	id   uint32
}

type graphCache struct {
	ents  map[string]*gEntity          // by token
	byKey map[string]map[*gEntity]bool // topic endpoints by data key
	bySvc map[string]map[*gEntity]bool // services and clients by name and DDS type
	nodes map[rmw.NodeInfo]int         // (namespace, name) -> entities naming it
}

func newGraphCache() graphCache {
	return graphCache{ents: map[string]*gEntity{}, byKey: map[string]map[*gEntity]bool{},
		bySvc: map[string]map[*gEntity]bool{}, nodes: map[rmw.NodeInfo]int{}}
}

func svcIndex(e *ros.Entity) string { return e.Topic + "\x00" + e.Type }

func addIdx(m map[string]map[*gEntity]bool, k string, e *gEntity) {
	s := m[k]
	if s == nil {
		s = map[*gEntity]bool{}
		m[k] = s
	}
	s[e] = true
}

func delIdx(m map[string]map[*gEntity]bool, k string, e *gEntity) {
	if s := m[k]; s != nil {
		delete(s, e)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

func isTopic(k ros.Kind) bool   { return k == ros.KindPublisher || k == ros.KindSubscription }
func isService(k ros.Kind) bool { return k == ros.KindService || k == ros.KindClient }

// onToken handles a remote token's declaration or undeclaration.
func (t *Transport) onToken(src declSrc, key string, gone bool) {
	<-t.ready
	if strings.Contains(key, "/"+ros.AdvPrefix+"/pub/") {
		t.onAdvToken(key, gone)
	}
	prefix := ros.AdminSpace + "/"
	if !strings.HasPrefix(key, prefix) {
		return
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	if gone {
		if ge := t.graph.ents[key]; ge != nil && !ge.local {
			delete(ge.srcs, src)
			if len(ge.srcs) == 0 {
				t.graphRemoveLocked(key)
			}
		}
		t.mu.Unlock()
		t.drainEvents()
		return
	}
	if ge := t.graph.ents[key]; ge != nil {
		if !ge.local {
			ge.srcs[src] = struct{}{}
		}
		t.mu.Unlock()
		return
	}
	ent, err := ros.ParseToken(key)
	if err != nil || ent.Domain != t.cfg.Domain {
		t.mu.Unlock()
		if err != nil {
			t.Stats.BadToken.Add(1)
			t.cfg.Logf("zenoh: liveliness token %q: %v", key, err)
		}
		return
	}
	if ent.ZID == t.zidStr {
		t.mu.Unlock() // our own, come back through a router
		return
	}
	ge := &gEntity{ent: ent, token: key, srcs: map[declSrc]struct{}{src: {}}}
	ge.gid, _ = ent.GID()
	if isTopic(ent.Kind) {
		ge.key, _ = ent.TopicKey()
		ge.info, _ = ent.EndpointInfo()
	}
	t.graphAddLocked(ge)
	t.mu.Unlock()
	t.drainEvents()
}

// graphAddLocked adds an entity and queues the matched events it causes
// (t.mu held; the caller drains the events after unlocking).
func (t *Transport) graphAddLocked(ge *gEntity) {
	g := &t.graph
	g.ents[ge.token] = ge
	ni := rmw.NodeInfo{Name: ge.ent.Node, Namespace: ge.ent.Namespace}
	g.nodes[ni]++
	switch {
	case isTopic(ge.ent.Kind):
		ge.info.Local = ge.local
		for o := range g.byKey[ge.key] {
			if o.ent.Kind == ge.ent.Kind {
				continue
			}
			if o.local {
				t.queueEventLocked(o.g, o.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidHex(ge.gid)})
			}
			if ge.local {
				t.queueEventLocked(ge.g, ge.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidHex(o.gid)})
			}
		}
		addIdx(g.byKey, ge.key, ge)
	case isService(ge.ent.Kind):
		k := svcIndex(ge.ent)
		if ge.ent.Kind == ros.KindService && !t.serverExistsLocked(k) {
			for o := range g.bySvc[k] {
				if o.local && o.ent.Kind == ros.KindClient {
					t.queueEventLocked(o.g, o.onEvent, rmw.Event{Kind: rmw.EventMatched, Remote: gidHex(ge.gid)})
				}
			}
		}
		if ge.local && ge.ent.Kind == ros.KindClient && t.serverExistsLocked(k) {
			t.queueEventLocked(ge.g, ge.onEvent, rmw.Event{Kind: rmw.EventMatched})
		}
		addIdx(g.bySvc, k, ge)
	}
	t.gsig.Notify()
}

// graphRemoveLocked removes the entity of token and queues the unmatched
// events it causes (t.mu held).
func (t *Transport) graphRemoveLocked(token string) {
	g := &t.graph
	ge := g.ents[token]
	if ge == nil {
		return
	}
	delete(g.ents, token)
	ni := rmw.NodeInfo{Name: ge.ent.Node, Namespace: ge.ent.Namespace}
	if g.nodes[ni]--; g.nodes[ni] <= 0 {
		delete(g.nodes, ni)
	}
	switch {
	case isTopic(ge.ent.Kind):
		delIdx(g.byKey, ge.key, ge)
		for o := range g.byKey[ge.key] {
			if o.local && o.ent.Kind != ge.ent.Kind {
				t.queueEventLocked(o.g, o.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidHex(ge.gid)})
			}
		}
	case isService(ge.ent.Kind):
		k := svcIndex(ge.ent)
		delIdx(g.bySvc, k, ge)
		if ge.ent.Kind == ros.KindService && !t.serverExistsLocked(k) {
			for o := range g.bySvc[k] {
				if o.local && o.ent.Kind == ros.KindClient {
					t.queueEventLocked(o.g, o.onEvent, rmw.Event{Kind: rmw.EventUnmatched, Remote: gidHex(ge.gid)})
				}
			}
		}
	}
	t.gsig.Notify()
}

func (t *Transport) serverExistsLocked(k string) bool {
	for o := range t.graph.bySvc[k] {
		if o.ent.Kind == ros.KindService {
			return true
		}
	}
	return false
}

// matchedLocked counts the endpoints of the other kind on ge's topic and
// type whose QoS is compatible with ge's (rmw_zenoh's
// count_matched_subscriptions / publishers).
func (t *Transport) matchedLocked(ge *gEntity) int {
	n := 0
	for o := range t.graph.byKey[ge.key] {
		if o.ent.Kind == ge.ent.Kind {
			continue
		}
		w, r := ge.info.QoS, o.info.QoS
		if ge.ent.Kind == ros.KindSubscription {
			w, r = r, w
		}
		if rmw.Incompatibility(w, r) == "" {
			n++
		}
	}
	return n
}

// GraphChanged returns a channel closed at the next change of the graph.
func (t *Transport) GraphChanged() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gsig.Chan()
}

// Nodes lists the nodes of the graph: those of a node token and those
// named by an endpoint's token, each (namespace, name) once.
func (t *Transport) Nodes() []rmw.NodeInfo {
	t.mu.Lock()
	out := make([]rmw.NodeInfo, 0, len(t.graph.nodes))
	for n := range t.graph.nodes {
		out = append(out, n)
	}
	t.mu.Unlock()
	rmw.SortNodes(out)
	return out
}

// Endpoints lists the publishers and subscriptions on topic (every topic
// when topic is "").
func (t *Transport) Endpoints(topic string) []rmw.EndpointInfo {
	t.mu.Lock()
	var out []rmw.EndpointInfo
	for _, ge := range t.graph.ents {
		if isTopic(ge.ent.Kind) && (topic == "" || ge.ent.Topic == topic) {
			out = append(out, ge.info)
		}
	}
	t.mu.Unlock()
	rmw.SortEndpoints(out)
	return out
}

// Services lists the services of the graph with their servers' and
// clients' nodes.
func (t *Transport) Services() []rmw.ServiceInfo {
	t.mu.Lock()
	var out []rmw.ServiceInfo
	for _, ge := range t.graph.ents {
		if isService(ge.ent.Kind) {
			n := rmw.NodeInfo{Name: ge.ent.Node, Namespace: ge.ent.Namespace}
			out = rmw.AddServiceEndpoint(out, ge.ent.Topic, ros.ROSTypeName(ge.ent.Type), n, ge.ent.Kind == ros.KindService)
		}
	}
	t.mu.Unlock()
	for i := range out {
		rmw.SortNodes(out[i].ServerNodes)
		rmw.SortNodes(out[i].ClientNodes)
	}
	rmw.SortServices(out)
	return out
}
