package nros

import (
	"github.com/nros-go/nros/internal/clock"
)

// ClockType names the three ROS clocks.
type ClockType uint8

const (
	// ROSTime follows a /clock source when one is installed on the context,
	// and reads system time otherwise.
	ROSTime ClockType = iota + 1
	// SystemTime is the wall clock (CLOCK_REALTIME), nanoseconds since the
	// UNIX epoch. It can step when the system time is set.
	SystemTime
	// SteadyTime is the monotonic clock. It never steps; its origin is
	// arbitrary (process start).
	SteadyTime
)

// String returns the rcl name of the clock type.
func (t ClockType) String() string {
	switch t {
	case ROSTime:
		return "ROS_TIME"
	case SystemTime:
		return "SYSTEM_TIME"
	case SteadyTime:
		return "STEADY_TIME"
	}
	return "UNINITIALIZED"
}

// Clock reads one of the ROS clocks. A ROS clock belongs to a Context and
// follows that context's simulated time. Clocks are safe for concurrent use
// and reading one does not allocate.
type Clock struct {
	typ ClockType
	ctx *Context
	ov  *clock.Override
}

// NewClock returns a clock of the given type. A ROS clock made this way
// follows the default context; use Context.Clock for another context.
func NewClock(t ClockType) *Clock {
	if t == ROSTime {
		return DefaultContext().Clock()
	}
	if t != SystemTime && t != SteadyTime {
		t = SteadyTime
	}
	return &Clock{typ: t, ctx: DefaultContext(), ov: DefaultContext().ov}
}

// Type returns the clock's type.
func (c *Clock) Type() ClockType { return c.typ }

// Context returns the context whose simulated time a ROS clock follows.
func (c *Context) clockFor(t ClockType) *Clock { return &Clock{typ: t, ctx: c, ov: c.ov} }

// Now returns the current time of the clock. A ROS clock with no time
// source, or with a source that has not delivered a sample yet, reads system
// time.
//
// A ROS clock read inside a callback of the executor that waits on the
// /clock socket itself (see the README's performance section) first reads
// the samples that arrived since the callback began, so it is as fresh as
// one read anywhere else.
func (c *Clock) Now() Time {
	// now's switch, repeated rather than called: Now stays one call deep
	// (BenchmarkClockNow).
	switch c.typ {
	case ROSTime:
		c.ov.Fresh()
		return Time{int64(c.ov.Now())}
	case SystemTime:
		return Time{int64(c.ctx.src.System())}
	default:
		return Time{int64(c.ctx.src.Steady())}
	}
}

// now is Now without reading the clock's socket: for callers that hold a
// lock an install may need.
func (c *Clock) now() Time {
	switch c.typ {
	case ROSTime:
		return Time{int64(c.ov.Now())}
	case SystemTime:
		return Time{int64(c.ctx.src.System())}
	default:
		return Time{int64(c.ctx.src.Steady())}
	}
}

// RosTimeIsActive reports whether a ROS clock is under a time source's
// control: a source is installed, or one was and its last value is kept.
// It is always false for system and steady clocks.
func (c *Clock) RosTimeIsActive() bool {
	return c.typ == ROSTime && c.ov.Active()
}

// Started reports, for a ROS clock, whether a first /clock sample has
// arrived and is in force: false while the clock reads system time (no
// source, a source with no sample yet, or after ClearRosTimeOverride).
// System and steady clocks are always started.
//
// This differs from rclcpp, where started() means now() > 0 and so is true
// on system time: here it answers "is simulated time in force?".
func (c *Clock) Started() bool {
	if c.typ != ROSTime {
		return true
	}
	c.ov.Fresh()
	return c.ov.Started()
}

// ClearRosTimeOverride drops the simulated time of the clock's context:
// Now reads system time again. It is the only way to leave the last
// simulated time once the time source is gone. ROS-time timers see a
// source switch and restart their period. It does nothing on system and
// steady clocks.
func (c *Clock) ClearRosTimeOverride() {
	if c.typ == ROSTime {
		c.ov.Clear()
	}
}
