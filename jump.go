package nros

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/exec"
)

// ClockChange says whether a time jump also changed where ROS time comes
// from.
type ClockChange uint8

const (
	// RosTimeNoChange: the same source moved the time (a forward or backward
	// jump of the simulation); TimeJump.Delta says by how much.
	RosTimeNoChange ClockChange = iota
	// RosTimeActivated: the first sample of a source replaced system time.
	RosTimeActivated
	// RosTimeDeactivated: the last source was removed (use_sim_time set
	// false, the node closed); the last simulated time is kept, Delta is 0.
	RosTimeDeactivated
	// RosTimeCleared: ClearRosTimeOverride handed ROS time back to system
	// time.
	RosTimeCleared
)

// String names the change.
func (c ClockChange) String() string {
	switch c {
	case RosTimeActivated:
		return "activated"
	case RosTimeDeactivated:
		return "deactivated"
	case RosTimeCleared:
		return "cleared"
	}
	return "no_change"
}

// TimeJump describes one discontinuity of a ROS clock.
type TimeJump struct {
	Change ClockChange
	// Delta is the time after minus the time before (negative for a jump
	// back).
	Delta Duration
	// Before and After are the clock's readings around the jump.
	Before, After Time
}

// JumpThreshold says which jumps a handler wants (rclcpp's JumpThreshold).
type JumpThreshold struct {
	// OnClockChange delivers source changes: activated, deactivated,
	// cleared.
	OnClockChange bool
	// MinForward delivers forward jumps of at least this size; zero
	// delivers none.
	MinForward Duration
	// MinBackward delivers backward jumps of at least this size (a
	// positive magnitude); zero delivers none.
	MinBackward Duration
}

func (th JumpThreshold) wants(j TimeJump) bool {
	if j.Change != RosTimeNoChange {
		return th.OnClockChange
	}
	switch {
	case j.Delta > 0:
		return th.MinForward > 0 && j.Delta >= th.MinForward
	case j.Delta < 0:
		return th.MinBackward > 0 && -j.Delta >= th.MinBackward
	}
	return false
}

// JumpHandle is a registered jump handler.
type JumpHandle struct {
	reg     *jumpRegistry
	th      JumpThreshold
	fn      func(TimeJump)
	removed atomic.Bool
}

// Remove unregisters the handler: it is not called for a jump delivered
// after Remove returns (a call already running finishes). Safe to call
// twice.
func (h *JumpHandle) Remove() {
	if h == nil || !h.removed.CompareAndSwap(false, true) {
		return
	}
	h.reg.remove(h)
}

// maxQueuedJumps bounds the jumps kept for delivery while no executor of
// the context is spinning; older ones are dropped and counted.
const maxQueuedJumps = 1024

// jumpRegistry holds a context's jump handlers and the jumps waiting for an
// executor to deliver them.
type jumpRegistry struct {
	ov     *clock.Override
	active atomic.Bool // a handler is registered

	mu       sync.Mutex
	handlers []*JumpHandle
	queue    []TimeJump
	spare    []TimeJump
	dropped  uint64
	loops    []*exec.Loop // executors that deliver this context's jumps
	listen   bool         // the override listener is installed
}

// OnJump registers fn for the jumps of a ROS clock that th selects: the
// first sample of a source (activated), its removal (deactivated),
// ClearRosTimeOverride (cleared), and forward and backward jumps of at
// least a given size. Timers keep their own rules (a backward jump restarts
// their period, a forward one is a backlog); jump handlers are for the
// state that must follow the clock: transform buffers, filters, rate
// limiters.
//
// fn runs where the callbacks of an executor of the clock's context run
// (WithExecutorContext, or one that a node of the context was added to:
// the goroutine that spins it), before the timers that the same sample
// makes due, and never concurrently with other callbacks of that executor.
// A panic in fn follows the
// executor's panic policy. While no such executor spins, up to 1024 jumps
// wait for one. Calling OnJump on a system or steady clock is an error.
func (c *Clock) OnJump(th JumpThreshold, fn func(TimeJump)) (*JumpHandle, error) {
	if c == nil || c.typ != ROSTime {
		return nil, fmt.Errorf("nros: OnJump needs a ROS clock")
	}
	if fn == nil {
		return nil, fmt.Errorf("nros: OnJump callback is nil")
	}
	reg := c.ctx.jumps
	h := &JumpHandle{reg: reg, th: th, fn: fn}
	reg.mu.Lock()
	reg.handlers = append(reg.handlers, h)
	reg.active.Store(true)
	install := !reg.listen
	reg.listen = true
	reg.mu.Unlock()
	if install {
		// Lock order: the override's lock, then the registry's (the
		// listener runs under the former).
		reg.ov.AddListener(reg.onChange)
	}
	return h, nil
}

func (r *jumpRegistry) remove(h *JumpHandle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.handlers {
		if x == h {
			r.handlers = append(r.handlers[:i], r.handlers[i+1:]...)
			break
		}
	}
	r.active.Store(len(r.handlers) > 0)
}

// addLoop makes l deliver this registry's jumps (once per loop).
func (r *jumpRegistry) addLoop(l *exec.Loop) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.loops {
		if x == l {
			return
		}
	}
	r.loops = append(r.loops, l)
}

func (r *jumpRegistry) removeLoop(l *exec.Loop) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.loops {
		if x == l {
			r.loops = append(r.loops[:i], r.loops[i+1:]...)
			return
		}
	}
}

// onChange runs on the installing goroutine under the override's lock: it
// queues the jump if a handler wants it and wakes the delivering executors.
func (r *jumpRegistry) onChange(ch clock.Change, before, after int64) {
	if !r.active.Load() {
		return
	}
	j := TimeJump{Delta: Duration(after - before), Before: Time{before}, After: Time{after}}
	switch ch {
	case clock.Switch:
		j.Change = RosTimeActivated
	case clock.Detached:
		j.Change = RosTimeDeactivated
	case clock.Cleared:
		j.Change = RosTimeCleared
	}
	r.mu.Lock()
	wanted := false
	for _, h := range r.handlers {
		if h.th.wants(j) {
			wanted = true
			break
		}
	}
	if !wanted {
		r.mu.Unlock()
		return
	}
	if len(r.queue) == maxQueuedJumps {
		copy(r.queue, r.queue[1:])
		r.queue = r.queue[:len(r.queue)-1]
		r.dropped++
	}
	r.queue = append(r.queue, j)
	loops := r.loops
	r.mu.Unlock()
	for _, l := range loops {
		l.Wake()
	}
}

// deliver runs queued jumps through the handlers that want them, on the
// executor's goroutine. The barrier on the override first makes sure that
// every install whose time this pass has read has queued its jump, so that
// handlers run before the timers the same sample makes due.
func (r *jumpRegistry) deliver(e *Executor) (err error) {
	if !r.active.Load() {
		return nil
	}
	r.ov.Barrier()
	r.mu.Lock()
	if len(r.queue) == 0 {
		r.mu.Unlock()
		return nil
	}
	events := r.queue
	r.queue, r.spare = r.spare[:0], nil
	handlers := append([]*JumpHandle(nil), r.handlers...)
	r.mu.Unlock()
	for _, j := range events {
		for _, h := range handlers {
			if !h.removed.Load() && h.th.wants(j) {
				if herr := e.runJumpHandler(h, j); herr != nil && err == nil {
					err = herr
				}
			}
		}
	}
	r.mu.Lock()
	if r.spare == nil {
		r.spare = events[:0]
	}
	r.mu.Unlock()
	return err
}

// runJumpHandler calls one handler under the executor's panic policy and
// returns the error that stops the pass running it.
func (e *Executor) runJumpHandler(h *JumpHandle, j TimeJump) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = e.report(exec.PanicReport{Kind: "jump", Name: j.Change.String(), Value: v, Stack: debug.Stack()})
		}
	}()
	h.fn(j)
	return nil
}

// JumpsDropped counts the jumps dropped because more than 1024 waited for
// an executor of the context.
func (c *Context) JumpsDropped() uint64 {
	c.jumps.mu.Lock()
	defer c.jumps.mu.Unlock()
	return c.jumps.dropped
}
