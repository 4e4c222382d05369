package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
)

type (
	fibGoal     = test_msgs.Fibonacci_Goal
	fibResult   = test_msgs.Fibonacci_Result
	fibFeedback = test_msgs.Fibonacci_Feedback
)

func fibonacci(order int) []int32 {
	seq := []int32{0, 1}
	for i := 1; i < order; i++ {
		seq = append(seq, seq[i]+seq[i-1])
	}
	return seq
}

// TestGoActionClientToPeerServer: a Go action client drives action_cyclone
// and action_fastdds (programs that speak ROS 2 actions as rmw_cyclonedds
// and rmw_fastrtps do, each in its vendor's request mapping): a goal to its
// end with feedback and status, a rejected goal, a goal cancelled mid-way, a
// cancel of an ended goal, and a cancel of every goal.
func TestGoActionClientToPeerServer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			goActionClientToPeer(t, vendor)
		})
	}
}

func goActionClientToPeer(t *testing.T, vendor string) {
	dom := Domain(t)
	srv := Start(t, "action_"+vendor, "--mode", "server", "--action", "/fibonacci", "--count", "3",
		"--step-ms", "20", "--timeout", "90", "--domain", fmt.Sprint(dom))
	g := newGoNode(t, dom, "go_action_client")
	c, err := nros.NewActionClient[fibGoal, fibResult, fibFeedback](g.node, "fibonacci")
	if err != nil {
		t.Fatal(err)
	}
	g.spin()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}

	// 1. to the end
	var mu sync.Mutex
	var lens []int
	goal, err := c.SendGoal(ctx, &fibGoal{Order: 8}, func(f *fibFeedback) {
		mu.Lock()
		lens = append(lens, len(f.Sequence))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []nros.GoalStatus
	for {
		ch := goal.StatusChanged()
		st := goal.Status()
		if len(statuses) == 0 || statuses[len(statuses)-1] != st {
			statuses = append(statuses, st)
		}
		if st.Terminal() {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("statuses %v, then nothing", statuses)
		}
	}
	res, st, err := goal.Result(ctx)
	if err != nil || st != nros.GoalStatusSucceeded || !slices.Equal(res.Sequence, fibonacci(8)) {
		t.Fatalf("result %v %v %v", res, st, err)
	}
	if !slices.Contains(statuses, nros.GoalStatusExecuting) || statuses[len(statuses)-1] != nros.GoalStatusSucceeded {
		t.Fatalf("statuses %v", statuses)
	}
	if !waitFor(10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(lens) == 7 }) {
		t.Fatalf("feedback lengths %v", lens)
	}
	mu.Lock()
	if !slices.Equal(lens, []int{3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("feedback lengths %v", lens)
	}
	mu.Unlock()
	if err := goal.Cancel(ctx); !errors.Is(err, nros.ErrGoalTerminated) {
		t.Fatalf("cancel of an ended goal: %v", err)
	}

	// 2. rejected
	if _, err := c.SendGoal(ctx, &fibGoal{Order: 99}, nil); !errors.Is(err, nros.ErrGoalRejected) {
		t.Fatalf("order 99: %v", err)
	}

	// 3. cancelled after three feedback messages
	third := make(chan struct{})
	n := 0
	goal, err = c.SendGoal(ctx, &fibGoal{Order: 30}, func(*fibFeedback) {
		if n++; n == 3 {
			close(third)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-third:
	case <-ctx.Done():
		t.Fatal("no third feedback")
	}
	if err := goal.Cancel(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	res, st, err = goal.Result(ctx)
	if err != nil || st != nros.GoalStatusCanceled || len(res.Sequence) < 5 || len(res.Sequence) >= 31 ||
		!slices.Equal(res.Sequence, fibonacci(len(res.Sequence)-1)) {
		t.Fatalf("cancelled result %v %v %v", res, st, err)
	}

	// 4. every goal
	goal, err = c.SendGoal(ctx, &fibGoal{Order: 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CancelAllGoals(ctx)
	if err != nil || !slices.Contains(ids, goal.ID()) {
		t.Fatalf("cancel all: %v %v", ids, err)
	}
	if _, st, err := goal.Result(ctx); err != nil || st != nros.GoalStatusCanceled {
		t.Fatalf("after cancel all: %v %v", st, err)
	}
	if rc, err := srv.Wait(30 * time.Second); err != nil || rc != ExitOK {
		t.Fatalf("server exit %d %v", rc, err)
	}
	out := strings.Join(srv.Lines(), "\n")
	for _, want := range []string{" 8 accepted", " 99 rejected", " 30 accepted", " 40 accepted", "cancel all 0 1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("server printed no %q:\n%s", want, out)
		}
	}
}

// TestPeerActionClientToGoServer: action_cyclone and action_fastdds as
// clients of a Go action server, on every path of the wire protocol they
// can take.
func TestPeerActionClientToGoServer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			peerActionClientToGo(t, vendor)
		})
	}
}

func peerActionClientToGo(t *testing.T, vendor string) {
	dom := Domain(t)
	g := newGoNode(t, dom, "go_action_server")
	h := nros.ActionHandlers[fibGoal, fibResult, fibFeedback]{
		Goal: func(_ nros.GoalID, goal *fibGoal) nros.GoalResponse {
			if goal.Order < 0 || goal.Order > 40 {
				return nros.GoalReject
			}
			return nros.GoalAccept
		},
		Execute: func(ctx context.Context, sg *nros.ServerGoal[fibGoal, fibFeedback]) (*fibResult, error) {
			seq := []int32{0, 1}
			for i := 1; i < int(sg.Goal().Order); i++ {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-ctx.Done():
					return &fibResult{Sequence: seq}, ctx.Err()
				}
				seq = append(seq, seq[i]+seq[i-1])
				if err := sg.PublishFeedback(&fibFeedback{Sequence: seq}); err != nil {
					return nil, err
				}
			}
			return &fibResult{Sequence: seq}, nil
		},
	}
	if _, err := nros.NewActionServer(g.node, "/fibonacci", h); err != nil {
		t.Fatal(err)
	}
	g.spin()
	run := func(args ...string) []string {
		t.Helper()
		cl := Start(t, "action_"+vendor, append([]string{"--mode", "client", "--action", "/fibonacci",
			"--timeout", "60", "--domain", fmt.Sprint(dom)}, args...)...)
		if rc, err := cl.Wait(70 * time.Second); err != nil || rc != ExitOK {
			t.Fatalf("%v: exit %d %v\n%s", args, rc, err, strings.Join(cl.Lines(), "\n"))
		}
		return cl.Lines()
	}
	count := func(lines []string, prefix string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	last := func(lines []string) string { return lines[len(lines)-1] }

	lines := run("--order", "8")
	if lines[0] != "accepted 1" || count(lines, "feedback ") != 7 ||
		last(lines) != "result 4 0,1,1,2,3,5,8,13,21" || !slices.Contains(lines, "status 4") {
		t.Fatalf("order 8:\n%s", strings.Join(lines, "\n"))
	}
	if lines := run("--order", "99"); lines[0] != "accepted 0" {
		t.Fatalf("order 99:\n%s", strings.Join(lines, "\n"))
	}
	lines = run("--order", "30", "--cancel-after", "3")
	if !slices.Contains(lines, "cancel 0 1") || !strings.HasPrefix(last(lines), "result 5 0,1,1,2") ||
		!slices.Contains(lines, "status 3") && !slices.Contains(lines, "status 5") {
		t.Fatalf("cancel:\n%s", strings.Join(lines, "\n"))
	}
	lines = run("--order", "3", "--cancel-late")
	if !slices.Contains(lines, "cancel 3 0") || !strings.HasPrefix(last(lines), "result 4 0,1,1,2") {
		t.Fatalf("late cancel:\n%s", strings.Join(lines, "\n"))
	}
	lines = run("--order", "4", "--cancel-after", "1", "--cancel-id", strings.Repeat("ab", 16))
	if !slices.Contains(lines, "cancel 2 0") || last(lines) != "result 4 0,1,1,2,3" {
		t.Fatalf("unknown id:\n%s", strings.Join(lines, "\n"))
	}
	lines = run("--order", "30", "--cancel-after", "2", "--cancel-all")
	if !slices.Contains(lines, "cancel 0 1") || !strings.HasPrefix(last(lines), "result 5 ") {
		t.Fatalf("cancel all:\n%s", strings.Join(lines, "\n"))
	}
}
