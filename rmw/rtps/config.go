package rtps

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// Clock is the monotonic time source of a Transport: leases, announcement
// periods, heartbeats and repairs run on it. It is never ROS time.
type Clock interface {
	// Now returns a monotonic reading in nanoseconds.
	Now() int64
	// After returns a channel that is closed or sent to once d has passed
	// on this clock, and a function that releases the timer early.
	After(d time.Duration) (<-chan struct{}, func())
}

// SystemClock is the Clock of the operating system's monotonic clock
// (time.Since of a reading taken by NewSystemClock, so it also runs on the
// fake clock of a testing/synctest bubble).
type SystemClock struct{ epoch time.Time }

// NewSystemClock returns a SystemClock reading 0 now.
func NewSystemClock() SystemClock { return SystemClock{epoch: time.Now()} }

var sysEpoch = time.Now()

// Now returns the monotonic time since the clock was made (since process
// start for the zero SystemClock).
func (c SystemClock) Now() int64 {
	if c.epoch.IsZero() {
		return int64(time.Since(sysEpoch))
	}
	return int64(time.Since(c.epoch))
}

// pollDeadline is the read deadline d from now for a wait in the runtime's
// poller (which reads the real clock, whatever Config.Clock is); d past
// about a century means none.
func pollDeadline(d time.Duration) time.Time {
	if d > 100*365*24*time.Hour {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// After starts a runtime timer.
func (SystemClock) After(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	tm := time.AfterFunc(d, func() { once.Do(func() { close(ch) }) })
	return ch, func() { tm.Stop() }
}

// Multicast selects whether the transport uses SPDP multicast.
type Multicast uint8

const (
	// MulticastAuto: LOCALHOST uses 239.255.0.1 on lo only when lo has
	// the MULTICAST flag; SUBNET uses every multicast-capable interface;
	// OFF never. With a Network other than udp.System, Auto means lo.
	MulticastAuto Multicast = iota
	// MulticastOff never joins or sends to the group.
	MulticastOff
)

// Config configures a Transport. The zero value is usable: domain 0,
// LOCALHOST range, system sockets and clock.
type Config struct {
	// DomainID is the DDS domain (ROS_DOMAIN_ID), 0..232.
	DomainID int
	// Range is the automatic discovery range (ROS_AUTOMATIC_DISCOVERY_RANGE).
	Range udp.Range
	// StaticPeers are hosts or IPv4 addresses that always get SPDP, on
	// the metatraffic ports of participant ids 0..ProbeParticipants-1
	// (ROS_STATIC_PEERS).
	StaticPeers []string
	// Network opens sockets; nil means udp.System bound to 127.0.0.1
	// (LOCALHOST, OFF) or 0.0.0.0 (SUBNET).
	Network udp.Network
	// Multicast restricts SPDP multicast (see Multicast).
	Multicast Multicast
	// Clock is the monotonic clock; nil means SystemClock.
	Clock Clock
	// WallNow returns the wall-clock time in ns since the Unix epoch, for
	// source timestamps; nil means time.Now.
	WallNow func() int64
	// LeaseDuration is the participant lease announced (default 20 s).
	LeaseDuration time.Duration
	// AnnouncePeriod is the SPDP period (default 3 s).
	AnnouncePeriod time.Duration
	// ProbeParticipants is how many participant ids SPDP probes on each
	// unicast target (default 32, as ROS LOCALHOST does).
	ProbeParticipants int
	// MaxParticipantID bounds the participant ids tried when binding
	// (default 31).
	MaxParticipantID int
	// Enclave is announced in USER_DATA as "enclave=<Enclave>;" (default "/").
	Enclave string
	// GidSize is the Gid layout of ros_discovery_info:
	// rmw_dds_common.GidSizeHumble (24, the types of package
	// rmw_dds_common/humble) or GidSizeJazzy (16, package rmw_dds_common;
	// Iron and later). Zero learns it from the first peer sample that
	// parses one way only, starting with Jazzy's (the current LTS).
	GidSize int
	// Security, when set, makes the participant secure with these SROS2
	// artifacts (SecurityFromEnv resolves them as rcl does): DDS Security's
	// authentication, access control and cryptography (secure.go).
	Security *keystore.Artifacts
	// SecurityKeyRevision, when not zero, makes every protected local
	// endpoint send new key material to its matched remote endpoints after
	// that many protected messages under one key (Transport.ReviseKeys does
	// it on request). Cyclone DDS and Fast DDS do not revise keys; zero
	// (never) is the default.
	SecurityKeyRevision uint64
	// Logf, if set, receives diagnostics (lost sockets, send errors).
	Logf func(format string, args ...any)
	// Warnf receives problems the user should see: static peers
	// (ROS_STATIC_PEERS) that cannot be parsed or resolved and are
	// ignored, each message naming the entry. Nil means slog's default
	// logger at level Warn.
	Warnf func(format string, args ...any)
}

// ConfigFromEnv returns the default Config with ROS_DOMAIN_ID,
// ROS_AUTOMATIC_DISCOVERY_RANGE (LOCALHOST when unset; the legacy
// ROS_LOCALHOST_ONLY=1 also gives LOCALHOST) and ROS_STATIC_PEERS applied.
// It fails on a domain id or range it cannot parse; ROS_STATIC_PEERS entries
// are checked by New, which ignores bad ones with a warning (Warnf).
func ConfigFromEnv() (Config, error) {
	return configFromEnv(os.Getenv)
}

func configFromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if s := strings.TrimSpace(getenv("ROS_DOMAIN_ID")); s != "" {
		d, err := strconv.Atoi(s)
		if err != nil || d < 0 || d > udp.MaxDomain {
			return c, fmt.Errorf("rtps: ROS_DOMAIN_ID %q is not an integer in [0, %d]", s, udp.MaxDomain)
		}
		c.DomainID = d
	}
	r, err := udp.ParseRange(getenv("ROS_AUTOMATIC_DISCOVERY_RANGE"))
	if err != nil {
		return c, err
	}
	c.Range = r
	c.StaticPeers = udp.ParseStaticPeers(getenv("ROS_STATIC_PEERS"))
	c.GidSize = GidSizeForDistro(getenv("ROS_DISTRO"))
	return c, nil
}

func (c *Config) setDefaults() {
	if c.Clock == nil {
		c.Clock = NewSystemClock()
	}
	if c.WallNow == nil {
		c.WallNow = func() int64 { return time.Now().UnixNano() }
	}
	if c.ProbeParticipants <= 0 {
		c.ProbeParticipants = 32
	}
	if c.MaxParticipantID <= 0 {
		c.MaxParticipantID = 31
	}
	c.ProbeParticipants = min(c.ProbeParticipants, udp.MaxParticipantID+1)
	c.MaxParticipantID = min(c.MaxParticipantID, udp.MaxParticipantID)
	if c.Enclave == "" {
		c.Enclave = "/"
	}
	if c.GidSize == 0 {
		c.GidSize = rmw_dds_common.GidSizeJazzy
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Warnf == nil {
		c.Warnf = func(format string, args ...any) { slog.Warn(fmt.Sprintf(format, args...)) }
	}
}
