package intra

import "github.com/nros-go/nros/rmw"

var _ rmw.Graph = (*Transport)(nil)

// GraphChanged returns a channel that is closed at the next change of the
// graph: a publisher, subscription, service server or client created or
// closed.
func (t *Transport) GraphChanged() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.graph.Chan()
}

// notifyGraphLocked wakes GraphChanged's waiters (t.mu held).
func (t *Transport) notifyGraphLocked() { t.graph.Notify() }
