package nros_test

import (
	"context"
	"fmt"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
)

// An action server computes a Fibonacci sequence, publishing feedback at
// each step; a client sends it a goal and waits for the result. Any
// generated action works the same way (nros gen writes Goal, Result and
// Feedback types for every .action file; test_msgs here is generated for
// the tests).
func ExampleNewActionServer() {
	ctx := nros.NewContext() // the in-process transport
	defer ctx.Shutdown()
	node, _ := nros.NewNode("fibonacci_server", nros.WithContext(ctx))
	defer node.Close() // closes the server and client: no goroutine of theirs is left
	_, err := nros.NewActionServer(node, "fibonacci", nros.ActionHandlers[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback]{
		Execute: func(ctx context.Context, g *nros.ServerGoal[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Feedback]) (*test_msgs.Fibonacci_Result, error) {
			seq := []int32{0, 1}
			for i := 1; i < int(g.Goal().Order); i++ {
				if err := ctx.Err(); err != nil { // a cancel was accepted
					return &test_msgs.Fibonacci_Result{Sequence: seq}, err
				}
				seq = append(seq, seq[i]+seq[i-1])
				g.PublishFeedback(&test_msgs.Fibonacci_Feedback{Sequence: seq})
			}
			return &test_msgs.Fibonacci_Result{Sequence: seq}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	exec.AddNode(node)
	spin, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); exec.Spin(spin) }()
	defer func() { stop(); <-done }()

	client, _ := nros.NewActionClient[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback](node, "fibonacci")
	goal, err := client.SendGoal(context.Background(), &test_msgs.Fibonacci_Goal{Order: 7}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, status, err := goal.Result(context.Background())
	fmt.Println(status, res.Sequence, err)
	// Output: SUCCEEDED [0 1 1 2 3 5 8 13] <nil>
}
