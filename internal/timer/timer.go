// Package timer is the timer state machine of nros-go as pure functions of
// (state, now): the period, the phase grid, the overrun policies and the
// restart that a backward jump or a source switch causes. It has no
// goroutines and reads no clock; the executor feeds it the time of the clock
// that the timer follows.
//
// All times are int64 nanoseconds on the timer's own clock. Arithmetic
// saturates at the int64 range instead of wrapping: a deadline that would
// overflow becomes math.MaxInt64, which is never reached.
package timer

import (
	"math"
	"math/bits"
)

// Policy says what a timer does with a backlog of missed periods.
type Policy uint8

const (
	// Skip coalesces a backlog into one activation, counts the missed
	// periods as overruns and keeps the phase grid.
	Skip Policy = iota
	// CatchUp replays every missed period, one activation per evaluation.
	CatchUp
)

// String names the policy as the command line spells it.
func (p Policy) String() string {
	if p == CatchUp {
		return "catch_up"
	}
	return "skip"
}

// State is one timer.
type State struct {
	Period   int64 // > 0
	Next     int64 // the next deadline on the timer's clock
	Policy   Policy
	OneShot  bool
	Canceled bool
	// Overruns counts periods that were missed: under Skip, the periods a
	// backlog coalesced; under CatchUp, the periods that fell due while an
	// earlier one was still pending (and were then replayed late). Each
	// missed period counts once.
	Overruns uint64
	// Activations counts the activations the timer has produced.
	Activations uint64
	counted     int64 // the latest deadline already counted as an overrun
}

// New returns a timer whose first deadline is one period after now.
func New(now, period int64, p Policy, oneShot bool) State {
	s := State{Period: period, Policy: p, OneShot: oneShot}
	s.Restart(now)
	return s
}

// Restart starts the period again at: the next deadline is at+Period and any
// backlog is forgotten. It is what a backward jump, a source switch and a
// reset do. It does not un-cancel.
func (s *State) Restart(at int64) {
	s.Next = add(at, s.Period)
	s.counted = at
}

// Due reports whether an activation is due at now.
func (s *State) Due(now int64) bool { return !s.Canceled && now >= s.Next }

// Fire evaluates the timer at now and returns whether it produces one
// activation. Under Skip a backlog of k due periods gives one activation and
// k-1 overruns, and the next deadline stays on the grid. Under CatchUp each
// call produces at most one activation, so a backlog is replayed over
// successive calls; missed periods are counted as overruns once, when first
// seen. A one-shot timer cancels itself when it fires.
func (s *State) Fire(now int64) bool {
	if !s.Due(now) {
		return false
	}
	s.Activations++
	if s.OneShot {
		s.Canceled = true
		return true
	}
	behind := span(s.Next, now) / uint64(s.Period) // whole periods after the first due one
	switch s.Policy {
	case CatchUp:
		last := advance(s.Next, behind, s.Period) // the latest due deadline
		from := max(s.Next, s.counted)
		if last > from {
			s.Overruns += span(from, last) / uint64(s.Period)
			s.counted = last
		}
		s.Next = advance(s.Next, 1, s.Period)
	default:
		s.Overruns += behind
		s.Next = advance(s.Next, behind+1, s.Period)
		s.counted = s.Next
	}
	return true
}

// span returns b-a for a <= b, exactly, as an unsigned number.
func span(a, b int64) uint64 { return uint64(b) - uint64(a) }

// advance returns t + k*period, saturated at math.MaxInt64.
func advance(t int64, k uint64, period int64) int64 {
	hi, off := bits.Mul64(k, uint64(period))
	if hi != 0 || off > span(t, math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(uint64(t) + off)
}

// Until returns the time from now to the next deadline (negative when due).
func (s *State) Until(now int64) int64 { return sub(s.Next, now) }

func add(a, b int64) int64 {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

func sub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return add(a, -b)
}
