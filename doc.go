// Package nros is a pure-Go ROS 2 client library whose headline is
// simulated time done right: a node runs on a simulator's or a bag's clock
// (rosgraph_msgs/Clock on /clock, the use_sim_time parameter), with timers
// told which clock advances them. No C libraries, no ROS install.
//
// # Context, Node, Executor
//
// A [Context] is one ROS 2 "init": the command line ([Context.Init]), the
// transport its nodes talk through (a DDS participant by default, a Zenoh
// session as rmw_zenoh's with RMW_IMPLEMENTATION=rmw_zenoh_cpp, or the
// in-process transport with [WithTransport](intra.New()) or
// NROS_TRANSPORT=intra) and one ROS clock that all its nodes share.
// [Init] and [DefaultContext] are the process's default context.
//
// A [Node] is created in a context by [NewNode]. It has parameters (the
// command line's -p and --params-file, [WithParameterOverrides]),
// publishers and subscriptions ([NewPublisher], [NewSubscription], typed
// with generics), timers and a clock: [Node.Clock] is the context's ROS
// clock.
//
// An [Executor] runs the callbacks of the nodes added to it: subscription
// callbacks and timers, on the goroutine that calls [Executor.Spin] (until
// its context.Context ends) or [Executor.SpinOnce].
//
// Services ([NewService], [NewClient]) and actions ([NewActionServer],
// [NewActionClient]) are typed the same way and speak ROS 2's request/reply
// and action protocols on the wire. An action server's Execute runs each
// goal on a goroutine of its own with a context that an accepted cancel
// cancels; goal stamps and result expiry follow the node's ROS clock.
//
// # Simulated time
//
// Every node declares the reserved bool parameter use_sim_time (false).
// True (from --ros-args -p use_sim_time:=true, a params file,
// WithParameterOverrides or [Node.SetParameter] at runtime) subscribes the
// context to /clock with [ClockQoS]; from the first sample, [Clock.Now]
// returns the simulator's time. A value that is not a bool is refused.
//
// Timers say which clock advances them: [Node.CreateTimer] with
// node.Clock() follows ROS time (silent while the simulation is paused,
// at the simulation's rate, restarting after a jump back, reporting a
// forward jump's backlog per [TimerOverrunPolicy]); [Node.CreateWallTimer]
// keeps real time whatever the simulation does.
//
// # A nil *Node
//
// NewNode returns a nil *Node with its error, for example for
// -p use_sim_time:=maybe or a params file that cannot be read. A program
// that drops that error does not run on the wrong clock: every method on a
// nil *Node panics with ErrNilNode, whose message is
// "nros: nil *Node: NewNode failed, check its error", and the calls that
// take a node and return an error (CreateTimer, NewPublisher, AddNode, ...)
// return it. Check the error of Init and NewNode, print it and exit 2, as
// the examples do.
//
// # Example
//
//	func run(ctx context.Context, rctx *nros.Context, args []string) int {
//		if _, err := rctx.Init(args); err != nil { // --ros-args -p use_sim_time:=true ...
//			fmt.Fprintln(os.Stderr, "hello:", err)
//			return 2
//		}
//		node, err := nros.NewNode("hello", nros.WithContext(rctx))
//		if err != nil {
//			fmt.Fprintln(os.Stderr, "hello:", err)
//			return 2
//		}
//		clk := node.Clock()
//		node.CreateTimer(clk, 100*time.Millisecond, func() { fmt.Println("sim tick", clk.Now()) })
//		exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
//		exec.AddNode(node)
//		exec.Spin(ctx) // until Ctrl-C: signal.NotifyContext in main
//		return 0
//	}
//
// The package's examples run as tests on the in-process transport.
package nros
