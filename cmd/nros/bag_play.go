package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/cmd/nros/internal/timeline"
)

// defaultClockHz is the /clock rate of a bare --clock, as rosbag2.
const defaultClockHz = 40

// playArgs is the command line of bag play after the list flags are taken
// out (the flag package has no optional values and no multi-value flags).
type playArgs struct {
	flags                   []string
	topics, exclude, remaps []string
	listed                  bool // a list flag took values
}

// splitPlayArgs takes --clock [HZ] (a bare --clock is 40 Hz), and
// --topics, --exclude-topics and --remap with one or more values each, out
// of args.
func splitPlayArgs(args []string) playArgs {
	var pa playArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pa.flags = append(pa.flags, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") {
			pa.flags = append(pa.flags, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var list *[]string
		switch name {
		case "clock":
			switch {
			case hasVal:
				pa.flags = append(pa.flags, "--clock="+val)
			case i+1 < len(args) && isNumber(args[i+1]):
				pa.flags = append(pa.flags, "--clock="+args[i+1])
				i++
			default:
				pa.flags = append(pa.flags, "--clock="+strconv.Itoa(defaultClockHz))
			}
			continue
		case "topics":
			list = &pa.topics
		case "exclude-topics", "exclude_topics":
			list = &pa.exclude
		case "remap", "m", "remaps":
			list = &pa.remaps
		default:
			pa.flags = append(pa.flags, a)
			continue
		}
		if hasVal {
			*list = append(*list, val)
		}
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			*list = append(*list, args[i+1])
			i++
		}
		pa.listed = true
	}
	return pa
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// takePathFromLists handles `--topics /a /b BAG`: when no PATH was given
// apart, the last value of the list flag that came last is the bag if it
// exists on disk.
func (pa *playArgs) takePathFromLists() string {
	for _, l := range []*[]string{&pa.remaps, &pa.exclude, &pa.topics} {
		if n := len(*l); n > 0 {
			if _, err := os.Stat((*l)[n-1]); err == nil {
				p := (*l)[n-1]
				*l = (*l)[:n-1]
				return p
			}
		}
	}
	return ""
}

// playCommand is a parsed `nros bag play` command line.
type playCommand struct {
	path    string
	opts    play.Options // the settings; hooks and stats come later
	clockHz float64
	svg     string
	quiet   bool
}

// parsePlay parses the command line of `nros bag play` (ROS arguments
// taken out).
func parsePlay(prog string, rest []string, stdout io.Writer) (*playCommand, error) {
	pa := splitPlayArgs(rest)
	fs := newFlagSet(prog, "nros bag play PATH [--clock [HZ]] [--rate R] [--loop] [--start-paused] [--start-offset S]\n"+
		"       [--topics T...] [--exclude-topics T...] [--remap FROM:=TO...] [--delay S] [--read-ahead-queue-size N] [--ros-args ...]")
	pc := &playCommand{}
	o := &pc.opts
	fs.Float64Var(&pc.clockHz, "clock", 0, "publish /clock at this rate in Hz (a bare --clock: 40)")
	fs.Float64Var(&o.Rate, "rate", 1, "playback rate (2: twice as fast)")
	fs.Float64Var(&o.Rate, "r", 1, "short for --rate")
	fs.BoolVar(&o.Loop, "loop", false, "play the bag again and again; ROS time jumps back to the start each time")
	fs.BoolVar(&o.Loop, "l", false, "short for --loop")
	fs.BoolVar(&o.StartPaused, "start-paused", false, "start paused (space resumes, on a terminal)")
	startOffset := fs.Float64("start-offset", 0, "start this many seconds after the bag's beginning")
	delay := fs.Float64("delay", 0, "wait this many seconds (wall time) before playing; /clock does not advance")
	fs.StringVar(&pc.svg, "svg", "", "with --clock: write the published /clock against wall time as a picture (SVG) to this file")
	fs.Float64Var(delay, "d", 0, "short for --delay")
	fs.IntVar(&o.ReadAhead, "read-ahead-queue-size", play.DefaultReadAhead, "messages read ahead of playback")
	fs.BoolVar(&pc.quiet, "quiet", false, "print nothing but errors")
	fs.Var(new(listUsage), "topics", "play only these topics (one or more values)")
	fs.Var(new(listUsage), "exclude-topics", "do not play these topics (one or more values)")
	fs.Var(new(listUsage), "remap", "FROM:=TO rename a topic (one or more values)")
	pos, err := parseInterspersed(fs, pa.flags)
	if err != nil {
		return nil, flagError(fs, err, stdout)
	}
	if len(pos) == 0 && pa.listed {
		if p := pa.takePathFromLists(); p != "" {
			pos = []string{p}
		}
	}
	if len(pos) != 1 {
		return nil, usagef("want one PATH, got %d arguments", len(pos))
	}
	pc.path = pos[0]
	if err := checkPlayFlags(pc, *startOffset, *delay); err != nil {
		return nil, err
	}
	o.ClockRate = pc.clockHz
	o.StartOffset, o.Delay = time.Duration(*startOffset*1e9), time.Duration(*delay*1e9)
	o.Topics, o.Exclude = pa.topics, pa.exclude
	o.Remap, err = parseRemaps(pa.remaps)
	return pc, err
}

// checkPlayFlags rejects values out of range.
func checkPlayFlags(pc *playCommand, startOffset, delay float64) error {
	switch o := &pc.opts; {
	case !(o.Rate > 0) || math.IsInf(o.Rate, 0):
		return usagef("--rate must be positive")
	case pc.clockHz < 0 || math.IsInf(pc.clockHz, 0) || pc.clockHz > play.MaxClockRate:
		return usagef("--clock must be in (0, 1e6] Hz")
	case startOffset < 0 || delay < 0 || math.IsInf(startOffset, 0) || math.IsInf(delay, 0):
		return usagef("--start-offset and --delay must not be negative")
	case o.ReadAhead < 1:
		return usagef("--read-ahead-queue-size must be at least 1")
	case pc.svg != "" && pc.clockHz <= 0:
		return usagef("--svg %q: draws the published /clock, so it needs --clock", pc.svg)
	}
	return nil
}

// parseRemaps reads FROM:=TO values.
func parseRemaps(remaps []string) (map[string]string, error) {
	m := map[string]string{}
	for _, r := range remaps {
		from, to, ok := strings.Cut(r, ":=")
		if !ok || from == "" || to == "" {
			return nil, usagef("--remap %q: want FROM:=TO", r)
		}
		m[from] = to
	}
	return m, nil
}

// bagPlay is `nros bag play`: a command line around a play.Player, with
// rosbag2's player services and, on a terminal, keys and a progress line.
func (e *cliEnv) bagPlay(ctx context.Context, args []string) error {
	const prog = "nros bag play"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return usageError{err.Error()}
	}
	defer c.Shutdown()
	pc, err := parsePlay(prog, rest, e.stdout)
	if err != nil {
		return err
	}
	b, err := bag.Open(pc.path)
	if err != nil {
		return err
	}
	defer b.Close()
	st, statErr := b.Stats()
	if statErr != nil {
		fmt.Fprintf(e.stderr, "%s: warning: %v; playing what can be read\n", prog, statErr)
	}
	node, err := nros.NewNode("rosbag2_player", nros.WithContext(c))
	if err != nil {
		return err
	}
	defer node.Close()
	for _, to := range pc.opts.Remap {
		if _, err := node.ResolveTopicName(to); err != nil {
			return usagef("--remap: %v", err)
		}
	}
	pc.opts.Stats = st
	if err := e.playBag(ctx, c, node, b, pc); err != nil {
		return err
	}
	return statErr
}

// playRun is one run of `nros bag play`: what it prints and draws.
type playRun struct {
	e     *cliEnv
	pc    *playCommand
	logf  func(format string, a ...any)
	tl    *timeline.Timeline // the SVG's, nil without --svg
	bytes int64
}

// playBag plays b from node with the command's settings.
func (e *cliEnv) playBag(ctx context.Context, c *nros.Context, node *nros.Node, b *bag.Bag, pc *playCommand) error {
	r := &playRun{e: e, pc: pc, logf: func(string, ...any) {}}
	if !pc.quiet {
		r.logf = func(format string, a ...any) { fmt.Fprintf(e.stdout, format+"\n", a...) }
	}
	if pc.svg != "" {
		r.tl = &timeline.Timeline{}
	}
	st := pc.opts.Stats
	playStart := st.Start + int64(pc.opts.StartOffset)
	opts := pc.opts
	opts.OnMessage = func(m bag.Message) { r.bytes += int64(len(m.Data)) }
	opts.OnClock = func(t int64, elapsed time.Duration) { r.tl.Add(timeline.Clock, elapsed, t) }
	opts.OnLoop = func(n int) { r.logf("loop %d: back to %s", n, formatSeconds(playStart)) }
	p, err := play.New(node, b, opts)
	if err != nil {
		return err
	}
	defer p.Close()
	r.reportSkipped(p)
	if st.MessageCount == 0 {
		fmt.Fprintf(e.stdout, "%s holds no messages: nothing to play\n", pc.path)
		return nil
	}
	if !pc.quiet {
		fmt.Fprintf(e.stdout, "playing %s: %d messages on %d topics over %ss, at rate %g\n",
			pc.path, st.MessageCount, len(p.Topics()), formatSeconds(st.Duration()), opts.Rate)
	}
	stopServices, err := playerServices(ctx, c, node, p)
	if err != nil {
		return fmt.Errorf("player services: %w", err)
	}
	defer stopServices()
	return r.run(ctx, p)
}

// reportSkipped says which recorded topics do not play.
func (r *playRun) reportSkipped(p *play.Player) {
	for _, s := range p.Skipped() {
		if errors.Is(s.Err, play.ErrClockReplaced) {
			fmt.Fprintf(r.e.stdout, "not replaying the recorded %s: --clock publishes it\n", s.Topic.Name)
		} else {
			fmt.Fprintf(r.e.stderr, "nros bag play: not playing %s (%v)\n", s.Topic.Name, s.Err)
		}
	}
}

// run plays until the bag ends, an interrupt or the quit key, then writes
// the SVG and the summary.
func (r *playRun) run(ctx context.Context, p *play.Player) error {
	runCtx, quit := context.WithCancel(ctx)
	defer quit()
	detach := sync.OnceFunc(r.e.attachTerminal(p, quit, &r.logf))
	defer detach()
	if r.pc.opts.StartPaused {
		r.logf("paused at start (space resumes)")
	}
	t0 := time.Now()
	err := p.Run(runCtx)
	if runCtx.Err() != nil && errors.Is(err, runCtx.Err()) {
		err = nil // an interrupt or the quit key
	}
	detach()
	if r.tl != nil {
		title := fmt.Sprintf("nros bag play %s --clock %g --rate %g: ROS time against wall time", r.pc.path, r.pc.clockHz, r.pc.opts.Rate)
		if werr := writeSVGFile(r.pc.svg, r.tl, title, []timeline.Span{{Label: "play"}}, time.Since(t0)); werr != nil && err == nil {
			err = werr
		}
	}
	if !r.pc.quiet {
		n := p.Status().Published
		d := time.Since(t0).Seconds()
		fmt.Fprintf(r.e.stdout, "done: %d messages published (%.1f MB) in %.3f s: %.0f messages/s, %.1f MB/s\n",
			n, float64(r.bytes)/1e6, d, float64(n)/d, float64(r.bytes)/1e6/d)
	}
	return err
}

// listUsage only documents a list flag in -h (splitPlayArgs takes them).
type listUsage struct{}

func (*listUsage) String() string   { return "" }
func (*listUsage) Set(string) error { return nil }

// writeSVGFile writes a timeline picture to path.
func writeSVGFile(path string, tl *timeline.Timeline, title string, spans []timeline.Span, total time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--svg %q: %w", path, err)
	}
	if err := tl.WriteSVG(f, title, spans, total); err != nil {
		f.Close()
		return fmt.Errorf("--svg %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--svg %q: %w", path, err)
	}
	return nil
}
