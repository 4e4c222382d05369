package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// fakeClock is a wall clock that jumps to whatever instant a command
// sleeps until, so paced commands run instantly and deterministically.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.After(f.t) {
		f.t = t
	}
	return nil
}

// testEnv returns an environment whose commands share the transport tr.
func testEnv(tr rmw.Transport, clk wallClock) (*cliEnv, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	e := &cliEnv{stdout: &out, stderr: &errb, ctxOpts: []nros.ContextOption{nros.WithTransport(tr)}, clock: clk}
	return e, &out, &errb
}

// collect subscribes to topic on tr and records every Clock sample.
func collectClock(t *testing.T, tr rmw.Transport, topic string) *[]rosgraph_msgs.Clock {
	t.Helper()
	var got []rosgraph_msgs.Clock
	sub, err := tr.NewSubscription(rmw.NodeInfo{Name: "probe", Namespace: "/"}, topic, "rosgraph_msgs/msg/Clock",
		nros.ClockQoS(), func(s rmw.Sample) {
			var m rosgraph_msgs.Clock
			if err := msg.Unmarshal(s.Data, &m); err != nil {
				t.Errorf("bad sample: %v", err)
			}
			got = append(got, m)
		}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return &got
}

func TestClockPublishesScriptSamples(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		hz           string
		topicArgs    []string
		topic        string
	}{
		{"peers verify case", "start=100.0;play 1x 0.5s;pause 0.2s;play 2x 0.3s;jump -5s;play 0.5x 0.2s;jump +10s;play 1x 0.2s", "100", nil, "/clock"},
		{"negative and stall", "start=-0.25;play 1x 100ms;stall 50ms;jump =7.5;pause 30ms;hz 50;play 3x 100ms", "40", []string{"--topic", "/sim/clock"}, "/sim/clock"},
		{"remapped", "start=1;play 1x 50ms", "100", []string{"--ros-args", "-r", "clock:=/other"}, "/other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := intra.New()
			defer tr.Close()
			got := collectClock(t, tr, tc.topic)
			clk := newFakeClock()
			t0 := clk.Now()
			e, out, errb := testEnv(tr, clk)
			args := append([]string{"--hz", tc.hz, "--script", tc.script}, tc.topicArgs...)
			if code := e.clockCmd(context.Background(), args); code != 0 {
				t.Fatalf("exit %d: %s", code, errb)
			}
			sc, err := clockscript.Parse(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			var hz float64
			fmt.Sscan(tc.hz, &hz)
			want := sc.Samples(hz)
			if len(want) == 0 || len(*got) != len(want) {
				t.Fatalf("published %d samples, want %d", len(*got), len(want))
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
			}
			for i, w := range want {
				sec, nsec, _ := nros.TimeFromNanoseconds(w.Sim).SecNanosec()
				if g := (*got)[i].Clock; g.Sec != sec || g.Nanosec != nsec {
					t.Fatalf("sample %d: got %d.%09d, want %d.%09d", i, g.Sec, g.Nanosec, sec, nsec)
				}
				if wantLine := fmt.Sprintf("clock %d %d", t0.Add(w.Wall).UnixNano(), w.Sim); lines[i] != wantLine {
					t.Fatalf("line %d: %q, want %q", i, lines[i], wantLine)
				}
			}
			// The command ends at the script's end, not at its last sample.
			if end := clk.Now().Sub(t0); end != sc.Duration() {
				t.Fatalf("ran for %v, script lasts %v", end, sc.Duration())
			}
		})
	}
}

// The default script runs for ever; a signal (context end) stops it with
// status 0.
func TestClockStopsOnSignal(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	got := collectClock(t, tr, "/clock")
	e, out, errb := testEnv(tr, realClock{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	start := time.Now()
	if code := e.clockCmd(ctx, []string{"--hz", "50"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v to stop", d)
	}
	if len(*got) == 0 || !strings.HasPrefix(out.String(), "clock ") {
		t.Fatalf("nothing published (%d samples): %q", len(*got), out)
	}
	if first := (*got)[0].Clock; first.Sec != 0 || first.Nanosec != 0 {
		t.Fatalf("default script starts at %+v, want 0", first)
	}
}

// --quiet publishes the same samples and prints nothing.
func TestClockQuiet(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	got := collectClock(t, tr, "/clock")
	e, out, errb := testEnv(tr, newFakeClock())
	if code := e.clockCmd(context.Background(), []string{"--quiet", "--hz", "100", "--script", "start=1;play 1x 100ms"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if out.Len() != 0 || errb.Len() != 0 {
		t.Fatalf("printed %q / %q", out, errb)
	}
	if len(*got) != 10 {
		t.Fatalf("%d samples published, want 10", len(*got))
	}
}
