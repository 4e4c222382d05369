package nros

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// lockedBuf is a log sink the test reads while loggers may write.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.HasPrefix(line, "[WARN]") {
			out = append(out, line)
		}
	}
	return out
}

// simNode makes a node with use_sim_time true in a context of its own on
// tr, logging to the returned buffer.
func simNode(t *testing.T, tr rmw.Transport, extra map[string]any) (*Node, *lockedBuf) {
	t.Helper()
	logs := &lockedBuf{}
	ctx := NewContext(WithTransport(tr), WithLogOutput(logs))
	over := map[string]any{UseSimTimeParameter: true}
	for k, v := range extra {
		over[k] = v
	}
	n, err := NewNode("sim_node", WithContext(ctx), WithParameterOverrides(over))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); ctx.Shutdown() })
	return n, logs
}

// clockPublisher makes a raw /clock publisher of node name with qos.
func rawClockPublisher(t *testing.T, tr rmw.Transport, name string, qos QoS) rmw.Publisher {
	t.Helper()
	p, err := tr.NewPublisher(rmw.NodeInfo{Name: name, Namespace: "/", Enclave: "/"}, "/clock",
		(&rosgraph_msgs.Clock{}).TypeName(), qos, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func publishClock(t *testing.T, p rmw.Publisher, sec int32) {
	t.Helper()
	var m rosgraph_msgs.Clock
	m.Clock.Sec = sec
	if err := p.Publish(msg.Marshal(&m, true, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestClockSilenceWarnsOnceAfterFiveSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, logs := simNode(t, intra.New(), nil)
		time.Sleep(ClockSilenceWarning - time.Nanosecond)
		synctest.Wait()
		if w := logs.warnings(); len(w) != 0 {
			t.Fatalf("warned before 5 s: %q", w)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		w := logs.warnings()
		if len(w) != 1 {
			t.Fatalf("%d warnings at 5 s, want 1: %q", len(w), w)
		}
		for _, want := range []string{"[sim_node]", "no sample on /clock after 5s",
			"QoS best_effort, volatile, keep_last(1)", "0 publisher(s) matched", "no incompatible publisher"} {
			if !strings.Contains(w[0], want) {
				t.Errorf("warning %q lacks %q", w[0], want)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if w := logs.warnings(); len(w) != 1 {
			t.Fatalf("%d warnings after a minute, want still 1", len(w))
		}
	})
}

func TestClockSilenceQuietWhenASampleCame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		n, logs := simNode(t, tr, nil)
		// Gazebo Classic: reliable, transient local. A best-effort
		// subscription matches it.
		gz := rawClockPublisher(t, tr, "gazebo", QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1})
		time.Sleep(time.Second)
		publishClock(t, gz, 42)
		time.Sleep(ClockStallWarning - time.Nanosecond) // then it stops, but not for 30 s: no warning
		synctest.Wait()
		if w := logs.warnings(); len(w) != 0 {
			t.Fatalf("warned although a sample came: %q", w)
		}
		if got := n.Clock().Now().Nanoseconds(); got != 42*sec {
			t.Fatalf("clock %d, want 42 s", got)
		}
	})
}

func TestClockSilenceNamesIncompatiblePublishers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sub     map[string]any // QoS overrides of the clock subscription
		pubQoS  QoS
		matched string
		want    string
	}{
		{
			name:    "reliable subscription, rosbag2's best-effort clock",
			sub:     map[string]any{"qos_overrides./clock.subscription.reliability": "reliable"},
			pubQoS:  ClockQoS(),
			matched: "0 publisher(s) matched",
			want:    "incompatible publisher(s) on /clock: /player (RELIABILITY: offers best_effort, volatile, keep_last(1))",
		},
		{
			name: "transient-local subscription, a reliable-only (volatile) publisher",
			sub: map[string]any{"qos_overrides./clock.subscription.reliability": "reliable",
				"qos_overrides./clock.subscription.durability": "transient_local"},
			pubQoS:  QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10},
			matched: "0 publisher(s) matched",
			want:    "incompatible publisher(s) on /clock: /player (DURABILITY: offers reliable, volatile, keep_last(10))",
		},
		{
			name:    "default subscription, Gazebo Classic's reliable clock: compatible",
			pubQoS:  QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1},
			matched: "1 publisher(s) matched",
			want:    "no incompatible publisher seen on /clock",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := intra.New()
				rawClockPublisher(t, tr, "player", tc.pubQoS) // there before the node
				_, logs := simNode(t, tr, tc.sub)
				time.Sleep(ClockSilenceWarning)
				synctest.Wait()
				all := logs.warnings()
				var w []string
				for _, l := range all {
					if strings.Contains(l, "no sample on /clock") {
						w = append(w, l)
					}
				}
				if len(w) != 1 || !strings.Contains(w[0], tc.want) || !strings.Contains(w[0], tc.matched) {
					t.Fatalf("warnings %q, want one silence warning containing %q and %q", all, tc.want, tc.matched)
				}
			})
		})
	}
}

func TestClockHealthRecordsIncompatibleEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		n, logs := simNode(t, tr, map[string]any{"qos_overrides./clock.subscription.reliability": "reliable"})
		// A publisher that comes later and leaves before the warning: only
		// the transport's event remembers it.
		p := rawClockPublisher(t, tr, "player", ClockQoS())
		var gid [16]byte
		for _, e := range tr.Endpoints("/clock") {
			if e.Publisher && e.Node.Name == "player" {
				gid = e.GID
			}
		}
		p.Close()
		time.Sleep(ClockSilenceWarning)
		synctest.Wait()
		all := logs.warnings()
		var w []string
		for _, l := range all {
			if strings.Contains(l, "no sample on /clock") {
				w = append(w, l)
			}
		}
		if len(w) != 1 || !strings.Contains(w[0], "gid "+hexOf(gid[:])+" (RELIABILITY)") {
			t.Fatalf("warnings %q, want the departed publisher's gid and RELIABILITY", all)
		}
		if len(all) != 2 || !strings.Contains(all[0], "incompatible QoS") {
			t.Fatalf("warnings %q, want the subscriber's immediate incompatible-QoS report first", all)
		}
		_ = n
	})
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// A /clock that stalls for 30 s warns once per stall, and says when it
// resumes and how far it jumped (#19 item 8). A paused simulation (samples
// repeating one time) is no stall.
func TestClockStallWarnsOncePerStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		_, logs := simNode(t, tr, nil)
		gz := rawClockPublisher(t, tr, "gazebo", ClockQoS())
		lines := func() []string {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			var out []string
			for _, l := range strings.Split(logs.b.String(), "\n") {
				if strings.Contains(l, "/clock") {
					out = append(out, l)
				}
			}
			return out
		}
		// Paused at 10 s for a minute: a sample every second.
		for range 60 {
			publishClock(t, gz, 10)
			time.Sleep(time.Second)
		}
		synctest.Wait()
		if l := lines(); len(l) != 0 {
			t.Fatalf("logged while paused: %q", l)
		}
		// Then silence: one warning at 30 s, none after.
		time.Sleep(ClockStallWarning - time.Second - time.Nanosecond)
		synctest.Wait()
		if l := lines(); len(l) != 0 {
			t.Fatalf("logged before the stall lasted 30 s: %q", l)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		w := logs.warnings()
		if len(w) != 1 || !strings.Contains(w[0], "no sample on /clock for 30s") || !strings.Contains(w[0], "[sim_node]") {
			t.Fatalf("warnings at the stall: %q", w)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if l := lines(); len(l) != 1 {
			t.Fatalf("%d lines after a longer stall, want still 1: %q", len(l), l)
		}
		// It resumes 150 s later at 70 s: one line saying so.
		publishClock(t, gz, 70)
		synctest.Wait()
		l := lines()
		if len(l) != 2 || !strings.Contains(l[1], "/clock resumed after 2m30s") || !strings.Contains(l[1], "jumped 1m0s") {
			t.Fatalf("lines after resuming: %q", l)
		}
		// A second stall warns again.
		time.Sleep(ClockStallWarning)
		synctest.Wait()
		if w := logs.warnings(); len(w) != 2 {
			t.Fatalf("%d warnings after the second stall, want 2: %q", len(w), w)
		}
	})
}

func TestClockSilenceQuietWhenReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, logs := simNode(t, intra.New(), nil)
		time.Sleep(time.Second)
		if r := n.SetParameter(Parameter{Name: UseSimTimeParameter, Value: BoolValue(false)}); !r.Successful {
			t.Fatal(r.Reason)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if w := logs.warnings(); len(w) != 0 {
			t.Fatalf("warned after use_sim_time went false: %q", w)
		}
	})
}

func TestClockSourceStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := NewContext()
		c := ctx.Clock()
		if s := c.SourceStats(); s != (ClockStats{}) {
			t.Fatalf("no source: %+v", s)
		}
		if s := ctx.clockFor(SteadyTime).SourceStats(); s != (ClockStats{}) {
			t.Fatalf("steady clock: %+v", s)
		}
		src := ctx.AttachTimeSource()
		sim := 100 * sec
		// 3 s at 2x and 50 Hz, then a loop back to 90 s, then 1.5 s paused.
		for range 150 {
			src.Install(TimeFromNanoseconds(sim))
			sim += 40 * ms
			time.Sleep(20 * time.Millisecond)
		}
		s := c.SourceStats()
		if s.Samples != 150 || s.SampleRate != 50 || s.RealTimeFactor != 2 || s.Jumps != 0 || s.LastJump.Kind != SourceJumpFirst {
			t.Fatalf("2x at 50 Hz: %+v", s)
		}
		src.Install(TimeFromNanoseconds(90 * sec))
		time.Sleep(20 * time.Millisecond)
		for range 75 {
			src.Install(TimeFromNanoseconds(90 * sec))
			time.Sleep(20 * time.Millisecond)
		}
		s = c.SourceStats()
		want := SourceJump{Kind: SourceJumpBackward, From: Time{sim - 40*ms}, To: Time{90 * sec}, Ago: 1520 * time.Millisecond}
		if s.LastJump != want || s.Jumps != 1 || !s.Paused || s.RealTimeFactor != 0 || s.Last != (Time{90 * sec}) || s.LastAge != 20*time.Millisecond {
			t.Fatalf("after loop and pause: %+v (want last jump %+v)", s, want)
		}
		time.Sleep(2 * time.Second)
		if s := c.SourceStats(); !s.Stalled || s.SampleRate != 0 {
			t.Fatalf("silent: %+v", s)
		}
	})
}
