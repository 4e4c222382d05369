// Package msg defines what a ROS message type is in nros-go and how it is
// serialized on the wire (XCDR1, with the 4-byte encapsulation header).
//
// Message types live in subpackages named after their ROS package
// (msg/std_msgs, msg/rosgraph_msgs, ...).
package msg

import "github.com/nros-go/nros/cdr"

// Message is implemented by pointers to ROS message structs.
type Message interface {
	// TypeName is the ROS type name, e.g. "std_msgs/msg/String".
	TypeName() string
	// MarshalCDR appends the message body (without encapsulation header).
	MarshalCDR(e *cdr.Encoder)
	// UnmarshalCDR reads the message body. It must return an error, never
	// panic, on truncated or malformed input.
	UnmarshalCDR(d *cdr.Decoder) error
}
