package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/nros-go/nros"
)

// These tests run listener in process on the in-process transport.
func TestMain(m *testing.M) {
	os.Setenv("NROS_TRANSPORT", "intra")
	os.Exit(m.Run())
}

func TestBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--verbose"}, `listener: unknown argument "--verbose": listener takes only ROS arguments`},
		{[]string{"--ros-args", "-r", "chatter"}, `listener: invalid ROS argument "chatter"`},
		{[]string{"--ros-args", "-p", "use_sim_time:=maybe"}, "use_sim_time"},
		{[]string{"--ros-args", "-r", "chatter:=/" + strings.Repeat("a", 300)}, "limit of 247"},
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
