package play

import (
	"testing"
	"time"

	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/rmw"
)

var w0 = time.Unix(5000, 0)

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// The scheduler's decision as a function of the timeline and the time.
func TestDecide(t *testing.T) {
	const b0 = int64(1000e9)
	playing := func() timeline {
		tl := timeline{bag0: b0, rate: 2, period: ms(10)}
		tl.begin(w0, 0)
		tl.nextTick = w0.Add(ms(10))
		return tl
	}
	paused := func() timeline {
		tl := playing()
		tl.paused = true
		return tl
	}
	noClock := func() timeline {
		tl := playing()
		tl.period = 0
		return tl
	}
	for _, c := range []struct {
		name string
		tl   timeline
		h    head
		now  time.Duration
		act  actionKind
		at   time.Duration // actWait: -1 for none
	}{
		{"message due (rate 2: bag +10 ms at wall +5 ms)", playing(), head{time: b0 + 10e6}, ms(5), actPublish, 0},
		{"message not yet due, tick later", playing(), head{time: b0 + 16e6}, ms(5), actWait, ms(8)},
		{"tick first when both are due", playing(), head{time: b0 + 20e6}, ms(12), actTick, 0},
		{"earlier message before a due tick", playing(), head{time: b0 + 10e6}, ms(12), actPublish, 0},
		{"tick due before the message", playing(), head{time: b0 + 40e6}, ms(10), actTick, 0},
		{"wait for the tick", playing(), head{time: b0 + 40e6}, ms(3), actWait, ms(10)},
		{"end of pass at once", playing(), head{eof: true}, ms(3), actEnd, 0},
		{"paused: ticks go on", paused(), head{time: b0}, ms(10), actTick, 0},
		{"paused: wait for the tick only", paused(), head{time: b0}, ms(3), actWait, ms(10)},
		{"paused, no clock: wait for a control", func() timeline { tl := noClock(); tl.paused = true; return tl }(), head{time: b0}, ms(3), actWait, -1},
		{"no clock: wait for the message", noClock(), head{time: b0 + 1e9}, ms(3), actWait, ms(500)},
	} {
		tl := c.tl
		act, at := decide(&tl, c.h, w0.Add(c.now))
		if act != c.act {
			t.Errorf("%s: action %d, want %d", c.name, act, c.act)
			continue
		}
		if act != actWait {
			continue
		}
		if c.at < 0 && !at.IsZero() || c.at >= 0 && !at.Equal(w0.Add(c.at)) {
			t.Errorf("%s: wait until %v, want %v", c.name, at.Sub(w0), c.at)
		}
	}
}

// The controls' effect on bag time: no jump at a pause, a resume or a rate
// change; a delay that controls do not cut short; the /clock grid.
func TestTimeline(t *testing.T) {
	const b0 = int64(1000e9)
	tl := timeline{bag0: b0, rate: 1, period: ms(100)}
	if tl.bagAt(w0) != b0 {
		t.Fatal("bag time moves before the start")
	}
	tl.begin(w0, time.Second) // 1 s delay
	if tl.bagAt(w0.Add(ms(500))) != b0 || !tl.nextTick.Equal(w0.Add(time.Second)) {
		t.Fatal("delay")
	}
	tl.setRate(w0.Add(ms(500)), 2) // during the delay: takes effect at its end
	if !tl.wall0.Equal(w0.Add(time.Second)) || tl.bagAt(w0.Add(ms(1500))) != b0+1e9 {
		t.Fatalf("rate change in the delay: wall0 %v", tl.wall0.Sub(w0))
	}
	tl.setPaused(w0.Add(ms(1500)), true)
	if tl.bagAt(w0.Add(ms(9000))) != b0+1e9 {
		t.Fatal("bag time moves while paused")
	}
	tl.setPaused(w0.Add(ms(2000)), false)
	if tl.bagAt(w0.Add(ms(2250))) != b0+1500e6 || !tl.wallAt(b0+2e9).Equal(w0.Add(ms(2500))) {
		t.Fatal("resume")
	}
	tl.jump(w0.Add(ms(3000)), b0)
	if tl.bagAt(w0.Add(ms(3000))) != b0 || !tl.nextTick.Equal(w0.Add(ms(3000))) {
		t.Fatal("jump")
	}
	// The grid: the sample carries its grid instant's time; a late tick does
	// not burst.
	if v := tl.tick(w0.Add(ms(3010))); v != b0 || !tl.nextTick.Equal(w0.Add(ms(3100))) {
		t.Fatalf("tick %d, next %v", v-b0, tl.nextTick.Sub(w0))
	}
	if tl.tick(w0.Add(ms(3500))); !tl.nextTick.Equal(w0.Add(ms(3600))) {
		t.Fatalf("late tick: next %v", tl.nextTick.Sub(w0))
	}
	tl.setPaused(w0.Add(ms(4000)), true)
	tl.stepTo(w0.Add(ms(4000)), b0+5e9)
	if tl.bagAt(w0.Add(ms(5000))) != b0+5e9 {
		t.Fatal("step to")
	}
	tl.stepTo(w0.Add(ms(4000)), b0)
	if tl.bag0 != b0+5e9 {
		t.Fatal("step back")
	}
	if got := tl.wallAt(b0 + 1); !got.Equal(tl.wall0) {
		t.Fatal("wallAt before the anchor")
	}
}

// The playback QoS follows the recorded publishers when they agree.
func TestPlaybackQoS(t *testing.T) {
	def := playbackQoS(nil)
	be := bag.QoSProfile{History: "keep_last", Depth: 5, Reliability: "best_effort", Durability: "transient_local", Lifespan: time.Second}
	rel := bag.QoSProfile{History: "keep_last", Depth: 20, Reliability: "reliable", Durability: "volatile"}
	q := playbackQoS([]bag.QoSProfile{be})
	if q.Reliability != rmw.BestEffort || q.Durability != rmw.TransientLocal || q.Depth != 5 || q.Lifespan != time.Second {
		t.Fatalf("one profile: %+v", q)
	}
	q = playbackQoS([]bag.QoSProfile{be, rel})
	if q.Reliability != def.Reliability || q.Durability != def.Durability || q.Depth != 20 || q.Lifespan != 0 {
		t.Fatalf("disagreeing profiles: %+v", q)
	}
}
