package nros

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
)

// ClockSilenceWarning is how long (wall time) a /clock subscription waits
// for its first sample before it warns, once, on the logger of the node
// that installed it (use_sim_time true or InstallRosTimeSource). The
// warning names the topic, the QoS the subscription listens with, how many
// publishers matched, and every publisher on the topic whose QoS (or type)
// keeps it from matching. Until a first sample arrives ROS time reads
// system time, which is rarely what a node set up for simulation wants.
const ClockSilenceWarning = 5 * time.Second

// ClockStallWarning is how long (wall time) a /clock subscription that has
// had samples may go without one before it warns, once per stall, on the
// logger of the node that installed it; ROS time stands still meanwhile. A
// paused simulation keeps publishing the same time and does not stall.
// When samples come back it logs, at level Info, how long the stall lasted
// and how far ROS time jumped across it.
const ClockStallWarning = 30 * time.Second

// ClockStats describes the samples the time source of a context has
// installed: how often they come, how fast simulated time runs against the
// wall, and how it last jumped. Rates are measured over the last second of
// wall time.
type ClockStats struct {
	// Samples counts the samples installed (paused repeats included).
	Samples uint64
	// SampleRate is samples per second of wall time.
	SampleRate float64
	// RealTimeFactor is seconds of simulated time per second of wall time,
	// jumps excluded: 1 for a simulation at real speed, 0 while paused.
	RealTimeFactor float64
	// Paused is true while the samples repeat the same time.
	Paused bool
	// Stalled is true when no sample has come for a second (for two sample
	// intervals of a source slower than 2 Hz); SampleRate and
	// RealTimeFactor are then 0.
	Stalled bool
	// Jumps counts jumps: every backward step, and every forward step
	// longer than 1 s and 10 times the wall time since the previous sample.
	Jumps uint64
	// LastJump is the latest jump, or the first sample when there was none
	// (its Kind then is SourceJumpFirst).
	LastJump SourceJump
	// Last is the latest installed time; LastAge the wall time since it came.
	Last    Time
	LastAge time.Duration
}

// SourceJumpKind says what a SourceJump was.
type SourceJumpKind uint8

const (
	// SourceJumpNone: no sample yet.
	SourceJumpNone SourceJumpKind = iota
	// SourceJumpFirst: the first sample, replacing system time.
	SourceJumpFirst
	// SourceJumpForward: time leapt ahead.
	SourceJumpForward
	// SourceJumpBackward: time went back (a bag loop, a reset).
	SourceJumpBackward
)

// String names the kind.
func (k SourceJumpKind) String() string {
	switch k {
	case SourceJumpFirst:
		return "first"
	case SourceJumpForward:
		return "forward"
	case SourceJumpBackward:
		return "backward"
	}
	return "none"
}

// SourceJump is one jump of a time source.
type SourceJump struct {
	Kind     SourceJumpKind
	From, To Time          // From is zero for the first sample
	Ago      time.Duration // wall time since it happened
}

// SourceStats returns the statistics of the time source that drives a ROS
// clock's context (the zero value for system and steady clocks, and before
// any sample). It takes the override's lock, never the Now path's.
func (c *Clock) SourceStats() ClockStats {
	if c.typ != ROSTime {
		return ClockStats{}
	}
	return clockStatsOf(c.ov.SourceStats())
}

func clockStatsOf(s clock.Stats, now int64) ClockStats {
	if s.Samples == 0 {
		return ClockStats{}
	}
	out := ClockStats{Samples: s.Samples, SampleRate: s.SampleRate, RealTimeFactor: s.RealTimeFactor,
		Paused: s.Paused, Stalled: s.Stalled, Jumps: s.Jumps, Last: Time{s.LastSim},
		LastAge: time.Duration(now - s.LastWall)}
	out.LastJump = SourceJump{From: Time{s.LastJump.From}, To: Time{s.LastJump.To}, Ago: time.Duration(now - s.LastJump.Wall)}
	switch s.LastJump.Event {
	case clock.EventFirst:
		out.LastJump.Kind = SourceJumpFirst
	case clock.EventJumpForward:
		out.LastJump.Kind = SourceJumpForward
	case clock.EventJumpBackward:
		out.LastJump.Kind = SourceJumpBackward
	}
	return out
}

// clockHealth watches one clock subscription for its first sample.
type clockHealth struct {
	ctx   *Context
	cs    *clockSubscription
	log   *slog.Logger
	got   atomic.Bool
	timer clock.Timer

	// The stall watch (armed by the first sample): last is the steady
	// time of the latest sample; stalled is set by checkStall when it
	// warned, and cleared by the sample that resumes.
	last    atomic.Int64
	stalled atomic.Bool
	smu     sync.Mutex
	stall   clock.Timer // guarded by smu

	mu           sync.Mutex
	incompatible map[string]string // remote GID (hex) -> policy, from the transport's events
	warned       bool
}

// maxIncompatible bounds what the events may record.
const maxIncompatible = 64

// watchClock arms the silence warning of cs and returns the deliver
// function and endpoint options its subscription is made with.
func (c *Context) watchClock(cs *clockSubscription, node rmw.NodeInfo) (func(rmw.Sample), rmw.EndpointOptions) {
	h := &clockHealth{ctx: c, cs: cs, log: cs.log}
	if h.log == nil {
		h.log = c.logger(loggerName(node.Namespace, node.Name))
	}
	h.timer = c.src.AfterFunc(ClockSilenceWarning, h.check)
	return h.deliver, rmw.EndpointOptions{OnEvent: h.onEvent, TypeHash: messageTypeHash(&rosgraph_msgs.Clock{})}
}

func (h *clockHealth) deliver(s rmw.Sample) {
	now := int64(h.ctx.src.Steady())
	prev := h.last.Swap(now)
	if !h.got.Load() && h.got.CompareAndSwap(false, true) {
		h.timer.Stop()
		h.cs.deliver(s)
		h.armStall(ClockStallWarning)
		return
	}
	if h.stalled.Load() && h.stalled.CompareAndSwap(true, false) {
		h.resume(s, time.Duration(now-prev))
		return
	}
	h.cs.deliver(s)
}

// armStall makes checkStall run after d.
func (h *clockHealth) armStall(d time.Duration) {
	h.smu.Lock()
	defer h.smu.Unlock()
	if h.stall == nil {
		h.stall = h.ctx.src.AfterFunc(d, h.checkStall)
	} else {
		h.stall.Reset(d)
	}
}

// current reports whether the subscription is still the context's.
func (h *clockHealth) current() (rmw.Subscription, bool) {
	c := h.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := !c.closed.Load() && c.clockSubs[h.cs.topic] == h.cs && h.cs.sub != nil
	return h.cs.sub, ok
}

// checkStall runs ClockStallWarning after the latest sample it knew of: it
// warns if no sample came since, and otherwise looks again
// ClockStallWarning after the latest one.
func (h *clockHealth) checkStall() {
	sub, ok := h.current()
	if !ok {
		return
	}
	freshen(sub)
	age := time.Duration(int64(h.ctx.src.Steady()) - h.last.Load())
	if age < ClockStallWarning {
		h.armStall(ClockStallWarning - age)
		return
	}
	h.stalled.Store(true)
	h.log.Warn(fmt.Sprintf("no sample on %s for %v: ROS time stands still at %v until one arrives",
		h.cs.topic, ClockStallWarning, time.Duration(h.ctx.ov.Now())))
}

// resume installs the sample that ends a stall and says so.
func (h *clockHealth) resume(s rmw.Sample, stalledFor time.Duration) {
	before := int64(h.ctx.ov.Now())
	h.cs.deliver(s)
	after := int64(h.ctx.ov.Now())
	h.log.Info(fmt.Sprintf("%s resumed after %v without a sample; ROS time jumped %v (from %v to %v)",
		h.cs.topic, stalledFor, time.Duration(after-before), time.Duration(before), time.Duration(after)))
	h.armStall(ClockStallWarning)
}

func (h *clockHealth) onEvent(ev rmw.Event) {
	if ev.Kind != rmw.EventIncompatibleQoS {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.incompatible == nil {
		h.incompatible = map[string]string{}
	}
	gid := normGID(ev.Remote)
	if _, seen := h.incompatible[gid]; !seen {
		// The subscriber side says so at once (the publisher's side hears
		// it too): this node stays on system time until a match.
		h.log.Warn("incompatible QoS: the clock subscription cannot match a publisher", "topic", h.cs.topic,
			"endpoint", "subscription", "policy", ev.Policy, "remote", ev.Remote, "listening_with", describeQoS(h.cs.qos))
	}
	if len(h.incompatible) < maxIncompatible {
		h.incompatible[gid] = ev.Policy
	}
}

// normGID spells a transport's GID string as plain hex (rtps writes
// "prefix.prefix.prefix|entity").
func normGID(s string) string {
	return strings.ToLower(strings.NewReplacer(".", "", "|", "").Replace(s))
}

// check runs once, ClockSilenceWarning after the subscription was made.
func (h *clockHealth) check() {
	if h.got.Load() {
		return
	}
	c := h.ctx
	sub, current := h.current()
	if !current {
		return // released, failed or shut down meanwhile
	}
	if freshen(sub); h.got.Load() {
		return
	}
	h.mu.Lock()
	if h.warned {
		h.mu.Unlock()
		return
	}
	h.warned = true
	events := make(map[string]string, len(h.incompatible))
	for k, v := range h.incompatible {
		events[k] = v
	}
	h.mu.Unlock()

	cs := h.cs
	var b strings.Builder
	fmt.Fprintf(&b, "no sample on %s after %v: ROS time reads system time until one arrives. "+
		"Listening for rosgraph_msgs/msg/Clock with QoS %s; %d publisher(s) matched",
		cs.topic, ClockSilenceWarning, describeQoS(cs.qos), sub.MatchedPublishers())
	if bad := incompatiblePublishers(c.Transport(), cs.topic, cs.qos, events); len(bad) > 0 {
		fmt.Fprintf(&b, "; incompatible publisher(s) on %s: %s", cs.topic, strings.Join(bad, "; "))
	} else {
		fmt.Fprintf(&b, "; no incompatible publisher seen on %s", cs.topic)
	}
	h.log.Warn(b.String())
}

// describeQoS spells a profile the way the QoS override parameters do.
func describeQoS(q QoS) string {
	q = q.Normalize()
	s := reliabilityNames[q.Reliability] + ", " + durabilityNames[q.Durability] + ", "
	if q.History == rmw.KeepAll {
		return s + "keep_all"
	}
	return s + fmt.Sprintf("keep_last(%d)", q.Depth)
}

// graphPublisher is a publisher on the clock topic as the graph shows it.
type graphPublisher struct {
	node string
	typ  string
	gid  string
	qos  QoS
}

// graphPublishers lists the publishers on topic that the transport's graph
// shows.
func graphPublishers(t rmw.Graph, topic string) []graphPublisher {
	var out []graphPublisher
	for _, e := range t.Endpoints(topic) {
		if !e.Publisher {
			continue
		}
		name := e.Node.Name
		if name != "" {
			name = strings.TrimSuffix(e.Node.Namespace, "/") + "/" + e.Node.Name
		}
		out = append(out, graphPublisher{node: name, typ: e.Type, gid: fmt.Sprintf("%x", e.GID[:]), qos: e.QoS})
	}
	return out
}

// incompatiblePublishers describes the publishers on topic that cannot
// serve a subscription with qos: those the transport reported in an
// incompatible-QoS event, and those the graph shows with a refused QoS or
// another type.
func incompatiblePublishers(t rmw.Graph, topic string, qos QoS, events map[string]string) []string {
	const clockType = "rosgraph_msgs/msg/Clock"
	var out []string
	seen := map[string]bool{}
	for _, p := range graphPublishers(t, topic) {
		policy, ok := events[p.gid]
		if !ok {
			switch {
			case p.typ != clockType:
				policy = "TYPE"
			default:
				policy = rmw.Incompatibility(p.qos, qos)
			}
		}
		if policy == "" {
			continue
		}
		seen[p.gid] = true
		who := p.node
		if who == "" {
			who = "gid " + p.gid
		}
		detail := "offers " + describeQoS(p.qos)
		if policy == rmw.PolicyType {
			detail = "type " + p.typ
		}
		out = append(out, fmt.Sprintf("%s (%s: %s)", who, policy, detail))
	}
	// Reported by the transport but not (or no longer) in its graph.
	var rest []string
	for gid, policy := range events {
		if !seen[gid] {
			rest = append(rest, fmt.Sprintf("gid %s (%s)", gid, policy))
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// freshen reads what waits on the socket of a clock subscription that an
// executor holds while it runs callbacks (rmw.Feed.Fresh), so that a sample
// that arrived meanwhile counts.
func freshen(sub rmw.Subscription) {
	if f, ok := sub.(rmw.Feed); ok {
		f.Fresh()
	}
}
