package nros

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Time is a point in time on one of the ROS clocks, in int64 nanoseconds
// (since the UNIX epoch for ROS and system time, since an arbitrary origin
// for steady time). It may be negative.
type Time struct{ ns int64 }

// Duration is a signed span of ROS time in int64 nanoseconds. It converts
// freely to and from time.Duration, which has the same representation.
type Duration int64

// ErrTimeRange reports a value that does not fit the target representation.
var ErrTimeRange = errors.New("nros: time out of range")

// NewTime returns the time sec seconds and nanosec nanoseconds after the
// epoch, the way builtin_interfaces/Time counts: sec may be negative and
// nanosec is added to it. It cannot overflow.
func NewTime(sec int32, nanosec uint32) Time {
	return Time{int64(sec)*1e9 + int64(nanosec)}
}

// TimeFromNanoseconds returns the time ns nanoseconds after the epoch.
func TimeFromNanoseconds(ns int64) Time { return Time{ns} }

// TimeFromSeconds converts seconds to a Time, rounding to the nearest
// nanosecond. NaN, infinities and values outside the int64 nanosecond range
// are an error.
func TimeFromSeconds(s float64) (Time, error) {
	ns, err := secondsToNs(s)
	return Time{ns}, err
}

// TimeFromStd converts a time.Time.
func TimeFromStd(t time.Time) Time { return Time{t.UnixNano()} }

// Nanoseconds returns the time in nanoseconds since the epoch.
func (t Time) Nanoseconds() int64 { return t.ns }

// Seconds returns the time in seconds since the epoch.
func (t Time) Seconds() float64 { return float64(t.ns) / 1e9 }

// IsZero reports whether t is the epoch itself (a ROS clock that was never
// started reads system time, so a zero time means "not set").
func (t Time) IsZero() bool { return t.ns == 0 }

// Std converts to a time.Time (meaningful for ROS and system time).
func (t Time) Std() time.Time { return time.Unix(0, t.ns) }

// SecNanosec splits t the way builtin_interfaces/Time does: nanosec is in
// [0, 1e9) and sec is floor(t / 1s), so -0.5 s is {-1, 500000000}. A time
// whose seconds do not fit an int32 (before 1901 or after 2038) is an error,
// never a silent wrap.
func (t Time) SecNanosec() (sec int32, nanosec uint32, err error) {
	return splitNs(t.ns)
}

// Before reports whether t is before u.
func (t Time) Before(u Time) bool { return t.ns < u.ns }

// After reports whether t is after u.
func (t Time) After(u Time) bool { return t.ns > u.ns }

// Add returns t+d, or an error if the result overflows.
func (t Time) Add(d Duration) (Time, error) {
	r := t.ns + int64(d)
	if (d > 0 && r < t.ns) || (d < 0 && r > t.ns) {
		return Time{}, fmt.Errorf("%w: %v + %v overflows", ErrTimeRange, t, d)
	}
	return Time{r}, nil
}

// Sub returns t-u, or an error if the result overflows.
func (t Time) Sub(u Time) (Duration, error) {
	r := t.ns - u.ns
	if (u.ns < 0 && r < t.ns) || (u.ns > 0 && r > t.ns) {
		return 0, fmt.Errorf("%w: %v - %v overflows", ErrTimeRange, t, u)
	}
	return Duration(r), nil
}

// String formats t as seconds with nanosecond precision ("100.250000000").
func (t Time) String() string { return formatNs(t.ns) }

// DurationFromSeconds converts seconds to a Duration, rounding to the
// nearest nanosecond; NaN, infinities and out-of-range values are an error.
func DurationFromSeconds(s float64) (Duration, error) {
	ns, err := secondsToNs(s)
	return Duration(ns), err
}

// NewDuration returns the duration of a builtin_interfaces/Duration.
func NewDuration(sec int32, nanosec uint32) Duration {
	return Duration(int64(sec)*1e9 + int64(nanosec))
}

// Std converts to a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Nanoseconds returns d in nanoseconds.
func (d Duration) Nanoseconds() int64 { return int64(d) }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return float64(d) / 1e9 }

// SecNanosec splits d as builtin_interfaces/Duration does (nanosec in
// [0, 1e9), sec floored); a duration beyond the int32 seconds range is an
// error.
func (d Duration) SecNanosec() (sec int32, nanosec uint32, err error) {
	return splitNs(int64(d))
}

// String formats d as signed seconds with nanosecond precision.
func (d Duration) String() string { return formatNs(int64(d)) }

func splitNs(ns int64) (int32, uint32, error) {
	sec := ns / 1e9
	rem := ns % 1e9
	if rem < 0 {
		sec--
		rem += 1e9
	}
	if sec < math.MinInt32 || sec > math.MaxInt32 {
		return 0, 0, fmt.Errorf("%w: %s s does not fit int32 seconds", ErrTimeRange, formatNs(ns))
	}
	return int32(sec), uint32(rem), nil
}

func secondsToNs(s float64) (int64, error) {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("%w: %v seconds", ErrTimeRange, s)
	}
	ns := math.Round(s * 1e9)
	// float64(math.MaxInt64) rounds up to 2^63, which does not fit.
	if ns >= 9.223372036854775807e18 || ns < -9.223372036854775808e18 {
		return 0, fmt.Errorf("%w: %v seconds", ErrTimeRange, s)
	}
	return int64(ns), nil
}

func formatNs(ns int64) string {
	neg := ns < 0
	u := uint64(ns)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u/1e9, 10) + "." + fmt.Sprintf("%09d", u%1e9)
	if neg {
		return "-" + s
	}
	return s
}
