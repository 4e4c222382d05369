package nros_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// run is the README's program ("Twenty lines"), character for character
// (TestReadmeProgramIsTested checks it); the README's main only adds
// signal.NotifyContext and os.Exit.
func run(ctx context.Context, rctx *nros.Context, args []string) int {
	if _, err := rctx.Init(args); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err) // a bad ROS argument, named
		return 2
	}
	node, err := nros.NewNode("hello", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err) // e.g. -p use_sim_time:=maybe
		return 2
	}
	clk := node.Clock() // ROS time: the simulator's when use_sim_time is true
	node.CreateTimer(clk, 100*time.Millisecond, func() { fmt.Println("sim tick", clk.Now()) })
	node.CreateWallTimer(time.Second, func() { node.Logger().Info("watchdog: wall time goes on") })
	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	exec.AddNode(node)
	exec.Spin(ctx)
	return 0
}

// The README's program, run twice in process: on a simulator's clock
// (use_sim_time:=true, /clock published by another node of its context),
// then with a parameter value that is not a bool.
func Example() {
	// The simulator's side and the program share one in-process context.
	rctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer rctx.Shutdown()
	sim, _ := nros.NewNode("simulator", nros.WithContext(rctx), nros.WithoutGlobalArguments())
	pub, _ := nros.NewPublisher[rosgraph_msgs.Clock](sim, "/clock", nros.ClockQoS())

	lines, restore := watchStdout()
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int)
	go func() { code <- run(ctx, rctx, []string{"--ros-args", "-p", "use_sim_time:=true"}) }()
	// The program spins (its timers exist, so the first sample starts
	// their periods) once its parameter service answers.
	params, _ := nros.NewClient[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](sim, "/hello/list_parameters")
	if _, err := params.Call(ctx, &rcl_interfaces.ListParameters_Request{}); err != nil || pub.MatchedSubscriptions() == 0 {
		fmt.Println("the program does not run:", err)
	}
	// Each sample that crosses a deadline prints one tick; wait for it
	// before the next, so that clk.Now() in the tick is that sample.
	for _, s := range []struct {
		sim   int64 // ms
		ticks bool
	}{{100_000, false}, {100_050, false}, {100_100, true}, {100_200, true}, {100_250, false}, {101_000, true}} {
		pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(s.sim / 1000), Nanosec: uint32(s.sim%1000) * 1e6}})
		if s.ticks {
			<-lines
		}
	}
	cancel()
	fmt.Println("exit", <-code)
	restore()

	// The error path: stderr shown here as it would be on a terminal.
	stderr := os.Stderr
	os.Stderr = os.Stdout
	bad := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	fmt.Println("exit", run(context.Background(), bad, []string{"--ros-args", "-p", "use_sim_time:=maybe"}))
	os.Stderr = stderr
	// Output:
	// sim tick 100.100000000
	// sim tick 100.200000000
	// sim tick 101.000000000
	// exit 0
	// hello: nros: node /hello: invalid parameter type: parameter 'use_sim_time' wants type bool, but its override is string (maybe)
	// exit 2
}

// watchStdout passes what is printed on os.Stdout through and signals
// each line on the channel, until restore.
func watchStdout() (lines <-chan string, restore func()) {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	out := os.Stdout
	os.Stdout = w
	ch := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fmt.Fprintln(out, sc.Text())
			ch <- sc.Text()
		}
	}()
	return ch, func() {
		w.Close()
		<-done
		os.Stdout = out
	}
}

// TestReadmeProgramIsTested checks that the README's program is the one
// Example runs.
func TestReadmeProgramIsTested(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fn := func(text, name string) string {
		i := strings.Index(text, "\nfunc "+name+"(")
		if i < 0 {
			return ""
		}
		j := strings.Index(text[i:], "\n}\n")
		return text[i : i+j+3]
	}
	want := fn(string(src), "run")
	if want == "" || fn(string(readme), "run") != want {
		t.Fatalf("README.md's func run differs from example_readme_test.go's:\n%s", want)
	}
	if !strings.Contains(string(readme), "\tos.Exit(run(ctx, nros.DefaultContext(), os.Args[1:]))\n") {
		t.Fatal("README.md's main does not call run")
	}
}
