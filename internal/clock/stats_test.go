package clock

import (
	"math"
	"testing"
)

// feed observes samples every stepWall ns of wall time with simulated time
// moving by stepSim per sample, starting after the tracker's last sample.
func feed(tr *Tracker, wall *int64, sim *int64, n int, stepWall, stepSim int64) []Event {
	var evs []Event
	for range n {
		*wall += stepWall
		*sim += stepSim
		if ev := tr.Observe(*wall, *sim); ev != EventNone {
			evs = append(evs, ev)
		}
	}
	return evs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestTrackerRateRTFPauseAndJumps(t *testing.T) {
	var tr Tracker
	wall, sim := int64(1e12), int64(100e9)
	if ev := tr.Observe(wall, sim); ev != EventFirst {
		t.Fatalf("first sample: %v", ev)
	}
	// 2 s of wall at 100 Hz, 2x.
	if evs := feed(&tr, &wall, &sim, 200, 10e6, 20e6); len(evs) != 0 {
		t.Fatalf("events while flowing at 2x: %v", evs)
	}
	s := tr.Stats(wall)
	if !near(s.SampleRate, 100) || !near(s.RealTimeFactor, 2) || s.Samples != 201 || s.Paused || s.Jumps != 0 {
		t.Fatalf("2x at 100 Hz: %+v", s)
	}
	if s.LastJump.Event != EventFirst || s.LastJump.To != 100e9 {
		t.Fatalf("last jump before any: %+v, want the first sample", s.LastJump)
	}
	// A pause republishing the same value (as bag play and Gazebo do).
	if evs := feed(&tr, &wall, &sim, 100, 10e6, 0); len(evs) != 1 || evs[0] != EventPaused {
		t.Fatalf("pause events %v, want one paused", evs)
	}
	if s := tr.Stats(wall); !s.Paused || s.RealTimeFactor != 0 || !near(s.SampleRate, 100) {
		t.Fatalf("paused: %+v", s)
	}
	if evs := feed(&tr, &wall, &sim, 1, 10e6, 10e6); len(evs) != 1 || evs[0] != EventResumed {
		t.Fatalf("resume events %v", evs)
	}
	// A bag loop back 30 s, then a 10 s skip ahead: jumps. A 10x replay at
	// 10 Hz (1 s steps per 100 ms): not jumps.
	from := sim
	if evs := feed(&tr, &wall, &sim, 1, 10e6, -30e9); len(evs) != 1 || evs[0] != EventJumpBackward {
		t.Fatalf("loop events %v", evs)
	}
	if s := tr.Stats(wall); s.Jumps != 1 || s.LastJump != (Jump{EventJumpBackward, from, from - 30e9, wall}) {
		t.Fatalf("after the loop: %+v", s)
	}
	if evs := feed(&tr, &wall, &sim, 1, 10e6, 10e9); len(evs) != 1 || evs[0] != EventJumpForward {
		t.Fatalf("skip events %v", evs)
	}
	if evs := feed(&tr, &wall, &sim, 30, 100e6, 1e9); len(evs) != 0 {
		t.Fatalf("10x at 10 Hz gave events %v", evs)
	}
	if s := tr.Stats(wall); !near(s.RealTimeFactor, 10) || !near(s.SampleRate, 10) || s.Jumps != 2 {
		t.Fatalf("10x at 10 Hz: %+v", s)
	}
	// Silence: stalled after two windows.
	if s := tr.Stats(wall + 2*StatsWindow); !s.Stalled || s.SampleRate != 0 || s.RealTimeFactor != 0 {
		t.Fatalf("silent source: %+v", s)
	}
}

func TestTrackerPartialWindow(t *testing.T) {
	var tr Tracker
	if s := tr.Stats(5); s != (Stats{}) {
		t.Fatalf("no samples: %+v", s)
	}
	tr.Observe(0, 0)
	tr.Observe(100e6, 50e6)
	tr.Observe(200e6, 100e6)
	if s := tr.Stats(200e6); !near(s.SampleRate, 10) || !near(s.RealTimeFactor, 0.5) {
		t.Fatalf("partial window: %+v", s)
	}
}

func TestOverrideSourceStats(t *testing.T) {
	var wall SteadyTime
	o := NewOverride(func() SystemTime { return 1 })
	o.SetStatsWall(func() SteadyTime { return wall })
	o.Install(5) // no source: not a sample
	o.Attach()
	for i := range 101 {
		wall = SteadyTime(i) * 10e6
		o.Install(RosTime(100e9 + int64(i)*5e6)) // 0.5x at 100 Hz
	}
	s, _ := o.SourceStats()
	if s.Samples != 101 || !near(s.SampleRate, 100) || !near(s.RealTimeFactor, 0.5) || s.LastSim != 100e9+500e6 {
		t.Fatalf("%+v", s)
	}
}

func BenchmarkInstallWithStats(b *testing.B) {
	o := NewOverride(nil)
	o.Attach()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o.Install(RosTime(i))
	}
}
