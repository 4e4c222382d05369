package nros_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	"github.com/nros-go/nros/simtest"
)

// A goal survives a paused simulation: its Execute sleeps on ROS time and
// makes no progress while paused (however much wall time passes), the
// client's waits neither fail nor hang the result, and the server keeps the
// ended goal's result for the result timeout of ROS time, not wall time.
func TestActionGoalSurvivesPausedSimulation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simtest.New(t)
		sn, cn := sim.Node("server"), sim.Node("client")
		srv, err := nros.NewActionServer(sn, "fib", nros.ActionHandlers[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback]{
			Execute: func(ctx context.Context, g *nros.ServerGoal[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Feedback]) (*test_msgs.Fibonacci_Result, error) {
				seq := []int32{0, 1}
				for i := 1; i < int(g.Goal().Order); i++ {
					if err := sn.Clock().SleepFor(ctx, nros.Duration(100*time.Millisecond)); err != nil {
						return &test_msgs.Fibonacci_Result{Sequence: seq}, err
					}
					seq = append(seq, seq[i]+seq[i-1])
					if err := g.PublishFeedback(&test_msgs.Fibonacci_Feedback{Sequence: seq}); err != nil {
						return nil, err
					}
				}
				return &test_msgs.Fibonacci_Result{Sequence: seq}, nil
			}}, nros.WithResultTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		c, err := nros.NewActionClient[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback](cn, "fib")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		feedback := 0
		fed := func() int { mu.Lock(); defer mu.Unlock(); return feedback }
		settle := func() { // the goal's goroutine and the executor catch up
			for range 10 {
				synctest.Wait()
				sim.RunUntilIdle()
			}
		}
		advance := func(d time.Duration) { // in clock steps, letting the goal run at each
			for ; d > 0; d -= simtest.DefaultClockPeriod {
				sim.Advance(simtest.DefaultClockPeriod)
				settle()
			}
		}
		var goal *nros.ClientGoal[test_msgs.Fibonacci_Result]
		sent := make(chan error, 1)
		go func() {
			var err error
			goal, err = c.SendGoal(context.Background(), &test_msgs.Fibonacci_Goal{Order: 6}, func(*test_msgs.Fibonacci_Feedback) {
				mu.Lock()
				feedback++
				mu.Unlock()
			})
			sent <- err
		}()
		settle()
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		advance(250 * time.Millisecond) // steps at 100.1 and 100.2
		settle()
		if fed() != 2 {
			t.Fatalf("feedback %d after 250 ms", fed())
		}

		sim.Pause()
		sim.Advance(10 * time.Second)
		time.Sleep(time.Hour) // and an hour of the real clocks
		settle()
		if fed() != 2 || goal.Status() != nros.GoalStatusExecuting || srv.Goals()[goal.ID()] != nros.GoalStatusExecuting {
			t.Fatalf("paused: feedback %d, client %v, server %v", fed(), goal.Status(), srv.Goals()[goal.ID()])
		}
		short, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, _, err := goal.Result(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("result while paused: %v", err)
		}
		cancel()

		sim.Resume()
		advance(time.Second) // the three last steps; the goal ends at 100.5
		res, st, err := goal.Result(context.Background())
		if err != nil || st != nros.GoalStatusSucceeded || len(res.Sequence) != 7 || fed() != 5 {
			t.Fatalf("after resume: %v %v %v, feedback %d", res, st, err, fed())
		}

		// The result outlives hours of paused simulation, then expires
		// after the result timeout of simulated time.
		sim.Pause()
		sim.Advance(10 * time.Second)
		time.Sleep(time.Hour)
		settle()
		if srv.Goals()[goal.ID()] != nros.GoalStatusSucceeded {
			t.Fatalf("ended goal forgotten while paused: %v", srv.Goals())
		}
		sim.Resume()
		advance(time.Second) // 102.25: 1.75 s after the end
		if _, ok := srv.Goals()[goal.ID()]; !ok {
			t.Fatal("forgotten before the result timeout")
		}
		advance(600 * time.Millisecond) // 102.85
		if _, ok := srv.Goals()[goal.ID()]; ok {
			t.Fatalf("kept after the result timeout: %v", srv.Goals())
		}
	})
}
