package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// runAsync runs a command on its own goroutine and returns its exit status
// channel.
func runAsync(f func() int) <-chan int {
	ch := make(chan int, 1)
	go func() { ch <- f() }()
	return ch
}

func waitCode(t *testing.T, ch <-chan int, what string, errb *bytes.Buffer) {
	t.Helper()
	select {
	case code := <-ch:
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", what, code, errb)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not finish", what)
	}
}

func TestTopicPubEchoString(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	ctx := context.Background()
	echo, echoOut, echoErr := testEnv(tr, realClock{})
	echoDone := runAsync(func() int {
		return echo.topicCmd(ctx, []string{"echo", "/chatter", "std_msgs/msg/String", "--count", "3"})
	})
	// pub waits for the echo's subscription (-w defaults to 1 with --times).
	pub, pubOut, pubErr := testEnv(tr, realClock{})
	pubDone := runAsync(func() int {
		return pub.topicCmd(ctx, []string{"pub", "/chatter", "std_msgs/String", "{data: 'hello: world'}", "--rate", "200", "--times", "3"})
	})
	waitCode(t, pubDone, "pub", pubErr)
	waitCode(t, echoDone, "echo", echoErr)
	if want := strings.Repeat("data: 'hello: world'\n---\n", 3); echoOut.String() != want {
		t.Fatalf("echo printed %q, want %q", echoOut, want)
	}
	wantPub := "publisher: beginning loop\n" +
		"publishing #1: std_msgs.msg.String(data='hello: world')\n\n" +
		"publishing #2: std_msgs.msg.String(data='hello: world')\n\n" +
		"publishing #3: std_msgs.msg.String(data='hello: world')\n\n"
	if pubOut.String() != wantPub {
		t.Fatalf("pub printed %q, want %q", pubOut, wantPub)
	}
}

// Echo without TYPE finds it in the in-process graph; --ros-args remaps
// the topic of both commands.
func TestTopicPubEchoClockTypeFromGraph(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	ctx := context.Background()
	pub, _, pubErr := testEnv(tr, realClock{})
	pubDone := runAsync(func() int {
		return pub.topicCmd(ctx, []string{"pub", "/clock", "rosgraph_msgs/Clock", "{clock: {sec: 5, nanosec: 250}}", "--once",
			"--ros-args", "-r", "clock:=/sim/clock"})
	})
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(func() string {
		var b strings.Builder
		for _, ti := range tr.Topics() {
			b.WriteString(ti.Name + " ")
		}
		return b.String()
	}(), "/sim/clock ") {
		if time.Now().After(deadline) {
			t.Fatal("pub never created its publisher")
		}
		time.Sleep(5 * time.Millisecond)
	}
	echo, echoOut, echoErr := testEnv(tr, realClock{})
	code := echo.topicCmd(ctx, []string{"echo", "--once", "/clock", "--ros-args", "-r", "clock:=/sim/clock"})
	if code != 0 {
		t.Fatalf("echo: exit %d: %s", code, echoErr)
	}
	waitCode(t, pubDone, "pub", pubErr)
	if want := "clock:\n  sec: 5\n  nanosec: 250\n---\n"; echoOut.String() != want {
		t.Fatalf("echo printed %q, want %q", echoOut, want)
	}
}

func TestFillMessage(t *testing.T) {
	for _, tc := range []struct {
		typ, values string
		want        any
		bad         string // substring of the error
	}{
		{"std_msgs/String", "{data: hello}", &std_msgs.String{Data: "hello"}, ""},
		{"std_msgs/String", "data: 5", &std_msgs.String{Data: "5"}, ""},
		{"std_msgs/String", "", &std_msgs.String{}, ""},
		{"std_msgs/String", "{}", &std_msgs.String{}, ""},
		{"std_msgs/String", "{data: [1]}", nil, "single value"},
		{"std_msgs/String", "{nope: 1}", nil, `no field "nope"`},
		{"std_msgs/String", "[1, 2]", nil, "mapping"},
		{"std_msgs/String", "{data: ", nil, "yaml"},
		{"rosgraph_msgs/Clock", "{clock: {sec: -3, nanosec: 999999999}}", &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: -3, Nanosec: 999999999}}, ""},
		{"rosgraph_msgs/Clock", "{clock: {sec: 2147483648}}", nil, "clock.sec"},
		{"rosgraph_msgs/Clock", "{clock: {nanosec: -1}}", nil, "clock.nanosec"},
		{"rosgraph_msgs/Clock", "{clock: 5}", nil, "mapping"},
		{"nros_bench/Payload", "{stamp_ns: -2, data: [1, 2, 0xff]}", &nros_bench.Payload{StampNs: -2, Data: []byte{1, 2, 255}}, ""},
		{"nros_bench/Payload", "{data: [256]}", nil, "data[0]"},
		{"std_msgs/Header", "{stamp: {sec: 1}, frame_id: map}", &std_msgs.Header{Stamp: builtin_interfaces.Time{Sec: 1}, FrameID: "map"}, ""},
	} {
		m, ok := msg.New(tc.typ)
		if !ok {
			t.Fatalf("type %s not registered", tc.typ)
		}
		err := fillMessage(m, tc.values)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s %q: error %v, want one containing %q", tc.typ, tc.values, err, tc.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tc.typ, tc.values, err)
		} else if !reflect.DeepEqual(m, tc.want) {
			t.Errorf("%s %q: got %+v, want %+v", tc.typ, tc.values, m, tc.want)
		}
	}
}

func TestSnakeAndRepr(t *testing.T) {
	for in, want := range map[string]string{"Data": "data", "StampNs": "stamp_ns", "FrameID": "frame_id", "NodeEntitiesInfoSeq": "node_entities_info_seq", "X2Y": "x2_y"} {
		if got := msg.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
	p := &nros_bench.Payload{StampNs: 7, Data: []byte{1, 2}}
	if got, want := pyRepr(reflect.ValueOf(p)), "nros_bench.msg.Payload(stamp_ns=7, data=[1, 2])"; got != want {
		t.Errorf("repr %q, want %q", got, want)
	}
	s := &std_msgs.String{Data: `it's \ok`}
	if got, want := pyRepr(reflect.ValueOf(s)), `std_msgs.msg.String(data='it\'s \\ok')`; got != want {
		t.Errorf("repr %q, want %q", got, want)
	}
}

func FuzzFillMessage(f *testing.F) {
	for _, s := range []string{"{data: hi}", "{clock: {sec: 1, nanosec: 2}}", "{stamp_ns: 1, data: [1, 2]}", "[", "&a {x: *a}", "{data: !!binary aGk=}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []string{"std_msgs/String", "rosgraph_msgs/Clock", "nros_bench/Payload", "std_msgs/Header"} {
			m, _ := msg.New(typ)
			_ = fillMessage(m, s) // must not panic
		}
	})
}

// Bad command lines exit 2 with a message on stderr and nothing on stdout.
func TestNewCommandsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"clock", "--hz", "0"},
		{"clock", "--hz", "-5"},
		{"clock", "--script", "play fast"},
		{"clock", "--script", ""},
		{"clock", "extra"},
		{"clock", "--frequency", "3"},
		{"clock", "--topic", "bad topic!"},
		{"clock", "--ros-args", "--bogus"},
		{"topic"},
		{"topic", "list-everything"},
		{"topic", "echo"},
		{"topic", "echo", "/a", "std_msgs/String", "extra"},
		{"topic", "echo", "/a", "--wait-timeout", "0.05"},
		{"topic", "echo", "/a", "std_msgs/Nope"},
		{"topic", "echo", "/a", "std_msgs/String", "--count", "-1"},
		{"topic", "echo", "/a", "std_msgs/String", "--qos-reliability", "sometimes"},
		{"topic", "echo", "/a b", "std_msgs/String"},
		{"topic", "pub", "/a"},
		{"topic", "pub", "/a", "std_msgs/String", "{nope: 1}"},
		{"topic", "pub", "/a", "std_msgs/String", "{data: hi}", "--rate", "0"},
		{"topic", "pub", "/a", "std_msgs/String", "{data: hi}", "--times", "-2"},
		{"topic", "pub", "/a", "rosgraph_msgs/Clock", "{clock: {sec: 1e12}}"},
		{"topic", "pub", "/a", "std_msgs/String", "{data: hi}", "--qos-depth", "0"},
		{"topic", "pub", "/a", "std_msgs/String", "{data: hi}", "--ros-args", "-r"},
		{"bench"},
		{"bench", "pingpang"},
		{"bench", "pingpong"},
		{"bench", "pingpong", "pang"},
		{"bench", "pingpong", "ping", "--mode", "fast"},
		{"bench", "pingpong", "ping", "--size", "-1"},
		{"bench", "pingpong", "ping", "--count", "-1"},
		{"bench", "pingpong", "pong", "--best-effort", "--reliable"},
		{"bench", "pingpong", "pong", "--size", "x"},
		{"bench", "pingpong", "pong", "--ros-args", "--log-level", "loud"},
	} {
		var out, errb bytes.Buffer
		done := runAsync(func() int { return run(args, &out, &errb) })
		select {
		case code := <-done:
			if code != 2 {
				t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, errb.String())
			} else if errb.Len() == 0 || out.Len() != 0 {
				t.Errorf("%q: stderr %q, stdout %q", args, errb.String(), out.String())
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%q: still running", args)
		}
	}
}
