// Package clockscript parses and evaluates the simulated-clock scripts used by
// `nros demo`, `nros clock --script` and the interop tests.
//
// A script is a list of steps separated by ';' (empty steps are ignored):
//
//	start=<sim seconds>         initial simulated time (first step only; default 0)
//	play <rate>x <wall dur>     sim advances at rate × wall time
//	pause <wall dur>            sim frozen; the clock keeps publishing the same stamp
//	stall <wall dur>            sim frozen and the clock publishes nothing
//	jump +<sim dur>             sim jumps forward (or jump -<sim dur> backward)
//	jump =<sim seconds>         sim jumps to an absolute time
//	hz <F>                      publish rate from this instant on
//
// Durations use Go syntax ("1s", "500ms", "1m30s") or a bare decimal number
// of seconds. Every number is an exact decimal: durations and sim times to the
// nanosecond, rates and frequencies to 1e-9 (a value finer than that is an
// error, not rounded). Keywords are case-insensitive.
//
// Evaluation is exact integer arithmetic: within a play step sim time is
// start + floor(rate × elapsed wall), with the fractional nanoseconds of
// earlier steps carried, so no drift accumulates.
package clockscript

import (
	"fmt"
	"iter"
	"math"
	"sort"
	"strings"
	"time"
)

// Rate is a positive exact decimal in parts per billion: 1x is 1e9, 0.5x is
// 5e8. It is used for play rates and publish frequencies.
type Rate int64

// One is the rate 1x.
const One Rate = 1e9

// String formats the rate as a minimal decimal ("1", "0.5").
func (r Rate) String() string { return formatFixed(int64(r)) }

// Float64 returns the rate as a float (for display only).
func (r Rate) Float64() float64 { return float64(r) / 1e9 }

// Kind is the kind of a step.
type Kind uint8

// Step kinds.
const (
	KindStart Kind = iota + 1
	KindPlay
	KindPause
	KindStall
	KindJump   // relative jump by Step.Sim
	KindJumpTo // absolute jump to Step.Sim
	KindHz
)

// Mode is what the clock does during a step.
type Mode uint8

// Modes reported by SimAt.
const (
	Playing Mode = iota + 1
	Paused
	Stalled
	Ended // at or after the script's end
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Playing:
		return "playing"
	case Paused:
		return "paused"
	case Stalled:
		return "stalled"
	case Ended:
		return "ended"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Step is one parsed step.
type Step struct {
	Kind Kind
	// Index is the 1-based position of the step among the ';'-separated
	// parts of the source (empty parts count).
	Index int
	// Text is the step as written, trimmed.
	Text string
	// Rate is the play rate (KindPlay) or the frequency (KindHz).
	Rate Rate
	// Wall is the step's wall length (play, pause, stall).
	Wall time.Duration
	// Sim is the start time (KindStart, KindJumpTo) or the jump (KindJump),
	// in ns.
	Sim int64
	// WallStart is the wall offset at which the step begins.
	WallStart time.Duration
	// SimBefore and SimAfter are the sim times (ns, floored) at the step's
	// beginning and end.
	SimBefore, SimAfter int64

	frac uint64 // sub-ns part of SimBefore, in 1e-9 ns
}

// State is the clock's condition at a wall offset.
type State struct {
	Mode Mode
	// Rate is the play rate while Playing, 0 otherwise.
	Rate Rate
	// Step is the Index of the step in force (0 when Ended).
	Step int
}

// Sample is one /clock sample a publisher emits.
type Sample struct {
	Wall time.Duration // offset from the script's start
	Sim  int64         // ns
	Step int           // Index of the step in force
}

// Script is a parsed clock script. It is immutable and safe for concurrent
// use.
type Script struct {
	steps    []Step
	timed    []int // indexes into steps of steps with Wall > 0, in order
	duration time.Duration
	end      int64 // final sim time
}

// StepError reports a step that does not parse or that makes the clock
// overflow.
type StepError struct {
	Index int    // 1-based position, as Step.Index
	Step  string // the step text
	Err   error
}

// Error implements the error interface.
func (e *StepError) Error() string {
	return fmt.Sprintf("step %d %q: %v", e.Index, e.Step, e.Err)
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// Parse parses a script. Errors are *StepError values naming the step, except
// for an empty script.
func Parse(src string) (*Script, error) {
	sc := &Script{}
	var (
		wall int64  // wall offset, ns
		sim  int64  // sim time, ns (floored)
		frac uint64 // sub-ns sim, 1e-9 ns units, < 1e9
	)
	for i, part := range strings.Split(src, ";") {
		text := strings.TrimSpace(part)
		if text == "" {
			continue
		}
		st, err := parseStep(text, len(sc.steps) == 0)
		if err != nil {
			return nil, &StepError{Index: i + 1, Step: text, Err: err}
		}
		st.Index, st.Text = i+1, text
		st.WallStart, st.SimBefore, st.frac = time.Duration(wall), sim, frac
		fail := func(format string, a ...any) (*Script, error) {
			return nil, &StepError{Index: i + 1, Step: text, Err: fmt.Errorf(format, a...)}
		}
		switch st.Kind {
		case KindStart, KindJumpTo:
			sim, frac = st.Sim, 0
			st.frac = 0
		case KindJump:
			var ok bool
			if sim, ok = addInt64(sim, st.Sim); !ok {
				return fail("sim time overflows int64 nanoseconds")
			}
		case KindPlay:
			adv, rem, ok := mulDiv(uint64(st.Wall), uint64(st.Rate), frac, 1e9)
			if !ok || adv > math.MaxInt64 {
				return fail("sim time overflows int64 nanoseconds")
			}
			if sim, ok = addInt64(sim, int64(adv)); !ok {
				return fail("sim time overflows int64 nanoseconds")
			}
			frac = rem
		}
		if st.Wall > 0 {
			var ok bool
			if wall, ok = addInt64(wall, int64(st.Wall)); !ok {
				return fail("total wall duration overflows")
			}
			sc.timed = append(sc.timed, len(sc.steps))
		}
		st.SimAfter = sim
		sc.steps = append(sc.steps, st)
	}
	if len(sc.steps) == 0 {
		return nil, fmt.Errorf("empty script (want steps such as start=0;play 1x 10s)")
	}
	sc.duration, sc.end = time.Duration(wall), sim
	return sc, nil
}

// parseStep parses one non-empty step without its position.
func parseStep(text string, first bool) (Step, error) {
	if len(text) >= 5 && strings.EqualFold(text[:5], "start") {
		rest := strings.TrimSpace(text[len("start"):])
		if !strings.HasPrefix(rest, "=") {
			return Step{}, fmt.Errorf("want start=<sim seconds>")
		}
		if !first {
			return Step{}, fmt.Errorf("start must be the first step (use jump =<sim seconds> later)")
		}
		v, err := parseFixed(strings.TrimSpace(rest[1:]), true, "start time")
		return Step{Kind: KindStart, Sim: v}, err
	}
	f := strings.Fields(text)
	kw := strings.ToLower(f[0])
	args := f[1:]
	need := func(n int, usage string) error {
		if len(args) != n {
			return fmt.Errorf("want %q", usage)
		}
		return nil
	}
	switch kw {
	case "play":
		if err := need(2, "play <rate>x <wall duration>"); err != nil {
			return Step{}, err
		}
		r := args[0]
		if !strings.HasSuffix(r, "x") && !strings.HasSuffix(r, "X") {
			return Step{}, fmt.Errorf("rate %q must end in x (as in 0.5x)", r)
		}
		rate, err := parsePositive(r[:len(r)-1], "rate")
		if err != nil {
			return Step{}, err
		}
		d, err := parseDuration(args[1])
		return Step{Kind: KindPlay, Rate: rate, Wall: time.Duration(d)}, err
	case "pause", "stall":
		if err := need(1, kw+" <wall duration>"); err != nil {
			return Step{}, err
		}
		d, err := parseDuration(args[0])
		k := KindPause
		if kw == "stall" {
			k = KindStall
		}
		return Step{Kind: k, Wall: time.Duration(d)}, err
	case "jump":
		arg := strings.Join(args, "")
		if arg == "" {
			return Step{}, fmt.Errorf("want jump +<sim duration>, jump -<sim duration> or jump =<sim seconds>")
		}
		switch arg[0] {
		case '=':
			v, err := parseFixed(arg[1:], true, "sim time")
			return Step{Kind: KindJumpTo, Sim: v}, err
		case '+', '-':
			d, err := parseDuration(arg[1:])
			if arg[0] == '-' {
				d = -d
			}
			return Step{Kind: KindJump, Sim: d}, err
		}
		return Step{}, fmt.Errorf("jump %q needs a sign (+ or -) or =", arg)
	case "hz":
		if err := need(1, "hz <frequency>"); err != nil {
			return Step{}, err
		}
		r, err := parsePositive(args[0], "frequency")
		if err == nil && r > 1e18 {
			err = fmt.Errorf("frequency %q above 1 GHz", args[0])
		}
		return Step{Kind: KindHz, Rate: r}, err
	}
	return Step{}, fmt.Errorf("unknown step %q (want start=, play, pause, stall, jump or hz)", f[0])
}

// Steps returns a copy of the parsed steps.
func (s *Script) Steps() []Step { return append([]Step(nil), s.steps...) }

// Duration returns the script's total wall length.
func (s *Script) Duration() time.Duration { return s.duration }

// Start returns the sim time at wall offset 0.
func (s *Script) Start() int64 { v, _ := s.SimAt(0); return v }

// SimAt returns the sim time (ns) and the state at wall offset w. A jump (or
// hz) step takes effect at its instant: at exactly the wall offset where a jump
// sits, SimAt reports the time after the jump. Offsets before 0 are read as 0;
// at or after Duration the state is Ended and the time is the final one.
func (s *Script) SimAt(w time.Duration) (int64, State) {
	if w < 0 {
		w = 0
	}
	if w >= s.duration {
		return s.end, State{Mode: Ended}
	}
	st := s.segmentAt(w)
	switch st.Kind {
	case KindPause:
		return st.SimBefore, State{Mode: Paused, Step: st.Index}
	case KindStall:
		return st.SimBefore, State{Mode: Stalled, Step: st.Index}
	}
	adv, _, _ := mulDiv(uint64(w-st.WallStart), uint64(st.Rate), st.frac, 1e9)
	return st.SimBefore + int64(adv), State{Mode: Playing, Rate: st.Rate, Step: st.Index}
}

// segmentAt returns the timed step containing w, for 0 <= w < Duration: the
// last one starting at or before w.
func (s *Script) segmentAt(w time.Duration) *Step {
	k := sort.Search(len(s.timed), func(i int) bool { return s.steps[s.timed[i]].WallStart > w }) - 1
	return &s.steps[s.timed[k]]
}

// periodPoint returns origin + floor(k/hz) for hz in parts per billion.
func periodPoint(origin time.Duration, k uint64, hz Rate) (time.Duration, bool) {
	d, _, ok := mulDiv(k, 1e18, 0, uint64(hz))
	if !ok || d > math.MaxInt64 {
		return 0, false
	}
	w, ok := addInt64(int64(origin), int64(d))
	return time.Duration(w), ok
}

// hzFromFloat converts a frequency to parts per billion, or 0 when it is not
// positive, finite and at most 1 GHz.
func hzFromFloat(hz float64) Rate {
	if !(hz > 0) || hz > 1e9 {
		return 0
	}
	return Rate(math.Round(hz * 1e9))
}

// SampleSeq yields the samples a clock publisher emits: one per point of the
// wall grid 0, 1/hz, 2/hz, ... below Duration, where an `hz` step restarts
// the grid at its own instant with its frequency. A paused clock repeats its
// stamp; a stalled one emits nothing; a jump shows in the first sample at or
// after its instant. hz must be positive and at most 1e9; otherwise nothing is
// yielded. Grid points are computed exactly (k·1e9/hz ns, floored), so they do
// not drift.
func (s *Script) SampleSeq(hz float64) iter.Seq[Sample] {
	return func(yield func(Sample) bool) {
		rate := hzFromFloat(hz)
		if rate == 0 {
			return
		}
		var changes []Step
		for _, st := range s.steps {
			if st.Kind == KindHz {
				changes = append(changes, st)
			}
		}
		origin := time.Duration(0)
		for k := uint64(0); ; k++ {
			w, ok := periodPoint(origin, k, rate)
			for len(changes) > 0 && (!ok || changes[0].WallStart <= w) {
				origin, rate, changes = changes[0].WallStart, changes[0].Rate, changes[1:]
				k = 0
				w, ok = origin, true
			}
			if !ok || w >= s.duration {
				return
			}
			sim, st := s.SimAt(w)
			if st.Mode == Stalled {
				// Skip to the first grid point at or after the stall's end
				// (k = ceil((end-origin)·hz/1e18)) instead of walking it.
				seg := s.segmentAt(w)
				q, r, ok := mulDiv(uint64(seg.WallStart+seg.Wall-origin), uint64(rate), 0, 1e18)
				if !ok || q == math.MaxUint64 {
					return
				}
				if r > 0 {
					q++
				}
				k = q - 1 // the loop's k++ makes it q
				continue
			}
			if !yield(Sample{Wall: w, Sim: sim, Step: st.Step}) {
				return
			}
		}
	}
}

// Samples collects SampleSeq(hz). Use SampleSeq for long scripts.
func (s *Script) Samples(hz float64) []Sample {
	var out []Sample
	for smp := range s.SampleSeq(hz) {
		out = append(out, smp)
	}
	return out
}

// FormatSim formats ns as exact decimal seconds ("100.5s").
func FormatSim(ns int64) string { return formatFixed(ns) + "s" }

// Describe returns one human-readable line per step.
func (s *Script) Describe() []string {
	out := make([]string, 0, len(s.steps))
	for _, st := range s.steps {
		at := fmt.Sprintf("step %d, wall %v", st.Index, st.WallStart)
		var line string
		switch st.Kind {
		case KindStart:
			line = fmt.Sprintf("%s: start at sim %s", at, FormatSim(st.Sim))
		case KindPlay:
			line = fmt.Sprintf("%s..%v: play at %sx for %v, sim %s -> %s", at, st.WallStart+st.Wall,
				st.Rate, st.Wall, FormatSim(st.SimBefore), FormatSim(st.SimAfter))
		case KindPause:
			line = fmt.Sprintf("%s..%v: pause for %v, sim held at %s (republished)", at, st.WallStart+st.Wall,
				st.Wall, FormatSim(st.SimBefore))
		case KindStall:
			line = fmt.Sprintf("%s..%v: stall for %v, sim frozen at %s, nothing published", at, st.WallStart+st.Wall,
				st.Wall, FormatSim(st.SimBefore))
		case KindJump:
			dir := "forward"
			if st.Sim < 0 {
				dir = "backward"
			}
			line = fmt.Sprintf("%s: jump %s by %s, sim %s -> %s", at, dir, FormatSim(abs(st.Sim)),
				FormatSim(st.SimBefore), FormatSim(st.SimAfter))
		case KindJumpTo:
			line = fmt.Sprintf("%s: jump to sim %s (from %s)", at, FormatSim(st.Sim), FormatSim(st.SimBefore))
		case KindHz:
			line = fmt.Sprintf("%s: publish at %s Hz from here", at, st.Rate)
		}
		out = append(out, line)
	}
	return out
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// String returns the script in canonical form; Parse(s.String()) yields the
// same steps (their Index may differ when the source had empty steps).
func (s *Script) String() string {
	parts := make([]string, 0, len(s.steps))
	for _, st := range s.steps {
		var p string
		switch st.Kind {
		case KindStart:
			p = "start=" + formatFixed(st.Sim)
		case KindPlay:
			p = fmt.Sprintf("play %sx %v", st.Rate, st.Wall)
		case KindPause:
			p = fmt.Sprintf("pause %v", st.Wall)
		case KindStall:
			p = fmt.Sprintf("stall %v", st.Wall)
		case KindJump:
			if st.Sim < 0 {
				p = fmt.Sprintf("jump -%v", time.Duration(-st.Sim))
			} else {
				p = fmt.Sprintf("jump +%v", time.Duration(st.Sim))
			}
		case KindJumpTo:
			p = "jump =" + formatFixed(st.Sim)
		case KindHz:
			p = "hz " + st.Rate.String()
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ";")
}
