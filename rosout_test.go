package nros

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

func TestRosout(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	ctx := NewContext(WithTransport(tr), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("talker", WithContext(ctx), WithNamespace("/robot"))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	quiet, err := NewNode("quiet", WithContext(ctx), WithArguments("--ros-args", "--disable-rosout-logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	var mu sync.Mutex
	var got []rcl_interfaces.Log
	listener, err := NewNode("listener", WithContext(ctx), WithArguments("--ros-args", "--disable-rosout-logs"), WithoutParameterServices())
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	e := NewExecutor(WithExecutorContext(ctx))
	defer e.Close()
	e.AddNode(listener)
	if _, err := NewSubscription[rcl_interfaces.Log](listener, RosoutTopic, RosoutQoS(), func(m *rcl_interfaces.Log) {
		mu.Lock()
		got = append(got, *m)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	n.Logger().Warn("hot", "temp", 90)
	quiet.Logger().Warn("not on rosout")
	n.Logger().Debug("below the level")
	for range 10 {
		e.SpinSome()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d records: %+v", len(got), got)
	}
	m := got[0]
	if m.Name != "robot.talker" || m.Msg != "hot temp=90" || m.Level != rcl_interfaces.Log_WARN || m.Stamp.Sec == 0 ||
		!strings.HasSuffix(m.File, "rosout_test.go") || m.Line == 0 {
		t.Fatalf("%+v", m)
	}
}

// A subscriber of /rosout that logs from its deliver path (here: a raw
// transport subscription on the same node's logger) does not recurse: its
// record is queued and published after the one in progress, and one that
// logs on every record stops after maxRosoutDepth levels. Records of
// concurrent goroutines are all published.
func TestRosoutNoRecursion(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	ctx := NewContext(WithTransport(tr), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("loud", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var count, echo atomic.Int32
	echo.Store(1)
	sub, err := tr.NewSubscription(n.info(), RosoutTopic, "rcl_interfaces/msg/Log", RosoutQoS(), func(rmw.Sample) {
		count.Add(1)
		if echo.Add(-1) >= 0 {
			n.Logger().Info("echo") // synchronously inside the publish
		}
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	n.Logger().Info("first")
	if c := count.Load(); c != 2 {
		t.Fatalf("%d records on /rosout, want 2 (the first, then its echo)", c)
	}
	echo.Store(1 << 20) // echo every record: bounded by the depth
	n.Logger().Info("loud")
	if c := count.Load(); c != 2+1+maxRosoutDepth {
		t.Fatalf("%d records on /rosout, want %d", c, 2+1+maxRosoutDepth)
	}
	echo.Store(0)
	count.Store(0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); n.Logger().Warn("concurrent") }()
	}
	wg.Wait()
	if c := count.Load(); c != 4 {
		t.Fatalf("%d records, want 4: concurrent records are published", c)
	}
}
