package rmw

import (
	"slices"
	"strings"
)

// GraphNotifier is the change signal of a Graph: an endpoint (topic or
// service) or a node appears, goes, or is described anew.
type GraphNotifier interface {
	// GraphChanged returns a channel that is closed at the next change of
	// the graph after the call.
	GraphChanged() <-chan struct{}
}

// GraphSignal is the channel behind a GraphNotifier, for transports to
// keep under their own lock: Chan hands out the channel of the next change,
// Notify closes it. The zero value is ready to use.
type GraphSignal struct{ ch chan struct{} }

// Chan returns the channel that the next Notify closes (the caller holds
// the transport's lock).
func (g *GraphSignal) Chan() <-chan struct{} {
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// Notify closes the channel handed out since the last change, if any (the
// caller holds the transport's lock).
func (g *GraphSignal) Notify() {
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// EndpointInfo describes one publisher or subscription of the ROS graph,
// local or remote, as every transport reports it.
type EndpointInfo struct {
	Topic     string // ROS name, e.g. "/chatter"
	Type      string // ROS type, e.g. "std_msgs/msg/String"
	TypeHash  string // "RIHS01_<64 hex>" when the endpoint announced one, else ""
	Node      NodeInfo
	Publisher bool // false: a subscription
	GID       [16]byte
	QoS       QoS  // normalized
	Local     bool // an endpoint of this transport
}

// TopicInfo describes one (topic name, type name) pair of the graph.
type TopicInfo struct {
	Name          string // ROS name
	Type          string // ROS type
	Publishers    int
	Subscriptions int
}

// Graph is the ROS graph as a transport sees it: nodes, topic endpoints and
// services, local and remote, and a signal of their changes. Every
// transport implements it (Transport embeds it).
type Graph interface {
	GraphNotifier
	// Nodes lists the nodes of the graph (those that own an endpoint or
	// that the transport's discovery announces), each once, sorted by
	// namespace then name. Namespace is "/" for the root namespace;
	// Enclave is left empty (peers do not announce it per node).
	Nodes() []NodeInfo
	// Endpoints lists the topic endpoints on topic (every topic when topic
	// is ""), sorted by topic, publishers first, then by GID.
	Endpoints(topic string) []EndpointInfo
	// Services lists the services of the graph, sorted by name then type.
	Services() []ServiceInfo
}

// Topics folds a graph's topic endpoints into one TopicInfo per (topic
// name, type name) pair, sorted by name then type: a name used with two
// types appears twice.
func Topics(g Graph) []TopicInfo {
	return TopicsOf(g.Endpoints(""))
}

// TopicsOf folds endpoints into one TopicInfo per (topic name, type name)
// pair, sorted by name then type (see Topics).
func TopicsOf(eps []EndpointInfo) []TopicInfo {
	var out []TopicInfo
	for _, e := range eps {
		i := slices.IndexFunc(out, func(ti TopicInfo) bool { return ti.Name == e.Topic && ti.Type == e.Type })
		if i < 0 {
			out = append(out, TopicInfo{Name: e.Topic, Type: e.Type})
			i = len(out) - 1
		}
		if e.Publisher {
			out[i].Publishers++
		} else {
			out[i].Subscriptions++
		}
	}
	slices.SortFunc(out, func(a, b TopicInfo) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out
}

// SortEndpoints sorts endpoints as Graph.Endpoints returns them: by topic,
// publishers first, then by GID.
func SortEndpoints(eps []EndpointInfo) {
	slices.SortFunc(eps, func(a, b EndpointInfo) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if a.Publisher != b.Publisher {
			if a.Publisher {
				return -1
			}
			return 1
		}
		return slices.Compare(a.GID[:], b.GID[:])
	})
}

// SortNodes sorts nodes as Graph.Nodes returns them: by namespace, then
// name.
func SortNodes(nodes []NodeInfo) {
	slices.SortFunc(nodes, func(a, b NodeInfo) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Discovering is an optional interface of transports whose graph includes
// other processes' endpoints, learnt by discovery after the transport
// starts: a snapshot taken right after the start may lack peers that are
// already running. A tool that lists the graph once (nros topic list,
// ros2's --spin-time) waits a while first when Discovering reports true.
// A transport that does not implement it, or reports false, knows its
// whole graph at once (an in-process transport, discovery turned off).
type Discovering interface {
	// Discovering reports whether the graph fills in over time through
	// discovery.
	Discovering() bool
}

// DiscoversPeers reports whether g's graph fills in over time (see
// Discovering).
func DiscoversPeers(g Graph) bool {
	d, ok := g.(Discovering)
	return ok && d.Discovering()
}
