package nros

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// publishClock publishes one /clock sample through the context's transport,
// as a simulator on the same graph would.
func clockPublisher(t *testing.T, ctx *Context, topic string, qos QoS) func(sec int32) {
	t.Helper()
	n, err := NewNode("sim", WithContext(ctx), WithoutGlobalArguments())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	p, err := NewPublisher[rosgraph_msgs.Clock](n, topic, qos)
	if err != nil {
		t.Fatal(err)
	}
	return func(sec int32) {
		t.Helper()
		if err := p.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: sec}}); err != nil {
			t.Fatal(err)
		}
	}
}

func quietContext(opts ...ContextOption) *Context {
	return NewContext(append([]ContextOption{WithLogHandler(slog.DiscardHandler)}, opts...)...)
}

func TestUseSimTimeFromEveryParameterPath(t *testing.T) {
	dir := t.TempDir()
	yaml := func(body string) string {
		f := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".yaml")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name    string
		node    string
		ns      string
		args    func() []string
		opts    []NodeOption
		runtime *bool // set at runtime after creation
		want    bool
	}{
		{name: "default off", node: "a", args: func() []string { return nil }, want: false},
		{name: "-p", node: "a", args: func() []string { return []string{"--ros-args", "-p", "use_sim_time:=true"} }, want: true},
		{name: "-p targeted at the node", node: "a", args: func() []string { return []string{"--ros-args", "-p", "a:use_sim_time:=true"} }, want: true},
		{name: "-p targeted at another node", node: "a", args: func() []string { return []string{"--ros-args", "-p", "b:use_sim_time:=true"} }, want: false},
		{name: "params file by node name", node: "talker", args: func() []string {
			return []string{"--ros-args", "--params-file", yaml("talker:\n  ros__parameters:\n    use_sim_time: true\n")}
		}, want: true},
		{name: "params file /** wildcard", node: "talker", ns: "/robot", args: func() []string {
			return []string{"--ros-args", "--params-file", yaml("/**:\n  ros__parameters:\n    use_sim_time: true\n")}
		}, want: true},
		{name: "params file with namespace", node: "talker", ns: "/robot", args: func() []string {
			return []string{"--ros-args", "--params-file", yaml("/robot/talker:\n  ros__parameters:\n    use_sim_time: true\n")}
		}, want: true},
		{name: "params file then -p false", node: "talker", args: func() []string {
			return []string{"--ros-args", "--params-file", yaml("/**:\n  ros__parameters:\n    use_sim_time: true\n"), "-p", "use_sim_time:=false"}
		}, want: false},
		{name: "override option", node: "a", args: func() []string { return nil }, opts: []NodeOption{WithParameterOverrides(map[string]any{"use_sim_time": true})}, want: true},
		{name: "set at runtime", node: "a", args: func() []string { return nil }, runtime: ptr(true), want: true},
		{name: "set false at runtime", node: "a", args: func() []string { return []string{"--ros-args", "-p", "use_sim_time:=true"} }, runtime: ptr(false), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := quietContext()
			if _, err := ctx.Init(tt.args()); err != nil {
				t.Fatal(err)
			}
			opts := append([]NodeOption{WithContext(ctx)}, tt.opts...)
			if tt.ns != "" {
				opts = append(opts, WithNamespace(tt.ns))
			}
			n, err := NewNode(tt.node, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			if tt.runtime != nil {
				if r := n.SetParameter(Parameter{Name: "use_sim_time", Value: BoolValue(*tt.runtime)}); !r.Successful {
					t.Fatalf("set refused: %s", r.Reason)
				}
			}
			pub := clockPublisher(t, ctx, "/clock", ClockQoS())
			pub(4242)
			c := n.Clock()
			if tt.want {
				if !c.RosTimeIsActive() || !c.Started() || c.Now().Nanoseconds() != 4242*sec {
					t.Fatalf("sim time not followed: active=%v started=%v now=%v", c.RosTimeIsActive(), c.Started(), c.Now())
				}
				if n.RosTimeSourceTopic() != "/clock" {
					t.Fatalf("source topic %q", n.RosTimeSourceTopic())
				}
			} else if c.Started() || c.Now().Nanoseconds() == 4242*sec {
				t.Fatal("followed /clock with use_sim_time false")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestUseSimTimeWrongTypes(t *testing.T) {
	for _, arg := range []string{"use_sim_time:=notabool", "use_sim_time:=1", "use_sim_time:=[true]"} {
		ctx := quietContext()
		if _, err := ctx.Init([]string{"--ros-args", "-p", arg}); err != nil {
			t.Fatal(err)
		}
		_, err := NewNode("a", WithContext(ctx))
		if err == nil || !strings.Contains(err.Error(), "use_sim_time") || !strings.Contains(err.Error(), "bool") {
			t.Fatalf("%s: NewNode error %v; want one naming use_sim_time and bool", arg, err)
		}
	}
	ctx := quietContext()
	n, err := NewNode("a", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	r := n.SetParameter(Parameter{Name: "use_sim_time", Value: StringValue("true")})
	if r.Successful || !strings.Contains(r.Reason, "use_sim_time") || !strings.Contains(r.Reason, "bool") {
		t.Fatalf("set to a string: %+v", r)
	}
	if v, _ := n.GetParameter("use_sim_time"); v.Type() != ParameterBool || n.Clock().RosTimeIsActive() {
		t.Fatal("a refused set changed something")
	}
	// Auto-declared (dynamically typed) overrides are still checked.
	if _, err := NewNode("b", WithContext(ctx), AutomaticallyDeclareParametersFromOverrides(),
		WithParameterOverrides(map[string]any{"use_sim_time": "yes"})); err == nil {
		t.Fatal("a string use_sim_time was accepted")
	}
}

func TestUseSimTimeFalseKeepsLastSimTime(t *testing.T) {
	ctx := quietContext()
	n, err := NewNode("a", WithContext(ctx), WithParameterOverrides(map[string]any{"use_sim_time": true}))
	if err != nil {
		t.Fatal(err)
	}
	pub := clockPublisher(t, ctx, "/clock", ClockQoS())
	pub(100)
	n.SetParameter(Parameter{Name: "use_sim_time", Value: BoolValue(false)})
	pub(200) // not installed any more
	c := n.Clock()
	if c.Now().Nanoseconds() != 100*sec || !c.RosTimeIsActive() {
		t.Fatalf("after use_sim_time false: now=%v active=%v; want the last sim time kept", c.Now(), c.RosTimeIsActive())
	}
	c.ClearRosTimeOverride()
	if c.RosTimeIsActive() || c.Now().Nanoseconds() == 100*sec {
		t.Fatal("clear did not hand back to system time")
	}
	// On again: the next sample is installed.
	n.SetParameter(Parameter{Name: "use_sim_time", Value: BoolValue(true)})
	pub(300)
	if c.Now().Nanoseconds() != 300*sec {
		t.Fatalf("re-enabled: now=%v", c.Now())
	}
}

func TestRemappedClockTopic(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		call func(n *Node) error
	}{
		{"-r clock:=/sim/clock", []string{"--ros-args", "-r", "clock:=/sim/clock", "-p", "use_sim_time:=true"}, nil},
		{"-r /clock:=/sim/clock", []string{"--ros-args", "-r", "/clock:=/sim/clock", "-p", "use_sim_time:=true"}, nil},
		{"InstallRosTimeSourceOn", nil, func(n *Node) error { return n.InstallRosTimeSourceOn("/sim/clock") }},
		{"InstallRosTimeSourceOn relative", nil, func(n *Node) error { return n.InstallRosTimeSourceOn("sim/clock") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := quietContext()
			if _, err := ctx.Init(tc.args); err != nil {
				t.Fatal(err)
			}
			n, err := NewNode("a", WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if tc.call != nil {
				if err := tc.call(n); err != nil {
					t.Fatal(err)
				}
			}
			if got := n.RosTimeSourceTopic(); got != "/sim/clock" {
				t.Fatalf("source on %q", got)
			}
			clockPublisher(t, ctx, "/clock", ClockQoS())(1)
			if n.Clock().Started() {
				t.Fatal("followed /clock instead of /sim/clock")
			}
			clockPublisher(t, ctx, "/sim/clock", ClockQoS())(2)
			if n.Clock().Now().Nanoseconds() != 2*sec {
				t.Fatalf("now=%v, want 2s from /sim/clock", n.Clock().Now())
			}
		})
	}
}

func TestClockQoSOverrideParameters(t *testing.T) {
	ctx := quietContext()
	if _, err := ctx.Init([]string{"--ros-args", "-p", "use_sim_time:=true",
		"-p", "qos_overrides./clock.subscription.reliability:=reliable",
		"-p", "qos_overrides./clock.subscription.depth:=5"}); err != nil {
		t.Fatal(err)
	}
	n, err := NewNode("a", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"reliability": "reliable", "durability": "volatile", "history": "keep_last", "depth": "5"} {
		v, err := n.GetParameter("qos_overrides./clock.subscription." + name)
		if err != nil || v.ValueString() != want {
			t.Fatalf("%s = %v (%v), want %s", name, v.ValueString(), err, want)
		}
	}
	if r := n.SetParameter(Parameter{Name: "qos_overrides./clock.subscription.depth", Value: IntegerValue(1)}); r.Successful {
		t.Fatal("QoS override parameters must be read-only")
	}
	// A best-effort clock publisher cannot serve the now reliable subscription...
	clockPublisher(t, ctx, "/clock", ClockQoS())(7)
	if n.Clock().Started() {
		t.Fatal("a best-effort publisher matched a reliable subscription")
	}
	// ...a reliable one can.
	clockPublisher(t, ctx, "/clock", DefaultQoS())(8)
	if n.Clock().Now().Nanoseconds() != 8*sec {
		t.Fatalf("now=%v", n.Clock().Now())
	}

	bad := quietContext()
	bad.Init([]string{"--ros-args", "-p", "use_sim_time:=true", "-p", "qos_overrides./clock.subscription.reliability:=sometimes"})
	if _, err := NewNode("a", WithContext(bad)); err == nil || !strings.Contains(err.Error(), "reliability") {
		t.Fatalf("bad override: %v", err)
	}
}

func TestNodesShareTheContextClock(t *testing.T) {
	tr := intra.New()
	ctx := quietContext(WithTransport(tr))
	a, _ := NewNode("a", WithContext(ctx), WithParameterOverrides(map[string]any{"use_sim_time": true}))
	b, _ := NewNode("b", WithContext(ctx), WithParameterOverrides(map[string]any{"use_sim_time": true}))
	c, _ := NewNode("c", WithContext(ctx)) // use_sim_time false
	pub := clockPublisher(t, ctx, "/clock", ClockQoS())
	subs := 0
	for _, ti := range tr.Topics() {
		if ti.Name == "/clock" {
			subs += ti.Subscriptions
		}
	}
	if subs != 1 {
		t.Fatalf("%d /clock subscriptions for two nodes, want one shared", subs)
	}
	pub(10)
	// One simulated clock per context: c sees it too, although its own
	// use_sim_time is false.
	for _, n := range []*Node{a, b, c} {
		if n.Clock().Now().Nanoseconds() != 10*sec {
			t.Fatalf("%s: now=%v", n.Name(), n.Clock().Now())
		}
	}
	a.SetParameter(Parameter{Name: "use_sim_time", Value: BoolValue(false)})
	pub(11) // b still listens
	if c.Clock().Now().Nanoseconds() != 11*sec {
		t.Fatal("b's subscription was dropped with a's")
	}
	b.Close()
	pub(12) // nobody listens: the last sim time is kept
	if c.Clock().Now().Nanoseconds() != 11*sec {
		t.Fatalf("now=%v after the last listener left", c.Clock().Now())
	}
	// Another context is another simulation.
	other := quietContext()
	if other.Clock().Started() {
		t.Fatal("contexts share simulated time")
	}
}

func TestMalformedClockSamplesAreDropped(t *testing.T) {
	ctx := quietContext()
	n, _ := NewNode("a", WithContext(ctx), WithParameterOverrides(map[string]any{"use_sim_time": true}))
	raw, err := ctx.Transport().NewPublisher(rmw.NodeInfo{Name: "x", Namespace: "/"}, "/clock", "rosgraph_msgs/msg/Clock", ClockQoS(), rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{nil, {0, 1}, {0, 1, 0, 0, 1, 2}, {9, 9, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}} {
		raw.Publish(b)
	}
	if ctx.ClockSamplesDropped() != 4 || n.Clock().Started() {
		t.Fatalf("dropped %d, started %v", ctx.ClockSamplesDropped(), n.Clock().Started())
	}
}

// stampedString is a test message with a header.
type stampedString struct {
	Header std_msgs.Header
	Data   string
}

func (m *stampedString) TypeName() string              { return "nros_test/msg/StampedString" }
func (m *stampedString) StampHeader() *std_msgs.Header { return &m.Header }
func (m *stampedString) MarshalCDR(e *cdr.Encoder)     { m.Header.MarshalCDR(e); e.WriteString(m.Data) }
func (m *stampedString) UnmarshalCDR(d *cdr.Decoder) error {
	if err := m.Header.UnmarshalCDR(d); err != nil {
		return err
	}
	m.Data = d.ReadString()
	return d.Err()
}

var _ msg.Message = (*stampedString)(nil)

func TestAgeMonitor(t *testing.T) {
	ctx := quietContext()
	n, _ := NewNode("a", WithContext(ctx))
	e := NewExecutor(WithExecutorContext(ctx))
	var epochUs int64 = 1_700_000_000_000_000
	e.SetEpochClock(func() int64 { return epochUs })
	var mu sync.Mutex
	var reports []AgeViolation
	got := 0
	sub, err := NewSubscription[stampedString](n, "/scan", DefaultQoS(), func(*stampedString) { got++ },
		WithMaxAge(100*time.Millisecond, func(v AgeViolation) { mu.Lock(); reports = append(reports, v); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	e.AddNode(n)
	p, _ := NewPublisher[stampedString](n, "/scan", DefaultQoS())
	send := func(stampUs int64) {
		t.Helper()
		m := &stampedString{Data: "x"}
		m.Header.Stamp = builtin_interfaces.Time{Sec: int32(stampUs / 1e6), Nanosec: uint32(stampUs%1e6) * 1000}
		if err := p.Publish(m); err != nil {
			t.Fatal(err)
		}
		if err := e.SpinOnce(0); err != nil {
			t.Fatal(err)
		}
	}
	send(epochUs - 50_000)  // 50 ms: fine
	send(epochUs - 500_000) // late: reported
	send(epochUs - 600_000) // late again, same episode: counted only
	send(epochUs - 700_000)
	send(epochUs - 10_000)  // recovered
	send(epochUs - 900_000) // new episode: reported
	send(0)                 // unstamped: not checked
	if got != 7 || sub.AgeViolations() != 4 || len(reports) != 2 {
		t.Fatalf("callbacks %d, violations %d, reports %d; want 7, 4, 2", got, sub.AgeViolations(), len(reports))
	}
	if reports[0].Age != 500*time.Millisecond || reports[1].Count != 4 || reports[0].Topic != "/scan" {
		t.Fatalf("reports %+v", reports)
	}
	// The caveat: stamps from a simulated ROS clock (100 s) against the
	// epoch clock (2023) give an enormous, meaningless age.
	send(epochUs) // recovered
	send(100 * 1e6)
	if sub.AgeViolations() != 5 || len(reports) != 3 || reports[2].Age < 50*365*24*time.Hour {
		t.Fatalf("sim-stamped message: %+v", reports)
	}
}

func TestPubSubQueueAndQoS(t *testing.T) {
	ctx := quietContext()
	n, _ := NewNode("a", WithContext(ctx))
	var got []string
	sub, err := NewSubscription[std_msgs.String](n, "chatter", KeepLast(2), func(m *std_msgs.String) { got = append(got, m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := NewPublisher[std_msgs.String](n, "/chatter", DefaultQoS())
	for _, s := range []string{"1", "2", "3", "4", "5"} {
		pub.Publish(&std_msgs.String{Data: s})
	}
	e := NewExecutor(WithExecutorContext(ctx))
	e.AddNode(n) // messages queued before the node joined are delivered
	for range 3 {
		e.SpinOnce(0)
	}
	if strings.Join(got, ",") != "4,5" || sub.Lost() != 3 || sub.Received() != 5 {
		t.Fatalf("got %v lost %d received %d; want the newest 2, 3 lost", got, sub.Lost(), sub.Received())
	}
	if sub.Topic() != "/chatter" || sub.MatchedPublishers() != 1 || pub.MatchedSubscriptions() != 1 {
		t.Fatal("topic resolution or matching")
	}

	// Incompatible QoS is reported, never a silent non-match.
	var evs []rmw.Event
	var mu sync.Mutex
	_, err = NewSubscription[std_msgs.String](n, "/be", DefaultQoS(), func(*std_msgs.String) {},
		WithEndpointEvents(func(ev rmw.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	NewPublisher[std_msgs.String](n, "/be", SensorDataQoS())
	e.SpinSome() // events run on the executor
	mu.Lock()
	found := false
	for _, ev := range evs {
		found = found || (ev.Kind == rmw.EventIncompatibleQoS && ev.Policy == "RELIABILITY")
	}
	mu.Unlock()
	if !found {
		t.Fatalf("events %+v: want an incompatible RELIABILITY", evs)
	}

	// Malformed samples are dropped and counted.
	var why []error
	bad, _ := NewSubscription[std_msgs.String](n, "/raw", DefaultQoS(), func(*std_msgs.String) { t.Fatal("delivered garbage") },
		WithDroppedHandler(func(err error) { why = append(why, err) }))
	raw, _ := ctx.Transport().NewPublisher(rmw.NodeInfo{Name: "x", Namespace: "/"}, "/raw", "std_msgs/msg/String", DefaultQoS(), rmw.EndpointOptions{})
	raw.Publish([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f, 'a'})
	raw.Publish([]byte{0, 1})
	e.SpinOnce(0)
	e.SpinOnce(0) // one sample per pass: the executor decodes
	if bad.Dropped() != 2 || len(why) != 2 {
		t.Fatalf("dropped %d", bad.Dropped())
	}

	// Not a message type: NewPublisher[int] does not compile (MessagePtr).
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := pub.Publish(&std_msgs.String{}); err == nil {
		t.Fatal("publish after close")
	}
}

func TestNodeNamingAndLogging(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	ctx := NewContext(WithLogOutput(&lockedWriter{w: &buf, mu: &mu}))
	rest, err := ctx.Init([]string{"prog-arg", "--ros-args", "-r", "__node:=renamed", "-r", "__ns:=/robot", "--log-level", "debug", "--", "tail"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rest, " ") != "prog-arg tail" {
		t.Fatalf("non-ROS args %q", rest)
	}
	n, err := NewNode("orig", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if n.Name() != "renamed" || n.Namespace() != "/robot" || n.FullyQualifiedName() != "/robot/renamed" {
		t.Fatalf("name %s ns %s", n.Name(), n.Namespace())
	}
	if got, _ := n.ResolveTopicName("~/status"); got != "/robot/renamed/status" {
		t.Fatalf("resolve %q", got)
	}
	if _, err := ctx.Init(nil); !errors.Is(err, ErrAlreadyInitialized) {
		t.Fatal("second Init accepted")
	}
	n.Logger().Info("hello", "k", 1)
	n.Logger().Debug("dbg")
	out := buf.String()
	if !strings.Contains(out, "[INFO] [") || !strings.Contains(out, "[robot.renamed]: hello k=1") {
		t.Fatalf("log %q", out)
	}
	if !strings.Contains(out, "[DEBUG]") {
		t.Fatalf("--log-level debug not applied: %q", out)
	}
	for _, bad := range [][]string{{"--ros-args", "--bogus"}, {"--ros-args", "-p"}, {"--ros-args", "-r", "nocolon"}} {
		if _, err := NewContext().Init(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Closing an endpoint forgets it: a node that makes and closes many keeps
// none of them.
func TestClosedEndpointsLeaveTheNode(t *testing.T) {
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("churn", WithContext(ctx), WithoutParameterServices())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.mu.Lock()
	base := len(n.entities)
	n.mu.Unlock()
	for range 50 {
		p, err := NewPublisher[std_msgs.String](n, "a", DefaultQoS())
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSubscription[std_msgs.String](n, "a", DefaultQoS(), func(*std_msgs.String) {})
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](n, "s")
		if err != nil {
			t.Fatal(err)
		}
		ac, err := NewActionClient[test_msgs.Fibonacci_Goal, test_msgs.Fibonacci_Result, test_msgs.Fibonacci_Feedback](n, "f")
		if err != nil {
			t.Fatal(err)
		}
		for _, cl := range []interface{ Close() error }{p, s, c, ac} {
			if err := cl.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.entities) != base {
		t.Fatalf("%d entities kept, %d before", len(n.entities), base)
	}
}
