package nros

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Node is a participant in the ROS graph: it owns timers, publishers,
// subscriptions and parameters, and has a ROS clock that follows its
// context's simulated time.
type Node struct {
	name      string
	namespace string
	ctx       *Context

	host   timerHost // guards timers until the node joins an executor
	mu     sync.Mutex
	exec   *Executor
	timers []*Timer
	closed bool
}

// ErrNodeClosed is returned by operations on a closed node.
var ErrNodeClosed = errors.New("nros: node is closed")

// Name returns the node's name.
func (n *Node) Name() string { return n.name }

// Namespace returns the node's namespace ("/" for the root).
func (n *Node) Namespace() string { return n.namespace }

// FullyQualifiedName returns namespace + "/" + name ("/ns/talker").
func (n *Node) FullyQualifiedName() string {
	if n.namespace == "/" {
		return "/" + n.name
	}
	return n.namespace + "/" + n.name
}

// Context returns the node's context.
func (n *Node) Context() *Context { return n.ctx }

// Clock returns the node's ROS clock (the context's).
func (n *Node) Clock() *Clock { return n.ctx.Clock() }

// CreateWallTimer creates a timer on steady time: it keeps its cadence in
// real time whatever the simulated clock does (a watchdog, a keep-alive).
func (n *Node) CreateWallTimer(period time.Duration, cb func(), opts ...TimerOption) (*Timer, error) {
	return n.createTimer(clockRef{src: TimerClockSteady}, period, cb, opts)
}

// CreateTimer creates a timer on clock: a ROS clock makes a timer that
// follows simulated time (paused, scaled, jumping), a system or steady clock
// one that follows that clock.
func (n *Node) CreateTimer(c *Clock, period time.Duration, cb func(), opts ...TimerOption) (*Timer, error) {
	if c == nil {
		return nil, errors.New("nros: CreateTimer needs a clock (node.Clock() for ROS time)")
	}
	ref := clockRef{src: TimerClockSteady}
	switch c.typ {
	case ROSTime:
		ref = clockRef{src: TimerClockRos, ov: c.ov}
	case SystemTime:
		ref.src = TimerClockSystem
	}
	return n.createTimer(ref, period, cb, opts)
}

func (n *Node) createTimer(ref clockRef, period time.Duration, cb func(), opts []TimerOption) (*Timer, error) {
	t, err := newTimer(ref, period, cb, opts)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrNodeClosed
	}
	n.timers = append(n.timers, t)
	if e := n.exec; e != nil {
		e.host.mu.Lock()
		t.host.Store(&e.host)
		e.attachLocked(t)
		e.host.mu.Unlock()
		e.Wake()
	} else {
		t.host.Store(&n.host)
	}
	return t, nil
}

// AddNode makes the executor run the node's callbacks. A node belongs to at
// most one executor.
func (e *Executor) AddNode(n *Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrNodeClosed
	}
	if n.exec != nil {
		if n.exec == e {
			return nil
		}
		return fmt.Errorf("nros: node %s already belongs to another executor", n.FullyQualifiedName())
	}
	n.host.mu.Lock()
	e.host.mu.Lock()
	for _, t := range n.timers {
		e.attachLocked(t)
		t.host.Store(&e.host)
	}
	n.exec = e
	e.nodes = append(e.nodes, n)
	e.host.mu.Unlock()
	n.host.mu.Unlock()
	e.Wake()
	return nil
}
