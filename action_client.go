package nros

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/nros-go/nros/msg/action_msgs"
	"github.com/nros-go/nros/msg/unique_identifier_msgs"
)

// Errors of an action client.
var (
	// ErrGoalRejected is returned by SendGoal when the server refused the goal.
	ErrGoalRejected = errors.New("nros: the action server rejected the goal")
	// ErrCancelRejected: the server refused to cancel (ERROR_REJECTED).
	ErrCancelRejected = errors.New("nros: the action server rejected the cancel request")
	// ErrUnknownGoal: the server does not know the goal (ERROR_UNKNOWN_GOAL_ID).
	ErrUnknownGoal = errors.New("nros: the action server does not know the goal")
	// ErrGoalTerminated: the goal had already ended (ERROR_GOAL_TERMINATED).
	ErrGoalTerminated = errors.New("nros: the goal has already ended")
	// ErrActionClosed is returned by a closed action client or server.
	ErrActionClosed = errors.New("nros: action endpoint is closed")
)

// ActionClient sends goals to an action server and follows them. SendGoal,
// Cancel and the result need no spinning of the client's node; feedback and
// status messages arrive through its executor, so spin it to receive them.
// Its methods are safe for concurrent use. SendGoal and Cancel block until
// the server answers (as Client.Call): called from a callback of the
// executor that also runs the server (a feedback callback cancelling its
// goal, say), they wait until their ctx ends; call them from a goroutine of
// their own there.
type ActionClient[Goal, Result, Feedback any] struct {
	node *Node
	name string

	send      func(ctx context.Context, id GoalID, goal *Goal) (bool, Time, error)
	getResult func(ctx context.Context, id GoalID) (GoalStatus, *Result, error)
	cancelCl  *Client[action_msgs.CancelGoal_Request, action_msgs.CancelGoal_Response]
	ready     []func() bool
	closers   []func() error

	ctx  context.Context // ends at Close: the result requests in flight
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	goals    map[GoalID]*clientEntry[Result, Feedback]
	retiring []GoalID // ended goals kept for late feedback, oldest first
	closed   bool
}

type clientEntry[Result, Feedback any] struct {
	g        *ClientGoal[Result]
	feedback func(*Feedback)
}

// ClientGoal is a goal a client sent and the server accepted. Its methods
// are safe from any goroutine.
type ClientGoal[Result any] struct {
	id     GoalID
	stamp  Time
	cancel func(ctx context.Context, id GoalID, stamp Time) ([]GoalID, error)

	mu      sync.Mutex
	status  GoalStatus
	changed chan struct{}
	done    chan struct{}
	result  *Result
	final   GoalStatus
	err     error
}

// ID returns the goal's UUID.
func (g *ClientGoal[Result]) ID() GoalID { return g.id }

// Stamp returns when the server accepted the goal, on the server's clock.
func (g *ClientGoal[Result]) Stamp() Time { return g.stamp }

// Status returns the goal's latest state: from the server's status topic
// while it runs (spin the node to receive it), from the result once done.
func (g *ClientGoal[Result]) Status() GoalStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.status
}

// StatusChanged returns a channel that is closed at the goal's next change
// of state. Take it before looking at Status, then wait on it.
func (g *ClientGoal[Result]) StatusChanged() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// Done returns a channel closed when the result has arrived (or the client
// closed).
func (g *ClientGoal[Result]) Done() <-chan struct{} { return g.done }

// Result waits for the goal's result: the result and the state it ended in
// (SUCCEEDED, CANCELED or ABORTED; UNKNOWN if the server had forgotten the
// goal). It returns ctx's error if ctx ends first; the result is still
// collected and a later call returns it.
func (g *ClientGoal[Result]) Result(ctx context.Context) (*Result, GoalStatus, error) {
	select {
	case <-g.done:
	case <-ctx.Done():
		return nil, GoalStatusUnknown, ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.result, g.final, g.err
}

// Cancel asks the server to cancel the goal. It returns nil once the server
// accepted (the goal is CANCELING; its result follows), or
// ErrCancelRejected, ErrUnknownGoal, ErrGoalTerminated, or ctx's error.
func (g *ClientGoal[Result]) Cancel(ctx context.Context) error {
	_, err := g.cancel(ctx, g.id, Time{})
	return err
}

func (g *ClientGoal[Result]) setStatus(s GoalStatus) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.status == s || g.status.Terminal() {
		return
	}
	g.status = s
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *ClientGoal[Result]) finish(st GoalStatus, res *Result, err error) {
	g.mu.Lock()
	g.result, g.final, g.err = res, st, err
	if err == nil && g.status != st {
		g.status = st
		close(g.changed)
		g.changed = make(chan struct{})
	}
	g.mu.Unlock()
	close(g.done)
}

// NewActionClient creates a client of action name (resolved and remapped
// as a topic name); name the action's generated Goal, Result and Feedback
// types: nros.NewActionClient[test_msgs.Fibonacci_Goal,
// test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback](node, "fibonacci").
func NewActionClient[Goal, Result, Feedback any, PG MessagePtr[Goal], PR MessagePtr[Result], PF MessagePtr[Feedback]](n *Node, name string, opts ...ActionOption) (*ActionClient[Goal, Result, Feedback], error) {
	_, resolved, err := n.actionEndpoint(name, opts, PG(new(Goal)).TypeName(), PR(new(Result)).TypeName(), PF(new(Feedback)).TypeName())
	if err != nil {
		return nil, err
	}
	c := &ActionClient[Goal, Result, Feedback]{node: n, name: resolved, goals: map[GoalID]*clientEntry[Result, Feedback]{}}
	c.ctx, c.stop = context.WithCancel(context.Background())
	if err := n.addEntity(c); err != nil {
		c.stop()
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Close()
		}
	}()
	prefix := resolved + "/_action/"

	sg, err := NewClient[sendGoalRequest[Goal, PG], sendGoalResponse[Goal, PG]](n, prefix+"send_goal")
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, sg.Close)
	c.ready = append(c.ready, sg.ServiceIsReady)
	c.send = func(ctx context.Context, id GoalID, goal *Goal) (bool, Time, error) {
		resp, err := sg.Call(ctx, &sendGoalRequest[Goal, PG]{ID: id, Goal: *goal})
		if err != nil {
			return false, Time{}, err
		}
		return resp.Accepted, timeOf(resp.Stamp), nil
	}
	gr, err := NewClient[getResultRequest[Result, PR], getResultResponse[Result, PR]](n, prefix+"get_result")
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, gr.Close)
	c.ready = append(c.ready, gr.ServiceIsReady)
	c.getResult = func(ctx context.Context, id GoalID) (GoalStatus, *Result, error) {
		resp, err := gr.Call(ctx, &getResultRequest[Result, PR]{ID: id})
		if err != nil {
			return GoalStatusUnknown, nil, err
		}
		return knownStatus(int8(resp.Status)), &resp.Result, nil
	}
	cc, err := NewClient[action_msgs.CancelGoal_Request, action_msgs.CancelGoal_Response](n, prefix+"cancel_goal")
	if err != nil {
		return nil, err
	}
	c.cancelCl = cc
	c.closers = append(c.closers, cc.Close)
	c.ready = append(c.ready, cc.ServiceIsReady)
	fb, err := NewSubscription[feedbackMessage[Feedback, PF]](n, prefix+"feedback", DefaultQoS(), func(m *feedbackMessage[Feedback, PF]) {
		c.mu.Lock()
		e, closed := c.goals[m.ID], c.closed
		c.mu.Unlock()
		if !closed && e != nil && e.feedback != nil {
			e.feedback(&m.Feedback)
		}
	})
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, fb.Close)
	c.ready = append(c.ready, func() bool { return fb.MatchedPublishers() > 0 })
	st, err := NewSubscription[action_msgs.GoalStatusArray](n, prefix+"status", actionStatusQoS(), c.onStatus)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, st.Close)
	c.ready = append(c.ready, func() bool { return st.MatchedPublishers() > 0 })
	ok = true
	return c, nil
}

// Name returns the resolved action name.
func (c *ActionClient[Goal, Result, Feedback]) Name() string { return c.name }

// ActionServerIsReady reports whether a server is there: its three services
// matched, and its feedback and status publishers.
func (c *ActionClient[Goal, Result, Feedback]) ActionServerIsReady() bool {
	for _, r := range c.ready {
		if !r() {
			return false
		}
	}
	return true
}

// WaitForServer returns nil once ActionServerIsReady, or ctx's error.
func (c *ActionClient[Goal, Result, Feedback]) WaitForServer(ctx context.Context) error {
	poll := c.node.ctx.newPollTimer()
	defer poll.stop()
	for {
		if c.isClosed() {
			return ErrActionClosed
		}
		if c.ActionServerIsReady() {
			return nil
		}
		select {
		case <-poll.c:
			poll.rearm()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *ActionClient[Goal, Result, Feedback]) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// SendGoal sends goal to the server (waiting for one, as a service call
// does) and returns the accepted goal, or ErrGoalRejected, or ctx's error.
// feedback, if not nil, receives the goal's feedback on the executor
// goroutine; feedback the server sent before the goal ended may still
// arrive after Result has returned. The result is requested at once, as
// rclcpp does, so it is collected even if Result is called late. If the
// server goes away before answering, Result waits until its ctx ends.
func (c *ActionClient[Goal, Result, Feedback]) SendGoal(ctx context.Context, goal *Goal, feedback func(*Feedback)) (*ClientGoal[Result], error) {
	if goal == nil {
		return nil, errors.New("nros: nil goal")
	}
	g := &ClientGoal[Result]{id: NewGoalID(), cancel: c.cancel, changed: make(chan struct{}), done: make(chan struct{})}
	// Registered before the request: feedback and status may beat the response.
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrActionClosed
	}
	c.goals[g.id] = &clientEntry[Result, Feedback]{g: g, feedback: feedback}
	c.mu.Unlock()
	accepted, stamp, err := c.send(ctx, g.id, goal)
	if err == nil && !accepted {
		err = ErrGoalRejected
	}
	c.mu.Lock()
	if err == nil && c.closed {
		err = ErrActionClosed
	}
	if err != nil {
		delete(c.goals, g.id)
		c.mu.Unlock()
		return nil, err
	}
	g.stamp = stamp
	c.wg.Add(1)
	c.mu.Unlock()
	g.mu.Lock()
	if g.status == GoalStatusUnknown { // the status topic may have told more already
		g.status = GoalStatusAccepted
	}
	g.mu.Unlock()
	go func() {
		defer c.wg.Done()
		st, res, err := c.getResult(c.ctx, g.id)
		if err != nil && c.ctx.Err() != nil {
			err = ErrActionClosed
		}
		g.finish(st, res, err)
		c.mu.Lock()
		if e := c.goals[g.id]; e != nil {
			c.retire(g.id, e)
		}
		c.mu.Unlock()
	}()
	return g, nil
}

// maxRetiring bounds the ended goals kept for their last feedback.
const maxRetiring = 256

// retire forgets an ended goal (c.mu held). Feedback travels on its own
// topic and the executor takes topics in turn, so feedback sent before the
// end may be handled after the result came: a goal with a feedback callback
// stays routable until maxRetiring newer goals have ended.
func (c *ActionClient[Goal, Result, Feedback]) retire(id GoalID, e *clientEntry[Result, Feedback]) {
	if e.feedback == nil {
		delete(c.goals, id)
		return
	}
	c.retiring = append(c.retiring, id)
	if len(c.retiring) > maxRetiring {
		delete(c.goals, c.retiring[0])
		c.retiring = slices.Delete(c.retiring, 0, 1)
	}
}

// knownStatus maps a status from the wire to the defined ones (anything
// else is UNKNOWN).
func knownStatus(v int8) GoalStatus {
	if v < int8(GoalStatusUnknown) || v > int8(GoalStatusAborted) {
		return GoalStatusUnknown
	}
	return GoalStatus(v)
}

// onStatus runs on the executor goroutine (the status topic).
func (c *ActionClient[Goal, Result, Feedback]) onStatus(m *action_msgs.GoalStatusArray) {
	for i := range m.StatusList {
		s := &m.StatusList[i]
		id, st := GoalID(s.GoalInfo.GoalID.UUID), knownStatus(s.Status)
		c.mu.Lock()
		e := c.goals[id]
		c.mu.Unlock()
		if e != nil && st != GoalStatusUnknown {
			e.g.setStatus(st)
		}
	}
}

// CancelAllGoals asks the server to cancel every goal it runs (of every
// client) and returns the goals that went to CANCELING.
func (c *ActionClient[Goal, Result, Feedback]) CancelAllGoals(ctx context.Context) ([]GoalID, error) {
	return c.cancel(ctx, GoalID{}, Time{})
}

// CancelGoalsBefore asks the server to cancel every goal accepted at or
// before t (the server's clock) and returns the goals that went to
// CANCELING.
func (c *ActionClient[Goal, Result, Feedback]) CancelGoalsBefore(ctx context.Context, t Time) ([]GoalID, error) {
	if t.IsZero() {
		return nil, errors.New("nros: CancelGoalsBefore needs a non-zero time (CancelAllGoals cancels every goal)")
	}
	return c.cancel(ctx, GoalID{}, t)
}

func (c *ActionClient[Goal, Result, Feedback]) cancel(ctx context.Context, id GoalID, t Time) ([]GoalID, error) {
	resp, err := c.cancelCl.Call(ctx, &action_msgs.CancelGoal_Request{GoalInfo: action_msgs.GoalInfo{
		GoalID: unique_identifier_msgs.UUID{UUID: id}, Stamp: stampOf(t)}})
	if err != nil {
		if c.isClosed() {
			return nil, ErrActionClosed
		}
		return nil, err
	}
	ids := make([]GoalID, len(resp.GoalsCanceling))
	for i, gi := range resp.GoalsCanceling {
		ids[i] = GoalID(gi.GoalID.UUID)
	}
	switch resp.ReturnCode {
	case action_msgs.CancelGoal_Response_ERROR_NONE:
		return ids, nil
	case action_msgs.CancelGoal_Response_ERROR_UNKNOWN_GOAL_ID:
		return ids, ErrUnknownGoal
	case action_msgs.CancelGoal_Response_ERROR_GOAL_TERMINATED:
		return ids, ErrGoalTerminated
	default:
		return ids, ErrCancelRejected
	}
}

// Close releases the client: results still awaited end with ErrActionClosed
// and no feedback callback runs once it returns (called from one, it does
// not wait for that one). Safe to call twice.
func (c *ActionClient[Goal, Result, Feedback]) Close() error {
	c.node.removeEntity(c)
	return c.close()
}

func (c *ActionClient[Goal, Result, Feedback]) attach(*Executor) {}

func (c *ActionClient[Goal, Result, Feedback]) close() error {
	if !firstClose(&c.mu, &c.closed) {
		return nil
	}
	c.stop()
	var errs []error
	for _, cl := range c.closers {
		errs = append(errs, cl())
	}
	c.wg.Wait()
	c.node.quiesce() // a feedback callback still running has returned
	return errors.Join(errs...)
}
