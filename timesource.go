package nros

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
)

// UseSimTimeParameter is the reserved parameter that turns simulated time
// on for a node: every node declares it (false by default); setting it true
// installs the /clock time source on the node's context, setting it false
// stops installing samples and keeps the last simulated time.
const UseSimTimeParameter = "use_sim_time"

// DefaultClockTopic is where simulators and `ros2 bag play --clock` publish.
const DefaultClockTopic = "/clock"

// clockSubscription is a context's subscription to one clock topic, shared
// by every node of the context that installs a time source on that topic.
type clockSubscription struct {
	ctx     *Context
	topic   string
	qos     QoS
	refs    int
	sub     rmw.Subscription
	src     *TimeSource
	log     *slog.Logger
	dropped atomic.Uint64
	warned  atomic.Bool
	once    sync.Once
}

// deliver runs on the transport's goroutine: the sample is installed there,
// never queued behind user callbacks, so a callback that waits on ROS time
// cannot starve the clock.
//
// A sample whose nanosec field is 1e9 or more is carried into seconds (as
// rclcpp's Time from a message and nano-ros do): {1, 1500000000} is 2.5 s.
// A sample before the epoch is dropped and counted, the clock keeps its
// value, and the first one is logged as a warning naming the topic.
func (cs *clockSubscription) deliver(s rmw.Sample) {
	sec, nanosec, ok := decodeClock(s.Data)
	if !ok {
		cs.dropped.Add(1)
		return
	}
	t := NewTime(sec, nanosec)
	if cs.src.install(t) == clock.Rejected && cs.warned.CompareAndSwap(false, true) {
		cs.log.Warn("dropped a /clock sample before the epoch (negative time); the clock keeps its value",
			"topic", cs.topic, "sec", sec, "nanosec", nanosec)
	}
}

// decodeClock reads a rosgraph_msgs/msg/Clock sample: what msg.Unmarshal
// reads, and false where it fails (FuzzDecodeClock holds it to that), with
// no decoder to fetch and return. The /clock sample is the hot path, and
// after 10 ms of idle every structure it touches is a cache miss.
func decodeClock(b []byte) (sec int32, nanosec uint32, ok bool) {
	le, err := cdr.ParseHeader(b)
	if err != nil || len(b) < cdr.HeaderSize+8 {
		return 0, 0, false
	}
	body := b[cdr.HeaderSize:]
	if le {
		return int32(binary.LittleEndian.Uint32(body)), binary.LittleEndian.Uint32(body[4:]), true
	}
	return int32(binary.BigEndian.Uint32(body)), binary.BigEndian.Uint32(body[4:]), true
}

func (cs *clockSubscription) close() {
	cs.once.Do(func() {
		if f, ok := cs.sub.(rmw.Feed); ok {
			cs.ctx.ov.ClearFeed(f)
		}
		if cs.sub != nil {
			cs.sub.Close()
		}
		cs.src.Detach()
	})
}

// acquireClock returns the context's subscription on topic, making it on
// first use with qos.
func (c *Context) acquireClock(topic string, qos QoS, node rmw.NodeInfo, log *slog.Logger) (*clockSubscription, error) {
	if c.closed.Load() {
		return nil, errors.New("nros: context is shut down")
	}
	t := c.Transport()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs := c.clockSubs[topic]; cs != nil {
		if cs.qos != qos {
			// One subscription per topic and context: the first node's QoS
			// stays in force. Say so rather than silently ignore the ask.
			log.Warn("the context already listens to this clock topic with another QoS; keeping it",
				"topic", topic, "in_force", describeQoS(cs.qos), "asked", describeQoS(qos))
		}
		cs.refs++
		return cs, nil
	}
	cs := &clockSubscription{ctx: c, topic: topic, qos: qos, refs: 1, log: log}
	cs.src = c.AttachTimeSource()
	deliver, opts := c.watchClock(cs, node) // health.go: warns once if no sample comes
	// A socket of its own where the transport has one: an executor whose
	// ROS timers wait on this clock reads it itself (rmw.Feed).
	opts.Feed = true
	sub, err := t.NewSubscription(node, topic, (&rosgraph_msgs.Clock{}).TypeName(), qos, deliver, opts)
	if err != nil {
		cs.src.Detach()
		return nil, fmt.Errorf("nros: subscribing to %s: %w", topic, err)
	}
	cs.sub = sub
	if f, ok := sub.(rmw.Feed); ok {
		c.ov.SetFeed(f)
	}
	c.clockSubs[topic] = cs
	return cs, nil
}

// releaseClock drops one reference; the last one unsubscribes. The context
// keeps the last simulated time.
func (c *Context) releaseClock(cs *clockSubscription) {
	c.mu.Lock()
	cs.refs--
	last := cs.refs == 0
	if last && c.clockSubs[cs.topic] == cs {
		delete(c.clockSubs, cs.topic)
	}
	c.mu.Unlock()
	if last {
		cs.close()
	}
}

// ClockSamplesRejected counts the clock samples that were not installed
// because their time was negative (before the epoch), from /clock
// subscriptions and TimeSource.Install alike.
func (c *Context) ClockSamplesRejected() uint64 { return c.ov.Rejected() }

// ClockSamplesDropped counts /clock samples that arrived malformed and were
// dropped, over the context's clock subscriptions.
func (c *Context) ClockSamplesDropped() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n uint64
	for _, cs := range c.clockSubs {
		n += cs.dropped.Load()
	}
	return n
}

// InstallRosTimeSource subscribes the node's context to /clock (remapped
// by the command line's -r rules, e.g. `-r clock:=/sim/clock`), so that the
// node's ROS clock follows it. It is what use_sim_time=true does.
func (n *Node) InstallRosTimeSource() error { return n.InstallRosTimeSourceOn(DefaultClockTopic) }

// InstallRosTimeSourceOn subscribes to a clock on another topic (relative
// names are resolved against the node's namespace, then remapped). The
// subscription uses ClockQoS, or the node's WithClockQoS profile, modified
// by the read-only parameters qos_overrides.<topic>.subscription.{reliability,
// durability,history,depth} as rclcpp does. Nodes of one context share one
// subscription per topic. Installing on another topic replaces the node's
// previous source.
func (n *Node) InstallRosTimeSourceOn(topic string) error {
	return n.installTimeSource(topic, n.live().params)
}

// paramDeclarer is where the time source's QoS parameters are read and
// declared: the node's store, or the parameter transaction that is
// setting use_sim_time (they are then committed with it, or not at all).
type paramDeclarer interface {
	Has(name string) bool
	Get(name string) (param.Value, error)
	Declare(name string, def param.Value, d param.Descriptor) (param.Value, error)
}

// installTimeSource is InstallRosTimeSourceOn with the QoS parameters
// taken from ps. On error the node keeps the source it had.
func (n *Node) installTimeSource(topic string, ps paramDeclarer) error {
	resolved, err := n.resolveTopic(topic)
	if err != nil {
		return err
	}
	n.simMu.Lock()
	defer n.simMu.Unlock()
	if n.clockSub != nil && n.clockSub.topic == resolved {
		return nil
	}
	qos, err := n.clockQoSFor(resolved, ps)
	if err != nil {
		return err
	}
	cs, err := n.ctx.acquireClock(resolved, qos, n.info(), n.log)
	if err != nil {
		return err
	}
	if n.clockSub != nil {
		n.ctx.releaseClock(n.clockSub)
	}
	n.clockSub = cs
	return nil
}

// RemoveRosTimeSource stops the node's time source: samples stop being
// installed (once no other node of the context listens) and the clock keeps
// the last simulated time. It is what use_sim_time=false does.
func (n *Node) RemoveRosTimeSource() {
	n.live().simMu.Lock()
	defer n.simMu.Unlock()
	if n.clockSub != nil {
		n.ctx.releaseClock(n.clockSub)
		n.clockSub = nil
	}
}

// RosTimeSourceTopic returns the topic of the node's installed time source,
// or "" when it has none.
func (n *Node) RosTimeSourceTopic() string {
	n.live().simMu.Lock()
	defer n.simMu.Unlock()
	if n.clockSub == nil {
		return ""
	}
	return n.clockSub.topic
}

// clockQoSFor declares (once) the read-only QoS override parameters of the
// clock subscription and applies them.
func (n *Node) clockQoSFor(topic string, ps paramDeclarer) (QoS, error) {
	q := n.cfg.clockQoS
	prefix := "qos_overrides." + topic + ".subscription."
	decl := func(name string, def param.Value) (param.Value, error) {
		full := prefix + name
		if ps.Has(full) {
			return ps.Get(full)
		}
		return ps.Declare(full, def, param.Descriptor{ReadOnly: true,
			Description: "QoS override for the " + topic + " time source subscription (read-only: give it at startup)"})
	}
	// choose reads one policy parameter and maps its value by name.
	choose := func(name string, def string, names map[string]uint8) (uint8, error) {
		v, err := decl(name, param.StringValue(def))
		if err != nil {
			return 0, err
		}
		s, _ := v.Str()
		k, ok := names[strings.ToLower(s)]
		if !ok {
			return 0, fmt.Errorf("nros: %s%s: %q is not one of %s", prefix, name, s, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
		}
		return k, nil
	}
	r, err := choose("reliability", reliabilityNames[q.Reliability], policyValues(reliabilityNames))
	if err != nil {
		return q, err
	}
	d, err := choose("durability", durabilityNames[q.Durability], policyValues(durabilityNames))
	if err != nil {
		return q, err
	}
	h, err := choose("history", historyNames[q.History], policyValues(historyNames))
	if err != nil {
		return q, err
	}
	q.Reliability, q.Durability, q.History = rmw.Reliability(r), rmw.Durability(d), rmw.History(h)
	v, err := decl("depth", param.IntegerValue(int64(q.Depth)))
	if err != nil {
		return q, err
	}
	depth, _ := v.Integer()
	if depth < 0 || depth > 1<<20 {
		return q, fmt.Errorf("nros: %sdepth: %d out of range [0, 1048576]", prefix, depth)
	}
	q.Depth = int(depth)
	return q, nil
}

// The spellings of the QoS override parameters (rclcpp's).
var (
	reliabilityNames = map[rmw.Reliability]string{rmw.ReliabilitySystemDefault: "system_default", rmw.Reliable: "reliable", rmw.BestEffort: "best_effort"}
	durabilityNames  = map[rmw.Durability]string{rmw.DurabilitySystemDefault: "system_default", rmw.Volatile: "volatile", rmw.TransientLocal: "transient_local"}
	historyNames     = map[rmw.History]string{rmw.HistorySystemDefault: "system_default", rmw.KeepLast: "keep_last", rmw.KeepAll: "keep_all"}
)

// policyValues inverts a policy-name table.
func policyValues[K ~uint8](names map[K]string) map[string]uint8 {
	out := make(map[string]uint8, len(names))
	for k, v := range names {
		out[v] = uint8(k)
	}
	return out
}

// applyParams is the apply phase of every parameter transaction of the
// node (param.Options.Apply): after the validators accepted and before
// anything is committed, a change of use_sim_time installs or removes the
// /clock time source. A source that cannot be installed refuses the whole
// set with the reason, and the QoS parameters it would have declared are
// dropped with it; use_sim_time keeps its value. It runs inside the
// transaction, so post-set callbacks already see the new time source.
func (n *Node) applyParams(tx *param.Txn, changed []param.Parameter) error {
	was, _ := n.params.Get(UseSimTimeParameter) // the committed value (NOT_SET while declaring)
	cur, _ := was.Bool()
	for _, p := range changed {
		if p.Name != UseSimTimeParameter {
			continue
		}
		on, ok := p.Value.Bool()
		if !ok {
			// Validators refuse other types; an undeclaration (of one
			// auto-declared from an override) does not run them.
			return fmt.Errorf("parameter '%s' is reserved: it must stay a bool", UseSimTimeParameter)
		}
		if on == cur {
			continue
		}
		if on {
			if err := n.followClock(tx); err != nil {
				return err
			}
		} else {
			n.RemoveRosTimeSource()
		}
		cur = on
	}
	return nil
}

// followClock installs the /clock time source for use_sim_time=true; its
// error names the parameter and reads as a set's refusal reason.
func (n *Node) followClock(ps paramDeclarer) error {
	if err := n.installTimeSource(DefaultClockTopic, ps); err != nil {
		return fmt.Errorf("%s=true: cannot install the %s time source: %s", UseSimTimeParameter, DefaultClockTopic,
			strings.TrimPrefix(err.Error(), "nros: "))
	}
	return nil
}

// validateUseSimTime refuses a use_sim_time that is not a bool with a clear
// reason (the store refuses type changes too; this names the rule).
func validateUseSimTime(ps []param.Parameter) param.SetResult {
	for _, p := range ps {
		if p.Name == UseSimTimeParameter && p.Value.Type() != param.TypeBool {
			return param.SetResult{Reason: fmt.Sprintf("parameter '%s' must be a bool (got %s %s)",
				UseSimTimeParameter, p.Value.Type(), p.Value.ValueString())}
		}
	}
	return param.SetResult{Successful: true}
}
