package clock

// This file observes a time source from outside: how often it publishes,
// how fast its time runs against the wall (the real-time factor), when it
// pauses and when it jumps. Override.Install feeds an override's Tracker;
// `nros clock --monitor` runs one of its own. Nothing here is on the Now
// path.

// StatsWindow is the wall time over which SampleRate and RealTimeFactor are
// measured (the last complete window is reported).
const StatsWindow = int64(1e9)

// JumpMin is the smallest forward step that can count as a jump: a step
// larger than JumpMin and larger than JumpFactor times the wall time since
// the previous sample. Smaller steps are simulated time flowing (a 10x
// replay publishing at 10 Hz steps 1 s per 100 ms and is not jumping).
const (
	JumpMin    = int64(1e9)
	JumpFactor = 10
)

// Event is what one sample did, as a Tracker classifies it.
type Event uint8

const (
	// EventNone: time moved on (or stood still, still paused).
	EventNone Event = iota
	// EventFirst: the first sample.
	EventFirst
	// EventJumpForward: a forward step beyond JumpMin and JumpFactor times
	// the wall time since the previous sample.
	EventJumpForward
	// EventJumpBackward: time went back.
	EventJumpBackward
	// EventPaused: the sample repeated the previous value after time had
	// been moving.
	EventPaused
	// EventResumed: time moved again after a pause.
	EventResumed
)

// String names the event.
func (e Event) String() string {
	switch e {
	case EventFirst:
		return "first"
	case EventJumpForward:
		return "jump-forward"
	case EventJumpBackward:
		return "jump-backward"
	case EventPaused:
		return "paused"
	case EventResumed:
		return "resumed"
	}
	return "none"
}

// Jump is one jump of a source's time.
type Jump struct {
	Event    Event // EventFirst, EventJumpForward or EventJumpBackward
	From, To int64 // simulated time before and after (From is 0 for the first sample)
	Wall     int64 // the Tracker's wall time when it arrived
}

// Stats is a snapshot of a Tracker.
type Stats struct {
	Samples        uint64
	SampleRate     float64 // samples per wall second over the last window
	RealTimeFactor float64 // simulated seconds per wall second over the last window, jumps excluded
	Paused         bool    // the latest sample repeated the one before
	Jumps          uint64  // forward and backward jumps (the first sample is not counted)
	LastJump       Jump    // the latest jump, or the first sample if there was none
	LastSim        int64   // the latest simulated time
	LastWall       int64   // wall time of the latest sample
	Stalled        bool    // silent for a window (two intervals of a source under 2 Hz): SampleRate and RealTimeFactor are 0
}

// Tracker classifies the samples of one time source and measures its rate
// and real-time factor. The zero value reads wall time from DefaultSteady.
// It is not safe for concurrent use: its owner serialises Observe and Stats.
type Tracker struct {
	wall func() SteadyTime

	n                 uint64
	lastWall, lastSim int64
	paused            bool
	jumps             uint64
	last              Jump

	winWall int64  // start of the current window
	winN    uint64 // samples before it
	winAdv  int64  // simulated time flowed in it
	rate    float64
	rtf     float64
	full    bool // a window has completed
}

// SetWall sets the wall clock of Observe and Stats (DefaultSteady when nil).
func (t *Tracker) SetWall(s func() SteadyTime) { t.wall = s }

// Now reads the tracker's wall clock.
func (t *Tracker) Now() int64 {
	if t.wall == nil {
		return int64(DefaultSteady())
	}
	return int64(t.wall())
}

// Observe records a sample of simulated time sim that arrived at wall and
// says what it did.
func (t *Tracker) Observe(wall, sim int64) Event {
	t.n++
	if t.n == 1 {
		t.lastWall, t.lastSim, t.winWall, t.winN = wall, sim, wall, 0
		t.last = Jump{Event: EventFirst, To: sim, Wall: wall}
		return EventFirst
	}
	dw, ds := wall-t.lastWall, sim-t.lastSim
	ev := EventNone
	switch {
	case ds < 0:
		ev = EventJumpBackward
	case ds > JumpMin && ds > JumpFactor*max(dw, 0):
		ev = EventJumpForward
	case ds == 0:
		if !t.paused {
			t.paused = true
			ev = EventPaused
		}
	default:
		t.winAdv += ds
		if t.paused {
			ev = EventResumed
		}
		t.paused = false
	}
	if ev == EventJumpBackward || ev == EventJumpForward {
		t.jumps++
		t.last = Jump{Event: ev, From: t.lastSim, To: sim, Wall: wall}
		t.paused = false
	}
	t.lastWall, t.lastSim = wall, sim
	if el := wall - t.winWall; el >= StatsWindow {
		t.rate = float64(t.n-1-t.winN) * 1e9 / float64(el)
		t.rtf = float64(t.winAdv) / float64(el)
		t.full = true
		t.winWall, t.winN, t.winAdv = wall, t.n-1, 0
	}
	return ev
}

// Stats returns the tracker's state at wall time now. The rate and the
// real-time factor come from the current window once it spans half a
// window, else from the last complete one. The source counts as stalled
// (rates 0) after a silence of a window, or of two sample intervals when
// it publishes slower than 2 Hz.
func (t *Tracker) Stats(now int64) Stats {
	s := Stats{Samples: t.n, Paused: t.paused, Jumps: t.jumps, LastJump: t.last,
		LastSim: t.lastSim, LastWall: t.lastWall}
	if t.n == 0 {
		return s
	}
	rate, rtf, ok := t.rate, t.rtf, t.full
	if el := t.lastWall - t.winWall; el >= StatsWindow/2 || (!t.full && el > 0) {
		rate = float64(t.n-1-t.winN) * 1e9 / float64(el)
		rtf = float64(t.winAdv) / float64(el)
		ok = true
	}
	stallAfter := 2 * StatsWindow
	if ok && rate > 0 {
		stallAfter = max(StatsWindow, int64(2e9/rate))
	}
	if now-t.lastWall >= stallAfter {
		s.Stalled = true
		return s
	}
	if ok {
		s.SampleRate, s.RealTimeFactor = rate, rtf
	}
	return s
}

// SetStatsWall sets the wall clock that the override's source statistics
// are measured against (DefaultSteady by default). A context passes its
// steady source.
func (o *Override) SetStatsWall(s func() SteadyTime) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stats.SetWall(s)
}

// SourceStats returns the statistics of the samples installed so far and
// the statistics' wall time now.
func (o *Override) SourceStats() (s Stats, now int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now = o.stats.Now()
	return o.stats.Stats(now), now
}

// observeLocked feeds an installed sample to the statistics (o.mu held).
func (o *Override) observeLocked(ns int64) { o.stats.Observe(o.stats.Now(), ns) }

// Listeners returns the number of registered listeners (for tests and
// diagnostics: a wait that has ended leaves none behind).
func (o *Override) Listeners() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.listeners)
}
