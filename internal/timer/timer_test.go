package timer

import (
	"math"
	"testing"
)

const ms = int64(1_000_000)

// run feeds a sequence of clock readings to a timer and records, per
// reading, how many activations it produced (calling Fire until it stops,
// as successive executor passes would) and the overrun total after it.
func run(s *State, readings []int64, passesPerReading int) (fires []int, overruns []uint64) {
	for _, now := range readings {
		n := 0
		for p := 0; p < passesPerReading; p++ {
			if s.Fire(now) {
				n++
			}
		}
		fires = append(fires, n)
		overruns = append(overruns, s.Overruns)
	}
	return
}

func TestPolicies(t *testing.T) {
	tests := []struct {
		name      string
		policy    Policy
		start     int64
		readings  []int64
		passes    int
		wantFires []int
		wantOver  []uint64
		wantNext  int64
	}{
		{
			name: "steady cadence", policy: Skip, start: 0,
			readings:  []int64{50 * ms, 100 * ms, 150 * ms, 200 * ms, 299 * ms, 300 * ms},
			passes:    1,
			wantFires: []int{0, 1, 0, 1, 0, 1}, wantOver: []uint64{0, 0, 0, 0, 0, 0},
			wantNext: 400 * ms,
		},
		{
			name: "paused clock never fires", policy: Skip, start: 0,
			readings:  []int64{50 * ms, 50 * ms, 50 * ms, 50 * ms},
			passes:    3,
			wantFires: []int{0, 0, 0, 0}, wantOver: []uint64{0, 0, 0, 0},
			wantNext: 100 * ms,
		},
		{
			name: "skip coalesces a forward jump and keeps the grid", policy: Skip, start: 0,
			readings:  []int64{100 * ms, 1050 * ms, 1100 * ms},
			passes:    5,
			wantFires: []int{1, 1, 1}, wantOver: []uint64{0, 8, 8},
			wantNext: 1200 * ms,
		},
		{
			name: "catch-up replays every missed period, one per pass", policy: CatchUp, start: 0,
			readings: []int64{100 * ms, 1050 * ms, 1100 * ms},
			passes:   5,
			// at 1100 the deadline 1100 is due while 700 is still pending:
			// under catch-up that is one more missed period than under skip
			wantFires: []int{1, 5, 5}, wantOver: []uint64{0, 8, 9},
			wantNext: 1200 * ms,
		},
		{
			name: "catch-up counts a backlog once across passes", policy: CatchUp, start: 0,
			readings:  []int64{350 * ms, 350 * ms, 350 * ms, 350 * ms},
			passes:    1,
			wantFires: []int{1, 1, 1, 0}, wantOver: []uint64{2, 2, 2, 2},
			wantNext: 400 * ms,
		},
		{
			name: "exact multiple lands on the grid", policy: Skip, start: 0,
			readings:  []int64{300 * ms},
			passes:    2,
			wantFires: []int{1}, wantOver: []uint64{2},
			wantNext: 400 * ms,
		},
		{
			name: "2x clock: twice the activations per wall step", policy: Skip, start: 0,
			// a 2x clock read every 50 ms of wall time advances 100 ms per read
			readings:  []int64{100 * ms, 200 * ms, 300 * ms, 400 * ms},
			passes:    1,
			wantFires: []int{1, 1, 1, 1}, wantOver: []uint64{0, 0, 0, 0},
			wantNext: 500 * ms,
		},
		{
			name: "0.5x clock: half the activations", policy: Skip, start: 0,
			readings:  []int64{25 * ms, 50 * ms, 75 * ms, 100 * ms, 125 * ms, 150 * ms, 175 * ms, 200 * ms},
			passes:    1,
			wantFires: []int{0, 0, 0, 1, 0, 0, 0, 1}, wantOver: make([]uint64, 8),
			wantNext: 300 * ms,
		},
		{
			name: "negative times work", policy: Skip, start: -250 * ms,
			readings:  []int64{-150 * ms, -100 * ms, -50 * ms},
			passes:    1,
			wantFires: []int{1, 0, 1}, wantOver: []uint64{0, 0, 0},
			wantNext: 50 * ms,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.start, 100*ms, tt.policy, false)
			fires, over := run(&s, tt.readings, tt.passes)
			for i := range fires {
				if fires[i] != tt.wantFires[i] || over[i] != tt.wantOver[i] {
					t.Fatalf("reading %d (%d ns): fires=%v overruns=%v, want fires=%v overruns=%v",
						i, tt.readings[i], fires, over, tt.wantFires, tt.wantOver)
				}
			}
			if s.Next != tt.wantNext {
				t.Fatalf("next = %d, want %d", s.Next, tt.wantNext)
			}
		})
	}
}

func TestRestart(t *testing.T) {
	for _, p := range []Policy{Skip, CatchUp} {
		t.Run(p.String(), func(t *testing.T) {
			s := New(100_000*ms, 100*ms, p, false)
			// 50 ms elapsed, then a backward jump of 5 s: the period restarts
			// at the landing point, so the timer is neither silent for 5 s
			// nor fires at once.
			if s.Fire(100_050 * ms) {
				t.Fatal("fired early")
			}
			s.Restart(95_050 * ms)
			if s.Next != 95_150*ms {
				t.Fatalf("next after restart = %d", s.Next)
			}
			if s.Fire(95_149*ms) || !s.Fire(95_150*ms) {
				t.Fatal("restarted period not honoured")
			}
			// a restart drops a pending catch-up backlog
			s.Fire(96_000 * ms)
			s.Restart(90_000 * ms)
			if s.Fire(90_050 * ms) {
				t.Fatal("backlog survived a restart")
			}
		})
	}
}

func TestOneShot(t *testing.T) {
	s := New(0, 10*ms, Skip, true)
	if s.Fire(9 * ms) {
		t.Fatal("early")
	}
	if !s.Fire(100 * ms) {
		t.Fatal("one-shot did not fire")
	}
	if s.Fire(200*ms) || !s.Canceled || s.Overruns != 0 || s.Activations != 1 {
		t.Fatalf("one-shot state after firing: %+v", s)
	}
}

func TestNoDriftOverManyPeriods(t *testing.T) {
	// A period that is not a whole number of microseconds, fed by clock steps
	// of 1 ns granularity: after a million periods the deadline is exactly on
	// the grid (nothing is truncated per step).
	const period = 33_333_333 // 33.333333 ms
	s := New(7, period, Skip, false)
	now := int64(7)
	fires := 0
	for i := 0; i < 3_000_000; i++ {
		now += 11_111_111 // a third of a period, +/- a nanosecond of rounding
		if s.Fire(now) {
			fires++
		}
	}
	if want := int64(7) + int64(fires+1)*period; s.Next != want {
		t.Fatalf("next = %d, want %d (fires %d)", s.Next, want, fires)
	}
	if s.Overruns != 0 {
		t.Fatalf("overruns %d", s.Overruns)
	}
}

func TestSaturation(t *testing.T) {
	s := New(math.MaxInt64-5, 100, Skip, false)
	if s.Next != math.MaxInt64 {
		t.Fatalf("deadline wrapped: %d", s.Next)
	}
	if s.Fire(math.MaxInt64 - 1) {
		t.Fatal("fired at a saturated deadline")
	}
	s = New(math.MinInt64+10, 100, Skip, false)
	if !s.Fire(math.MaxInt64) {
		t.Fatal("huge forward jump did not fire")
	}
	if s.Next != math.MaxInt64 || s.Overruns == 0 {
		t.Fatalf("after huge jump: %+v", s)
	}
	c := New(math.MinInt64+10, 100, CatchUp, false)
	if !c.Fire(math.MaxInt64) || c.Overruns == 0 {
		t.Fatalf("catch-up huge jump: %+v", c)
	}
}

func FuzzFire(f *testing.F) {
	f.Add(int64(0), int64(100), int64(50), int64(1000), uint8(0))
	f.Add(int64(-5), int64(1), int64(math.MaxInt64), int64(math.MinInt64), uint8(1))
	f.Fuzz(func(t *testing.T, start, period, a, b int64, pol uint8) {
		if period <= 0 {
			return
		}
		s := New(start, period, Policy(pol%2), false)
		for _, now := range []int64{a, b, a, b} {
			before := s.Next
			if s.Fire(now) && s.Next < before {
				t.Fatalf("deadline went backwards: %d -> %d", before, s.Next)
			}
			if s.Policy == Skip && s.Next <= now && s.Next != math.MaxInt64 {
				t.Fatalf("skip left a due deadline %d at %d", s.Next, now)
			}
		}
	})
}
