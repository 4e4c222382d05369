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
