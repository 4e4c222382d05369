package ros

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw"
)

// Reliability is rmw's rmw_qos_reliability_policy_e, as the integers of the
// liveliness token's QoS field.
type Reliability uint32

// The values of rmw_qos_reliability_policy_e.
const (
	ReliabilitySystemDefault Reliability = 0
	ReliabilityReliable      Reliability = 1
	ReliabilityBestEffort    Reliability = 2
	ReliabilityUnknown       Reliability = 3
	ReliabilityBestAvailable Reliability = 4 // Iron and later
)

// Durability is rmw's rmw_qos_durability_policy_e.
type Durability uint32

// The values of rmw_qos_durability_policy_e.
const (
	DurabilitySystemDefault  Durability = 0
	DurabilityTransientLocal Durability = 1
	DurabilityVolatile       Durability = 2
	DurabilityUnknown        Durability = 3
	DurabilityBestAvailable  Durability = 4 // Iron and later
)

// History is rmw's rmw_qos_history_policy_e.
type History uint32

// The values of rmw_qos_history_policy_e.
const (
	HistorySystemDefault History = 0
	HistoryKeepLast      History = 1
	HistoryKeepAll       History = 2
	HistoryUnknown       History = 3
)

// Liveliness is rmw's rmw_qos_liveliness_policy_e.
type Liveliness uint32

// The values of rmw_qos_liveliness_policy_e (2, MANUAL_BY_NODE, is
// deprecated and rmw_zenoh's token parser does not accept it).
const (
	LivelinessSystemDefault Liveliness = 0
	LivelinessAutomatic     Liveliness = 1
	LivelinessManualByTopic Liveliness = 3
	LivelinessUnknown       Liveliness = 4
	LivelinessBestAvailable Liveliness = 5 // Iron and later
)

// Time is rmw's rmw_time_t: seconds and nanoseconds, both unsigned.
type Time struct{ Sec, Nsec uint64 }

// Infinite is RMW_DURATION_INFINITE (INT64_MAX ns), rmw_zenoh's default
// deadline, lifespan and liveliness lease.
var Infinite = Time{Sec: 9223372036, Nsec: 854775807}

// Unspecified is RMW_DURATION_UNSPECIFIED, rmw's "default" duration, which
// rmw_zenoh turns into Infinite.
var Unspecified = Time{}

// DefaultDepth is the depth rmw_zenoh uses for a depth of 0 and leaves out
// of the QoS field (RMW_ZENOH_DEFAULT_HISTORY_DEPTH).
const DefaultDepth = 42

// Profile is an rmw_qos_profile_t as rmw_zenoh encodes it in liveliness
// tokens: rmw enum integers and rmw_time_t durations.
type Profile struct {
	Reliability     Reliability
	Durability      Durability
	History         History
	Depth           uint64
	Deadline        Time
	Lifespan        Time
	Liveliness      Liveliness
	LivelinessLease Time
}

// DefaultProfile is rmw_zenoh's default QoS: reliable, volatile, keep last
// 42, infinite deadline, lifespan and lease, automatic liveliness. The
// fields of a token's QoS equal to it are left empty.
func DefaultProfile() Profile {
	return Profile{
		Reliability:     ReliabilityReliable,
		Durability:      DurabilityVolatile,
		History:         HistoryKeepLast,
		Depth:           DefaultDepth,
		Deadline:        Infinite,
		Lifespan:        Infinite,
		Liveliness:      LivelinessAutomatic,
		LivelinessLease: Infinite,
	}
}

// Adapt does what rmw_zenoh's QoS::best_available_qos does to a profile
// before it makes an entity: system-default and unknown policies become
// the defaults, a depth of 0 becomes 42, unspecified durations become
// infinite. BEST_AVAILABLE policies are kept (rmw_zenoh keeps them).
func (p Profile) Adapt() Profile {
	d := DefaultProfile()
	if p.History == HistorySystemDefault || p.History == HistoryUnknown {
		p.History = d.History
	}
	if p.Depth == 0 {
		p.Depth = d.Depth
	}
	if p.Reliability == ReliabilitySystemDefault || p.Reliability == ReliabilityUnknown {
		p.Reliability = d.Reliability
	}
	if p.Durability == DurabilitySystemDefault || p.Durability == DurabilityUnknown {
		p.Durability = d.Durability
	}
	if p.Deadline == Unspecified {
		p.Deadline = d.Deadline
	}
	if p.Lifespan == Unspecified {
		p.Lifespan = d.Lifespan
	}
	if p.LivelinessLease == Unspecified {
		p.LivelinessLease = d.LivelinessLease
	}
	if p.Liveliness == LivelinessSystemDefault || p.Liveliness == LivelinessUnknown {
		p.Liveliness = d.Liveliness
	}
	return p
}

// ProfileFromQoS returns the adapted profile rmw_zenoh would put in the
// token of an endpoint created with q (rmw.QoS's zero durations mean
// infinite; a depth of 0 or less means 42).
func ProfileFromQoS(q rmw.QoS) Profile {
	p := Profile{
		Deadline:        timeOf(q.Deadline),
		Lifespan:        timeOf(q.Lifespan),
		LivelinessLease: timeOf(q.LivelinessLeaseDuration),
	}
	switch q.Reliability {
	case rmw.Reliable:
		p.Reliability = ReliabilityReliable
	case rmw.BestEffort:
		p.Reliability = ReliabilityBestEffort
	}
	switch q.Durability {
	case rmw.Volatile:
		p.Durability = DurabilityVolatile
	case rmw.TransientLocal:
		p.Durability = DurabilityTransientLocal
	}
	switch q.History {
	case rmw.KeepLast:
		p.History = HistoryKeepLast
	case rmw.KeepAll:
		p.History = HistoryKeepAll
	}
	switch q.Liveliness {
	case rmw.LivelinessAutomatic:
		p.Liveliness = LivelinessAutomatic
	case rmw.LivelinessManualByTopic:
		p.Liveliness = LivelinessManualByTopic
	}
	if q.Depth > 0 {
		p.Depth = uint64(q.Depth)
	}
	return p.Adapt()
}

// timeOf turns an rmw.QoS duration (0: infinite) into an rmw_time_t.
func timeOf(d time.Duration) Time {
	if d <= 0 {
		return Infinite
	}
	return Time{Sec: uint64(d / time.Second), Nsec: uint64(d % time.Second)}
}

// duration turns an rmw_time_t into an rmw.QoS duration: 0 for infinite,
// unspecified, or anything at or past INT64_MAX ns.
func (t Time) duration() time.Duration {
	if t == Unspecified || t == Infinite {
		return 0
	}
	const maxSec = math.MaxInt64 / int64(time.Second)
	if t.Sec > uint64(maxSec) || t.Nsec >= uint64(math.MaxInt64) {
		return 0
	}
	ns := int64(t.Sec) * int64(time.Second)
	if int64(t.Nsec) > math.MaxInt64-ns {
		return 0
	}
	return time.Duration(ns + int64(t.Nsec))
}

// QoS returns the profile as an rmw.QoS (for the graph). Policies rmw.QoS
// cannot say (unknown, best-available) become system-default; infinite
// durations become 0; a depth past the int range is clamped.
func (p Profile) QoS() rmw.QoS {
	var q rmw.QoS
	switch p.Reliability {
	case ReliabilityReliable:
		q.Reliability = rmw.Reliable
	case ReliabilityBestEffort:
		q.Reliability = rmw.BestEffort
	}
	switch p.Durability {
	case DurabilityVolatile:
		q.Durability = rmw.Volatile
	case DurabilityTransientLocal:
		q.Durability = rmw.TransientLocal
	}
	switch p.History {
	case HistoryKeepLast:
		q.History = rmw.KeepLast
	case HistoryKeepAll:
		q.History = rmw.KeepAll
	}
	switch p.Liveliness {
	case LivelinessAutomatic:
		q.Liveliness = rmw.LivelinessAutomatic
	case LivelinessManualByTopic, 2:
		q.Liveliness = rmw.LivelinessManualByTopic
	}
	if p.Depth > math.MaxInt32 {
		q.Depth = math.MaxInt32
	} else {
		q.Depth = int(p.Depth)
	}
	q.Deadline = p.Deadline.duration()
	q.Lifespan = p.Lifespan.duration()
	q.LivelinessLeaseDuration = p.LivelinessLease.duration()
	return q
}

// String encodes the profile as rmw_zenoh's qos_to_keyexpr does:
//
//	<rel>:<dur>:<hist>,<depth>:<deadline s>,<deadline ns>:<lifespan s>,<lifespan ns>:<liv>,<lease s>,<lease ns>
//
// with rmw enum integers in decimal and every field equal to
// DefaultProfile's left empty. The profile is written as it is: callers
// pass an adapted one (ProfileFromQoS, Adapt), as rmw_zenoh does. ClockQoS
// (best effort, keep last 1) is "2::,1:,:,:,,"; rclcpp's default (keep
// last 10) is "::,10:,:,:,,".
func (p Profile) String() string {
	d := DefaultProfile()
	var b strings.Builder
	b.Grow(32)
	num := func(v, def uint64) {
		if v != def {
			b.WriteString(strconv.FormatUint(v, 10))
		}
	}
	num(uint64(p.Reliability), uint64(d.Reliability))
	b.WriteByte(':')
	num(uint64(p.Durability), uint64(d.Durability))
	b.WriteByte(':')
	num(uint64(p.History), uint64(d.History))
	b.WriteByte(',')
	num(p.Depth, d.Depth)
	b.WriteByte(':')
	num(p.Deadline.Sec, d.Deadline.Sec)
	b.WriteByte(',')
	num(p.Deadline.Nsec, d.Deadline.Nsec)
	b.WriteByte(':')
	num(p.Lifespan.Sec, d.Lifespan.Sec)
	b.WriteByte(',')
	num(p.Lifespan.Nsec, d.Lifespan.Nsec)
	b.WriteByte(':')
	num(uint64(p.Liveliness), uint64(d.Liveliness))
	b.WriteByte(',')
	num(p.LivelinessLease.Sec, d.LivelinessLease.Sec)
	b.WriteByte(',')
	num(p.LivelinessLease.Nsec, d.LivelinessLease.Nsec)
	return b.String()
}

// ErrQoS is wrapped by every error of ParseProfile.
var ErrQoS = errors.New("ros: bad QoS field")

// ParseProfile decodes a token's QoS field as rmw_zenoh's keyexpr_to_qos
// does: six ':'-separated groups (history, deadline and lifespan of two
// ','-separated values, liveliness of three); an empty value is the
// default; enums must be values rmw_zenoh knows; numbers are unsigned
// decimals without sign, in range. Groups and values past those it reads
// are ignored, as rmw_zenoh ignores them. It is stricter than strtoull in
// one way: no leading blanks or '+'.
func ParseProfile(s string) (Profile, error) {
	d := DefaultProfile()
	g := strings.Split(s, ":")
	if len(g) < 6 {
		return Profile{}, fmt.Errorf("%w %q: %d ':'-separated groups, want 6", ErrQoS, s, len(g))
	}
	hist := strings.Split(g[2], ",")
	dl := strings.Split(g[3], ",")
	ls := strings.Split(g[4], ",")
	lv := strings.Split(g[5], ",")
	if len(hist) < 2 || len(dl) < 2 || len(ls) < 2 || len(lv) < 3 {
		return Profile{}, fmt.Errorf("%w %q: want history \"h,depth\", deadline and lifespan \"s,ns\", liveliness \"kind,s,ns\"", ErrQoS, s)
	}
	var p Profile
	var err error
	enum := func(what, v string, def uint64, ok func(uint64) bool) uint64 {
		if err != nil || v == "" {
			return def
		}
		n, e := parseUnsigned(v)
		if e != nil || !ok(n) {
			err = fmt.Errorf("%w %q: %s %q", ErrQoS, s, what, v)
			return 0
		}
		return n
	}
	num := func(what, v string, def uint64) uint64 {
		if err != nil || v == "" {
			return def
		}
		n, e := parseUnsigned(v)
		if e != nil {
			err = fmt.Errorf("%w %q: %s %q: %v", ErrQoS, s, what, v, e)
			return 0
		}
		return n
	}
	p.Reliability = Reliability(enum("reliability", g[0], uint64(d.Reliability), func(n uint64) bool { return n <= 4 }))
	p.Durability = Durability(enum("durability", g[1], uint64(d.Durability), func(n uint64) bool { return n <= 4 }))
	p.History = History(enum("history", hist[0], uint64(d.History), func(n uint64) bool { return n <= 3 }))
	p.Depth = num("depth", hist[1], d.Depth)
	p.Deadline = Time{num("deadline seconds", dl[0], d.Deadline.Sec), num("deadline nanoseconds", dl[1], d.Deadline.Nsec)}
	p.Lifespan = Time{num("lifespan seconds", ls[0], d.Lifespan.Sec), num("lifespan nanoseconds", ls[1], d.Lifespan.Nsec)}
	p.Liveliness = Liveliness(enum("liveliness", lv[0], uint64(d.Liveliness), func(n uint64) bool { return n <= 5 && n != 2 }))
	p.LivelinessLease = Time{num("lease seconds", lv[1], d.LivelinessLease.Sec), num("lease nanoseconds", lv[2], d.LivelinessLease.Nsec)}
	if err != nil {
		return Profile{}, err
	}
	return p, nil
}

// parseUnsigned parses a decimal without sign or blanks into a uint64.
func parseUnsigned(v string) (uint64, error) {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errors.New("not an unsigned decimal")
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

// CongestionBlock reports how rmw_zenoh sets a publisher's congestion
// control: BLOCK for a reliable keep-all publisher, DROP otherwise.
// rmw_zenoh sets no congestion control, priority or express flag on
// queries and replies, nor priority or express on puts: zenoh's defaults
// apply (priority Data, express off).
func (p Profile) CongestionBlock() bool {
	return p.Reliability == ReliabilityReliable && p.History == HistoryKeepAll
}

// ReliableTransport reports whether rmw_zenoh declares the publisher with
// zenoh's RELIABLE reliability (only for RELIABLE; BEST_EFFORT and
// BEST_AVAILABLE get BEST_EFFORT).
func (p Profile) ReliableTransport() bool { return p.Reliability == ReliabilityReliable }
