package nros

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/internal/rosargs"
	"github.com/nros-go/nros/rmw"
)

// Node is a participant in the ROS graph: it owns timers, publishers,
// subscriptions and parameters, and has a ROS clock that follows its
// context's simulated time.
type Node struct {
	name      string
	namespace string
	ctx       *Context
	cfg       nodeConfig
	args      *rosargs.Args
	params    *param.Store
	log       *slog.Logger

	mu       sync.Mutex
	exec     *Executor
	timers   []*Timer
	entities []nodeEntity
	closed   bool

	calls     *userCalls // usercalls.go
	callsOnce sync.Once

	simMu    sync.Mutex // guards clockSub
	clockSub *clockSubscription
}

// nodeEntity is a publisher or subscription owned by a node.
type nodeEntity interface {
	attach(e *Executor)
	close() error
}

// ErrNodeClosed is returned by operations on a closed node.
var ErrNodeClosed = errors.New("nros: node is closed")

// NodeOption configures a node.
type NodeOption func(*nodeConfig)

type nodeConfig struct {
	namespace       string
	ctx             *Context
	arguments       []string
	noGlobalArgs    bool
	overrides       map[string]any
	allowUndeclared bool
	autoDeclare     bool
	clockQoS        QoS
	clockQoSSet     bool
	noParamServices bool // paramservice.go
}

// WithNamespace puts the node in a namespace ("/robot1" or "robot1").
func WithNamespace(ns string) NodeOption { return func(c *nodeConfig) { c.namespace = ns } }

// WithContext puts the node in a context other than DefaultContext.
func WithContext(ctx *Context) NodeOption { return func(c *nodeConfig) { c.ctx = ctx } }

// WithArguments gives the node its own ROS command line (as rclcpp's
// NodeOptions::arguments): `--ros-args -p x:=1 -r a:=b`. They apply after
// the context's arguments.
func WithArguments(args ...string) NodeOption {
	return func(c *nodeConfig) { c.arguments = append(c.arguments, args...) }
}

// WithoutGlobalArguments makes the node ignore the context's command line.
func WithoutGlobalArguments() NodeOption { return func(c *nodeConfig) { c.noGlobalArgs = true } }

// WithParameterOverrides sets initial parameter values that win over
// declared defaults and over the command line. Values are Go values (bool,
// int, float64, string, slices) or ParameterValue.
func WithParameterOverrides(o map[string]any) NodeOption {
	return func(c *nodeConfig) {
		if c.overrides == nil {
			c.overrides = map[string]any{}
		}
		for k, v := range o {
			c.overrides[k] = v
		}
	}
}

// AllowUndeclaredParameters lets SetParameter create parameters that were
// never declared (rclcpp's allow_undeclared_parameters).
func AllowUndeclaredParameters() NodeOption { return func(c *nodeConfig) { c.allowUndeclared = true } }

// AutomaticallyDeclareParametersFromOverrides declares every override at
// construction (rclcpp's automatically_declare_parameters_from_overrides).
func AutomaticallyDeclareParametersFromOverrides() NodeOption {
	return func(c *nodeConfig) { c.autoDeclare = true }
}

// WithClockQoS changes the QoS of the node's /clock subscription (ClockQoS
// by default), as rclcpp's NodeOptions::clock_qos.
func WithClockQoS(q QoS) NodeOption {
	return func(c *nodeConfig) { c.clockQoS, c.clockQoSSet = q, true }
}

// NewNode creates a node named name. The command line of its context (see
// Init) and of WithArguments may rename it (-r __node:=x), move it (-r
// __ns:=/y) and override its parameters (-p, --params-file). Every node
// declares use_sim_time (false by default); true installs the /clock time
// source. A use_sim_time override that is not a bool is an error naming the
// parameter and the type it wants.
func NewNode(name string, opts ...NodeOption) (*Node, error) {
	cfg := nodeConfig{namespace: "/"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ctx == nil {
		cfg.ctx = DefaultContext()
	}
	if !cfg.clockQoSSet {
		cfg.clockQoS = ClockQoS()
	}
	ctx := cfg.ctx
	if ctx.closed.Load() {
		return nil, errors.New("nros: context is shut down")
	}
	// The command line: the context's, then the node's own.
	var all []string
	if !cfg.noGlobalArgs {
		all = append(all, ctx.rawArgs()...)
	}
	all = append(all, cfg.arguments...)
	args, err := rosargs.Parse(all)
	if err != nil {
		return nil, err
	}
	if err := rosargs.ValidateNodeName(name); err != nil {
		return nil, fmt.Errorf("nros: node name %q: %w", name, err)
	}
	ns := rosargs.NormalizeNamespace(cfg.namespace)
	name = args.NodeName(name)
	ns = rosargs.NormalizeNamespace(args.NamespaceFor(name, ns))
	if err := rosargs.ValidateNodeName(name); err != nil {
		return nil, fmt.Errorf("nros: remapped node name %q: %w", name, err)
	}
	if err := rosargs.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("nros: namespace %q: %w", ns, err)
	}
	n := &Node{name: name, namespace: ns, ctx: ctx, cfg: cfg, args: args}
	n.log = ctx.logger(loggerName(ns, name))

	overrides, err := args.ParamOverrides(n.FullyQualifiedName(), rosargs.ReadParamsFile)
	if err != nil {
		return nil, fmt.Errorf("nros: node %s: %w", n.FullyQualifiedName(), err)
	}
	for k, v := range cfg.overrides {
		pv, err := ParameterValueOf(v)
		if err != nil {
			return nil, fmt.Errorf("nros: parameter override %s: %w", k, err)
		}
		if overrides == nil {
			overrides = map[string]param.Value{}
		}
		overrides[k] = pv.v
	}
	n.params = param.NewStore(param.Options{Overrides: overrides,
		AllowUndeclared: cfg.allowUndeclared, AutoDeclareFromOverrides: cfg.autoDeclare, Apply: n.applyParams})
	n.params.AddOnSetCallback(validateUseSimTime)
	// Declaring use_sim_time applies it (installs the time source for true).
	if !n.params.Has(UseSimTimeParameter) {
		if _, err := n.params.Declare(UseSimTimeParameter, param.BoolValue(false), param.Descriptor{
			Type:        param.TypeBool,
			Description: "Follow the simulated clock published on /clock (reserved: the runtime acts on it)",
		}); err != nil {
			return nil, fmt.Errorf("nros: node %s: %w", n.FullyQualifiedName(), err)
		}
	} else if v, _ := n.params.Get(UseSimTimeParameter); v.Type() != param.TypeBool {
		// Auto-declared from an override with dynamic typing: still reserved.
		return nil, fmt.Errorf("nros: node %s: parameter '%s' must be a bool, got %s %s", n.FullyQualifiedName(),
			UseSimTimeParameter, v.Type(), v.ValueString())
	} else if on, _ := v.Bool(); on {
		// Auto-declared, so not applied yet.
		if err := n.followClock(n.params); err != nil {
			return nil, fmt.Errorf("nros: node %s: %w", n.FullyQualifiedName(), err)
		}
	}
	if err := n.startROSInterfaces(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func loggerName(ns, name string) string {
	if ns == "/" {
		return name
	}
	s := ns[1:] + "." + name
	out := []byte(s)
	for i, c := range out {
		if c == '/' {
			out[i] = '.'
		}
	}
	return string(out)
}

// rawArgs returns the context's command line as given to Init.
func (c *Context) rawArgs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rawArguments
}

// Name returns the node's name.
func (n *Node) Name() string { return n.live().name }

// Namespace returns the node's namespace ("/" for the root).
func (n *Node) Namespace() string { return n.live().namespace }

// FullyQualifiedName returns namespace + "/" + name ("/ns/talker").
func (n *Node) FullyQualifiedName() string {
	if n.live().namespace == "/" {
		return "/" + n.name
	}
	return n.namespace + "/" + n.name
}

// Context returns the node's context.
func (n *Node) Context() *Context { return n.live().ctx }

// Clock returns the node's ROS clock (the context's). Like every method of
// Node, it panics with ErrNilNode on a nil *Node (what a NewNode that failed
// returns); see ErrNilNode for the calls that return it instead.
func (n *Node) Clock() *Clock { return n.live().ctx.Clock() }

// live returns n, or panics with ErrNilNode when n is nil.
func (n *Node) live() *Node {
	if n == nil {
		panic(ErrNilNode)
	}
	return n
}

// Logger returns the node's logger. Records go to stderr in the ROS console
// format, at the level of --log-level (info by default).
func (n *Node) Logger() *slog.Logger { return n.live().log }

func (n *Node) info() rmw.NodeInfo {
	enc := n.args.Enclave
	if enc == "" {
		enc = "/"
	}
	return rmw.NodeInfo{Name: n.name, Namespace: n.namespace, Enclave: enc}
}

// ResolveTopicName expands a topic name for the node (relative names go
// under its namespace, "~" is the node) and applies the command line's
// remap rules.
func (n *Node) ResolveTopicName(topic string) (string, error) { return n.live().resolveTopic(topic) }

func (n *Node) resolveTopic(topic string) (string, error) {
	fq, err := rosargs.ExpandTopicName(topic, n.name, n.namespace)
	if err != nil {
		return "", fmt.Errorf("nros: topic %q: %w", topic, err)
	}
	out, err := n.args.RemapTopic(fq, n.name, n.namespace)
	if err != nil {
		return "", fmt.Errorf("nros: topic %q: %w", topic, err)
	}
	return out, nil
}

// CreateWallTimer creates a timer on steady time: it keeps its cadence in
// real time whatever the simulated clock does (a watchdog, a keep-alive).
func (n *Node) CreateWallTimer(period time.Duration, cb func(), opts ...TimerOption) (*Timer, error) {
	if n == nil {
		return nil, ErrNilNode
	}
	return n.createTimer(n.ctx, TimerClockSteady, period, cb, opts)
}

// CreateTimer creates a timer on clock: a ROS clock makes a timer that
// follows simulated time (paused, scaled, jumping), a system or steady clock
// one that follows that clock. The timer is bound to the clock at once: a
// source switch or a backward jump before the node joins an executor
// restarts its period exactly as it would have once attached.
func (n *Node) CreateTimer(c *Clock, period time.Duration, cb func(), opts ...TimerOption) (*Timer, error) {
	if n == nil {
		return nil, ErrNilNode
	}
	if c == nil {
		return nil, errors.New("nros: CreateTimer needs a clock (node.Clock() for ROS time)")
	}
	src := TimerClockSteady
	switch c.typ {
	case ROSTime:
		src = TimerClockRos
	case SystemTime:
		src = TimerClockSystem
	}
	return n.createTimer(c.ctx, src, period, cb, opts)
}

func (n *Node) createTimer(ctx *Context, src TimerClockSource, period time.Duration, cb func(), opts []TimerOption) (*Timer, error) {
	t, err := newTimer(ctx, src, period, cb, opts)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrNodeClosed
	}
	if e := n.exec; e != nil {
		if err := e.loop.Add(t.core); err != nil {
			return nil, loopErr(err)
		}
	}
	n.timers = append(n.timers, t)
	return t, nil
}

// addEntity registers a publisher or subscription with the node.
func (n *Node) addEntity(en nodeEntity) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrNodeClosed
	}
	n.entities = append(n.entities, en)
	if n.exec != nil {
		en.attach(n.exec)
	}
	return nil
}

// Close cancels the node's timers, closes its publishers and subscriptions
// and removes its time source (the context keeps the last simulated time).
// It is safe to call twice.
func (n *Node) Close() error {
	if n == nil {
		return ErrNilNode
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	timers, ents, e := n.timers, n.entities, n.exec
	n.timers, n.entities = nil, nil
	n.mu.Unlock()
	for _, t := range timers {
		t.Cancel()
	}
	var errs []error
	for _, en := range ents {
		if err := en.close(); err != nil {
			errs = append(errs, err)
		}
	}
	n.RemoveRosTimeSource()
	if e != nil {
		// None of the node's callbacks is running once Close returns
		// (unless Close was called from one).
		e.loop.Quiesce()
	}
	return errors.Join(errs...)
}

// removeEntity forgets a publisher, subscription, service, client or action
// endpoint its owner closes, so that a node that makes and closes many does
// not keep them all until it closes itself.
func (n *Node) removeEntity(en nodeEntity) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i := slices.Index(n.entities, en); i >= 0 {
		n.entities = slices.Delete(n.entities, i, i+1)
	}
}

// quiesce waits until no pass of the node's executor is running (at once
// when called from one, or when the node has no executor).
func (n *Node) quiesce() {
	n.mu.Lock()
	e := n.exec
	n.mu.Unlock()
	if e != nil {
		e.loop.Quiesce()
	}
}

// AddNode makes the executor run the node's callbacks. A node belongs to at
// most one executor.
func (e *Executor) AddNode(n *Node) error {
	if n == nil {
		return ErrNilNode
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrNodeClosed
	}
	if n.exec != nil {
		if n.exec == e {
			return nil
		}
		return fmt.Errorf("nros: node %s already belongs to another executor", n.FullyQualifiedName())
	}
	if e.loop.Closed() {
		return ErrExecutorClosed
	}
	for _, t := range n.timers {
		if err := e.loop.Add(t.core); err != nil {
			return loopErr(err)
		}
	}
	n.exec = e
	e.deliverJumpsOf(n.ctx)
	for _, en := range n.entities {
		en.attach(e)
	}
	return nil
}
