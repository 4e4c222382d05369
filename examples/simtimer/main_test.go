package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
)

// follow runs simtimer in process while a simulator node in the same
// context publishes a clock on topic at 100 Hz, 1x from 100 s, and returns
// the ROS times of the ros lines.
func follow(t *testing.T, topic string, args ...string) []int64 {
	var rosTimes []int64
	synctest.Test(t, func(t *testing.T) {
		rctx := nros.NewContext(nros.WithLogOutput(io.Discard))
		sim, err := nros.NewNode("sim", nros.WithContext(rctx), nros.WithoutGlobalArguments())
		if err != nil {
			t.Fatal(err)
		}
		pub, err := nros.NewPublisher[rosgraph_msgs.Clock](sim, topic, nros.ClockQoS())
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := make(chan int, 1)
		go func() { code <- run(context.Background(), rctx, args, &out, &errb) }()
		synctest.Wait()
		for i := int64(0); i < 100; i++ {
			ns := 100*int64(time.Second) + i*int64(10*time.Millisecond)
			pub.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}})
			time.Sleep(10 * time.Millisecond)
		}
		if c := <-code; c != 0 {
			t.Fatalf("exit %d: %s", c, errb.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			f := strings.Fields(l)
			if f[0] == "ros" {
				v, _ := strconv.ParseInt(f[2], 10, 64)
				rosTimes = append(rosTimes, v)
			}
		}
	})
	return rosTimes
}

func TestSimtimerFollowsClock(t *testing.T) {
	want := "[100100000000 100200000000 100300000000 100400000000 100500000000 100600000000 100700000000 100800000000 100900000000]"
	for _, tc := range []struct {
		name, topic string
		args        []string
	}{
		{"-p use_sim_time:=true", "/clock", []string{"--ros-args", "-p", "use_sim_time:=true", "-p", "duration_s:=1.005"}},
		{"-r clock:=/sim/clock", "/sim/clock", []string{"--ros-args", "-p", "use_sim_time:=true", "-r", "clock:=/sim/clock", "-p", "duration_s:=1.005"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := follow(t, tc.topic, tc.args...)
			if fmtInts(got) != want {
				t.Fatalf("ros lines at %v, want %s", got, want)
			}
		})
	}
	t.Run("params file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(f, []byte("simtimer:\n  ros__parameters:\n    use_sim_time: true\n    duration_s: 1.005\n"), 0o644)
		if got := follow(t, "/clock", "--ros-args", "--params-file", f); fmtInts(got) != want {
			t.Fatalf("ros lines at %v", got)
		}
	})
}

func fmtInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestSimtimerBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ros-args", "-p", "use_sim_time:=notabool"}, []string{"use_sim_time", "bool"}},
		{[]string{"--ros-args", "--frobnicate"}, []string{"--frobnicate"}},
		{[]string{"--ros-args", "-p", "overrun:=sometimes"}, []string{"overrun"}},
		{[]string{"--ros-args", "-p", "period_ms:=0"}, []string{"period_ms"}},
		{[]string{"--ros-args", "-p", "duration_s:=abc"}, []string{"duration_s"}},
		// 18446744073710 ms overflows time.Duration: it once became a 448 µs timer.
		{[]string{"--ros-args", "-p", "period_ms:=18446744073710"}, []string{"period_ms must be 1 to 9223372036854 (milliseconds), got 18446744073710"}},
		{[]string{"--ros-args", "-p", "wall_period_ms:=-1"}, []string{"wall_period_ms must be 1 to"}},
		{[]string{"--verbose", "--ros-args", "-p", "use_sim_time:=true"}, []string{`unknown argument "--verbose"`}},
		{[]string{"--ros-args", "-p", "use_sim_time:=true", "--", "extra"}, []string{`unknown argument "extra"`}},
	} {
		var out, errb bytes.Buffer
		rctx := nros.NewContext(nros.WithLogOutput(io.Discard))
		if code := run(context.Background(), rctx, tc.args, &out, &errb); code != 2 {
			t.Fatalf("%q: exit %d, want 2", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(errb.String(), w) {
				t.Fatalf("%q: stderr %q lacks %q", tc.args, errb.String(), w)
			}
		}
		if out.Len() != 0 {
			t.Fatalf("stdout not empty: %q", out.String())
		}
	}
}
