package nros

import (
	"slices"

	"github.com/nros-go/nros/rmw"
)

// GraphChanged returns a channel that is closed at the next change of the
// ROS graph the node's transport sees: an endpoint (topic or service) or a
// node appears or goes. Take it before looking at the graph, then wait on
// it: a change in between closes it at once.
func (n *Node) GraphChanged() <-chan struct{} {
	return n.graph().GraphChanged()
}

// graph is the graph of the node's transport.
func (n *Node) graph() rmw.Graph { return n.live().ctx.Transport() }

// TopicEndpointInfo describes one publisher or subscription of the graph
// (rclcpp's TopicEndpointInfo).
type TopicEndpointInfo struct {
	Topic, Type string
	// TypeHash is the RIHS01 hash of the type as the endpoint announced
	// it, or "" when it announced none (a Humble peer, a hand-written
	// type).
	TypeHash      string
	NodeName      string // "" when a remote endpoint's node is unknown
	NodeNamespace string
	Publisher     bool // false: a subscription
	GID           [16]byte
	QoS           QoS
}

// graphEndpoints lists the topic endpoints on topic ("" for all) that the
// node's transport knows.
func (n *Node) graphEndpoints(topic string) []TopicEndpointInfo {
	eps := n.graph().Endpoints(topic)
	out := make([]TopicEndpointInfo, len(eps))
	for i, e := range eps {
		out[i] = TopicEndpointInfo{Topic: e.Topic, Type: e.Type, TypeHash: e.TypeHash, NodeName: e.Node.Name,
			NodeNamespace: e.Node.Namespace, Publisher: e.Publisher, GID: e.GID, QoS: e.QoS}
	}
	return out
}

// GetTopicNamesAndTypes returns every topic of the graph with its types.
func (n *Node) GetTopicNamesAndTypes() map[string][]string {
	out := map[string][]string{}
	for _, t := range rmw.Topics(n.graph()) {
		out[t.Name] = append(out[t.Name], t.Type) // sorted by name, then type
	}
	return out
}

// GetServiceNamesAndTypes returns every service of the graph with its types.
func (n *Node) GetServiceNamesAndTypes() map[string][]string {
	out := map[string][]string{}
	for _, s := range n.graph().Services() {
		if !slices.Contains(out[s.Name], s.Type) {
			out[s.Name] = append(out[s.Name], s.Type)
		}
	}
	return out
}

// GetPublishersInfoByTopic lists the publishers of topic (resolved and
// remapped for the node), with their nodes and QoS. The error is that of a
// topic name that does not resolve.
func (n *Node) GetPublishersInfoByTopic(topic string) ([]TopicEndpointInfo, error) {
	return n.endpointsOf(topic, true)
}

// GetSubscriptionsInfoByTopic lists the subscriptions of topic (see
// GetPublishersInfoByTopic).
func (n *Node) GetSubscriptionsInfoByTopic(topic string) ([]TopicEndpointInfo, error) {
	return n.endpointsOf(topic, false)
}

func (n *Node) endpointsOf(topic string, pub bool) ([]TopicEndpointInfo, error) {
	full, err := n.resolveTopic(topic)
	if err != nil {
		return nil, err
	}
	eps := n.graphEndpoints(full)
	return slices.DeleteFunc(eps, func(e TopicEndpointInfo) bool { return e.Publisher != pub }), nil
}

// CountPublishers returns the number of publishers of topic in the graph
// (see GetPublishersInfoByTopic for the error).
func (n *Node) CountPublishers(topic string) (int, error) {
	eps, err := n.GetPublishersInfoByTopic(topic)
	return len(eps), err
}

// CountSubscribers returns the number of subscriptions of topic in the
// graph (see GetPublishersInfoByTopic for the error).
func (n *Node) CountSubscribers(topic string) (int, error) {
	eps, err := n.GetSubscriptionsInfoByTopic(topic)
	return len(eps), err
}

// GetNodeNames returns the fully qualified names of the graph's nodes,
// sorted: those owning an endpoint, and on DDS those that peers announce
// on ros_discovery_info.
func (n *Node) GetNodeNames() []string {
	var names []string
	for _, x := range n.graph().Nodes() {
		if fq := fullyQualified(x.Namespace, x.Name); !slices.Contains(names, fq) {
			names = append(names, fq)
		}
	}
	slices.Sort(names)
	return names
}

// fullyQualified joins a namespace ("/" or "" for the root) and a name.
func fullyQualified(ns, name string) string {
	if ns == "" || ns == "/" {
		return "/" + name
	}
	return ns + "/" + name
}
