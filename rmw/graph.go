package rmw

// GraphNotifier is implemented by transports that signal changes of the
// ROS graph: an endpoint (topic or service) or a node appears, goes, or
// is described anew.
type GraphNotifier interface {
	// GraphChanged returns a channel that is closed at the next change of
	// the graph after the call.
	GraphChanged() <-chan struct{}
}
