// Package std_msgs holds the std_msgs messages nros-go uses: Header, String
// and Empty.
package std_msgs

import (
	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
)

// Header is std_msgs/msg/Header: a timestamp and a coordinate frame id.
type Header struct {
	Stamp   builtin_interfaces.Time
	FrameID string
}

// TypeName returns "std_msgs/msg/Header".
func (*Header) TypeName() string { return "std_msgs/msg/Header" }

// MarshalCDR writes stamp then frame_id.
func (h *Header) MarshalCDR(e *cdr.Encoder) {
	h.Stamp.MarshalCDR(e)
	e.WriteString(h.FrameID)
}

// UnmarshalCDR reads stamp then frame_id.
func (h *Header) UnmarshalCDR(d *cdr.Decoder) error {
	h.Stamp.UnmarshalCDR(d)
	h.FrameID = d.ReadString()
	return d.Err()
}

// YAMLFields lists stamp and frame_id.
func (h *Header) YAMLFields() []msg.Field {
	return []msg.Field{{Name: "stamp", Value: &h.Stamp}, {Name: "frame_id", Value: h.FrameID}}
}

// String is std_msgs/msg/String.
type String struct {
	Data string
}

// TypeName returns "std_msgs/msg/String".
func (*String) TypeName() string { return "std_msgs/msg/String" }

// MarshalCDR writes data.
func (s *String) MarshalCDR(e *cdr.Encoder) { e.WriteString(s.Data) }

// UnmarshalCDR reads data.
func (s *String) UnmarshalCDR(d *cdr.Decoder) error {
	s.Data = d.ReadString()
	return d.Err()
}

// YAMLFields lists data.
func (s *String) YAMLFields() []msg.Field { return []msg.Field{{Name: "data", Value: s.Data}} }

// Empty is std_msgs/msg/Empty. On the wire it is the single byte of the
// placeholder member structure_needs_at_least_one_member (written 0, any
// value accepted on read).
type Empty struct{}

// TypeName returns "std_msgs/msg/Empty".
func (*Empty) TypeName() string { return "std_msgs/msg/Empty" }

// MarshalCDR writes the one placeholder byte.
func (*Empty) MarshalCDR(e *cdr.Encoder) { e.WriteUint8(0) }

// UnmarshalCDR reads the placeholder byte.
func (*Empty) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadUint8()
	return d.Err()
}

// YAMLFields lists no fields (rendered "{}").
func (*Empty) YAMLFields() []msg.Field { return nil }

func init() {
	msg.Register("std_msgs/msg/Header", func() msg.Message { return new(Header) })
	msg.Register("std_msgs/msg/String", func() msg.Message { return new(String) })
	msg.Register("std_msgs/msg/Empty", func() msg.Message { return new(Empty) })
}
