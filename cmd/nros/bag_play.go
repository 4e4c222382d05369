package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/internal/timeline"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
)

// defaultClockHz is the /clock rate of a bare --clock, as rosbag2.
const defaultClockHz = 40

// clockType is the ROS type of /clock.
const clockType = "rosgraph_msgs/msg/Clock"

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

// playbackQoS chooses the QoS to replay a topic with from the profiles its
// publishers offered when it was recorded (rosbag2's rule: their
// reliability and durability when they all agree, the default profile
// otherwise; keep last, with the recorded depth when known).
func playbackQoS(profiles []bag.QoSProfile) rmw.QoS {
	q := nros.DefaultQoS()
	if len(profiles) == 0 {
		return q
	}
	rel, dur := profiles[0].Reliability, profiles[0].Durability
	life := profiles[0].Lifespan
	depth := 0
	for _, p := range profiles {
		if p.Reliability != rel {
			rel = ""
		}
		if p.Durability != dur {
			dur = ""
		}
		if p.Lifespan != life {
			life = 0
		}
		if p.History == "keep_last" {
			depth = max(depth, p.Depth)
		}
	}
	switch rel {
	case "best_effort":
		q.Reliability = rmw.BestEffort
	case "reliable":
		q.Reliability = rmw.Reliable
	}
	switch dur {
	case "transient_local":
		q.Durability = rmw.TransientLocal
	case "volatile":
		q.Durability = rmw.Volatile
	}
	if depth > 0 {
		q.Depth = depth
	}
	q.Lifespan = life
	return q
}

// bagPlay is `nros bag play`.
func (e *cliEnv) bagPlay(ctx context.Context, args []string) error {
	const prog = "nros bag play"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return usageError{err.Error()}
	}
	defer c.Shutdown()
	pa := splitPlayArgs(rest)
	fs := newFlagSet(prog, "nros bag play PATH [--clock [HZ]] [--rate R] [--loop] [--start-paused] [--start-offset S]\n"+
		"       [--topics T...] [--exclude-topics T...] [--remap FROM:=TO...] [--delay S] [--read-ahead-queue-size N] [--ros-args ...]")
	clockHz := fs.Float64("clock", 0, "publish /clock at this rate in Hz (a bare --clock: 40)")
	rate := fs.Float64("rate", 1, "playback rate (2: twice as fast)")
	fs.Float64Var(rate, "r", 1, "short for --rate")
	loop := fs.Bool("loop", false, "play the bag again and again; ROS time jumps back to the start each time")
	fs.BoolVar(loop, "l", false, "short for --loop")
	startPaused := fs.Bool("start-paused", false, "start paused (space resumes, on a terminal)")
	startOffset := fs.Float64("start-offset", 0, "start this many seconds after the bag's beginning")
	delay := fs.Float64("delay", 0, "wait this many seconds (wall time) before playing; /clock does not advance")
	svgPath := fs.String("svg", "", "with --clock: write the published /clock against wall time as a picture (SVG) to this file")
	fs.Float64Var(delay, "d", 0, "short for --delay")
	queue := fs.Int("read-ahead-queue-size", 1000, "messages read ahead of playback")
	quiet := fs.Bool("quiet", false, "print nothing but errors")
	fs.Var(new(listUsage), "topics", "play only these topics (one or more values)")
	fs.Var(new(listUsage), "exclude-topics", "do not play these topics (one or more values)")
	fs.Var(new(listUsage), "remap", "FROM:=TO rename a topic (one or more values)")
	pos, err := parseInterspersed(fs, pa.flags)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) == 0 && pa.listed {
		if p := pa.takePathFromLists(); p != "" {
			pos = []string{p}
		}
	}
	if len(pos) != 1 {
		return usagef("want one PATH, got %d arguments", len(pos))
	}
	switch {
	case !(*rate > 0) || math.IsInf(*rate, 0):
		return usagef("--rate must be positive")
	case *clockHz < 0 || math.IsInf(*clockHz, 0) || *clockHz > 1e6:
		return usagef("--clock must be in (0, 1e6] Hz")
	case *startOffset < 0 || *delay < 0 || math.IsInf(*startOffset, 0) || math.IsInf(*delay, 0):
		return usagef("--start-offset and --delay must not be negative")
	case *queue < 1:
		return usagef("--read-ahead-queue-size must be at least 1")
	}
	remap := map[string]string{}
	for _, r := range pa.remaps {
		from, to, ok := strings.Cut(r, ":=")
		if !ok || from == "" || to == "" {
			return usagef("--remap %q: want FROM:=TO", r)
		}
		remap[from] = to
	}

	b, err := bag.Open(pos[0])
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
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	tr := c.Transport()

	// The topics to play, their names after remapping, and a publisher each.
	inSet := func(set []string, t *bag.Topic, full string) bool {
		for _, s := range set {
			if s == t.Name || s == full || "/"+strings.TrimPrefix(s, "/") == full {
				return true
			}
		}
		return false
	}
	clockTopic, err := node.ResolveTopicName(nros.DefaultClockTopic)
	if err != nil {
		return err
	}
	type out struct {
		pub  rmw.Publisher
		name string
	}
	pubs := map[*bag.Topic]*out{}
	var skipped []string
	for _, t := range b.Topics() {
		full, err := node.ResolveTopicName(t.Name)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", t.Name, err))
			continue
		}
		if len(pa.topics) > 0 && !inSet(pa.topics, t, full) || inSet(pa.exclude, t, full) {
			continue
		}
		if *clockHz > 0 && full == clockTopic && t.Type == clockType {
			// rosbag2: with --clock, the recorded /clock is not replayed.
			fmt.Fprintf(e.stdout, "not replaying the recorded %s: --clock publishes it\n", full)
			continue
		}
		if to, ok := remap[t.Name]; ok {
			full = to
		} else if to, ok := remap[full]; ok {
			full = to
		}
		if full, err = node.ResolveTopicName(full); err != nil {
			return usagef("--remap: %v", err)
		}
		if t.SerializationFormat != "" && t.SerializationFormat != "cdr" {
			skipped = append(skipped, fmt.Sprintf("%s (serialization format %q)", t.Name, t.SerializationFormat))
			continue
		}
		pub, err := tr.NewPublisher(info, full, t.Type, playbackQoS(t.OfferedQoSProfiles), rmw.EndpointOptions{})
		if err != nil {
			return fmt.Errorf("publisher on %s: %w", full, err)
		}
		defer pub.Close()
		pubs[t] = &out{pub, full}
	}
	for _, s := range skipped {
		fmt.Fprintf(e.stderr, "%s: not playing %s\n", prog, s)
	}
	var clockPub rmw.Publisher
	if *clockHz > 0 {
		if clockPub, err = tr.NewPublisher(info, clockTopic, clockType, nros.ClockQoS(), rmw.EndpointOptions{}); err != nil {
			return fmt.Errorf("publisher on %s: %w", clockTopic, err)
		}
		defer clockPub.Close()
	}
	if st.MessageCount == 0 {
		fmt.Fprintf(e.stdout, "%s holds no messages: nothing to play\n", pos[0])
		return statErr
	}

	var clockMsg rosgraph_msgs.Clock
	var clockBuf []byte
	var tl *timeline.Timeline
	if *svgPath != "" {
		if *clockHz <= 0 {
			return usagef("--svg %q: draws the published /clock, so it needs --clock", *svgPath)
		}
		tl = &timeline.Timeline{}
	}
	var playStart time.Time
	p := &player{
		start: st.Start, end: st.End,
		open: func(start int64) (playerSource, error) {
			return b.Messages(bag.ReadOptions{Start: start, Topics: func(t *bag.Topic) bool { return pubs[t] != nil }})
		},
		publish: func(m bag.Message) error {
			if o := pubs[m.Topic]; o != nil {
				return o.pub.Publish(m.Data)
			}
			return nil
		},
		publishClock: func(t int64) error {
			sec, nsec, err := nros.TimeFromNanoseconds(t).SecNanosec()
			if err != nil {
				return err
			}
			clockMsg.Clock.Sec, clockMsg.Clock.Nanosec = sec, nsec
			clockBuf = msg.Marshal(&clockMsg, true, clockBuf[:0])
			tl.Add(timeline.Clock, time.Since(playStart), t)
			return clockPub.Publish(clockBuf)
		},
		rate:        *rate,
		loop:        *loop,
		startPaused: *startPaused,
		startOffset: int64(*startOffset * 1e9),
		delay:       time.Duration(*delay * 1e9),
		queueSize:   *queue,
	}
	if *clockHz > 0 {
		p.clockPeriod = time.Duration(float64(time.Second) / *clockHz)
	}
	if !*quiet {
		p.logf = func(format string, a ...any) { fmt.Fprintf(e.stdout, format+"\n", a...) }
		fmt.Fprintf(e.stdout, "playing %s: %d messages on %d topics over %ss, at rate %g\n",
			pos[0], st.MessageCount, len(pubs), formatSeconds(st.Duration()), *rate)
	}
	reqs, stopServices, err := playerServices(ctx, c, node)
	if err != nil {
		return fmt.Errorf("player services: %w", err)
	}
	defer stopServices()
	p.requests = reqs
	detach := sync.OnceFunc(e.attachTerminal(p))
	defer detach()
	var bytes int64
	publish := p.publish
	p.publish = func(m bag.Message) error {
		bytes += int64(len(m.Data))
		return publish(m)
	}
	t0 := time.Now()
	playStart = t0
	n, err := p.Run(ctx)
	detach()
	if tl != nil {
		title := fmt.Sprintf("nros bag play %s --clock %g --rate %g: ROS time against wall time", pos[0], *clockHz, *rate)
		if werr := writeSVGFile(*svgPath, tl, title, []timeline.Span{{Label: "play"}}, time.Since(t0)); werr != nil && err == nil {
			err = werr
		}
	}
	if errors.Is(err, errQuit) {
		err = nil
	}
	if !*quiet {
		d := time.Since(t0).Seconds()
		fmt.Fprintf(e.stdout, "done: %d messages published (%.1f MB) in %.3f s: %.0f messages/s, %.1f MB/s\n",
			n, float64(bytes)/1e6, d, float64(n)/d, float64(bytes)/1e6/d)
	}
	if err == nil {
		err = statErr
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
