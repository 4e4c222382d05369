package nros

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/msg/action_msgs"
	"github.com/nros-go/nros/msg/unique_identifier_msgs"
)

// DefaultResultTimeout is how long an action server keeps a goal's result
// after the goal ended, on the node's ROS clock (rcl_action's default,
// 15 minutes). A paused simulation keeps results.
const DefaultResultTimeout = 15 * time.Minute

// ActionOption configures an action server or client.
type ActionOption func(*actionConfig)

type actionConfig struct {
	resultTimeout time.Duration
	err           error
}

// WithResultTimeout sets how long a server keeps a finished goal (its status
// and result) before forgetting it; d is measured on the node's clock (ROS
// time: it does not pass while a simulation is paused). Default
// DefaultResultTimeout. Clients ignore it.
func WithResultTimeout(d time.Duration) ActionOption {
	return func(c *actionConfig) {
		if d <= 0 {
			c.err = fmt.Errorf("nros: result timeout %v: must be positive", d)
		}
		c.resultTimeout = d
	}
}

func actionOptions(opts []ActionOption) (actionConfig, error) {
	cfg := actionConfig{resultTimeout: DefaultResultTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg, cfg.err
}

// actionStatusQoS is rcl_action's status profile: reliable, transient local,
// keep last 1 (a late client learns the current states at once).
func actionStatusQoS() QoS { return TransientLocalQoS(1) }

// actionEndpoint is where an action server and client both start: the
// options, the three types checked to be one action's, the resolved name.
func (n *Node) actionEndpoint(name string, opts []ActionOption, goal, result, feedback string) (actionConfig, string, error) {
	if n == nil {
		return actionConfig{}, "", ErrNilNode
	}
	cfg, err := actionOptions(opts)
	if err != nil {
		return cfg, "", err
	}
	if _, err := actionTypes(goal, result, feedback); err != nil {
		return cfg, "", err
	}
	resolved, err := n.resolveAction(name)
	return cfg, resolved, err
}

// resolveAction expands and remaps an action name as rcl_action does: as a
// topic name; its services and topics live under NAME/_action/.
func (n *Node) resolveAction(name string) (string, error) {
	if n == nil {
		return "", ErrNilNode
	}
	out, err := n.resolveTopic(name)
	if err != nil {
		return "", fmt.Errorf("nros: action %q: %w", name, err)
	}
	return out, nil
}

// GoalResponse is an action server's answer to a new goal.
type GoalResponse int

// The answers to a goal.
const (
	GoalReject GoalResponse = iota // the client's SendGoal returns ErrGoalRejected
	GoalAccept                     // the goal is accepted and executes at once
)

// CancelResponse is an action server's answer to a request to cancel a goal.
type CancelResponse int

// The answers to a cancel request.
const (
	CancelReject CancelResponse = iota // the goal goes on
	CancelAccept                       // the goal goes to CANCELING and its context is cancelled
)

// ActionHandlers are the callbacks of an action server.
type ActionHandlers[Goal, Result, Feedback any] struct {
	// Goal decides on a new goal, on the executor goroutine. Nil accepts
	// every goal.
	Goal func(id GoalID, goal *Goal) GoalResponse
	// Cancel decides on a request to cancel an executing goal, on the
	// executor goroutine. Nil accepts every request.
	Cancel func(g *ServerGoal[Goal, Feedback]) CancelResponse
	// Execute carries out an accepted goal on a goroutine of its own; it
	// may block (on ROS time with Clock.SleepFor, on I/O) and publish
	// feedback. Its ctx is cancelled when a cancel request is accepted or
	// the server closes; it must then return soon. What it returns ends the
	// goal: a nil error SUCCEEDED, an error after an accepted cancel
	// CANCELED, any other error ABORTED; the result (nil: a zero Result)
	// goes to the clients either way. Required.
	Execute func(ctx context.Context, g *ServerGoal[Goal, Feedback]) (*Result, error)
}

// ServerGoal is an accepted goal as its server sees it. Its methods are
// safe from any goroutine.
type ServerGoal[Goal, Feedback any] struct {
	id      GoalID
	goal    *Goal
	stamp   Time
	status  atomic.Int32
	publish func(GoalID, *Feedback) error
}

// ID returns the goal's UUID.
func (g *ServerGoal[Goal, Feedback]) ID() GoalID { return g.id }

// Goal returns the goal as the client sent it.
func (g *ServerGoal[Goal, Feedback]) Goal() *Goal { return g.goal }

// Stamp returns when the goal was accepted, on the server node's clock.
func (g *ServerGoal[Goal, Feedback]) Stamp() Time { return g.stamp }

// Status returns the goal's current state.
func (g *ServerGoal[Goal, Feedback]) Status() GoalStatus { return GoalStatus(g.status.Load()) }

// IsCanceling reports whether a cancel request for the goal was accepted.
func (g *ServerGoal[Goal, Feedback]) IsCanceling() bool {
	return g.Status() == GoalStatusCanceling
}

// PublishFeedback sends feedback to the clients of the goal.
func (g *ServerGoal[Goal, Feedback]) PublishFeedback(f *Feedback) error {
	if f == nil {
		return errors.New("nros: nil feedback")
	}
	if g.Status().Terminal() {
		return errors.New("nros: the goal has ended")
	}
	return g.publish(g.id, f)
}

// goalEntry is the server's record of a goal (guarded by ActionServer.mu).
type goalEntry[Goal, Result, Feedback any] struct {
	h       *ServerGoal[Goal, Feedback]
	status  GoalStatus
	cancel  context.CancelFunc
	result  *Result
	doneAt  Time
	waiters []func(GoalStatus, *Result) // get_result requests to answer when it ends
}

func (e *goalEntry[Goal, Result, Feedback]) setStatus(s GoalStatus) {
	e.status = s
	e.h.status.Store(int32(s))
}

// ActionServer serves an action: goals arrive on NAME/_action/send_goal,
// results are asked on NAME/_action/get_result, cancels on
// NAME/_action/cancel_goal; feedback and the goals' states are published on
// NAME/_action/feedback and NAME/_action/status, as ROS 2 actions define
// them on the wire. Its node must be spun for goals to arrive.
type ActionServer[Goal, Result, Feedback any] struct {
	node          *Node
	name          string
	h             ActionHandlers[Goal, Result, Feedback]
	clock         *Clock
	resultTimeout time.Duration
	ctx           context.Context
	stop          context.CancelFunc
	status        *Publisher[action_msgs.GoalStatusArray]
	closeIntake   []func() error // send_goal, cancel_goal
	closeRest     []func() error // get_result, feedback, status
	expire        *Timer
	wg            sync.WaitGroup

	statusMu sync.Mutex // orders status messages: taken before mu
	mu       sync.Mutex
	goals    map[GoalID]*goalEntry[Goal, Result, Feedback]
	order    []*goalEntry[Goal, Result, Feedback] // in acceptance order
	closed   bool
}

// NewActionServer creates a server of action name (resolved and remapped as
// a topic name) whose types are an action's generated Goal, Result and
// Feedback (e.g. test_msgs.Fibonacci_Goal, _Result, _Feedback): Go infers
// them from h.
func NewActionServer[Goal, Result, Feedback any, PG MessagePtr[Goal], PR MessagePtr[Result], PF MessagePtr[Feedback]](n *Node, name string, h ActionHandlers[Goal, Result, Feedback], opts ...ActionOption) (*ActionServer[Goal, Result, Feedback], error) {
	cfg, resolved, err := n.actionEndpoint(name, opts, PG(new(Goal)).TypeName(), PR(new(Result)).TypeName(), PF(new(Feedback)).TypeName())
	if err != nil {
		return nil, err
	}
	if h.Execute == nil {
		return nil, errors.New("nros: action server needs an Execute handler")
	}
	s := &ActionServer[Goal, Result, Feedback]{node: n, name: resolved, h: h, clock: n.Clock(),
		resultTimeout: cfg.resultTimeout, goals: map[GoalID]*goalEntry[Goal, Result, Feedback]{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	// Registered before its parts, the server is closed first by Node.Close:
	// it closes them in its own order.
	if err := n.addEntity(s); err != nil {
		s.stop()
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	prefix := resolved + "/_action/"

	fb, err := NewPublisher[feedbackMessage[Feedback, PF]](n, prefix+"feedback", DefaultQoS())
	if err != nil {
		return nil, err
	}
	s.closeRest = append(s.closeRest, fb.Close)
	st, err := NewPublisher[action_msgs.GoalStatusArray](n, prefix+"status", actionStatusQoS())
	if err != nil {
		return nil, err
	}
	s.status = st
	s.closeRest = append(s.closeRest, st.Close)
	publishFeedback := func(id GoalID, f *Feedback) error {
		return fb.Publish(&feedbackMessage[Feedback, PF]{ID: id, Feedback: *f})
	}

	sg, err := NewDeferredService[sendGoalRequest[Goal, PG], sendGoalResponse[Goal, PG]](n, prefix+"send_goal",
		func(req *sendGoalRequest[Goal, PG], r *Responder[sendGoalResponse[Goal, PG]]) {
			s.onSendGoal(req.ID, &req.Goal, publishFeedback, func(accepted bool, stamp Time) {
				if err := r.Send(&sendGoalResponse[Goal, PG]{Accepted: accepted, Stamp: stampOf(stamp)}); err != nil && !s.isClosed() {
					s.node.log.Warn("action goal response not sent", "action", s.name, "error", err)
				}
			})
		})
	if err != nil {
		return nil, err
	}
	s.closeIntake = append(s.closeIntake, sg.Close)
	gr, err := NewDeferredService[getResultRequest[Result, PR], getResultResponse[Result, PR]](n, prefix+"get_result",
		func(req *getResultRequest[Result, PR], r *Responder[getResultResponse[Result, PR]]) {
			s.onGetResult(req.ID, func(st GoalStatus, res *Result) {
				resp := &getResultResponse[Result, PR]{Status: st}
				if res != nil {
					resp.Result = *res
				}
				if err := r.Send(resp); err != nil && !s.isClosed() {
					s.node.log.Warn("action result not sent", "action", s.name, "error", err)
				}
			})
		})
	if err != nil {
		return nil, err
	}
	s.closeRest = append(s.closeRest, gr.Close)
	cg, err := NewDeferredService[action_msgs.CancelGoal_Request, action_msgs.CancelGoal_Response](n, prefix+"cancel_goal",
		func(req *action_msgs.CancelGoal_Request, r *Responder[action_msgs.CancelGoal_Response]) {
			resp := &action_msgs.CancelGoal_Response{ReturnCode: action_msgs.CancelGoal_Response_ERROR_REJECTED}
			defer func() { // sent even if the Cancel handler panics (then REJECTED)
				if err := r.Send(resp); err != nil && !s.isClosed() {
					s.node.log.Warn("action cancel response not sent", "action", s.name, "error", err)
				}
			}()
			resp = s.onCancel(GoalID(req.GoalInfo.GoalID.UUID), timeOf(req.GoalInfo.Stamp))
		})
	if err != nil {
		return nil, err
	}
	s.closeIntake = append(s.closeIntake, cg.Close)

	period := min(max(cfg.resultTimeout/10, time.Millisecond), time.Second)
	s.expire, err = n.CreateTimer(n.Clock(), period, s.expireGoals)
	if err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// Name returns the resolved action name.
func (s *ActionServer[Goal, Result, Feedback]) Name() string { return s.name }

// Goals returns the goals the server knows (executing, or ended and kept
// for the result timeout) with their state.
func (s *ActionServer[Goal, Result, Feedback]) Goals() map[GoalID]GoalStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[GoalID]GoalStatus, len(s.goals))
	for id, e := range s.goals {
		out[id] = e.status
	}
	return out
}

func (s *ActionServer[Goal, Result, Feedback]) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// onSendGoal runs on the executor goroutine (the send_goal service).
func (s *ActionServer[Goal, Result, Feedback]) onSendGoal(id GoalID, goal *Goal, publish func(GoalID, *Feedback) error, respond0 func(bool, Time)) {
	answered := false
	respond := func(ok bool, t Time) { answered = true; respond0(ok, t) }
	defer func() {
		if !answered { // the Goal handler panicked: the client hears "rejected", not silence
			respond0(false, Time{})
		}
	}()
	s.mu.Lock()
	refuse := s.closed
	if _, dup := s.goals[id]; dup {
		refuse = true
		s.node.log.Warn("action goal refused: its id is in use", "action", s.name, "goal", id.String())
	}
	s.mu.Unlock()
	if refuse || (s.h.Goal != nil && s.h.Goal(id, goal) != GoalAccept) {
		respond(false, Time{})
		return
	}
	g := &ServerGoal[Goal, Feedback]{id: id, goal: goal, stamp: s.clock.Now(), publish: publish}
	ctx, cancel := context.WithCancel(s.ctx)
	e := &goalEntry[Goal, Result, Feedback]{h: g, cancel: cancel}
	e.setStatus(GoalStatusAccepted)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		respond(false, Time{})
		return
	}
	s.goals[id] = e
	s.order = append(s.order, e)
	s.wg.Add(1)
	// Accepted goals execute at once (rclcpp's ACCEPT_AND_EXECUTE): the
	// first status message already says EXECUTING.
	e.setStatus(GoalStatusExecuting)
	s.mu.Unlock()
	respond(true, g.stamp)
	s.publishStatus()
	go s.run(ctx, e)
}

// run executes one goal on its own goroutine and ends it.
func (s *ActionServer[Goal, Result, Feedback]) run(ctx context.Context, e *goalEntry[Goal, Result, Feedback]) {
	defer s.wg.Done()
	res, err := s.executeSafe(ctx, e.h)
	status := GoalStatusSucceeded
	if err != nil {
		status = GoalStatusAborted
		if e.h.IsCanceling() {
			status = GoalStatusCanceled
		}
	}
	if res == nil {
		res = new(Result)
	}
	e.cancel()
	s.mu.Lock()
	e.setStatus(status)
	e.result = res
	e.doneAt = s.clock.now() // under s.mu: do not read the clock's socket
	waiters := e.waiters
	e.waiters = nil
	s.mu.Unlock()
	s.publishStatus()
	for _, w := range waiters {
		w(status, res)
	}
}

func (s *ActionServer[Goal, Result, Feedback]) executeSafe(ctx context.Context, g *ServerGoal[Goal, Feedback]) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("nros: action %s: Execute panicked: %v", s.name, p)
			s.node.recoverOffLoopValue("action", 0, s.name, p)
		}
	}()
	return s.h.Execute(ctx, g)
}

// maxResultWaiters bounds the result requests one running goal holds.
const maxResultWaiters = 256

// onGetResult runs on the executor goroutine (the get_result service):
// answers at once for an ended or unknown goal, else when the goal ends.
func (s *ActionServer[Goal, Result, Feedback]) onGetResult(id GoalID, answer func(GoalStatus, *Result)) {
	s.mu.Lock()
	e := s.goals[id]
	switch {
	case e == nil:
		s.mu.Unlock()
		answer(GoalStatusUnknown, nil)
	case e.status.Terminal():
		st, res := e.status, e.result
		s.mu.Unlock()
		answer(st, res)
	case len(e.waiters) >= maxResultWaiters:
		s.mu.Unlock()
		answer(GoalStatusUnknown, nil) // a client that asks again and again
	default:
		e.waiters = append(e.waiters, answer)
		s.mu.Unlock()
	}
}

// onCancel runs on the executor goroutine (the cancel_goal service) and
// applies rcl_action's rules: a zero id and zero stamp cancel every goal, a
// stamp every goal accepted at or before it, an id that goal.
func (s *ActionServer[Goal, Result, Feedback]) onCancel(id GoalID, stamp Time) *action_msgs.CancelGoal_Response {
	var cands []*goalEntry[Goal, Result, Feedback]
	unknown, terminal := false, false
	s.mu.Lock()
	if !id.IsZero() && stamp.IsZero() {
		switch e := s.goals[id]; {
		case e == nil:
			unknown = true
		case cancelable(e.status):
			cands = append(cands, e)
		default: // ended, or canceling already: rcl_action calls both terminated
			terminal = true
		}
	}
	if id.IsZero() || !stamp.IsZero() {
		for _, e := range s.order {
			if !cancelable(e.status) {
				continue
			}
			if e.h.id == id || stamp.IsZero() || !e.h.stamp.After(stamp) {
				cands = append(cands, e)
			}
		}
	}
	s.mu.Unlock()
	resp := &action_msgs.CancelGoal_Response{}
	var stop []context.CancelFunc
	refused := 0
	for _, e := range cands {
		if !cancelable(e.h.Status()) { // ended since: not the handler's to judge
			terminal = terminal || e.h.id == id && stamp.IsZero()
			continue
		}
		if s.h.Cancel != nil && s.h.Cancel(e.h) != CancelAccept {
			refused++
			continue
		}
		s.mu.Lock()
		if cancelable(e.status) {
			e.setStatus(GoalStatusCanceling)
			stop = append(stop, e.cancel)
			resp.GoalsCanceling = append(resp.GoalsCanceling, action_msgs.GoalInfo{
				GoalID: unique_identifier_msgs.UUID{UUID: e.h.id}, Stamp: stampOf(e.h.stamp)})
		}
		s.mu.Unlock()
	}
	// rcl_action's codes, then rclcpp's rule: candidates that the Cancel
	// handler all refused make the request REJECTED. A request for every
	// goal (or a stamp) that finds none is not an error.
	switch {
	case len(resp.GoalsCanceling) > 0:
		resp.ReturnCode = action_msgs.CancelGoal_Response_ERROR_NONE
	case refused > 0:
		resp.ReturnCode = action_msgs.CancelGoal_Response_ERROR_REJECTED
	case unknown:
		resp.ReturnCode = action_msgs.CancelGoal_Response_ERROR_UNKNOWN_GOAL_ID
	case terminal:
		resp.ReturnCode = action_msgs.CancelGoal_Response_ERROR_GOAL_TERMINATED
	default:
		resp.ReturnCode = action_msgs.CancelGoal_Response_ERROR_NONE
	}
	if len(stop) > 0 {
		s.publishStatus()
		for _, c := range stop {
			c()
		}
	}
	return resp
}

func cancelable(s GoalStatus) bool { return s == GoalStatusAccepted || s == GoalStatusExecuting }

// expireGoals forgets goals that ended at least resultTimeout ago (ROS
// time); it runs on the executor as a timer on the node's clock.
func (s *ActionServer[Goal, Result, Feedback]) expireGoals() {
	now := s.clock.Now()
	removed := false
	s.mu.Lock()
	kept := s.order[:0]
	for _, e := range s.order {
		if e.status.Terminal() && now.Nanoseconds()-e.doneAt.Nanoseconds() >= int64(s.resultTimeout) {
			delete(s.goals, e.h.id)
			removed = true
			continue
		}
		kept = append(kept, e)
	}
	clear(s.order[len(kept):])
	s.order = kept
	s.mu.Unlock()
	if removed {
		s.publishStatus()
	}
}

// publishStatus sends the states of every goal the server knows.
func (s *ActionServer[Goal, Result, Feedback]) publishStatus() {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	s.mu.Lock()
	arr := &action_msgs.GoalStatusArray{StatusList: make([]action_msgs.GoalStatus, 0, len(s.order))}
	for _, e := range s.order {
		arr.StatusList = append(arr.StatusList, action_msgs.GoalStatus{
			GoalInfo: action_msgs.GoalInfo{GoalID: unique_identifier_msgs.UUID{UUID: e.h.id}, Stamp: stampOf(e.h.stamp)},
			Status:   int8(e.status)})
	}
	s.mu.Unlock()
	if err := s.status.Publish(arr); err != nil && !s.isClosed() {
		s.node.log.Warn("action status not published", "action", s.name, "error", err)
	}
}

// Close stops the server: no new goal is taken, the contexts of executing
// goals are cancelled and Close waits for their Execute to return (so
// neither it nor Node.Close may be called from Execute); then the endpoints
// close, and no handler runs once it returns. Safe to call twice.
func (s *ActionServer[Goal, Result, Feedback]) Close() error {
	s.node.removeEntity(s)
	return s.close()
}

func (s *ActionServer[Goal, Result, Feedback]) attach(*Executor) {}

func (s *ActionServer[Goal, Result, Feedback]) close() error {
	if !firstClose(&s.mu, &s.closed) {
		return nil
	}
	s.stop()
	err := s.closeParts()
	s.node.quiesce() // a Goal or Cancel handler still running has returned
	return err
}

// closeParts closes send_goal and cancel_goal, waits for the goals'
// goroutines (which answer the result requests waiting and publish the
// last states), then closes get_result and the topics.
func (s *ActionServer[Goal, Result, Feedback]) closeParts() error {
	var errs []error
	if s.expire != nil {
		s.expire.Cancel()
	}
	for _, c := range s.closeIntake {
		errs = append(errs, c())
	}
	s.wg.Wait()
	for _, c := range s.closeRest {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}
