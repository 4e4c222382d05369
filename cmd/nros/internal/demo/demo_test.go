package demo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
)

type line struct {
	kind      string
	wall, ros int64
	overruns  uint64
}

func parse(t *testing.T, out string) []line {
	var ls []line
	for _, raw := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(raw)
		if len(f) < 3 {
			t.Fatalf("bad line %q", raw)
		}
		l := line{kind: f[0]}
		var err error
		if l.wall, err = strconv.ParseInt(f[1], 10, 64); err != nil {
			t.Fatalf("bad wall in %q", raw)
		}
		if l.ros, err = strconv.ParseInt(f[2], 10, 64); err != nil {
			t.Fatalf("bad ros in %q", raw)
		}
		switch f[0] {
		case "ros":
			if len(f) != 4 {
				t.Fatalf("ros line %q", raw)
			}
			l.overruns, _ = strconv.ParseUint(f[3], 10, 64)
		case "wall", "clock":
			if len(f) != 3 {
				t.Fatalf("%s line %q", f[0], raw)
			}
		default:
			t.Fatalf("unknown line %q", raw)
		}
		ls = append(ls, l)
	}
	return ls
}

// window counts lines of a kind whose wall offset is in (from, to].
func window(ls []line, kind string, t0 int64, from, to time.Duration) (n int, ros []int64) {
	for _, l := range ls {
		w := time.Duration(l.wall - t0)
		if l.kind == kind && w > from && w <= to {
			n++
			ros = append(ros, l.ros)
		}
	}
	return
}

func TestDemoTimeline(t *testing.T) {
	const s = int64(time.Second)
	const ms = int64(time.Millisecond)
	for _, tt := range []struct {
		policy        nros.TimerOverrunPolicy
		jumpFires     int
		totalRos      int
		finalOverruns uint64
	}{
		{nros.OverrunSkip, 1, 68, 100},
		{nros.OverrunCatchUp, 101, 168, 100},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				errb := &timedWriter{t0: time.Now()}
				t0 := time.Now().UnixNano()
				err := Run(context.Background(), Config{Overrun: tt.policy, Stdout: &out, Stderr: errb})
				if err != nil {
					t.Fatal(err)
				}
				ls := parse(t, out.String())
				sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
				if n, _ := window(ls, "clock", t0, -1, sec(9)); n != 900 {
					t.Fatalf("clock samples %d, want 900", n)
				}
				// Wall timer: 10 per second whatever the simulation does.
				for i := 0; i < 9; i++ {
					if n, _ := window(ls, "wall", t0, sec(float64(i)), sec(float64(i+1))); n != 10 {
						t.Fatalf("wall fires in second %d: %d, want 10", i, n)
					}
				}
				cases := []struct {
					name     string
					from, to float64
					want     int
					first    int64
				}{
					{"pause 1s: silent", 0, 1, 0, 0},
					{"play 1x 2s", 1, 3, 20, 100*s + 100*ms},
					{"pause 1s: silent", 3, 4, 0, 0},
					{"play 2x 1s: twice the rate", 4, 5, 20, 102*s + 100*ms},
					// the sample at 7 s carries the jump, so 105.0 is never published
					{"play 0.5x 2s: half the rate", 5, 7, 9, 104*s + 100*ms},
					{"jump -5s, then play 1x: period restarts at 100", 7, 7.999, 9, 100*s + 100*ms},
					{"jump +10s: the backlog, by policy", 7.999, 8, tt.jumpFires, 111 * s},
					{"play 1x 1s after the jump: grid kept", 8, 9, 9, 111*s + 100*ms},
				}
				for _, c := range cases {
					n, ros := window(ls, "ros", t0, sec(c.from), sec(c.to))
					if n != c.want {
						t.Fatalf("%s: %d ROS fires %v, want %d", c.name, n, ros, c.want)
					}
					if n > 0 && ros[0] != c.first {
						t.Fatalf("%s: first fire at ROS %d, want %d", c.name, ros[0], c.first)
					}
				}
				n, _ := window(ls, "ros", t0, -1, sec(10))
				if n != tt.totalRos {
					t.Fatalf("total ROS fires %d, want %d", n, tt.totalRos)
				}
				var last line
				for _, l := range ls {
					if l.kind == "ros" {
						last = l
					}
				}
				if last.overruns != tt.finalOverruns {
					t.Fatalf("final overruns %d, want %d", last.overruns, tt.finalOverruns)
				}
				sum := errb.String()
				errb.checkStepByStep(t, DefaultScript)
				for _, want := range []string{"backward jump 105s -> 100s", "forward jump 101s -> 111s", "overruns +100",
					fmt.Sprintf("total: ROS timer %d activations, 100 overruns; wall timer 90 activations", tt.totalRos)} {
					if !strings.Contains(sum, want) {
						t.Fatalf("summary lacks %q:\n%s", want, sum)
					}
				}
			})
		})
	}
}

func TestDemoRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Script: "play 0x 1s"},
		{Script: "jump"},
		{Script: "play NaNx 1s"},
		{Hz: -1},
		{Period: -time.Second},
	} {
		var out bytes.Buffer
		cfg.Stdout = &out
		if err := Run(context.Background(), cfg); err == nil {
			t.Fatalf("%+v accepted", cfg)
		}
	}
}

// timedWriter records when (in synctest's virtual time) each line of the
// summary was written.
type timedWriter struct {
	t0   time.Time
	buf  bytes.Buffer
	at   []time.Duration
	text []string
}

func (w *timedWriter) Write(p []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l != "" {
			w.at = append(w.at, time.Since(w.t0))
			w.text = append(w.text, l)
		}
	}
	return w.buf.Write(p)
}

func (w *timedWriter) String() string { return w.buf.String() }

// checkStepByStep checks that each step's line was written as the step
// ended (within two /clock periods), not all at the end.
func (w *timedWriter) checkStepByStep(t *testing.T, script string) {
	t.Helper()
	sc, err := clockscript.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	steps := sc.Steps()
	if len(w.text) != len(steps)+3 {
		t.Fatalf("%d summary lines, want a header, %d steps and 2 total lines:\n%s", len(w.text), len(steps), w.String())
	}
	if w.at[0] != 0 {
		t.Errorf("header written at %v, want at the start", w.at[0])
	}
	for i, s := range steps {
		end := s.WallStart + s.Wall
		at := w.at[i+1]
		if !strings.Contains(w.text[i+1], s.Text) {
			t.Fatalf("line %d is %q, want step %q", i+1, w.text[i+1], s.Text)
		}
		if at < end || at > end+20*time.Millisecond {
			t.Errorf("step %d (%s, ends at %v) written at %v", s.Index, s.Text, end, at)
		}
	}
}

// Without an event writer the demo prints only the summary.
func TestDemoSummaryOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var errb bytes.Buffer
		if err := Run(context.Background(), Config{Script: "start=5;play 1x 300ms", Stderr: &errb}); err != nil {
			t.Fatal(err)
		}
		want := "nros demo: ROS timer 100ms (skip), wall timer 100ms, /clock at 100 Hz\n" +
			"  step 1  start=5        wall   0.00s  sim starts at 5s\n" +
			"  step 2  play 1x 300ms  wall   0.00s  sim 5s -> 5.3s at 1x: ROS timer fired 2, wall timer 3\n" +
			"  total: ROS timer 2 activations, 0 overruns; wall timer 3 activations\n"
		if got := errb.String(); !strings.HasPrefix(got, want) {
			t.Fatalf("summary:\n%s\nwant it to start with:\n%s", got, want)
		}
	})
}
