package nros

import "sync"

// userCalls is a node's queue of user code that a transport asked for
// (endpoint event handlers, dropped-sample handlers): the transport only
// queues the call, and the node's executor runs it on its own goroutine,
// like any callback. Calls that come before the node joins an executor
// wait for it; beyond maxUserCalls the oldest are dropped.
type userCalls struct {
	mu        sync.Mutex
	q         []userCall
	exec      *Executor
	scheduled bool
	closed    bool
	dropped   uint64

	cur userCall // the call running (the executor's goroutine only)
}

// userCall is one queued call and the identity it reports a panic under.
type userCall struct {
	kind string
	id   uint64
	name string
	fn   func()
}

// maxUserCalls bounds the calls waiting for an executor.
const maxUserCalls = 1024

// userCalls returns the node's queue, making it on first use.
func (n *Node) userCalls() *userCalls {
	n.callsOnce.Do(func() {
		u := &userCalls{}
		if n.addEntity(u) != nil {
			u.closed = true
		}
		n.calls = u
	})
	return n.calls
}

// add queues a call (any goroutine) and wakes the executor.
func (u *userCalls) add(c userCall) {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	if len(u.q) >= maxUserCalls {
		clear(u.q[:1])
		u.q = u.q[1:]
		u.dropped++
	}
	u.q = append(u.q, c)
	e := u.exec
	sched := e != nil && !u.scheduled
	if sched {
		u.scheduled = true
	}
	u.mu.Unlock()
	if sched {
		e.schedule(u)
	}
}

func (u *userCalls) attach(e *Executor) {
	u.mu.Lock()
	u.exec = e
	sched := len(u.q) > 0 && !u.scheduled && !u.closed
	if sched {
		u.scheduled = true
	}
	u.mu.Unlock()
	if sched {
		e.schedule(u)
	}
}

func (u *userCalls) close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	clear(u.q)
	u.q = nil
	return nil
}

// Execute runs, on the executor's goroutine, the calls queued when it
// starts (a call queued meanwhile waits for the next pass). A call that
// panics leaves the rest queued.
func (u *userCalls) Execute() bool {
	u.mu.Lock()
	n := len(u.q)
	u.mu.Unlock()
	for range n {
		u.mu.Lock()
		if len(u.q) == 0 || u.closed {
			u.scheduled = false
			u.mu.Unlock()
			return false
		}
		c := u.q[0]
		u.q[0] = userCall{}
		u.q = u.q[1:]
		u.mu.Unlock()
		u.cur = c
		c.fn()
		u.cur = userCall{}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	more := len(u.q) > 0 && !u.closed
	if !more {
		u.scheduled = false
	}
	return more
}

// Identity names the running call in panic reports.
func (u *userCalls) Identity() (string, uint64, string) { return u.cur.kind, u.cur.id, u.cur.name }
