package rtps

import (
	"slices"
	"strings"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// rosNames maps DDS names back to ROS names: only "rt/" topics are ROS
// topics; a type that does not demangle is kept as it is.
func rosNames(ddsTopic, ddsType string) (string, string, bool) {
	if !strings.HasPrefix(ddsTopic, "rt/") {
		return "", "", false
	}
	typ, err := msg.ROSTypeName(ddsType)
	if err != nil {
		typ = ddsType
	}
	return ddsTopic[2:], typ, true
}

// Topics lists every ROS topic with local or discovered endpoints, sorted
// by name then type. A name used with two types appears twice.
func (t *Transport) Topics() []rmw.TopicInfo { return rmw.Topics(t) }

var _ rmw.Discovering = (*Transport)(nil)

// Discovering reports true: the graph fills in as discovery finds peers
// (see rmw.Discovering).
func (t *Transport) Discovering() bool { return true }

// Endpoints lists the local and discovered endpoints on the ROS topic
// (all topics when topic is ""), sorted by topic, publishers first, then
// by GID. Remote endpoints carry their node when their participant
// published it on ros_discovery_info, and their type hash when their
// USER_DATA announced a well-formed one.
func (t *Transport) Endpoints(topic string) []rmw.EndpointInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []rmw.EndpointInfo
	add := func(ed *wire.EndpointData, node rmw.NodeInfo, pub, local bool, q rmw.QoS) {
		name, typ, ok := rosNames(ed.TopicName, ed.TypeName)
		if !ok || (topic != "" && name != topic) {
			return
		}
		out = append(out, rmw.EndpointInfo{Topic: name, Type: typ, TypeHash: announcedTypeHash(ed.UserData),
			Node: node, Publisher: pub, GID: ed.EndpointGUID.Bytes(), QoS: q.Normalize(), Local: local})
	}
	for _, p := range t.pubs {
		if !p.internal {
			add(&p.ed, p.node, true, true, p.qos)
		}
	}
	for _, s := range t.subs {
		if !s.internal {
			add(&s.ed, s.node, false, true, s.qos)
		}
	}
	for _, e := range t.remW {
		add(&e.Data, t.remoteNodeLocked(e.GUID()), true, false, discovery.QoSOf(&e.Data))
	}
	for _, e := range t.remR {
		add(&e.Data, t.remoteNodeLocked(e.GUID()), false, false, discovery.QoSOf(&e.Data))
	}
	rmw.SortEndpoints(out)
	return out
}

// Nodes lists the ROS nodes of this Transport (those that own an
// endpoint) and of the discovered participants that publish
// ros_discovery_info, sorted by namespace then name, without duplicates
// and without enclaves.
func (t *Transport) Nodes() []rmw.NodeInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
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
	for _, p := range t.pubs {
		if !p.internal {
			add(p.node)
		}
	}
	for _, s := range t.subs {
		if !s.internal {
			add(s.node)
		}
	}
	for _, info := range t.remoteGraph {
		for _, n := range info.NodeEntitiesInfoSeq {
			add(rmw.NodeInfo{Name: n.NodeName, Namespace: n.NodeNamespace})
		}
	}
	rmw.SortNodes(out)
	return out
}

// remoteNodeLocked finds the node owning a remote endpoint in its
// participant's ros_discovery_info.
func (t *Transport) remoteNodeLocked(g wire.GUID) rmw.NodeInfo {
	info := t.remoteGraph[g.Prefix]
	if info == nil {
		return rmw.NodeInfo{}
	}
	gb := g.Bytes()
	for _, n := range info.NodeEntitiesInfoSeq {
		for _, seq := range [][]rmw_dds_common.Gid{n.WriterGidSeq, n.ReaderGidSeq} {
			for i := range seq {
				if seq[i].GUID() == gb {
					return rmw.NodeInfo{Name: n.NodeName, Namespace: n.NodeNamespace}
				}
			}
		}
	}
	return rmw.NodeInfo{}
}

// graphSample handles a remote ros_discovery_info sample (on the dispatch
// goroutine, no lock held).
func (t *Transport) graphSample(s rmw.Sample) {
	t.mu.Lock()
	size := t.cfg.GidSize
	t.mu.Unlock()
	// Either Gid layout (Humble vs Iron and later peers), or give up.
	info, only := decodeGraph(s.Data, size)
	if info == nil {
		t.mu.Lock()
		t.st.BadGraphSamples++
		t.mu.Unlock()
		return
	}
	g := wire.GUIDFromBytes(info.Gid.GUID())
	writer := wire.GUIDFromBytes(s.PublisherGID)
	if g.Prefix != writer.Prefix {
		// A participant speaks only for itself.
		t.mu.Lock()
		t.st.BadGraphSamples++
		t.mu.Unlock()
		return
	}
	t.mu.Lock()
	t.st.GraphSamples++
	if t.disc.Participant(g.Prefix) != nil {
		t.remoteGraph[g.Prefix] = info
		t.learnGidSizeLocked(only)
		t.notifyGraphLocked()
	}
	t.finishLocked()
}
