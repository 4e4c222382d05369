package intra

import (
	"slices"
	"sort"

	"github.com/nros-go/nros/rmw"
)

// Topics lists every topic name and type with open endpoints, sorted by name
// then type. A name used with two types appears twice.
func (t *Transport) Topics() []rmw.TopicInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := map[[2]string]*rmw.TopicInfo{}
	var out []*rmw.TopicInfo
	get := func(name, typ string) *rmw.TopicInfo {
		k := [2]string{name, typ}
		if ti := idx[k]; ti != nil {
			return ti
		}
		ti := &rmw.TopicInfo{Name: name, Type: typ}
		idx[k] = ti
		out = append(out, ti)
		return ti
	}
	for _, tp := range t.topics {
		for _, p := range tp.pubs {
			get(tp.name, p.typeName).Publishers++
		}
		for _, s := range tp.subs {
			get(tp.name, s.typeName).Subscriptions++
		}
	}
	res := make([]rmw.TopicInfo, len(out))
	for i, ti := range out {
		res[i] = *ti
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].Name != res[j].Name {
			return res[i].Name < res[j].Name
		}
		return res[i].Type < res[j].Type
	})
	return res
}

// Endpoints lists the open endpoints on topic (all topics when topic is ""),
// sorted by topic, publishers first, then by GID. Every endpoint is Local;
// TypeHash is the one its EndpointOptions carried.
func (t *Transport) Endpoints(topicName string) []rmw.EndpointInfo {
	t.mu.Lock()
	var res []rmw.EndpointInfo
	for _, tp := range t.topics {
		if topicName != "" && tp.name != topicName {
			continue
		}
		for _, p := range tp.pubs {
			res = append(res, rmw.EndpointInfo{Topic: tp.name, Type: p.typeName, TypeHash: p.typeHash, Node: p.node,
				Publisher: true, GID: p.gid, QoS: p.qos, Local: true})
		}
		for _, s := range tp.subs {
			res = append(res, rmw.EndpointInfo{Topic: tp.name, Type: s.typeName, TypeHash: s.typeHash, Node: s.node,
				GID: s.gid, QoS: s.qos, Local: true})
		}
	}
	t.mu.Unlock()
	rmw.SortEndpoints(res)
	return res
}

// Nodes lists the nodes that own an open endpoint (publisher, subscription,
// service server or client), each once, sorted by namespace then name,
// without enclaves.
func (t *Transport) Nodes() []rmw.NodeInfo {
	t.mu.Lock()
	var out []rmw.NodeInfo
	add := func(n rmw.NodeInfo) {
		if n.Name == "" {
			return
		}
		if n.Namespace == "" {
			n.Namespace = "/"
		}
		n.Enclave = ""
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, tp := range t.topics {
		for _, p := range tp.pubs {
			add(p.node)
		}
		for _, s := range tp.subs {
			add(s.node)
		}
	}
	for _, ss := range t.svc.servers {
		for _, s := range ss {
			add(s.node)
		}
	}
	for _, cs := range t.svc.clients {
		for _, c := range cs {
			add(c.node)
		}
	}
	t.mu.Unlock()
	rmw.SortNodes(out)
	return out
}
