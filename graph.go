package nros

import (
	"errors"
	"slices"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
	"github.com/nros-go/nros/rmw/rtps"
)

// ErrNoGraphEvents is returned when the transport does not signal graph
// changes.
var ErrNoGraphEvents = errors.New("nros: the transport does not signal graph changes")

// GraphChanged returns a channel that is closed at the next change of the
// ROS graph the node's transport sees: an endpoint (topic or service) or a
// node appears or goes. Take it before looking at the graph, then wait on
// it: a change in between closes it at once.
func (n *Node) GraphChanged() (<-chan struct{}, error) {
	g, ok := n.live().ctx.Transport().(rmw.GraphNotifier)
	if !ok {
		return nil, ErrNoGraphEvents
	}
	return g.GraphChanged(), nil
}

// TopicEndpointInfo describes one publisher or subscription of the graph
// (rclcpp's TopicEndpointInfo).
type TopicEndpointInfo struct {
	Topic, Type   string
	NodeName      string // "" when a remote endpoint's node is unknown
	NodeNamespace string
	Publisher     bool // false: a subscription
	GID           [16]byte
	QoS           QoS
}

// graphEndpoints lists the topic endpoints the node's transport knows.
func (n *Node) graphEndpoints(topic string) ([]TopicEndpointInfo, error) {
	var out []TopicEndpointInfo
	switch t := n.live().ctx.Transport().(type) {
	case *intra.Transport:
		for _, e := range t.Endpoints(topic) {
			out = append(out, TopicEndpointInfo{e.Topic, e.Type, e.Node.Name, e.Node.Namespace, e.Publisher, e.GID, e.QoS})
		}
	case *rtps.Transport:
		for _, e := range t.Endpoints(topic) {
			out = append(out, TopicEndpointInfo{e.Topic, e.Type, e.Node.Name, e.Node.Namespace, e.Publisher, e.GID, e.QoS})
		}
	default:
		return nil, ErrNoGraph
	}
	return out, nil
}

// ErrNoGraph is returned by graph queries on a transport that cannot list
// its graph.
var ErrNoGraph = errors.New("nros: the transport cannot list the graph")

// GetTopicNamesAndTypes returns every topic of the graph with its types.
func (n *Node) GetTopicNamesAndTypes() (map[string][]string, error) {
	eps, err := n.graphEndpoints("")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range eps {
		if !slices.Contains(out[e.Topic], e.Type) {
			out[e.Topic] = append(out[e.Topic], e.Type)
		}
	}
	for _, ts := range out {
		slices.Sort(ts)
	}
	return out, nil
}

// GetServiceNamesAndTypes returns every service of the graph with its types.
func (n *Node) GetServiceNamesAndTypes() (map[string][]string, error) {
	g, ok := n.live().ctx.Transport().(rmw.ServiceGraph)
	if !ok {
		return nil, ErrNoGraph
	}
	out := map[string][]string{}
	for _, s := range g.Services() {
		if !slices.Contains(out[s.Name], s.Type) {
			out[s.Name] = append(out[s.Name], s.Type)
		}
	}
	return out, nil
}

// GetPublishersInfoByTopic lists the publishers of topic (resolved and
// remapped for the node), with their nodes and QoS.
func (n *Node) GetPublishersInfoByTopic(topic string) ([]TopicEndpointInfo, error) {
	return n.endpointsOf(topic, true)
}

// GetSubscriptionsInfoByTopic lists the subscriptions of topic.
func (n *Node) GetSubscriptionsInfoByTopic(topic string) ([]TopicEndpointInfo, error) {
	return n.endpointsOf(topic, false)
}

func (n *Node) endpointsOf(topic string, pub bool) ([]TopicEndpointInfo, error) {
	full, err := n.resolveTopic(topic)
	if err != nil {
		return nil, err
	}
	eps, err := n.graphEndpoints(full)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(eps, func(e TopicEndpointInfo) bool { return e.Publisher != pub }), nil
}

// CountPublishers returns the number of publishers of topic in the graph.
func (n *Node) CountPublishers(topic string) (int, error) {
	eps, err := n.GetPublishersInfoByTopic(topic)
	return len(eps), err
}

// CountSubscribers returns the number of subscriptions of topic in the graph.
func (n *Node) CountSubscribers(topic string) (int, error) {
	eps, err := n.GetSubscriptionsInfoByTopic(topic)
	return len(eps), err
}

// GetNodeNames returns the fully qualified names of the graph's nodes,
// sorted: those owning an endpoint, and on DDS those that peers announce
// on ros_discovery_info.
func (n *Node) GetNodeNames() ([]string, error) {
	var names []string
	add := func(name, ns string) {
		if name == "" {
			return
		}
		fq := "/" + name
		if ns != "" && ns != "/" {
			fq = ns + "/" + name
		}
		if !slices.Contains(names, fq) {
			names = append(names, fq)
		}
	}
	tr := n.live().ctx.Transport()
	if t, ok := tr.(*rtps.Transport); ok {
		for _, x := range t.Nodes() {
			add(x.Name, x.Namespace)
		}
	}
	eps, err := n.graphEndpoints("")
	if err != nil {
		return nil, err
	}
	for _, e := range eps {
		add(e.NodeName, e.NodeNamespace)
	}
	if g, ok := tr.(rmw.ServiceGraph); ok {
		for _, s := range g.Services() {
			for _, x := range append(slices.Clone(s.ServerNodes), s.ClientNodes...) {
				add(x.Name, x.Namespace)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
