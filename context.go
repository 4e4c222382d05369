package nros

import (
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/internal/clock"
)

// Context is one ROS runtime instance: it owns one simulated clock (the
// ROS-time override), the transport its nodes talk through, and its nodes.
// A process usually has one, DefaultContext, but may have several: each has
// its own simulated time, so two contexts can run on different simulations.
type Context struct {
	ov  *clock.Override
	ros *Clock
}

// ContextOption configures a Context.
type ContextOption func(*Context)

// NewContext returns a new context with its own simulated clock.
func NewContext(opts ...ContextOption) *Context {
	c := &Context{ov: clock.NewOverride(sysSource)}
	c.ros = c.clockFor(ROSTime)
	for _, o := range opts {
		o(c)
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

// Clock returns the context's ROS clock.
func (c *Context) Clock() *Clock { return c.ros }

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
func (s *TimeSource) Install(t Time) {
	if s.detached.Load() {
		return
	}
	s.ctx.ov.Install(t.ns)
}

// Detach stops the source. The context keeps the last installed time (it
// does not snap back to system time) until ClearRosTimeOverride. It is safe
// to call twice.
func (s *TimeSource) Detach() {
	if s.detached.CompareAndSwap(false, true) {
		s.ctx.ov.Detach()
	}
}
