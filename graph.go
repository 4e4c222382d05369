package nros

import (
	"errors"

	"github.com/nros-go/nros/rmw"
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
