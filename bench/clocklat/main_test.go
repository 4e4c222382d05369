package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/wakestamp"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := write(&b, []record{{wall: 5, sim: 1_010_000_000}, {wall: 6, sim: -1}, {wall: 7, sim: 0}})
	if err != nil {
		t.Fatal(err)
	}
	// ROS style: sec may be negative, nanosec in [0, 1e9), as clockpub prints.
	want := "5 1 10000000\n6 -1 999999999\n7 0 0\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestBadFlags(t *testing.T) {
	bad := [][]string{{"extra"}, {"--count", "0"}, {"--period", "0s"}, {"--timeout", "-1"}, {"--stamps", "p", "--rx", "f"}}
	if !wakestamp.Enabled {
		bad = append(bad, []string{"--stamps", "p"}) // the marks are not built in
	}
	for _, args := range bad {
		var out, errb bytes.Buffer
		if code := run(t.Context(), nros.NewContext(), args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

func TestTrimRosArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"--ros-args", "-p", "a:=1"}, []string{"-p", "a:=1"}},
		{[]string{"-p", "a:=1"}, []string{"-p", "a:=1"}},
	} {
		got := trimRosArgs(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("trimRosArgs(%q) = %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("trimRosArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}

// --rx measures the bare receipt: the node has no /clock subscription of its
// own (use_sim_time off, no timer), only the raw one, and ends after N
// samples, written as "wall_ns sec nanosec".
func TestBareReceipt(t *testing.T) {
	rctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer rctx.Shutdown()
	pubNode, err := nros.NewNode("clockpub", nros.WithContext(rctx))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := nros.NewPublisher[rosgraph_msgs.Clock](pubNode, "/clock", nros.ClockQoS())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rx")
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- run(t.Context(), rctx, []string{"--count", "3", "--timeout", "20", "--rx", file}, io.Discard, &errb)
	}()
	var code, subs int
	for i := int32(1); ; i++ {
		if i > 2000 {
			t.Fatal("clocklat --rx did not end after 2000 samples")
		}
		if n, err := pubNode.CountSubscribers("/clock"); err == nil {
			subs = max(subs, n)
		}
		if err := pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: i}}); err != nil {
			t.Fatal(err)
		}
		select {
		case code = <-done:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d receipts, want 3:\n%s", len(lines), b)
	}
	for _, l := range lines {
		var wall, sec, ns int64
		if n, _ := fmt.Sscan(l, &wall, &sec, &ns); n != 3 || wall <= 0 || sec < 1 || ns != 0 {
			t.Fatalf("bad receipt line %q", l)
		}
	}
	if subs != 1 {
		t.Errorf("up to %d subscriptions to /clock, want 1: --rx leaves use_sim_time off", subs)
	}
}
