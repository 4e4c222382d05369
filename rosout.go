package nros

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"

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

	mu         sync.Mutex
	publishing bool           // a goroutine is publishing (see Handle)
	depth      int            // the level of the record it publishes
	queue      []rosoutRecord // what it publishes next
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

// Handle writes r to the console and publishes it. One goroutine publishes
// at a time: a record logged while a publish is in progress (by another
// goroutine, or by the publish itself: the transport logging through this
// node, a subscriber of /rosout logging from its deliver) is queued, and
// the publishing goroutine publishes it next. A record queued while a
// queued one is published is one level deeper; past maxRosoutDepth
// levels, or maxRosoutQueue queued records, it goes to the console only:
// a logger that logs on every publish cannot recurse for ever.
func (h *rosoutHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.inner.Handle(ctx, r)
	s := h.sink
	s.mu.Lock()
	if s.publishing {
		if s.depth < maxRosoutDepth && len(s.queue) < maxRosoutQueue {
			s.queue = append(s.queue, rosoutRecord{r: r.Clone(), attrs: h.attrs, depth: s.depth + 1})
		}
		s.mu.Unlock()
		return err
	}
	s.publishing, s.depth = true, 0
	s.mu.Unlock()
	s.publish(r, h.attrs)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.publishing, s.depth = false, 0
			s.mu.Unlock()
			return err
		}
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.depth = q.depth
		s.mu.Unlock()
		s.publish(q.r, q.attrs)
	}
}

// Bounds of the records queued behind a /rosout publish (see Handle).
const (
	maxRosoutDepth = 8
	maxRosoutQueue = 1024
)

// rosoutRecord is a record waiting for the publish in progress.
type rosoutRecord struct {
	r     slog.Record
	attrs string
	depth int
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
