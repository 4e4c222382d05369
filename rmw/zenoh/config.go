package zenoh

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/ros"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Clock is the monotonic time source of a Transport: the heartbeats of
// transient-local publishers, the router check and the session's timeouts
// run on it. It is never
// ROS time. rmw/rtps's Clock has the same methods, so one value serves
// both transports.
type Clock interface {
	// Now returns a monotonic reading in nanoseconds.
	Now() int64
	// After returns a channel that is closed or sent to once d has passed
	// on this clock, and a function that releases the timer early.
	After(d time.Duration) (<-chan struct{}, func())
}

// Config configures a Transport. The zero value is usable: rmw_zenoh's
// default session configuration (peer mode, connect tcp/localhost:7447,
// listen tcp/localhost:0), domain 0, Jazzy's keys, the system clocks.
type Config struct {
	// Zenoh is the zenoh configuration (config.Session reads it as
	// rmw_zenoh does); nil means config.Default().
	Zenoh *config.Config
	// Domain is the ROS domain (ROS_DOMAIN_ID): the first chunk of every
	// data key and the second of every liveliness token.
	Domain uint32
	// Distro selects the type-hash field of keys and tokens: RIHS01 hashes
	// (ros.DistroJazzy, the zero value) or TypeHashNotSupported
	// (ros.DistroHumble).
	Distro ros.Distro
	// RouterCheckAttempts is how many times, one second apart, the
	// transport looks for a router after it opens, warning
	// config.NoRouterWarning each time none is connected and
	// config.NoRouterGiveUp after the last (as rmw_zenoh does with
	// ZENOH_ROUTER_CHECK_ATTEMPTS). 0 checks nothing.
	RouterCheckAttempts uint64
	// Clock is the monotonic clock of the transport and of its session
	// (handshake, reconnection, interest and query timeouts); nil means
	// the system's.
	Clock Clock
	// WallNow returns the wall-clock time in ns since the Unix epoch, for
	// the source timestamps of attachments and zenoh timestamps; nil
	// means the system clock.
	WallNow func() int64
	// Logf, if set, receives diagnostics.
	Logf func(format string, args ...any)
	// Warnf receives problems the user should see (no router, a sample
	// without attachment); nil means slog's default logger at level Warn.
	Warnf func(format string, args ...any)
}

// ConfigFromEnv returns the Config a ROS 2 process on rmw_zenoh_cpp would
// use: the zenoh configuration of config.Session (ZENOH_SESSION_CONFIG_URI,
// ZENOH_CONFIG_OVERRIDE, rmw_zenoh's defaults), ROS_DOMAIN_ID, ROS_DISTRO
// (Humble gives TypeHashNotSupported keys) and ZENOH_ROUTER_CHECK_ATTEMPTS.
// A value it cannot use is an error naming the variable or key.
func ConfigFromEnv() (Config, error) { return configFromEnv(os.Getenv, os.ReadFile) }

func configFromEnv(getenv func(string) string, readFile func(string) ([]byte, error)) (Config, error) {
	var c Config
	zc, err := config.Session(getenv, readFile)
	if err != nil {
		return c, err
	}
	c.Zenoh = zc
	if s := strings.TrimSpace(getenv("ROS_DOMAIN_ID")); s != "" {
		d, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return c, fmt.Errorf("zenoh: ROS_DOMAIN_ID %q is not a non-negative integer", s)
		}
		c.Domain = uint32(d)
	}
	if d, ok := ros.DistroForName(getenv("ROS_DISTRO")); ok {
		c.Distro = d
	}
	if n, check := config.RouterCheck(getenv); check {
		c.RouterCheckAttempts = n
	}
	return c, nil
}

func (c *Config) setDefaults() {
	if c.Zenoh == nil {
		c.Zenoh = config.Default()
	}
	if c.Clock == nil {
		c.Clock = newSystemClock()
	}
	if c.WallNow == nil {
		c.WallNow = systemWallNow
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Warnf == nil {
		c.Warnf = func(format string, args ...any) { slog.Warn(fmt.Sprintf(format, args...)) }
	}
}

// sessionConfig turns the zenoh configuration into the session's.
func sessionConfig(zc *config.Config, logf func(string, ...any)) (session.Config, error) {
	var sc session.Config
	switch zc.Mode {
	case config.ModePeer, "":
		sc.Mode = wire.Peer
	case config.ModeClient:
		sc.Mode = wire.Client
	default:
		return sc, &config.Error{Key: "mode", Msg: fmt.Sprintf("%q: a ROS node's session is a peer or a client (routers are nros zenohd's)", zc.Mode)}
	}
	if zc.ID != "" {
		id, n, err := ros.ParseZID(zc.ID)
		if err != nil {
			return sc, &config.Error{Key: "id", Msg: err.Error()}
		}
		z, err := wire.NewZenohID(id[:n])
		if err != nil {
			return sc, &config.Error{Key: "id", Msg: err.Error()}
		}
		sc.ZID = z
	}
	for _, e := range zc.ConnectEndpoints() {
		sc.Connect = append(sc.Connect, e.String())
	}
	for _, e := range zc.ListenEndpoints() {
		sc.Listen = append(sc.Listen, e.String())
	}
	sc.Lease = zc.Lease()
	sc.BatchSize = zc.Transport.Link.TX.BatchSize
	sc.NoQoS = !zc.Transport.Unicast.QoS
	if m := zc.Transport.Link.RX.MaxMessageSize; m > 0 && m < 1<<31 {
		sc.MaxMessageSize = int(m)
	}
	if ms := zc.Transport.Unicast.OpenTimeoutMS; ms > 0 {
		sc.HandshakeTimeout = time.Duration(ms) * time.Millisecond
	}
	if r := zc.Connect.Retry; r.PeriodInitMS > 0 {
		sc.RetryMin = time.Duration(r.PeriodInitMS) * time.Millisecond
		if r.PeriodMaxMS > 0 {
			sc.RetryMax = time.Duration(r.PeriodMaxMS) * time.Millisecond
		}
	}
	sc.Logf = logf
	return sc, nil
}
