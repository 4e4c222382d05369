package nros

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/msg/unique_identifier_msgs"
)

type (
	fibGoal     = test_msgs.Fibonacci_Goal
	fibResult   = test_msgs.Fibonacci_Result
	fibFeedback = test_msgs.Fibonacci_Feedback
)

// The wrappers built around Goal/Result/Feedback name and encode exactly
// what the generated wrapper types do (rosidl's layout of an action).
func TestActionWrappersMatchGenerated(t *testing.T) {
	id := GoalID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	seq := []int32{0, 1, 1, 2, 3, 5}
	cases := []struct {
		name      string
		ours, gen msg.Message
	}{
		{"send_goal request", &sendGoalRequest[fibGoal, *fibGoal]{ID: id, Goal: fibGoal{Order: 7}},
			&test_msgs.Fibonacci_SendGoal_Request{GoalID: unique_identifier_msgs.UUID{UUID: id}, Goal: fibGoal{Order: 7}}},
		{"send_goal response", &sendGoalResponse[fibGoal, *fibGoal]{Accepted: true, Stamp: builtin_interfaces.Time{Sec: 100, Nanosec: 5}},
			&test_msgs.Fibonacci_SendGoal_Response{Accepted: true, Stamp: builtin_interfaces.Time{Sec: 100, Nanosec: 5}}},
		{"get_result request", &getResultRequest[fibResult, *fibResult]{ID: id},
			&test_msgs.Fibonacci_GetResult_Request{GoalID: unique_identifier_msgs.UUID{UUID: id}}},
		{"get_result response", &getResultResponse[fibResult, *fibResult]{Status: GoalStatusCanceled, Result: fibResult{Sequence: seq}},
			&test_msgs.Fibonacci_GetResult_Response{Status: 5, Result: fibResult{Sequence: seq}}},
		{"feedback", &feedbackMessage[fibFeedback, *fibFeedback]{ID: id, Feedback: fibFeedback{Sequence: seq}},
			&test_msgs.Fibonacci_FeedbackMessage{GoalID: unique_identifier_msgs.UUID{UUID: id}, Feedback: fibFeedback{Sequence: seq}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.ours.TypeName() != c.gen.TypeName() {
				t.Fatalf("type %q, generated %q", c.ours.TypeName(), c.gen.TypeName())
			}
			for _, le := range []bool{true, false} {
				a, b := msg.Marshal(c.ours, le, nil), msg.Marshal(c.gen, le, nil)
				if !bytes.Equal(a, b) {
					t.Fatalf("little endian %v:\n ours %x\n gen  %x", le, a, b)
				}
			}
			// and they read back what the generated type wrote
			back := reflectNew(c.ours)
			if err := msg.Unmarshal(msg.Marshal(c.gen, true, nil), back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(msg.Marshal(back, true, nil), msg.Marshal(c.gen, true, nil)) {
				t.Fatal("decoded value differs")
			}
		})
	}
}

func reflectNew(m msg.Message) msg.Message {
	switch m.(type) {
	case *sendGoalRequest[fibGoal, *fibGoal]:
		return new(sendGoalRequest[fibGoal, *fibGoal])
	case *sendGoalResponse[fibGoal, *fibGoal]:
		return new(sendGoalResponse[fibGoal, *fibGoal])
	case *getResultRequest[fibResult, *fibResult]:
		return new(getResultRequest[fibResult, *fibResult])
	case *getResultResponse[fibResult, *fibResult]:
		return new(getResultResponse[fibResult, *fibResult])
	case *feedbackMessage[fibFeedback, *fibFeedback]:
		return new(feedbackMessage[fibFeedback, *fibFeedback])
	}
	panic("unknown")
}

func TestActionTypesChecked(t *testing.T) {
	if p, err := actionTypes("test_msgs/action/Fibonacci_Goal", "test_msgs/action/Fibonacci_Result", "test_msgs/action/Fibonacci_Feedback"); err != nil || p != "test_msgs/action/Fibonacci" {
		t.Fatalf("%q %v", p, err)
	}
	for _, c := range [][3]string{
		{"std_msgs/msg/String", "std_msgs/msg/String", "std_msgs/msg/String"},
		{"a/action/X_Goal", "a/action/Y_Result", "a/action/X_Feedback"},
		{"a/action/X_Goal", "a/action/X_Result", "a/action/X_Result"},
	} {
		if _, err := actionTypes(c[0], c[1], c[2]); err == nil {
			t.Errorf("%v accepted", c)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		_, err := NewActionServer(f.server, "x", ActionHandlers[std_msgs.String, std_msgs.String, std_msgs.String]{
			Execute: func(context.Context, *ServerGoal[std_msgs.String, std_msgs.String]) (*std_msgs.String, error) {
				return nil, nil
			}})
		if err == nil {
			t.Fatal("a server of non-action types was made")
		}
		if _, err := NewActionClient[std_msgs.String, std_msgs.String, std_msgs.String](f.client, "x"); err == nil {
			t.Fatal("a client of non-action types was made")
		}
		if _, err := NewActionServer(f.server, "x", ActionHandlers[fibGoal, fibResult, fibFeedback]{}); err == nil {
			t.Fatal("a server without Execute was made")
		}
		if _, err := NewActionServer(f.server, "x", fibExec(nil), WithResultTimeout(0)); err == nil {
			t.Fatal("result timeout 0 accepted")
		}
	})
}

// actionFixture is a server node and a client node, each spun by an
// executor on its own goroutine: on one intra transport (newActionFixture),
// or on the two transports of a transportPair (newActionFixtureOver).
type actionFixture struct {
	server, client *Node
	stop           func()
}

func newActionFixture(t *testing.T) *actionFixture {
	t.Helper()
	return newActionFixtureOver(t, intraPair)
}

// actionTransports are the transports the action round trip and cancel
// tests run over (sim time is transport-blind: the same tests on Zenoh).
var actionTransports = []transportPair{intraPair, zenohPair}

func newActionFixtureOver(t *testing.T, tp transportPair) *actionFixture {
	t.Helper()
	ta, tb := tp.make(t)
	sctx := NewContext(WithTransport(ta), WithLogOutput(io.Discard))
	cctx := sctx
	if ta != tb {
		cctx = NewContext(WithTransport(tb), WithLogOutput(io.Discard))
	}
	srv, err := NewNode("server", WithContext(sctx))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewNode("client", WithContext(cctx))
	if err != nil {
		t.Fatal(err)
	}
	spin, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var execs []*Executor
	for _, c := range []*Context{sctx, cctx} {
		if len(execs) > 0 && c == sctx {
			break // one context: one executor for both nodes
		}
		e := NewExecutor(WithExecutorContext(c))
		for _, n := range []*Node{srv, cl} {
			if n.Context() == c {
				if err := e.AddNode(n); err != nil {
					t.Fatal(err)
				}
			}
		}
		execs = append(execs, e)
		wg.Add(1)
		go func() { defer wg.Done(); e.Spin(spin) }()
	}
	return &actionFixture{server: srv, client: cl, stop: func() {
		cl.Close()
		srv.Close()
		cancel()
		wg.Wait()
		for _, e := range execs {
			e.Close()
		}
		cctx.Shutdown()
		sctx.Shutdown()
	}}
}

// fibExec computes the Fibonacci sequence as the ROS tutorial's server
// does, one number per step; step (if not nil) is called before each and
// may block; a cancelled ctx ends the goal with the partial sequence.
func fibExec(step func(ctx context.Context, i int) error) ActionHandlers[fibGoal, fibResult, fibFeedback] {
	return ActionHandlers[fibGoal, fibResult, fibFeedback]{
		Goal: func(_ GoalID, g *fibGoal) GoalResponse {
			if g.Order < 0 || g.Order > 40 {
				return GoalReject
			}
			return GoalAccept
		},
		Execute: func(ctx context.Context, g *ServerGoal[fibGoal, fibFeedback]) (*fibResult, error) {
			seq := []int32{0, 1}
			for i := 1; i < int(g.Goal().Order); i++ {
				if step != nil {
					if err := step(ctx, i); err != nil {
						return &fibResult{Sequence: seq}, err
					}
				}
				if err := ctx.Err(); err != nil {
					return &fibResult{Sequence: seq}, err
				}
				seq = append(seq, seq[i]+seq[i-1])
				if err := g.PublishFeedback(&fibFeedback{Sequence: slices.Clone(seq)}); err != nil {
					return nil, err
				}
			}
			return &fibResult{Sequence: seq}, nil
		},
	}
}

func newFibClient(t *testing.T, n *Node, name string) *ActionClient[fibGoal, fibResult, fibFeedback] {
	t.Helper()
	c, err := NewActionClient[fibGoal, fibResult, fibFeedback](n, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestActionRoundTrip(t *testing.T) {
	forTransports(t, actionTransports, func(t *testing.T, tp transportPair) {
		f := newActionFixtureOver(t, tp)
		defer f.stop()
		srv, err := NewActionServer(f.server, "fibonacci", fibExec(nil))
		if err != nil {
			t.Fatal(err)
		}
		if srv.Name() != "/fibonacci" {
			t.Fatalf("name %q", srv.Name())
		}
		c := newFibClient(t, f.client, "fibonacci")
		ctx := context.Background()
		if err := c.WaitForServer(ctx); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var fb [][]int32
		g, err := c.SendGoal(ctx, &fibGoal{Order: 8}, func(f *fibFeedback) {
			mu.Lock()
			fb = append(fb, f.Sequence)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		res, st, err := g.Result(ctx)
		if err != nil || st != GoalStatusSucceeded {
			t.Fatalf("result %v %v", st, err)
		}
		want := []int32{0, 1, 1, 2, 3, 5, 8, 13, 21}
		if !slices.Equal(res.Sequence, want) {
			t.Fatalf("sequence %v", res.Sequence)
		}
		synctest.Wait()
		mu.Lock()
		if len(fb) != 7 || !slices.Equal(fb[6], want) || !slices.Equal(fb[0], want[:3]) {
			t.Fatalf("feedback %v", fb)
		}
		mu.Unlock()
		if g.Status() != GoalStatusSucceeded {
			t.Fatalf("status %v", g.Status())
		}
		if st := srv.Goals()[g.ID()]; st != GoalStatusSucceeded {
			t.Fatalf("server keeps %v", st)
		}
		// a second Result returns the same
		if r2, st2, err := g.Result(ctx); r2 != res || st2 != st || err != nil {
			t.Fatal("second Result differs")
		}
		// rejected
		if _, err := c.SendGoal(ctx, &fibGoal{Order: 99}, nil); !errors.Is(err, ErrGoalRejected) {
			t.Fatalf("order 99: %v", err)
		}
		// a cancel of an ended goal
		if err := g.Cancel(ctx); !errors.Is(err, ErrGoalTerminated) {
			t.Fatalf("cancel after the end: %v", err)
		}
	})
}

// Status changes reach the client through the status topic in order:
// EXECUTING, CANCELING, CANCELED; the cancel context reaches Execute; the
// result carries the partial sequence.
func TestActionCancel(t *testing.T) {
	forTransports(t, actionTransports, func(t *testing.T, tp transportPair) {
		f := newActionFixtureOver(t, tp)
		defer f.stop()
		gate := make(chan struct{})
		srv, err := NewActionServer(f.server, "fib", fibExec(func(ctx context.Context, i int) error {
			if i < 3 {
				return nil
			}
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx := context.Background()
		var seen []GoalStatus
		g, err := c.SendGoal(ctx, &fibGoal{Order: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		record := func() {
			synctest.Wait()
			if s := g.Status(); len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
		}
		record()
		if err := g.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		record()
		res, st, err := g.Result(ctx)
		record()
		if err != nil || st != GoalStatusCanceled || !slices.Equal(res.Sequence, []int32{0, 1, 1, 2}) {
			t.Fatalf("result %v %v %v", res, st, err)
		}
		if !slices.Equal(seen, []GoalStatus{GoalStatusExecuting, GoalStatusCanceled}) && !slices.Equal(seen, []GoalStatus{GoalStatusExecuting, GoalStatusCanceling, GoalStatusCanceled}) {
			t.Fatalf("statuses %v", seen)
		}
		if err := g.Cancel(ctx); !errors.Is(err, ErrGoalTerminated) {
			t.Fatalf("second cancel: %v", err)
		}
		// unknown goal
		stray := &ClientGoal[fibResult]{id: NewGoalID(), cancel: c.cancel}
		if err := stray.Cancel(ctx); !errors.Is(err, ErrUnknownGoal) {
			t.Fatalf("unknown goal: %v", err)
		}
		// cancel all / before a time: two goals running, a third later
		g1, _ := c.SendGoal(ctx, &fibGoal{Order: 10}, nil)
		time.Sleep(time.Millisecond) // g2 is accepted later than g1
		g2, _ := c.SendGoal(ctx, &fibGoal{Order: 10}, nil)
		ids, err := c.CancelGoalsBefore(ctx, g1.Stamp())
		if err != nil || len(ids) == 0 || ids[0] != g1.ID() {
			t.Fatalf("cancel before: %v %v", ids, err)
		}
		ids, err = c.CancelAllGoals(ctx)
		if err != nil || !slices.Contains(ids, g2.ID()) || slices.Contains(ids, g1.ID()) {
			t.Fatalf("cancel all: %v %v (g1 %v g2 %v)", ids, err, g1.ID(), g2.ID())
		}
		for _, g := range []*ClientGoal[fibResult]{g1, g2} {
			if _, st, err := g.Result(ctx); err != nil || st != GoalStatusCanceled {
				t.Fatalf("%v: %v %v", g.ID(), st, err)
			}
		}
		if ids, err := c.CancelAllGoals(ctx); err != nil || len(ids) != 0 {
			t.Fatalf("cancel all with nothing running: %v %v", ids, err)
		}
		_ = srv
	})
}

func TestActionCancelRejectedAndAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		release := make(chan struct{})
		h := fibExec(func(ctx context.Context, i int) error {
			if i == 2 {
				<-release
				return errors.New("motor stalled")
			}
			return nil
		})
		h.Cancel = func(*ServerGoal[fibGoal, fibFeedback]) CancelResponse { return CancelReject }
		if _, err := NewActionServer(f.server, "fib", h); err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx := context.Background()
		g, err := c.SendGoal(ctx, &fibGoal{Order: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Cancel(ctx); !errors.Is(err, ErrCancelRejected) {
			t.Fatalf("cancel: %v", err)
		}
		close(release)
		res, st, err := g.Result(ctx)
		if err != nil || st != GoalStatusAborted || !slices.Equal(res.Sequence, []int32{0, 1, 1}) {
			t.Fatalf("%v %v %v", res, st, err)
		}
	})
}

// An Execute that panics aborts its goal and is reported like any callback
// panic; the server goes on.
func TestActionExecutePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		h := fibExec(func(ctx context.Context, i int) error {
			if i == 3 {
				panic("bug")
			}
			return nil
		})
		if _, err := NewActionServer(f.server, "fib", h); err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx := context.Background()
		g, err := c.SendGoal(ctx, &fibGoal{Order: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, st, err := g.Result(ctx); err != nil || st != GoalStatusAborted {
			t.Fatalf("%v %v", st, err)
		}
		g, err = c.SendGoal(ctx, &fibGoal{Order: 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, st, err := g.Result(ctx); err != nil || st != GoalStatusSucceeded {
			t.Fatalf("%v %v", st, err)
		}
	})
}

// Closing the server cancels executing goals and waits for them: their
// clients get ABORTED; closing a client ends its waits with ErrActionClosed
// and leaves no goroutine behind.
func TestActionClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		var stopped sync.WaitGroup
		stopped.Add(1)
		srv, err := NewActionServer(f.server, "fib", fibExec(func(ctx context.Context, i int) error {
			<-ctx.Done()
			stopped.Done()
			return ctx.Err()
		}))
		if err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx := context.Background()
		g, err := c.SendGoal(ctx, &fibGoal{Order: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the server holds the result request
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		stopped.Wait() // Close waited for Execute: this returns at once
		if _, st, err := g.Result(ctx); err != nil || st != GoalStatusAborted {
			t.Fatalf("%v %v", st, err)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}

		srv2, err := NewActionServer(f.server, "fib2", fibExec(func(ctx context.Context, i int) error {
			<-ctx.Done()
			return ctx.Err()
		}))
		if err != nil {
			t.Fatal(err)
		}
		c2 := newFibClient(t, f.client, "fib2")
		g2, err := c2.SendGoal(ctx, &fibGoal{Order: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		if _, _, err := g2.Result(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("result before the end: %v", err)
		}
		cancel()
		if err := c2.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := g2.Result(ctx); !errors.Is(err, ErrActionClosed) {
			t.Fatalf("after close: %v", err)
		}
		if _, err := c2.SendGoal(ctx, &fibGoal{Order: 1}, nil); !errors.Is(err, ErrActionClosed) {
			t.Fatalf("send after close: %v", err)
		}
		if err := c2.WaitForServer(ctx); !errors.Is(err, ErrActionClosed) {
			t.Fatalf("wait after close: %v", err)
		}
		_ = srv2
		_ = c
	})
}

// FuzzActionWrappers decodes outside bytes as each action wrapper: an error
// or a value that re-encodes to bytes that decode to the same value, never
// a panic.
func FuzzActionWrappers(f *testing.F) {
	f.Add(msg.Marshal(&test_msgs.Fibonacci_SendGoal_Request{Goal: fibGoal{Order: 5}}, true, nil))
	f.Add(msg.Marshal(&test_msgs.Fibonacci_GetResult_Response{Status: 4, Result: fibResult{Sequence: []int32{0, 1, 1}}}, true, nil))
	f.Add(msg.Marshal(&test_msgs.Fibonacci_FeedbackMessage{Feedback: fibFeedback{Sequence: []int32{0, 1}}}, false, nil))
	f.Add([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []msg.Message{
			new(sendGoalRequest[fibGoal, *fibGoal]), new(sendGoalResponse[fibGoal, *fibGoal]),
			new(getResultRequest[fibResult, *fibResult]), new(getResultResponse[fibResult, *fibResult]),
			new(feedbackMessage[fibFeedback, *fibFeedback]),
		} {
			if msg.Unmarshal(b, m) != nil {
				continue
			}
			enc := msg.Marshal(m, true, nil)
			back := reflectNew(m)
			if err := msg.Unmarshal(enc, back); err != nil {
				t.Fatalf("%s: re-encoded value does not decode: %v", m.TypeName(), err)
			}
			if !bytes.Equal(msg.Marshal(back, true, nil), enc) {
				t.Fatalf("%s: round trip differs", m.TypeName())
			}
		}
	})
}

// A goal already CANCELING named again is "terminated" for rcl_action; an
// Execute that finishes anyway (ignoring its ctx) ends SUCCEEDED.
func TestActionCancelWhileCanceling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		release := make(chan struct{})
		if _, err := NewActionServer(f.server, "fib", ActionHandlers[fibGoal, fibResult, fibFeedback]{
			Execute: func(context.Context, *ServerGoal[fibGoal, fibFeedback]) (*fibResult, error) {
				<-release // deaf to its ctx
				return &fibResult{Sequence: []int32{0, 1, 1, 2}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx := context.Background()
		g, err := c.SendGoal(ctx, &fibGoal{Order: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if g.Status() != GoalStatusCanceling {
			t.Fatalf("status %v", g.Status())
		}
		if err := g.Cancel(ctx); !errors.Is(err, ErrGoalTerminated) {
			t.Fatalf("second cancel: %v", err)
		}
		close(release)
		if res, st, err := g.Result(ctx); err != nil || st != GoalStatusSucceeded || len(res.Sequence) != 4 {
			t.Fatalf("%v %v %v", res, st, err)
		}
	})
}

// Review findings: a Goal or Cancel handler that panics still answers
// (rejected), no feedback callback runs once the client's Close returns,
// statuses from outside are mapped to the defined ones, and a cancel that
// names a goal and a stamp follows rcl_action (no per-goal error codes).
func TestActionHardening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newActionFixture(t)
		defer f.stop()
		gate, inside := make(chan struct{}), make(chan struct{})
		h := fibExec(nil)
		h.Goal = func(_ GoalID, g *fibGoal) GoalResponse {
			if g.Order == 13 {
				panic("unlucky")
			}
			return GoalAccept
		}
		h.Cancel = func(*ServerGoal[fibGoal, fibFeedback]) CancelResponse { panic("no") }
		h.Execute = func(ctx context.Context, g *ServerGoal[fibGoal, fibFeedback]) (*fibResult, error) {
			g.PublishFeedback(&fibFeedback{})
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if _, err := NewActionServer(f.server, "fib", h); err != nil {
			t.Fatal(err)
		}
		c := newFibClient(t, f.client, "fib")
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if _, err := c.SendGoal(ctx, &fibGoal{Order: 13}, nil); !errors.Is(err, ErrGoalRejected) {
			t.Fatalf("Goal handler panicked: %v", err)
		}
		g, err := c.SendGoal(ctx, &fibGoal{Order: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Cancel(ctx); !errors.Is(err, ErrCancelRejected) {
			t.Fatalf("Cancel handler panicked: %v", err)
		}
		if ids, err := c.cancel(ctx, NewGoalID(), NewTime(1, 0)); err != nil || len(ids) != 0 {
			t.Fatalf("unknown id with a stamp: %v %v", ids, err)
		}
		once := false
		if _, err := c.SendGoal(ctx, &fibGoal{Order: 5}, func(*fibFeedback) {
			if !once { // blocks the executor: nothing else is asked of it below
				once = true
				close(inside)
				<-gate
			}
		}); err != nil {
			t.Fatal(err)
		}
		<-inside
		closed := make(chan struct{})
		go func() { c.Close(); close(closed) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while a feedback callback was running")
		default:
		}
		close(gate)
		<-closed
	})
	for v, want := range map[int8]GoalStatus{0: GoalStatusUnknown, 4: GoalStatusSucceeded, 6: GoalStatusAborted, 7: GoalStatusUnknown, -1: GoalStatusUnknown, 42: GoalStatusUnknown} {
		if got := knownStatus(v); got != want {
			t.Errorf("knownStatus(%d) = %v", v, got)
		}
	}
}
