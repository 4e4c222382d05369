package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
)

// These tests run talker in process on the in-process transport.
func TestMain(m *testing.M) {
	os.Setenv("NROS_TRANSPORT", "intra")
	os.Exit(m.Run())
}

func TestBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--verbose"}, `talker: unknown argument "--verbose": talker takes only ROS arguments`},
		{[]string{"--ros-args", "-r", "chatter"}, `talker: invalid ROS argument "chatter"`},
		{[]string{"--ros-args", "-p", "use_sim_time:=maybe"}, "use_sim_time"},
		{[]string{"--ros-args", "-r", "chatter:=/" + strings.Repeat("a", 300)}, "limit of 247"},
		{[]string{"--ros-args", "-p", "period_ms:=18446744073710"}, "period_ms must be 1 to 9223372036854 (milliseconds), got 18446744073710"},
		{[]string{"--ros-args", "-p", "period_ms:=0"}, "period_ms must be 1 to"},
	} {
		var errb bytes.Buffer
		rctx := nros.NewContext(nros.WithLogOutput(io.Discard))
		if code := run(context.Background(), rctx, tc.args, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", tc.args, code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: stderr %q, want %q in it", tc.args, errb.String(), tc.want)
		}
	}
}

// talker publishes on its wall timer until the context ends, then exits 0.
func TestTalkerPublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		rctx := nros.NewContext(nros.WithLogOutput(&logs))
		ctx, cancel := context.WithTimeout(context.Background(), 350*time.Millisecond)
		defer cancel()
		var errb bytes.Buffer
		if code := run(ctx, rctx, []string{"--ros-args", "-p", "period_ms:=100"}, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if n := strings.Count(logs.String(), "Publishing: 'Hello World: "); n != 3 {
			t.Fatalf("%d messages published in 350 ms at 100 ms, want 3:\n%s", n, logs.String())
		}
	})
}
