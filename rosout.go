package nros

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/rmw"
)

// RosoutTopic is where nodes publish their log records.
const RosoutTopic = "/rosout"

// RosoutQoS is rcl's rosout profile (Humble and Jazzy alike): reliable,
// transient local, keep last 1000, lifespan 10 s.
func RosoutQoS() QoS {
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1000}
	q.Lifespan = 10e9
	return q
}

// startRosout makes the node's logger also publish every record it writes
// as an rcl_interfaces/Log on /rosout, as rclcpp does, unless the command
// line says --disable-rosout-logs.
func (n *Node) startRosout() error {
	if !n.args.RosoutLogs {
		return nil
	}
	pub, err := NewPublisher[rcl_interfaces.Log](n, RosoutTopic, RosoutQoS())
	if err != nil {
		return fmt.Errorf("nros: node %s: /rosout: %w", n.FullyQualifiedName(), err)
	}
	s := &rosoutSink{pub: pub, name: loggerName(n.namespace, n.name)}
	n.log = slog.New(&rosoutHandler{inner: n.log.Handler(), sink: s})
	return nil
}

// startROSInterfaces starts what every node offers the ROS graph: its
// parameter services and /parameter_events, and /rosout.
func (n *Node) startROSInterfaces() error {
	if err := n.startParameterServices(); err != nil {
		return err
	}
	return n.startRosout()
}

type rosoutSink struct {
	pub  *Publisher[rcl_interfaces.Log]
	name string
	busy atomic.Int32 // publishes in progress (see Handle)
}

// rosoutHandler passes records to the console handler and publishes them.
type rosoutHandler struct {
	inner slog.Handler
	sink  *rosoutSink
	attrs string
}

func (h *rosoutHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *rosoutHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.inner.Handle(ctx, r)
	// A record logged while this goroutine publishes one (the transport
	// logging through this node) goes to the console only: publishing it
	// would recurse. Other goroutines' records are published.
	if h.sink.busy.Load() > 0 && onStack(rosoutPublishName) {
		return err
	}
	h.sink.busy.Add(1)
	defer h.sink.busy.Add(-1)
	h.sink.publish(r, h.attrs)
	return err
}

var rosoutPublishName = runtime.FuncForPC(reflect.ValueOf((*rosoutSink).publish).Pointer()).Name()

// onStack reports whether function name has a frame on the calling
// goroutine's stack (asked only while some publish is in progress).
func onStack(name string) bool {
	var pcs [64]uintptr
	for skip := 2; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			if f.Function == name {
				return true
			}
			if !more {
				break
			}
		}
		if n < len(pcs) {
			return false
		}
	}
}

func (h *rosoutHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	for _, a := range as {
		if a.Key != "logger" {
			c.attrs += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		}
	}
	return &c
}

func (h *rosoutHandler) WithGroup(g string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(g)
	return &c
}

// rosoutLevel maps a slog level to rcl_interfaces/Log's.
func rosoutLevel(l slog.Level) uint8 {
	switch {
	case l >= LevelFatal:
		return rcl_interfaces.Log_FATAL
	case l >= LevelError:
		return rcl_interfaces.Log_ERROR
	case l >= LevelWarn:
		return rcl_interfaces.Log_WARN
	case l >= LevelInfo:
		return rcl_interfaces.Log_INFO
	}
	return rcl_interfaces.Log_DEBUG
}

// publish sends one record on /rosout.
//
//go:noinline
func (s *rosoutSink) publish(r slog.Record, attrs string) {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(attrs)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	m := rcl_interfaces.Log{Level: rosoutLevel(r.Level), Name: s.name, Msg: b.String()}
	if !r.Time.IsZero() {
		m.Stamp = builtin_interfaces.Time{Sec: int32(r.Time.Unix()), Nanosec: uint32(r.Time.Nanosecond())}
	}
	if r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		m.File, m.Function, m.Line = f.File, f.Function, uint32(f.Line)
	}
	_ = s.pub.Publish(&m) // a closed node: nothing to do
}
