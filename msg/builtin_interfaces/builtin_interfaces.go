// Package builtin_interfaces holds the ROS 2 builtin_interfaces messages
// Time and Duration. They are plain wire structs: time arithmetic and ROS
// time semantics live in the root nros package (nros.Time, nros.Duration).
package builtin_interfaces

import (
	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
)

// Time is builtin_interfaces/msg/Time: seconds and nanoseconds since an
// epoch (for ROS time, the simulation's or the UNIX epoch).
type Time struct {
	Sec     int32
	Nanosec uint32
}

// TypeName returns "builtin_interfaces/msg/Time".
func (*Time) TypeName() string { return "builtin_interfaces/msg/Time" }

// MarshalCDR writes sec (int32) then nanosec (uint32).
func (t *Time) MarshalCDR(e *cdr.Encoder) {
	e.WriteInt32(t.Sec)
	e.WriteUint32(t.Nanosec)
}

// UnmarshalCDR reads sec and nanosec.
func (t *Time) UnmarshalCDR(d *cdr.Decoder) error {
	t.Sec = d.ReadInt32()
	t.Nanosec = d.ReadUint32()
	return d.Err()
}

// YAMLFields lists sec and nanosec.
func (t *Time) YAMLFields() []msg.Field {
	return []msg.Field{{Name: "sec", Value: t.Sec}, {Name: "nanosec", Value: t.Nanosec}}
}

// Duration is builtin_interfaces/msg/Duration.
type Duration struct {
	Sec     int32
	Nanosec uint32
}

// TypeName returns "builtin_interfaces/msg/Duration".
func (*Duration) TypeName() string { return "builtin_interfaces/msg/Duration" }

// MarshalCDR writes sec (int32) then nanosec (uint32).
func (t *Duration) MarshalCDR(e *cdr.Encoder) {
	e.WriteInt32(t.Sec)
	e.WriteUint32(t.Nanosec)
}

// UnmarshalCDR reads sec and nanosec.
func (t *Duration) UnmarshalCDR(d *cdr.Decoder) error {
	t.Sec = d.ReadInt32()
	t.Nanosec = d.ReadUint32()
	return d.Err()
}

// YAMLFields lists sec and nanosec.
func (t *Duration) YAMLFields() []msg.Field {
	return []msg.Field{{Name: "sec", Value: t.Sec}, {Name: "nanosec", Value: t.Nanosec}}
}

func init() {
	msg.Register("builtin_interfaces/msg/Time", func() msg.Message { return new(Time) })
	msg.Register("builtin_interfaces/msg/Duration", func() msg.Message { return new(Duration) })
}
