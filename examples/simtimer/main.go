// Command simtimer runs one ROS-time timer and one wall timer on one node
// and prints a line per activation:
//
//	ros  <wall_unix_ns> <ros_time_ns> <overruns_total>
//	wall <wall_unix_ns> <ros_time_ns>
//
// Run it on a simulator's clock:
//
//	go run ./examples/simtimer --ros-args -p use_sim_time:=true \
//	    [-p period_ms:=100] [-p wall_period_ms:=100] [-p overrun:=skip|catch_up] \
//	    [-p duration_s:=10] [-r clock:=/sim/clock]
//
// It exits 0 after duration_s of wall time or on SIGINT/SIGTERM, and 2 on a
// bad command line (a malformed ROS argument, a parameter of the wrong type
// or out of range, or any argument outside --ros-args: simtimer takes none).
// Logs go to stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	_ "github.com/nros-go/nros/sros2" // SROS2 when ROS_SECURITY_ENABLE=true (README, Security)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, rctx *nros.Context, args []string, stdout, stderr io.Writer) int {
	rest, err := rctx.Init(args)
	if err != nil {
		fmt.Fprintf(stderr, "simtimer: %v\n", err)
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "simtimer: unknown argument %q: simtimer takes only ROS arguments (--ros-args -p name:=value ...)\n", rest[0])
		return 2
	}
	node, err := nros.NewNode("simtimer", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintf(stderr, "simtimer: %v\n", err)
		return 2
	}
	defer node.Close()
	period, err1 := millis(node, "period_ms", 100)
	wallPeriod, err2 := millis(node, "wall_period_ms", 100)
	duration, err3 := seconds(node, "duration_s", 10)
	overrun, err4 := node.DeclareParameter("overrun", nros.StringValue("skip"))
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			fmt.Fprintf(stderr, "simtimer: %v\n", err)
			return 2
		}
	}
	name, _ := overrun.Str()
	policy, err := nros.ParseOverrunPolicy(name)
	if err != nil {
		fmt.Fprintf(stderr, "simtimer: parameter overrun: %v\n", err)
		return 2
	}

	out := make(chan string, 1024) // one writer keeps lines whole
	done := make(chan struct{})
	go func() {
		defer close(done)
		for l := range out {
			io.WriteString(stdout, l)
		}
	}()
	clk := node.Clock()
	var ros *nros.Timer
	ros, err = node.CreateTimer(clk, period, func() {
		out <- fmt.Sprintf("ros %d %d %d\n", time.Now().UnixNano(), clk.Now().Nanoseconds(), ros.Overruns())
	}, nros.WithOverrunPolicy(policy))
	if err == nil {
		_, err = node.CreateWallTimer(wallPeriod, func() {
			out <- fmt.Sprintf("wall %d %d\n", time.Now().UnixNano(), clk.Now().Nanoseconds())
		})
	}
	if err != nil {
		fmt.Fprintf(stderr, "simtimer: %v\n", err)
		return 2
	}
	node.Logger().Info("running", "use_sim_time", clk.RosTimeIsActive(), "clock", node.RosTimeSourceTopic(),
		"period", period, "wall_period", wallPeriod, "overrun", policy, "duration", duration)

	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	exec.AddNode(node)
	spinCtx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	err = exec.Spin(spinCtx)
	close(out)
	<-done
	if err != nil {
		fmt.Fprintf(stderr, "simtimer: %v\n", err)
		return 1
	}
	return 0
}

// millis declares an integer parameter in milliseconds and converts it to
// a time.Duration safely: time.Duration(ms)*time.Millisecond would wrap
// silently for ms above math.MaxInt64/1e6 (about 292 years).
func millis(n *nros.Node, name string, def int64) (time.Duration, error) {
	v, err := n.DeclareParameter(name, nros.IntegerValue(def))
	if err != nil {
		return 0, err
	}
	ms, _ := v.Integer()
	const maxMs = int64(math.MaxInt64 / time.Millisecond)
	if ms <= 0 || ms > maxMs {
		return 0, fmt.Errorf("parameter %s must be 1 to %d (milliseconds), got %d", name, maxMs, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// seconds declares a number of seconds that may be written 10 or 2.5.
func seconds(n *nros.Node, name string, def float64) (time.Duration, error) {
	v, err := n.DeclareParameter(name, nros.DoubleValue(def), nros.ParameterDescriptor{DynamicTyping: true})
	if err != nil {
		return 0, err
	}
	s, ok := v.Double()
	if !ok {
		i, isInt := v.Integer()
		if !isInt {
			return 0, fmt.Errorf("parameter %s must be a number, got %s", name, v.ValueString())
		}
		s = float64(i)
	}
	d, err := nros.DurationFromSeconds(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("parameter %s must be a positive number of seconds, got %v", name, s)
	}
	return d.Std(), nil
}
