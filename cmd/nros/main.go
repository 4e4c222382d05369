// Command nros is the nros-go command-line tool: the simulated-time demo,
// a /clock publisher, topic and parameter tools, bag tools and benchmarks.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/demo"
)

const usage = `usage: nros <command> [arguments]

commands:
  demo     an in-process simulated clock drives a ROS timer and a wall timer
           along a script, printing every activation (the main job)
  clock    publish rosgraph_msgs/Clock following a script:
           nros clock [--topic T] [--hz F] [--script S]
  topic    nros topic echo TOPIC [TYPE] [--once] [--count N]
           nros topic pub TOPIC TYPE VALUES [--rate HZ] [--times N]
  gen      nros gen [-o DIR] PATH...: Go packages from ROS 2 .msg/.srv/.action
  bench    nros bench pingpong ping|pong [--size B] [--count N]
           [--reliable|--best-effort] [--mode latency|throughput]

clock, topic and bench take ROS arguments after their own (--ros-args -r a:=b ...).

Run 'nros <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "clock":
		return runClock(ctx, args[1:], stdout, stderr)
	case "topic":
		return runTopic(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "gen":
		return runGen(args[1:], stdout, stderr)
	case "param":
		return runParam(ctx, args[1:], stdout, stderr)
	case "service":
		return runService(ctx, args[1:], stdout, stderr)
	case "node":
		return runNode(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "nros: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nros demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", demo.DefaultScript, "clock script: start=<s>;play <r>x <d>;pause <d>;jump <+|-><d>;...")
	hz := fs.Float64("hz", 100, "/clock publish rate in Hz")
	period := fs.Duration("period", 100*time.Millisecond, "ROS-time timer period")
	wallPeriod := fs.Duration("wall-period", 100*time.Millisecond, "wall timer period")
	overrun := fs.String("overrun", "skip", "ROS timer overrun policy: skip or catch_up")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "nros demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	pol, err := nros.ParseOverrunPolicy(*overrun)
	if err != nil {
		fmt.Fprintf(stderr, "nros demo: --overrun: %v\n", err)
		return 2
	}
	if *period <= 0 || *wallPeriod <= 0 {
		fmt.Fprintln(stderr, "nros demo: --period and --wall-period must be positive")
		return 2
	}
	err = demo.Run(ctx, demo.Config{Script: *script, Hz: *hz, Period: *period, WallPeriod: *wallPeriod,
		Overrun: pol, Stdout: stdout, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "nros demo: %v\n", err)
		if ctx.Err() != nil {
			return 130
		}
		return 2
	}
	return 0
}
