package clockscript

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

const example = "start=100.0;pause 1s;play 1x 2s;pause 1s;play 2x 1s;play 0.5x 2s;jump -5s;play 1x 1s;jump +10s;play 1x 1s"

const sec = int64(time.Second)

func mustParse(t testing.TB, s string) *Script {
	t.Helper()
	sc, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return sc
}

func TestExampleSimAt(t *testing.T) {
	sc := mustParse(t, example)
	if sc.Duration() != 9*time.Second {
		t.Fatalf("Duration %v", sc.Duration())
	}
	ms := time.Millisecond
	cases := []struct {
		wall time.Duration
		sim  int64
		mode Mode
		rate Rate
		step int
	}{
		{-time.Second, 100 * sec, Paused, 0, 2},
		{0, 100 * sec, Paused, 0, 2},
		{500 * ms, 100 * sec, Paused, 0, 2},
		{time.Second, 100 * sec, Playing, One, 3},
		{1500 * ms, 100*sec + 500e6, Playing, One, 3},
		{3*time.Second - 1, 102*sec - 1, Playing, One, 3},
		{3 * time.Second, 102 * sec, Paused, 0, 4},
		{4 * time.Second, 102 * sec, Playing, 2 * One, 5},
		{4500 * ms, 103 * sec, Playing, 2 * One, 5},
		{5 * time.Second, 104 * sec, Playing, One / 2, 6},
		{6 * time.Second, 104*sec + 500e6, Playing, One / 2, 6},
		{7*time.Second - 1, 105*sec - 1, Playing, One / 2, 6}, // 104 + 0.5·1.999999999 s, floored
		{7 * time.Second, 100 * sec, Playing, One, 8},         // the jump -5s applies at its instant
		{7500 * ms, 100*sec + 500e6, Playing, One, 8},
		{8 * time.Second, 111 * sec, Playing, One, 10},
		{8500 * ms, 111*sec + 500e6, Playing, One, 10},
		{9 * time.Second, 112 * sec, Ended, 0, 0},
		{time.Hour, 112 * sec, Ended, 0, 0},
	}
	for _, c := range cases {
		sim, st := sc.SimAt(c.wall)
		want := State{Mode: c.mode, Rate: c.rate, Step: c.step}
		if sim != c.sim || st != want {
			t.Errorf("SimAt(%v) = %s %+v, want %s %+v", c.wall, FormatSim(sim), st, FormatSim(c.sim), want)
		}
	}
	if sc.Start() != 100*sec {
		t.Errorf("Start %d", sc.Start())
	}
}

func TestExampleSamples(t *testing.T) {
	sc := mustParse(t, example)
	got := sc.Samples(1)
	wantSim := []int64{100, 100, 101, 102, 102, 104, 104, 100, 111}
	if len(got) != len(wantSim) {
		t.Fatalf("got %d samples: %+v", len(got), got)
	}
	for i, s := range got {
		ws := wantSim[i] * sec
		if i == 6 {
			ws += 500e6
		}
		if s.Wall != time.Duration(i)*time.Second || s.Sim != ws {
			t.Errorf("sample %d = %+v, want wall %ds sim %s", i, s, i, FormatSim(ws))
		}
	}
	if n := len(sc.Samples(100)); n != 900 {
		t.Errorf("100 Hz: %d samples, want 900", n)
	}
	// At 100 Hz the paused second republishes the same stamp 100 times.
	s100 := sc.Samples(100)
	for i := 0; i < 100; i++ {
		if s100[i].Sim != 100*sec || s100[i].Step != 2 {
			t.Fatalf("paused sample %d = %+v", i, s100[i])
		}
	}
}

func TestGrammar(t *testing.T) {
	cases := []struct {
		src   string
		steps []Step // only Kind, Rate, Wall, Sim compared
	}{
		{"start=1.5", []Step{{Kind: KindStart, Sim: 1500000000}}},
		{" START = -2.25 ", []Step{{Kind: KindStart, Sim: -2250000000}}},
		{"start=+0.000000001", []Step{{Kind: KindStart, Sim: 1}}},
		{"play 1x 2s", []Step{{Kind: KindPlay, Rate: One, Wall: 2 * time.Second}}},
		{"play 0.5x 1.5", []Step{{Kind: KindPlay, Rate: One / 2, Wall: 1500 * time.Millisecond}}},
		{"PLAY 2.000000000X 1m30s", []Step{{Kind: KindPlay, Rate: 2 * One, Wall: 90 * time.Second}}},
		{"play .25x 10ms", []Step{{Kind: KindPlay, Rate: One / 4, Wall: 10 * time.Millisecond}}},
		{"play 0.000000001x 1h", []Step{{Kind: KindPlay, Rate: 1, Wall: time.Hour}}},
		{"pause 500ms", []Step{{Kind: KindPause, Wall: 500 * time.Millisecond}}},
		{"pause 0", []Step{{Kind: KindPause}}},
		{"stall 1us;stall 2µs;stall 3μs;stall 4ns", []Step{
			{Kind: KindStall, Wall: 1000}, {Kind: KindStall, Wall: 2000}, {Kind: KindStall, Wall: 3000}, {Kind: KindStall, Wall: 4}}},
		{"jump +10s;jump -5s;jump - 1.5s;jump +2", []Step{
			{Kind: KindJump, Sim: 10 * sec}, {Kind: KindJump, Sim: -5 * sec}, {Kind: KindJump, Sim: -1500e6}, {Kind: KindJump, Sim: 2 * sec}}},
		{"jump =42.5;jump = -1", []Step{{Kind: KindJumpTo, Sim: 42500e6}, {Kind: KindJumpTo, Sim: -sec}}},
		{"hz 100;hz 0.5", []Step{{Kind: KindHz, Rate: 100 * One}, {Kind: KindHz, Rate: One / 2}}},
		{";;pause 1s;;", []Step{{Kind: KindPause, Wall: time.Second}}},
		{"pause 0.1000000000000s", []Step{{Kind: KindPause, Wall: 100 * time.Millisecond}}},
		{"pause 1h2m3.5s", []Step{{Kind: KindPause, Wall: time.Hour + 2*time.Minute + 3500*time.Millisecond}}},
	}
	for _, c := range cases {
		sc, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		var got []Step
		for _, s := range sc.Steps() {
			got = append(got, Step{Kind: s.Kind, Rate: s.Rate, Wall: s.Wall, Sim: s.Sim})
		}
		if !reflect.DeepEqual(got, c.steps) {
			t.Errorf("Parse(%q) = %+v, want %+v", c.src, got, c.steps)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		src   string
		index int    // 0: not a StepError
		frag  string // in the message
	}{
		{"", 0, "empty"},
		{" ; ; ", 0, "empty"},
		{"play 0x 1s", 1, "positive"},
		{"play -1x 1s", 1, "rate -1 must be positive"},
		{"play NaNx 1s", 1, "not a decimal"},
		{"play Infx 1s", 1, "not a decimal"},
		{"play 1e3x 1s", 1, "not a decimal"},
		{"play 1 1s", 1, "must end in x"},
		{"play 1x", 1, "play <rate>x"},
		{"play 0.0000000001x 1s", 1, "finer"},
		{"play 10000000000x 1s", 1, "overflows"},
		{"pause", 1, "pause <wall duration>"},
		{"pause -1s", 1, "signed"},
		{"pause 1.5ns", 1, "finer than 1ns"},
		{"pause 0.0000000001", 1, "finer"},
		{"pause 1d", 1, "unknown unit"},
		{"pause 1s 2s", 1, "pause <wall duration>"},
		{"pause s", 1, "expected a number"},
		{"pause 1.2.3s", 1, "expected a number"},
		{"pause 3000000h", 1, "overflows"},
		{"pause 1s;start=5", 2, "first step"},
		{"start 5", 1, "start="},
		{"start=abc", 1, "not a decimal"},
		{"start=1e10", 1, "not a decimal"},
		{"start=10000000000", 1, "overflows"},
		{"jump 5s", 1, "sign"},
		{"jump", 1, "want jump"},
		{"jump +-5s", 1, "signed"},
		{"jump =x", 1, "not a decimal"},
		{"hz 0", 1, "positive"},
		{"hz -5", 1, "frequency -5 must be positive"},
		{"hz 2000000000", 1, "1 GHz"},
		{"warp 2s", 1, "unknown step"},
		{"pause 1s;;bogus", 3, "unknown step"},
		{"start=9223372036;jump +1s", 2, "overflows"},
		{"start=-9223372036;jump -1s", 2, "overflows"},
		{"start=9223372036;play 1x 1s", 2, "overflows"},
		{"play 2000x 2000h", 1, "overflows"},
		{"pause 1000000h;pause 1000000h;pause 1000000h", 3, "wall duration overflows"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", c.src)
			continue
		}
		if !strings.Contains(err.Error(), c.frag) {
			t.Errorf("Parse(%q) = %v, want it to mention %q", c.src, err, c.frag)
		}
		var se *StepError
		if errors.As(err, &se) != (c.index != 0) || (se != nil && se.Index != c.index) {
			t.Errorf("Parse(%q) = %#v, want step index %d", c.src, err, c.index)
		}
		if se != nil && !strings.Contains(err.Error(), se.Step) {
			t.Errorf("error %q does not name the step", err)
		}
	}
}

func TestExactness(t *testing.T) {
	const n = 10000
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("play 1x 0.1;jump +0.1s;pause 100ms;")
	}
	sc := mustParse(t, b.String())
	if sc.Duration() != time.Duration(2*n)*100*time.Millisecond {
		t.Fatalf("Duration %d", sc.Duration())
	}
	if sim, _ := sc.SimAt(sc.Duration()); sim != 2*n*1e8 {
		t.Fatalf("end sim %d, want %d", sim, int64(2*n*1e8))
	}
	// Fractional rates carry sub-ns remainders instead of dropping them:
	// 3 × (1/3 ns of sim per step) must add up to exactly 1 ns.
	sc = mustParse(t, "play 0.333333333x 1ns;play 0.333333333x 1ns;play 0.333333334x 1ns")
	if sim, _ := sc.SimAt(time.Hour); sim != 1 {
		t.Fatalf("sum of thirds = %d", sim)
	}
	// 0.1 x 1e9 wall ns at rate 0.1 is exactly 1e8 ns: no float involved.
	sc = mustParse(t, "start=0.1;play 0.1x 1s")
	if sim, _ := sc.SimAt(time.Hour); sim != 2e8 {
		t.Fatalf("got %d", sim)
	}
	// A 3 Hz grid does not drift: sample 3k is at exactly k seconds.
	sc = mustParse(t, "play 1x 100s")
	s3 := sc.Samples(3)
	if len(s3) != 300 || s3[299].Wall != 99*time.Second+666666666 || s3[297].Wall != 99*time.Second {
		t.Fatalf("3 Hz grid: %d samples, last %v", len(s3), s3[len(s3)-1])
	}
	// 0.1 Hz (not exact in binary floating point) still gives a 10 s grid.
	if s := mustParse(t, "play 1x 35s").Samples(0.1); len(s) != 4 || s[3].Wall != 30*time.Second {
		t.Fatalf("0.1 Hz grid: %+v", s)
	}
}

func TestSamplesStallHzJump(t *testing.T) {
	sc := mustParse(t, "start=10;play 1x 1s;stall 1s;jump +5s;play 1x 500ms;hz 2;pause 1.25s;jump =0;hz 4;play 2x 0.5")
	got := sc.Samples(4)
	type ws struct {
		wall time.Duration
		sim  int64
	}
	want := []ws{
		{0, 10 * sec}, {250e6, 10*sec + 250e6}, {500e6, 10*sec + 500e6}, {750e6, 10*sec + 750e6},
		// stall [1s,2s): silent, sim frozen at 11; jump +5 at 2s
		{2 * time.Second, 16 * sec}, {2250e6, 16*sec + 250e6},
		// hz 2 from 2.5s: pause at 16.5
		{2500e6, 16*sec + 500e6}, {3 * time.Second, 16*sec + 500e6}, {3500e6, 16*sec + 500e6},
		// jump =0 and hz 4 at 3.75s, play 2x
		{3750e6, 0}, {4 * time.Second, 500e6},
	}
	var g []ws
	for _, s := range got {
		g = append(g, ws{s.Wall, s.Sim})
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got  %v\nwant %v", g, want)
	}
	if _, st := sc.SimAt(1500 * time.Millisecond); st.Mode != Stalled || st.Step != 3 {
		t.Fatalf("stall state %+v", st)
	}
	for _, hz := range []float64{0, -1, math.NaN(), math.Inf(1), 2e9} {
		if s := sc.Samples(hz); s != nil {
			t.Errorf("Samples(%v) = %d samples", hz, len(s))
		}
	}
	// A long stall at a high rate is skipped, not walked point by point.
	long := mustParse(t, "hz 1000000000;stall 1000h;play 1x 3ns;stall 1s;hz 3;stall 1s;pause 1s")
	var lw []time.Duration
	for _, s := range long.Samples(1) {
		lw = append(lw, s.Wall)
	}
	end := 1000 * time.Hour
	if want := []time.Duration{end, end + 1, end + 2, end + 3 + 2*time.Second, end + 3 + 2*time.Second + 333333333, end + 3 + 2*time.Second + 666666666}; !reflect.DeepEqual(lw, want) {
		t.Fatalf("long stall samples %v, want %v", lw, want)
	}
	// early stop of the iterator
	n := 0
	for range sc.SampleSeq(1000) {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatal("iterator did not stop")
	}
}

func TestZeroLengthScript(t *testing.T) {
	sc := mustParse(t, "start=5;jump +1s")
	if sc.Duration() != 0 || len(sc.Samples(100)) != 0 {
		t.Fatal("zero-length script has samples")
	}
	if sim, st := sc.SimAt(0); sim != 6*sec || st.Mode != Ended {
		t.Fatalf("SimAt(0) = %d %+v", sim, st)
	}
}

func TestDescribeAndString(t *testing.T) {
	sc := mustParse(t, example+";stall 1s;hz 50;jump =3.5")
	d := sc.Describe()
	if len(d) != 13 {
		t.Fatalf("%d lines", len(d))
	}
	for i, frag := range map[int]string{
		0:  "start at sim 100s",
		1:  "pause for 1s, sim held at 100s",
		4:  "play at 2x for 1s, sim 102s -> 104s",
		6:  "jump backward by 5s, sim 105s -> 100s",
		10: "stall for 1s",
		11: "50 Hz",
		12: "jump to sim 3.5s (from 112s)",
	} {
		if !strings.Contains(d[i], frag) {
			t.Errorf("line %d %q lacks %q", i, d[i], frag)
		}
	}
	want := "start=100;pause 1s;play 1x 2s;pause 1s;play 2x 1s;play 0.5x 2s;jump -5s;play 1x 1s;jump +10s;play 1x 1s;stall 1s;hz 50;jump =3.5"
	if sc.String() != want {
		t.Fatalf("String() = %q", sc.String())
	}
	if again := mustParse(t, sc.String()); !sameSteps(again, sc) {
		t.Fatal("String does not round-trip")
	}
}

func sameSteps(a, b *Script) bool {
	as, bs := a.Steps(), b.Steps()
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		x, y := as[i], bs[i]
		x.Index, y.Index, x.Text, y.Text = 0, 0, "", ""
		if x != y {
			return false
		}
	}
	return true
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		example, "start=-1.5;hz 3;stall 2;jump =0", "play 0.333333333x 1ns", "pause 1h2m3.5s",
		"jump +9223372036.854775807", "play 1e3x 1s", "µs", "start=;", "hz 0.000000001;play 1x 1s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sc, err := Parse(src)
		if err != nil {
			if sc != nil {
				t.Fatal("script and error")
			}
			return
		}
		if sc.Duration() < 0 {
			t.Fatal("negative duration")
		}
		d := sc.Duration()
		prev := time.Duration(-1)
		for _, w := range []time.Duration{0, d / 3, d / 2, d - 1, d, d + 1} {
			if w < 0 || w < prev {
				continue
			}
			prev = w
			_, st := sc.SimAt(w)
			if (st.Mode == Ended) != (w >= d) {
				t.Fatalf("SimAt(%v) mode %v with duration %v", w, st.Mode, d)
			}
		}
		n := 0
		last := time.Duration(-1)
		for s := range sc.SampleSeq(7) {
			if s.Wall <= last || s.Wall >= d {
				t.Fatalf("sample wall %v after %v (duration %v)", s.Wall, last, d)
			}
			last = s.Wall
			if n++; n > 200 {
				break
			}
		}
		if len(sc.Describe()) != len(sc.Steps()) {
			t.Fatal("Describe length")
		}
		again, err := Parse(sc.String())
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", sc.String(), err)
		}
		if !sameSteps(sc, again) {
			t.Fatalf("canonical form %q changes the script", sc.String())
		}
	})
}

// A newcomer's mistakes get messages that say what is wrong and what
// would be accepted, without the package's name.
func TestErrorMessages(t *testing.T) {
	for script, want := range map[string]string{
		"play -1x 1s":  `step 1 "play -1x 1s": rate -1 must be positive (a decimal such as 0.5 or 2)`,
		"play 0x 1s":   `step 1 "play 0x 1s": rate 0 must be positive (a decimal such as 0.5 or 2)`,
		"play abcx 1s": `step 1 "play abcx 1s": rate "abc" is not a decimal number`,
		"":             `empty script (want steps such as start=0;play 1x 10s)`,
	} {
		_, err := Parse(script)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", script, err, want)
		}
	}
}
