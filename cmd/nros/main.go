// Command nros is the nros-go command-line tool. Its commands:
//
//	nros demo    an in-process simulated clock drives a ROS-time timer and a
//	             wall timer along a script (the main job)
//	nros clock   publish rosgraph_msgs/Clock following a script, or watch
//	             someone else's (--monitor)
//	nros topic   list, info, echo, hz, bw and pub on the ROS graph
//	nros bag     info, play (with --clock) and record rosbag2 bags
//	             (sqlite3 and MCAP)
//	nros gen     Go packages from ROS 2 .msg/.srv/.action files
//	nros bench   pingpong latency and throughput against nros, Cyclone DDS
//	             or Fast DDS peers
//	nros security  SROS2 keystores: create_keystore, create_enclave,
//	             create_permission, list_enclaves (as ros2 security)
//
// `nros <command> -h` lists a command's flags. Mistakes on the command line
// exit 2 and runtime failures 1, each with one line on stderr that starts
// with the command ("nros demo: --hz 0: want a rate above 0 ...").
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
	"github.com/nros-go/nros/cmd/nros/internal/demo"
	_ "github.com/nros-go/nros/sros2" // nros nodes join secured graphs (ROS_SECURITY_ENABLE=true)
)

const usage = `usage: nros <command> [arguments]

commands:
  demo     an in-process simulated clock drives a ROS timer and a wall timer
           along a script (the main job); a summary step by step, and the
           event lines when stdout is not a terminal (or with --events);
           --svg FILE draws the timeline
  clock    publish rosgraph_msgs/Clock following a script:
           nros clock [--topic T] [--hz F] [--script S] [--quiet]
           nros clock --monitor [TOPIC]
  topic    nros topic list [-t] | info TOPIC [-v]
           nros topic echo TOPIC [TYPE] [--once] [--count N]
           nros topic hz TOPIC [--use-sim-time] | bw TOPIC
           nros topic pub TOPIC TYPE VALUES [--rate HZ] [--times N]
  bag      nros bag info PATH
           nros bag play PATH [--clock [HZ]] [--rate R] [--loop] [--start-paused] ...
           nros bag record [-o DIR] [-s mcap|sqlite3] (TOPIC... | -a)
  param    nros param list|get|set|describe|dump|load|delete NODE ...
  service  nros service list [-t] | type SERVICE | call SERVICE TYPE [VALUES]
  node     nros node list | info NODE
  gen      nros gen [-o DIR] PATH...: Go packages from ROS 2 .msg/.srv/.action
  zenohd   a zenoh router (rmw_zenohd's drop-in), on loopback by default:
           nros zenohd [-l ENDPOINT]... [-c CONFIG]
  bench    nros bench pingpong ping|pong [--size B] [--count N]
           [--reliable|--best-effort] [--mode latency|throughput]
  security nros security create_keystore DIR | create_enclave DIR NAME
           | create_permission DIR NAME POLICY.xml | list_enclaves DIR

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
		return runDemo(ctx, args[1:], stdout, stderr, stdout == io.Writer(os.Stdout) && isTerminal(os.Stdout.Fd()))
	case "clock":
		return runClock(ctx, args[1:], stdout, stderr)
	case "topic":
		return runTopic(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "gen":
		return runGen(args[1:], stdout, stderr)
	case "zenohd":
		return runZenohd(ctx, args[1:], stdout, stderr)
	case "bag":
		return runBag(ctx, args[1:], stdout, stderr)
	case "param":
		return runParam(ctx, args[1:], stdout, stderr)
	case "service":
		return runService(ctx, args[1:], stdout, stderr)
	case "node":
		return runNode(ctx, args[1:], stdout, stderr)
	case "security":
		return runSecurity(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "nros: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// demoSynopsis is the first line of `nros demo -h`.
const demoSynopsis = "nros demo [--script S] [--hz F] [--period D] [--wall-period D] [--overrun skip|catch_up] [--events] [--svg FILE]"

// runDemo is `nros demo`. stdoutIsTerminal decides the default view: on a
// terminal the summary alone, step by step (the event lines with
// --events); otherwise the event lines on stdout as well, as the API
// contract specifies, for programs to read.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer, stdoutIsTerminal bool) int {
	const prog = "nros demo"
	return exitCode(stderr, prog, demoCmd(ctx, args, stdout, stderr, stdoutIsTerminal))
}

func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer, stdoutIsTerminal bool) error {
	fs := newFlagSet("nros demo", demoSynopsis)
	script := fs.String("script", demo.DefaultScript, "clock script: start=<s>;play <r>x <d>;pause <d>;jump <+|-><d>;...")
	hz := fs.Float64("hz", 100, "/clock publish rate in Hz")
	period := fs.Duration("period", 100*time.Millisecond, "ROS-time timer period")
	wallPeriod := fs.Duration("wall-period", 100*time.Millisecond, "wall timer period")
	overrun := fs.String("overrun", "skip", "ROS timer overrun policy: skip or catch_up")
	events := fs.Bool("events", false, "on a terminal, also print the event lines (always printed when stdout is not a terminal)")
	svgPath := fs.String("svg", "", "also write the timeline as a picture (SVG) to this file")
	if err := fs.Parse(args); err != nil {
		return flagError(fs, err, stdout)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags only; the script goes in --script)", fs.Arg(0))
	}
	if !(*hz > 0 && *hz <= demo.MaxHz) {
		return usagef("--hz %v: want a rate above 0 and at most %.0f Hz", *hz, float64(demo.MaxHz))
	}
	if *period <= 0 {
		return usagef("--period %v: want a positive duration such as 100ms", *period)
	}
	if *wallPeriod <= 0 {
		return usagef("--wall-period %v: want a positive duration such as 100ms", *wallPeriod)
	}
	pol, err := nros.ParseOverrunPolicy(*overrun)
	if err != nil {
		return usagef("--overrun %q: want skip or catch_up", *overrun)
	}
	if _, err := clockscript.Parse(*script); err != nil {
		return usagef("--script %q: %v", *script, err)
	}
	cfg := demo.Config{Script: *script, Hz: *hz, Period: *period, WallPeriod: *wallPeriod,
		Overrun: pol, Stdout: stdout, Stderr: stderr}
	if stdoutIsTerminal && !*events {
		cfg.Stdout = nil
	}
	var svg *os.File
	if *svgPath != "" {
		f, err := os.Create(*svgPath)
		if err != nil {
			return usagef("--svg %q: %v", *svgPath, err)
		}
		svg = f
		cfg.SVG = f
	}
	err = demo.Run(ctx, cfg)
	if svg != nil {
		if cerr := svg.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--svg %q: %w", *svgPath, cerr)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // SIGINT/SIGTERM: a normal end
		}
		return err
	}
	return nil
}
