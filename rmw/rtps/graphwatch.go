package rtps

import "github.com/nros-go/nros/rmw"

var _ rmw.Graph = (*Transport)(nil)

// GraphChanged returns a channel that is closed at the next change of the
// graph: a local endpoint created or closed, a remote endpoint or
// participant discovered or lost, a peer's ros_discovery_info received.
func (t *Transport) GraphChanged() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.graphSig.Chan()
}

// notifyGraphLocked wakes GraphChanged's waiters (t.mu held).
func (t *Transport) notifyGraphLocked() { t.graphSig.Notify() }
