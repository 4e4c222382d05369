package nros

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/rosargs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
)

// Context is one ROS runtime instance: it owns one simulated clock (the
// ROS-time override), the parsed ROS command line, the transport its nodes
// talk through, and the /clock subscriptions that drive its clock.
//
// A process usually has one, DefaultContext. It may have several: each has
// its own simulated time, so two contexts can follow different simulations
// (the spec's "one simulated clock per image" limit is per context here).
type Context struct {
	src clock.Sources
	// ownClock: WithClockSources or WithClockTimers gave the context
	// clocks of the caller's, which its default transport runs on too.
	ownClock bool
	ov       *clock.Override
	ros      *Clock
	jumps    *jumpRegistry

	mu           sync.Mutex
	args         *rosargs.Args
	rawArguments []string
	inited       bool
	transport    rmw.Transport
	ownsTrans    bool
	clockSubs    map[string]*clockSubscription
	closed       atomic.Bool

	logLevel *slog.LevelVar
	logH     slog.Handler
	logW     io.Writer
}

// ContextOption configures a Context.
type ContextOption func(*Context)

// WithTransport makes the context's nodes talk through t instead of a
// transport of their own. Contexts that share an in-process transport see
// each other's topics.
func WithTransport(t rmw.Transport) ContextOption {
	return func(c *Context) { c.transport = t }
}

// WithLogHandler sends the context's node logs to h instead of stderr.
func WithLogHandler(h slog.Handler) ContextOption {
	return func(c *Context) { c.logH = h }
}

// WithLogOutput writes the context's node logs, in the ROS console format
// and at the --log-level of its command line, to w instead of stderr.
func WithLogOutput(w io.Writer) ContextOption {
	return func(c *Context) { c.logW = w }
}

// WithClockSources makes the context read its steady (monotonic) and system
// clocks from the given functions, in nanoseconds, instead of the real ones:
// for tests and harnesses that own wall time (see package simtest). A nil
// function keeps that clock real. Every clock, timer and executor of the
// context reads these, and ROS time falls back to this system clock.
func WithClockSources(steady, system func() int64) ContextOption {
	return func(c *Context) {
		timer := c.src.Timer
		c.src = clock.NewSources(steady, system)
		c.src.Timer = timer
		c.ownClock = true
	}
}

// WithClockTimers makes every wait of the context run on the caller's
// timers instead of the Go runtime's: the executors' sleeps between
// passes, waits on system and steady clocks (SleepFor, SleepUntil,
// WithSystemDeadline...) and the clock-health warnings. after must call f
// once d has passed on the context's steady clock (WithClockSources) and
// return a function that cancels the call, reporting whether it was still
// pending; f does not block. For harnesses that own wall time: package
// simtest steps them with its world. A SpinOnce timeout then also passes
// only as that clock advances.
func WithClockTimers(after func(d time.Duration, f func()) (cancel func() bool)) ContextOption {
	return func(c *Context) {
		if after == nil {
			c.src.Timer = nil
			return
		}
		c.ownClock = true
		c.src.Timer = func(d time.Duration, f func()) clock.Timer {
			t := &callerTimer{after: after, f: f}
			t.cancel = after(d, f)
			return t
		}
	}
}

// callerTimer is a clock.Timer on WithClockTimers' function.
type callerTimer struct {
	after  func(time.Duration, func()) func() bool
	f      func()
	mu     sync.Mutex
	cancel func() bool
}

func (t *callerTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cancel()
}

func (t *callerTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.cancel()
	t.cancel = t.after(d, t.f)
	return was
}

// NewContext returns a new context with its own simulated clock. Unless
// WithTransport says otherwise, its nodes talk through a transport of its
// own, made on first use: the DDS transport (one DDS participant per
// context), the Zenoh one (one zenoh session per context) when
// RMW_IMPLEMENTATION=rmw_zenoh_cpp, or an in-process one when
// NROS_TRANSPORT=intra (see TransportEnv).
func NewContext(opts ...ContextOption) *Context {
	c := &Context{src: clock.NewSources(nil, nil), clockSubs: map[string]*clockSubscription{}}
	c.args, _ = rosargs.Parse(nil)
	c.logLevel = new(slog.LevelVar)
	c.logLevel.Set(LevelInfo)
	for _, o := range opts {
		o(c)
	}
	c.ov = clock.NewOverride(c.src.System)
	c.jumps = &jumpRegistry{ov: c.ov}
	c.ov.SetStatsWall(c.src.Steady) // source statistics on the context's steady time (health.go)
	c.ros = c.clockFor(ROSTime)
	if c.logH == nil {
		w := c.logW
		if w == nil {
			w = os.Stderr
		}
		c.logH = NewLogHandler(w, c.logLevel)
	}
	return c
}

var (
	defaultCtxOnce sync.Once
	defaultCtx     *Context
)

// DefaultContext returns the process's default context, made on first use.
func DefaultContext() *Context {
	defaultCtxOnce.Do(func() { defaultCtx = NewContext() })
	return defaultCtx
}

// Init parses the ROS 2 command line in args (os.Args[1:]: the program name
// excluded) into the default context and returns the arguments that are not
// ROS arguments. See Context.Init.
func Init(args []string) (rest []string, err error) { return DefaultContext().Init(args) }

// ErrAlreadyInitialized is returned by a second Init of a context.
var ErrAlreadyInitialized = errors.New("nros: context already initialized")

// Init parses the ROS 2 command line (`--ros-args ... [--]` blocks: -p,
// --params-file, -r, --log-level, -e, ...) and keeps it for the nodes made
// in this context afterwards: parameter overrides, remapping, node name and
// namespace. It returns the non-ROS arguments. A malformed or unknown ROS
// argument is an error that names it; nothing is kept then.
func (c *Context) Init(args []string) (rest []string, err error) {
	a, err := rosargs.Parse(args)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inited {
		return nil, ErrAlreadyInitialized
	}
	if a.LogLevel != "" {
		l, err := ParseLogLevel(a.LogLevel)
		if err != nil {
			return nil, err
		}
		c.logLevel.Set(l)
	}
	c.args = a
	c.rawArguments = append([]string(nil), args...)
	c.inited = true
	return a.Unparsed, nil
}

// TransportEnv selects the default transport of a context made without
// WithTransport: "rtps" (DDSI-RTPS, talking to ROS 2 nodes over UDP,
// configured by ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and
// ROS_STATIC_PEERS), "zenoh" (rmw_zenoh's Zenoh mapping, configured as
// rmw_zenoh is: ZENOH_SESSION_CONFIG_URI, ZENOH_CONFIG_OVERRIDE,
// ROS_DOMAIN_ID) or "intra" (in process only). When it is unset,
// RMWImplementationEnv chooses as ROS 2 users choose.
const TransportEnv = "NROS_TRANSPORT"

// RMWImplementationEnv is ROS 2's choice of middleware, read when
// TransportEnv is unset: rmw_zenoh_cpp selects the Zenoh transport;
// rmw_cyclonedds_cpp, rmw_fastrtps_cpp, rmw_fastrtps_dynamic_cpp,
// rmw_connextdds or unset the DDS transport.
const RMWImplementationEnv = "RMW_IMPLEMENTATION"

// transportKind is the transport TransportEnv, else RMWImplementationEnv,
// selects.
func transportKind(getenv func(string) string) (string, error) {
	if kind := getenv(TransportEnv); kind != "" {
		switch kind {
		case "intra", "zenoh":
			return kind, nil
		case "rtps", "dds":
			return "rtps", nil
		}
		return "", fmt.Errorf("nros: %s=%q: want rtps, zenoh or intra", TransportEnv, kind)
	}
	switch impl := getenv(RMWImplementationEnv); impl {
	case "rmw_zenoh_cpp":
		return "zenoh", nil
	case "", "rmw_cyclonedds_cpp", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp", "rmw_connextdds":
		return "rtps", nil
	default:
		return "", fmt.Errorf("nros: %s=%q: want rmw_zenoh_cpp (Zenoh), rmw_cyclonedds_cpp or rmw_fastrtps_cpp (DDS)", RMWImplementationEnv, impl)
	}
}

// Transport returns the context's transport, making the default one on
// first use (see TransportEnv). If it cannot be made (no free port, a bad
// environment variable), the returned transport fails every call with the
// reason, and so do the publishers and subscriptions made through it.
func (c *Context) Transport() rmw.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.transport == nil {
		t, err := c.newDefaultTransport()
		if err != nil {
			return failedTransport{err}
		}
		c.transport, c.ownsTrans = t, true
	}
	return c.transport
}

func (c *Context) newDefaultTransport() (rmw.Transport, error) {
	kind, err := transportKind(os.Getenv)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "intra":
		return intra.New(), nil
	case "zenoh":
		return c.newZenohTransport()
	default:
		cfg, err := rtps.ConfigFromEnv()
		if err != nil {
			return nil, fmt.Errorf("nros: %w", err)
		}
		if c.ownClock {
			cfg.Clock = transportClock{c.src}
		}
		log := c.logger("rtps")
		cfg.Logf, cfg.Warnf = transportLogs(log)
		if err := c.securityConfig(&cfg, log); err != nil {
			return nil, err
		}
		t, err := rtps.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("nros: starting the DDS transport: %w", err)
		}
		return t, nil
	}
}

// transportLogs returns a transport's Logf (debug) and Warnf (warning) on
// log.
func transportLogs(log *slog.Logger) (logf, warnf func(format string, args ...any)) {
	return func(format string, args ...any) { log.Debug(fmt.Sprintf(format, args...)) },
		func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) }
}

// transportClock is a context's steady clock and timers as the default
// transports take them (rtps.Clock and zenoh.Clock have these methods):
// their heartbeats, leases and timeouts then pass as the context's clock
// does, which a harness such as simtest steps.
type transportClock struct{ src clock.Sources }

func (c transportClock) Now() int64 { return int64(c.src.Steady()) }

func (c transportClock) After(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	t := c.src.AfterFunc(d, func() { once.Do(func() { close(ch) }) })
	return ch, func() { t.Stop() }
}

// securityConfig applies SROS2's environment (ROS_SECURITY_ENABLE,
// ROS_SECURITY_STRATEGY, ROS_SECURITY_KEYSTORE,
// ROS_SECURITY_ENCLAVE_OVERRIDE) and the context's --enclave/-e to cfg.
// Under Enforce, missing or invalid artifacts are an error naming the
// file; under Permissive the participant runs unsecured with a warning.
func (c *Context) securityConfig(cfg *rtps.Config, log *slog.Logger) error {
	enclave := ""
	if c.args != nil {
		enclave = c.args.Enclave
	}
	// Certificates are checked for validity at the context's system time.
	art, sel, err := rtps.SecurityFromEnv(os.Getenv, enclave, time.Unix(0, int64(c.src.System())))
	if sel.Enabled && sel.Enclave != "" {
		cfg.Enclave = sel.Enclave
	} else if enclave != "" {
		cfg.Enclave = enclave
	}
	switch {
	case err != nil && sel.Strategy == keystore.Enforce:
		return fmt.Errorf("nros: security (ROS_SECURITY_STRATEGY=Enforce): %w", err)
	case err != nil:
		log.Warn(fmt.Sprintf("security (ROS_SECURITY_STRATEGY=Permissive): running unsecured: %v", err))
	default:
		cfg.Security = art
	}
	return nil
}

// failedTransport reports why the default transport could not be made.
type failedTransport struct{ err error }

func (f failedTransport) NewPublisher(rmw.NodeInfo, string, string, rmw.QoS, rmw.EndpointOptions) (rmw.Publisher, error) {
	return nil, f.err
}

func (f failedTransport) NewSubscription(rmw.NodeInfo, string, string, rmw.QoS, func(rmw.Sample), rmw.EndpointOptions) (rmw.Subscription, error) {
	return nil, f.err
}

func (f failedTransport) NewServiceServer(rmw.NodeInfo, string, string, string, rmw.QoS, func(rmw.Request), rmw.EndpointOptions) (rmw.ServiceServer, error) {
	return nil, f.err
}

func (f failedTransport) NewServiceClient(rmw.NodeInfo, string, string, string, rmw.QoS, func(rmw.Response), rmw.EndpointOptions) (rmw.ServiceClient, error) {
	return nil, f.err
}

// The graph of a failed transport is empty and never changes.

func (f failedTransport) GraphChanged() <-chan struct{}       { return neverClosed }
func (f failedTransport) Nodes() []rmw.NodeInfo               { return nil }
func (f failedTransport) Endpoints(string) []rmw.EndpointInfo { return nil }
func (f failedTransport) Services() []rmw.ServiceInfo         { return nil }
func (f failedTransport) Close() error                        { return nil }

var neverClosed = make(chan struct{})

// Shutdown closes the context's clock subscriptions and, if the context
// made it, its transport. Nodes of a shut-down context stop receiving.
func (c *Context) Shutdown() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.mu.Lock()
	subs := c.clockSubs
	c.clockSubs = map[string]*clockSubscription{}
	t, owns := c.transport, c.ownsTrans
	c.mu.Unlock()
	for _, s := range subs {
		s.close()
	}
	if owns && t != nil {
		return t.Close()
	}
	return nil
}

// SystemClock returns the context's system clock: the one WithClockSources
// gave, whose waits run on the context's timers (WithClockTimers).
func (c *Context) SystemClock() *Clock { return c.clockFor(SystemTime) }

// SteadyClock returns the context's steady (monotonic) clock.
func (c *Context) SteadyClock() *Clock { return c.clockFor(SteadyTime) }

// Clock returns the context's ROS clock.
func (c *Context) Clock() *Clock { return c.ros }

// logger returns a logger named name.
func (c *Context) logger(name string) *slog.Logger {
	return slog.New(c.logH).With("logger", name)
}

// TimeSource is the transport-facing half of a ROS time source: whatever
// receives /clock samples (a subscription, a bag player, a simulator
// binding, a test) installs them on its context through one.
type TimeSource struct {
	ctx      *Context
	detached atomic.Bool
}

// AttachTimeSource registers a time source on the context. From then on the
// context's ROS clock reports RosTimeIsActive, reads system time until the
// first Install, then the installed time.
func (c *Context) AttachTimeSource() *TimeSource {
	c.ov.Attach()
	return &TimeSource{ctx: c}
}

// Install sets the context's ROS time to t, as a /clock sample does. It
// wakes every executor with a ROS-time timer that t makes due. It is cheap
// and never blocks on user callbacks; call it from the goroutine that
// receives the samples. After Detach it does nothing.
//
// A negative time (before the epoch) is not installed: no ROS clock can show
// it. It is dropped, the clock keeps its value, and the context counts it
// (ClockSamplesRejected).
func (s *TimeSource) Install(t Time) {
	s.install(t)
}

func (s *TimeSource) install(t Time) clock.Change {
	if s.detached.Load() {
		return clock.Ignored
	}
	return s.ctx.ov.Install(clock.RosTime(t.ns))
}

// Detach stops the source. The context keeps the last installed time (it
// does not snap back to system time) until ClearRosTimeOverride. It is safe
// to call twice.
func (s *TimeSource) Detach() {
	if s.detached.CompareAndSwap(false, true) {
		s.ctx.ov.Detach()
	}
}

// String identifies the context (by address) for logs.
func (c *Context) String() string { return fmt.Sprintf("nros.Context(%p)", c) }
