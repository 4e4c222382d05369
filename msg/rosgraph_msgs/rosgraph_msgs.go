// Package rosgraph_msgs holds rosgraph_msgs/msg/Clock, the message carried
// on /clock by simulators and `ros2 bag play --clock`.
package rosgraph_msgs

import (
	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
)

// Clock is rosgraph_msgs/msg/Clock: the current simulated time.
type Clock struct {
	Clock builtin_interfaces.Time
}

// TypeName returns "rosgraph_msgs/msg/Clock".
func (*Clock) TypeName() string { return "rosgraph_msgs/msg/Clock" }

// MarshalCDR writes the nested Time (8 bytes).
func (c *Clock) MarshalCDR(e *cdr.Encoder) { c.Clock.MarshalCDR(e) }

// UnmarshalCDR reads the nested Time.
func (c *Clock) UnmarshalCDR(d *cdr.Decoder) error { return c.Clock.UnmarshalCDR(d) }

// YAMLFields lists clock.
func (c *Clock) YAMLFields() []msg.Field { return []msg.Field{{Name: "clock", Value: &c.Clock}} }

func init() {
	msg.Register("rosgraph_msgs/msg/Clock", func() msg.Message { return new(Clock) })
}
