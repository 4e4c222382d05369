package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw"
)

// spinTime waits d for discovery when the transport's graph fills in
// through it (rmw.Discovering: DDS); an in-process graph is complete at
// once.
func (e *cliEnv) spinTime(ctx context.Context, tr rmw.Graph, d time.Duration) {
	if d > 0 && rmw.DiscoversPeers(tr) {
		_ = e.clock.SleepUntil(ctx, e.clock.Now().Add(d))
	}
}

// topicList is `nros topic list [-t]`: the topics of the graph, one per
// line, with their types in brackets under -t (as ros2 topic list).
func (e *cliEnv) topicList(ctx context.Context, args []string) error {
	const prog = "nros topic list"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros topic list [-t] [--spin-time S]")
	withTypes := fs.Bool("t", false, "show each topic's type")
	fs.BoolVar(withTypes, "show-types", false, "same as -t")
	spin := fs.Float64("spin-time", 1, "seconds to wait for DDS discovery")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *spin < 0 || math.IsNaN(*spin) || *spin > 3600 {
		return usagef("--spin-time %v: want 0 to 3600 seconds", *spin)
	}
	tr := c.Transport()
	e.spinTime(ctx, tr, time.Duration(*spin*1e9))
	eps := tr.Endpoints("")
	types := map[string][]string{}
	var names []string
	for _, ep := range eps {
		if _, seen := types[ep.Topic]; !seen {
			names = append(names, ep.Topic)
		}
		if !slices.Contains(types[ep.Topic], ep.Type) {
			types[ep.Topic] = append(types[ep.Topic], ep.Type)
		}
	}
	var b strings.Builder
	for _, n := range slices.Sorted(slices.Values(names)) {
		if *withTypes {
			fmt.Fprintf(&b, "%s [%s]\n", n, strings.Join(types[n], ", "))
		} else {
			fmt.Fprintln(&b, n)
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// topicInfo is `nros topic info TOPIC [-v]`, as ros2 topic info prints it.
func (e *cliEnv) topicInfo(ctx context.Context, args []string) error {
	const prog = "nros topic info"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros topic info TOPIC [-v] [--spin-time S]")
	verbose := fs.Bool("v", false, "list every endpoint with its node, GID and QoS")
	fs.BoolVar(verbose, "verbose", false, "same as -v")
	spin := fs.Float64("spin-time", 1, "seconds to wait for DDS discovery")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) != 1 {
		return usagef("want TOPIC, got %d arguments", len(pos))
	}
	if *spin < 0 || math.IsNaN(*spin) || *spin > 3600 {
		return usagef("--spin-time %v: want 0 to 3600 seconds", *spin)
	}
	node, topic, _, err := endpointNode(c, "nros_topic_info", pos[0])
	if err != nil {
		return err
	}
	node.Close()
	tr := c.Transport()
	e.spinTime(ctx, tr, time.Duration(*spin*1e9))
	eps := tr.Endpoints(topic)
	if len(eps) == 0 {
		return fmt.Errorf("unknown topic %q", topic)
	}
	var typs []string
	pubs, subs := 0, 0
	for _, ep := range eps {
		if !slices.Contains(typs, ep.Type) {
			typs = append(typs, ep.Type)
		}
		if ep.Publisher {
			pubs++
		} else {
			subs++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Type: %s\n", strings.Join(typs, ", "))
	fmt.Fprintf(&b, "Publisher count: %d\n", pubs)
	if *verbose {
		b.WriteString("\n")
		for _, ep := range eps {
			if ep.Publisher {
				writeEndpoint(&b, ep)
			}
		}
	}
	fmt.Fprintf(&b, "Subscription count: %d\n", subs)
	if *verbose {
		b.WriteString("\n")
		for _, ep := range eps {
			if !ep.Publisher {
				writeEndpoint(&b, ep)
			}
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// writeEndpoint writes one endpoint block of `topic info -v`.
func writeEndpoint(b *strings.Builder, ep rmw.EndpointInfo) {
	name, ns := ep.Node.Name, ep.Node.Namespace
	if name == "" {
		name, ns = "_NODE_NAME_UNKNOWN_", "_NODE_NAMESPACE_UNKNOWN_"
	}
	kind := "SUBSCRIPTION"
	if ep.Publisher {
		kind = "PUBLISHER"
	}
	gid := make([]string, len(ep.GID))
	for i, c := range ep.GID {
		gid[i] = fmt.Sprintf("%02x", c)
	}
	q := ep.QoS.Normalize()
	fmt.Fprintf(b, "Node name: %s\nNode namespace: %s\nTopic type: %s\nEndpoint type: %s\nGID: %s\nQoS profile:\n", name, ns, ep.Type, kind, strings.Join(gid, "."))
	fmt.Fprintf(b, "  Reliability: %s\n  History (Depth): %s\n  Durability: %s\n  Lifespan: %s\n  Deadline: %s\n  Liveliness: %s\n  Liveliness lease duration: %s\n\n",
		map[rmw.Reliability]string{rmw.Reliable: "RELIABLE", rmw.BestEffort: "BEST_EFFORT"}[q.Reliability],
		historyString(q), map[rmw.Durability]string{rmw.Volatile: "VOLATILE", rmw.TransientLocal: "TRANSIENT_LOCAL"}[q.Durability],
		durationString(q.Lifespan), durationString(q.Deadline),
		map[rmw.Liveliness]string{rmw.LivelinessAutomatic: "AUTOMATIC", rmw.LivelinessManualByTopic: "MANUAL_BY_TOPIC"}[q.Liveliness],
		durationString(q.LivelinessLeaseDuration))
}

func historyString(q rmw.QoS) string {
	if q.History == rmw.KeepAll {
		return "KEEP_ALL"
	}
	return fmt.Sprintf("KEEP_LAST (%d)", q.Depth)
}

// durationString spells a QoS duration as ros2 does (0: infinite).
func durationString(d time.Duration) string {
	if d == 0 {
		return "Infinite"
	}
	return fmt.Sprintf("%d nanoseconds", d.Nanoseconds())
}

// rateWindow keeps the arrival times (and sizes) of the last n messages.
type rateWindow struct {
	mu    sync.Mutex
	n     int
	times []int64 // ns on the measuring clock
	sizes []int
	fresh int // arrivals since the last report
}

func (w *rateWindow) add(t int64, size int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.times = append(w.times, t)
	w.sizes = append(w.sizes, size)
	if len(w.times) > w.n+1 {
		w.times = w.times[1:]
		w.sizes = w.sizes[1:]
	}
	w.fresh++
}

// hzReport is one `ros2 topic hz` block, or "" when nothing new arrived or
// the clock did not move (a paused simulation: no messages, not infinity).
func (w *rateWindow) hzReport() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fresh == 0 || len(w.times) < 2 {
		return ""
	}
	w.fresh = 0
	span := w.times[len(w.times)-1] - w.times[0]
	if span <= 0 {
		return ""
	}
	n := len(w.times) - 1
	minD, maxD, sum, sumSq := math.Inf(1), 0.0, 0.0, 0.0
	for i := 1; i < len(w.times); i++ {
		d := float64(w.times[i]-w.times[i-1]) / 1e9
		minD, maxD = math.Min(minD, d), math.Max(maxD, d)
		sum += d
		sumSq += d * d
	}
	mean := sum / float64(n)
	std := math.Sqrt(math.Max(sumSq/float64(n)-mean*mean, 0))
	return fmt.Sprintf("average rate: %.3f\n\tmin: %.3fs max: %.3fs std dev: %.5fs window: %d\n", 1/mean, minD, maxD, std, n+1)
}

// bwReport is one `ros2 topic bw` block.
func (w *rateWindow) bwReport() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fresh == 0 || len(w.times) < 2 {
		return ""
	}
	w.fresh = 0
	span := float64(w.times[len(w.times)-1]-w.times[0]) / 1e9
	if span <= 0 {
		return ""
	}
	total, minS, maxS := 0, math.MaxInt, 0
	for _, s := range w.sizes {
		total += s
		minS, maxS = min(minS, s), max(maxS, s)
	}
	n := len(w.sizes)
	// The bytes that arrived over the span: every message but the first.
	rate := float64(total-w.sizes[0]) / span
	return fmt.Sprintf("%s/s from %d messages\n\tMessage size mean: %s min: %s max: %s\n",
		bytesString(rate), n, bytesString(float64(total)/float64(n)), bytesString(float64(minS)), bytesString(float64(maxS)))
}

// bytesString spells a size as ros2 topic bw does (B, KB, MB).
func bytesString(b float64) string {
	switch {
	case b < 1000:
		return fmt.Sprintf("%.2f B", b)
	case b < 1e6:
		return fmt.Sprintf("%.2f KB", b/1000)
	}
	return fmt.Sprintf("%.2f MB", b/1e6)
}

// topicRate is `nros topic hz` and `nros topic bw`: a raw subscription (any
// type) whose arrivals are timed on the wall clock, or on ROS time with
// --use-sim-time, reported once a second of wall time.
func (e *cliEnv) topicRate(ctx context.Context, args []string, bw bool) error {
	prog, synopsis := "nros topic hz", "nros topic hz TOPIC [--window N] [--use-sim-time] [--count N]"
	if bw {
		prog, synopsis = "nros topic bw", "nros topic bw TOPIC [--window N] [--count N]"
	}
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, synopsis)
	window := fs.Int("window", 10000, "number of messages the statistics are computed over")
	if bw {
		*window = 100
	}
	simTime := false
	if !bw {
		fs.BoolVar(&simTime, "use-sim-time", false, "time arrivals on ROS time (/clock) instead of the wall clock")
	}
	reports := fs.Int("count", 0, "exit after N reports (0: never)")
	waitTimeout := fs.Float64("wait-timeout", 5, "seconds to wait for a publisher to show the topic's type")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) != 1 {
		return usagef("want TOPIC, got %d arguments", len(pos))
	}
	if *window < 1 || *window > 1_000_000 {
		return usagef("--window %d: want 1 to 1000000 messages", *window)
	}
	if *reports < 0 {
		return usagef("--count %d: want 0 (no limit) or more", *reports)
	}
	nodeOpts := []nros.NodeOption{nros.WithContext(c)}
	if simTime {
		nodeOpts = append(nodeOpts, nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	}
	node, err := nros.NewNode(strings.ReplaceAll(prog[5:], " ", "_"), nodeOpts...)
	if err != nil {
		return nodeError(err)
	}
	defer node.Close()
	topic, err := node.ResolveTopicName(pos[0])
	if err != nil {
		return usageError{cleanMessage(err)}
	}
	tr := c.Transport()
	typ, ok := e.lookupType(ctx, tr, topic, time.Duration(*waitTimeout*1e9))
	if !ok {
		return fmt.Errorf("no publisher of %s with one type appeared in %gs", topic, *waitTimeout)
	}
	m, err := newMessage(typ)
	if err != nil {
		return err
	}
	clk := node.Clock()
	w := &rateWindow{n: *window}
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	qos := rmw.QoS{Reliability: rmw.BestEffort, History: rmw.KeepLast, Depth: 10}
	sub, err := tr.NewSubscription(info, topic, m.TypeName(), qos, func(s rmw.Sample) {
		now := e.clock.Now().UnixNano()
		if simTime {
			now = clk.Now().Nanoseconds()
		}
		w.add(now, len(s.Data))
	}, rmw.EndpointOptions{})
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", topic, err)
	}
	defer sub.Close()
	if bw {
		fmt.Fprintf(e.stdout, "Subscribed to [%s]\n", topic)
	}
	next := e.clock.Now()
	for n := 0; *reports == 0 || n < *reports; {
		next = next.Add(time.Second)
		if e.clock.SleepUntil(ctx, next) != nil {
			return nil
		}
		var r string
		if bw {
			r = w.bwReport()
		} else {
			r = w.hzReport()
		}
		if r == "" {
			continue // no new messages (or a paused clock): nothing to say
		}
		if _, err := fmt.Fprint(e.stdout, r); err != nil {
			return err
		}
		n++
	}
	return nil
}
