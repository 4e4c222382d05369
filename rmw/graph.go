package rmw

// GraphNotifier is implemented by transports that signal changes of the
// ROS graph: an endpoint (topic or service) or a node appears, goes, or
// is described anew.
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
// transport implements it.
type Graph interface {
	GraphNotifier
	// Nodes lists the nodes of the graph (those that own an endpoint or
	// that the transport's discovery announces), sorted by namespace then
	// name.
	Nodes() []NodeInfo
	// Endpoints lists the topic endpoints on topic (every topic when topic
	// is ""), sorted by topic, publishers first, then by GID.
	Endpoints(topic string) []EndpointInfo
	// Services lists the services of the graph, sorted by name then type.
	Services() []ServiceInfo
}
