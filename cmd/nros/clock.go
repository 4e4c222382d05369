package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
)

// cliEnv is what a command takes from outside: its output streams, extra
// context options (tests share one in-process transport between commands)
// and the wall clock it paces itself by.
type cliEnv struct {
	stdout, stderr io.Writer
	ctxOpts        []nros.ContextOption
	clock          wallClock
}

func newEnv(stdout, stderr io.Writer) *cliEnv {
	return &cliEnv{stdout: stdout, stderr: stderr, clock: realClock{}}
}

// wallClock is the time a command paces itself by. time.Time values carry
// the monotonic reading, so SleepUntil is immune to wall-clock steps.
type wallClock interface {
	Now() time.Time
	// SleepUntil returns when t is reached (nil) or ctx is done (its error).
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	// A short wait (a 1 kHz publisher's) sleeps in the kernel directly
	// where that is cheaper; ctx is looked at when it ends (<= 2 ms late).
	if ctx.Err() == nil && shortSleep(d) {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newCommandContext makes the context a command runs in and hands it the
// command line: ROS arguments (`--ros-args ... [--]`) go to Context.Init,
// the rest comes back for the command's own parser.
func (e *cliEnv) newCommandContext(prog string, args []string) (*nros.Context, []string, error) {
	opts := append([]nros.ContextOption{nros.WithLogOutput(e.stderr)}, e.ctxOpts...)
	c := nros.NewContext(opts...)
	rest, err := c.Init(args)
	if err != nil {
		return nil, nil, usagef("--ros-args: %s", cleanMessage(err))
	}
	return c, rest, nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (as the ros2 CLI allows) and returns the
// positional ones. "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// waitMatched polls matched until it reports at least n or timeout passes
// (a zero or negative timeout waits for ever); it reports success.
func waitMatched(ctx context.Context, clk wallClock, n int, timeout time.Duration, matched func() int) bool {
	if n <= 0 {
		return true
	}
	start := clk.Now()
	for matched() < n {
		if timeout > 0 && clk.Now().Sub(start) >= timeout {
			return false
		}
		if clk.SleepUntil(ctx, clk.Now().Add(10*time.Millisecond)) != nil {
			return false
		}
	}
	return true
}

func runClock(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).clockCmd(ctx, args)
}

// clockCmd is `nros clock`: publish rosgraph_msgs/Clock following a script,
// one `clock <wall_unix_ns> <ros_ns>` line per published sample.
func (e *cliEnv) clockCmd(ctx context.Context, args []string) int {
	const prog = "nros clock"
	return exitCode(e.stderr, prog, e.clock1(ctx, prog, args))
}

func (e *cliEnv) clock1(ctx context.Context, prog string, args []string) error {
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros clock [--topic T] [--hz F] [--start S] [--rate R] [--script S] [--ros-args ...]")
	topic := fs.String("topic", nros.DefaultClockTopic, "topic to publish rosgraph_msgs/Clock on")
	hz := fs.Float64("hz", 100, "publish rate in Hz (a script's hz step changes it)")
	script := fs.String("script", "", "clock script: start=<s>;play <r>x <d>;pause <d>;stall <d>;jump <+|-|=><t>;hz <f> (default: from --start at --rate for ever; on a terminal without --script, keys change the clock live)")
	startSec := fs.Float64("start", 0, "simulated time to start at, in seconds (without --script)")
	rate := fs.Float64("rate", 1, "simulated seconds per wall second (without --script)")
	waitSubs := fs.Int("wait-subs", 0, "wait for this many matched subscriptions before starting")
	waitTimeout := fs.Float64("wait-timeout", 30, "seconds to wait for --wait-subs (then start anyway)")
	settle := fs.Float64("settle", 0.3, "with --wait-subs: seconds to pause after matching, so that the subscribers match us too")
	quiet := fs.Bool("quiet", false, "do not print a line per published sample")
	monitor := fs.Bool("monitor", false, "listen instead: print sample rate, real-time factor, pauses and jumps of a clock topic (--monitor [TOPIC])")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if *monitor { // clockmonitor.go
		return e.clockMonitor(ctx, c, *topic, pos)
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (flags only; the script goes in --script)", pos[0])
	}
	if !(*hz > 0 && *hz <= 1e9) {
		return usagef("--hz %v: want a rate above 0 and at most 1e9 Hz", *hz)
	}
	if *waitSubs < 0 {
		return usagef("--wait-subs %d: want 0 or more", *waitSubs)
	}
	if !(*waitTimeout >= 0) || !(*settle >= 0) {
		return usagef("--wait-timeout %v, --settle %v: want 0 or more seconds", *waitTimeout, *settle)
	}
	if !(*startSec >= 0 && *startSec <= math.MaxInt32) {
		return usagef("--start %v: want 0 to %d seconds", *startSec, math.MaxInt32)
	}
	if !(*rate > 0 && *rate <= 1024) {
		return usagef("--rate %v: want more than 0 and at most 1024", *rate)
	}
	scriptSet := false
	fs.Visit(func(f *flag.Flag) { scriptSet = scriptSet || f.Name == "script" })
	src := *script
	if !scriptSet {
		src = fmt.Sprintf("start=%s;play %sx 1000000s", strconv.FormatFloat(*startSec, 'f', -1, 64), strconv.FormatFloat(*rate, 'f', -1, 64))
	}
	sc, err := clockscript.Parse(src)
	if err != nil {
		return usagef("--script %q: %v", src, err)
	}
	node, err := nros.NewNode("nros_clock", nros.WithContext(c))
	if err != nil {
		return nodeError(err)
	}
	defer node.Close()
	if _, err := node.ResolveTopicName(*topic); err != nil {
		return usagef("--topic %q: %s", *topic, cleanMessage(err))
	}
	pub, err := nros.NewPublisher[rosgraph_msgs.Clock](node, *topic, nros.ClockQoS())
	if err != nil {
		return err
	}
	defer pub.Close()
	if !waitMatched(ctx, e.clock, *waitSubs, time.Duration(*waitTimeout*1e9), pub.MatchedSubscriptions) {
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(e.stderr, "%s: %d subscription(s) not matched after %gs, starting anyway\n", prog, *waitSubs, *waitTimeout)
	} else if *waitSubs > 0 && e.clock.SleepUntil(ctx, e.clock.Now().Add(time.Duration(*settle*1e9))) != nil {
		return nil
	}
	if !scriptSet {
		if keys, restore, ok := terminalKeys(e.stdout); ok {
			defer restore()
			return e.runLive(ctx, pub, keys, *hz, int64(*startSec*1e9), *rate, e.stdout)
		}
	}
	var m rosgraph_msgs.Clock
	var line []byte
	t0 := e.clock.Now()
	for s := range sc.SampleSeq(*hz) {
		if e.clock.SleepUntil(ctx, t0.Add(s.Wall)) != nil {
			return nil // SIGINT/SIGTERM: a normal end
		}
		sec, nsec, err := nros.TimeFromNanoseconds(s.Sim).SecNanosec()
		if err != nil {
			return fmt.Errorf("sim time %s: %w", clockscript.FormatSim(s.Sim), err)
		}
		m.Clock.Sec, m.Clock.Nanosec = sec, nsec
		wall := e.clock.Now().UnixNano()
		if err := pub.Publish(&m); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if *quiet {
			continue
		}
		line = fmt.Appendf(line[:0], "clock %d %d\n", wall, s.Sim)
		if _, err := e.stdout.Write(line); err != nil {
			return err
		}
	}
	// The script ends at its duration, not at its last sample.
	_ = e.clock.SleepUntil(ctx, t0.Add(sc.Duration()))
	return nil
}
