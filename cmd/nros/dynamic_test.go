package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// writeReadingPackage writes the interface files of a package the binary
// does not know, my_msgs (a message nesting a shipped type), under dir.
func writeReadingPackage(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "my_msgs", "msg")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	def := "std_msgs/Header header\nfloat64 value\nstring label\nint32[] counts\nbool ok\n"
	if err := os.WriteFile(filepath.Join(p, "Reading.msg"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readingSample is my_msgs/Reading{header: {stamp: {sec: 7, nanosec: 9},
// frame_id: "base"}, value: 1.5, label: "hi", counts: [1, -2], ok: true}
// in XCDR1, encoded field by field.
func readingSample() []byte {
	e := cdr.NewEncoder(nil, true)
	e.WriteInt32(7)
	e.WriteUint32(9)
	e.WriteString("base")
	e.WriteFloat64(1.5)
	e.WriteString("hi")
	e.WriteSequenceLen(2)
	e.WriteInt32(1)
	e.WriteInt32(-2)
	e.WriteBool(true)
	return e.Bytes()
}

// echo prints a type the binary was not built with, from the definition
// found through $NROS_INTERFACE_PATH (msg/dynamic).
func TestTopicEchoDynamicType(t *testing.T) {
	dir := t.TempDir()
	writeReadingPackage(t, dir)
	t.Setenv("NROS_INTERFACE_PATH", dir)
	t.Setenv("AMENT_PREFIX_PATH", "")
	tr := intra.New()
	defer tr.Close()
	ctx := context.Background()
	echo, out, errb := testEnv(tr, realClock{})
	done := runAsync(func() int {
		return echo.topicCmd(ctx, []string{"echo", "/reading", "my_msgs/msg/Reading", "--once"})
	})
	pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "probe", Namespace: "/"}, "/reading", "my_msgs/msg/Reading",
		rmw.QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 1}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// echo subscribes after parsing its arguments: publish until it printed.
	var code int
	deadline := time.After(5 * time.Second)
loop:
	for {
		if err := pub.Publish(readingSample()); err != nil {
			t.Fatal(err)
		}
		select {
		case code = <-done:
			break loop
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("echo printed nothing")
		}
	}
	if code != 0 {
		t.Fatalf("echo: exit %d: %s", code, errb)
	}
	want := "header:\n  stamp:\n    sec: 7\n    nanosec: 9\n  frame_id: base\nvalue: 1.5\nlabel: hi\ncounts:\n- 1\n- -2\nok: true\n---\n"
	if out.String() != want {
		t.Fatalf("echo printed\n%s\nwant\n%s", out, want)
	}
}

// A type neither compiled in nor defined anywhere is a usage error that
// says where definitions are looked for.
func TestTopicEchoUnknownType(t *testing.T) {
	t.Setenv("NROS_INTERFACE_PATH", "")
	t.Setenv("AMENT_PREFIX_PATH", "")
	tr := intra.New()
	defer tr.Close()
	echo, _, errb := testEnv(tr, realClock{})
	code := echo.topicCmd(context.Background(), []string{"echo", "/x", "my_msgs/msg/Nothing", "--once"})
	if code != 2 || !strings.Contains(errb.String(), "NROS_INTERFACE_PATH") {
		t.Fatalf("exit %d, stderr %q; want 2 and a hint naming $NROS_INTERFACE_PATH", code, errb)
	}
}
