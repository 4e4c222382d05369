package play

import (
	"math"
	"time"
)

// timeline maps wall time (the Player's Clock) to bag time and back, and
// keeps the /clock grid. It is plain state with pure methods: every
// control and every scheduling decision is a function of it and of the
// wall time passed in, so it is tested without a clock.
//
// Bag time b and wall time w are tied by an anchor (wall0, bag0):
// b = bag0 + (w - wall0) * rate while playing. A pause freezes b; a
// resume, a rate change, a seek or a loop sets a new anchor. Before wall0
// (the start delay) bag time stands at bag0.
type timeline struct {
	started bool // begin was called: wall0 and nextTick are set
	wall0   time.Time
	bag0    int64
	rate    float64
	paused  bool
	// period is the /clock period in wall time (0: no /clock); nextTick
	// is the wall time of the next sample.
	period   time.Duration
	nextTick time.Time
}

// begin starts the timeline at wall time now: bag time starts moving (and
// /clock is first published) after delay.
func (t *timeline) begin(now time.Time, delay time.Duration) {
	t.started = true
	t.wall0 = now.Add(delay)
	t.nextTick = t.wall0
}

// bagAt is the bag time at wall time w.
func (t *timeline) bagAt(w time.Time) int64 {
	if t.paused || !t.started || !w.After(t.wall0) {
		return t.bag0
	}
	return t.bag0 + int64(float64(w.Sub(t.wall0))*t.rate)
}

// wallAt is the wall time at which bag time reaches b, rounded up to the
// nanosecond so that bag time is never short of b then. It is only
// meaningful while playing.
func (t *timeline) wallAt(b int64) time.Time {
	if b <= t.bag0 {
		return t.wall0
	}
	return t.wall0.Add(time.Duration(math.Ceil(float64(b-t.bag0) / t.rate)))
}

// anchorAt is where a control issued at wall time w takes effect: w, or
// the end of the start delay while that runs (a control does not cut the
// delay short).
func (t *timeline) anchorAt(w time.Time) time.Time {
	if t.started && w.Before(t.wall0) {
		return t.wall0
	}
	return w
}

// reanchor moves the anchor to wall time w without changing bag time.
func (t *timeline) reanchor(w time.Time) {
	if !t.started {
		return
	}
	w = t.anchorAt(w)
	t.bag0 = t.bagAt(w)
	t.wall0 = w
}

// setPaused pauses or resumes at wall time w.
func (t *timeline) setPaused(w time.Time, paused bool) {
	if paused == t.paused {
		return
	}
	t.reanchor(w)
	t.paused = paused
}

// setRate changes the rate at wall time w; bag time does not jump.
func (t *timeline) setRate(w time.Time, r float64) {
	t.reanchor(w)
	t.rate = r
}

// jump makes bag time b at wall time w (a seek, a loop): the next /clock
// sample goes out at once.
func (t *timeline) jump(w time.Time, b int64) {
	t.bag0 = b
	if !t.started {
		return
	}
	t.wall0 = t.anchorAt(w)
	t.nextTick = t.wall0
}

// stepTo moves bag time forward to b at once, if it is behind (play-next
// while paused).
func (t *timeline) stepTo(w time.Time, b int64) {
	t.reanchor(w)
	t.bag0 = max(t.bag0, b)
}

// tick takes the /clock sample due at wall time now and returns the bag
// time it carries: that of its grid instant (not of the moment it is
// taken), so that /clock steps evenly. The grid moves one period on; when
// playback fell behind by more than that, it restarts one period after
// now instead of bursting to catch up.
func (t *timeline) tick(now time.Time) int64 {
	at := now
	if t.nextTick.Before(now) && !t.nextTick.Before(t.wall0) {
		at = t.nextTick
	}
	v := t.bagAt(at)
	t.nextTick = t.nextTick.Add(t.period)
	if t.nextTick.Before(now) {
		t.nextTick = now.Add(t.period)
	}
	return v
}

// actionKind is what the scheduler decides to do next.
type actionKind uint8

const (
	actWait    actionKind = iota // nothing is due: wait until action.at (zero: for a control)
	actTick                      // publish a /clock sample
	actPublish                   // publish the message at the head, which is due
	actEnd                       // the pass is over
	actAgain                     // look again (the player's own: a seek came meanwhile)
)

// head is what the scheduler knows of the pass: the receive time of the
// next message, or that there is none.
type head struct {
	time int64
	eof  bool
}

// decide is the scheduler: given the timeline, the head of the pass and
// the wall time now, it says what to do next. Due events go out in wall-time order (a /clock sample before a
// message due at the same instant); the end of the pass comes right after
// its last message.
func decide(t *timeline, h head, now time.Time) (actionKind, time.Time) {
	if h.eof {
		return actEnd, time.Time{}
	}
	var msgAt time.Time
	if !t.paused {
		msgAt = t.wallAt(h.time)
	}
	if t.period > 0 && !now.Before(t.nextTick) && (msgAt.IsZero() || !msgAt.Before(t.nextTick)) {
		return actTick, time.Time{}
	}
	if !msgAt.IsZero() && !now.Before(msgAt) {
		return actPublish, time.Time{}
	}
	wake := msgAt
	if t.period > 0 && (wake.IsZero() || t.nextTick.Before(wake)) {
		wake = t.nextTick
	}
	return actWait, wake
}
