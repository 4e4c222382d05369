package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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

// The listener links no SROS2 (package sros2): asked for security under
// Enforce it stops with the error that names what to import, before any
// socket is opened (the DDS transport is not made).
func TestSecurityAskedButNotLinked(t *testing.T) {
	ks := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ks, "enclaves", "listener"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NROS_TRANSPORT", "")
	t.Setenv("RMW_IMPLEMENTATION", "")
	t.Setenv("ROS_SECURITY_ENABLE", "true")
	t.Setenv("ROS_SECURITY_STRATEGY", "Enforce")
	t.Setenv("ROS_SECURITY_KEYSTORE", ks)
	t.Setenv("ROS_SECURITY_ENCLAVE_OVERRIDE", "")
	var errb bytes.Buffer
	rctx := nros.NewContext(nros.WithLogOutput(io.Discard))
	code := run(context.Background(), rctx, []string{"--ros-args", "--enclave", "/listener"}, &errb)
	if code != 2 || !strings.Contains(errb.String(), `import _ "github.com/nros-go/nros/sros2"`) ||
		!strings.Contains(errb.String(), "Enforce") {
		t.Fatalf("exit %d, stderr %q; want 2 (NewNode fails) and the Enforce error naming package sros2", code, errb.String())
	}
}
