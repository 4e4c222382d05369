// Package nros_bench holds the message of the ping-pong benchmark shared
// with the reference peers (DDS type nros_bench::msg::dds_::Payload_).
package nros_bench

import (
	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
)

// Payload is nros_bench/msg/Payload {int64 stamp_ns; uint8[] data}.
type Payload struct {
	StampNs int64
	Data    []byte
}

// TypeName returns "nros_bench/msg/Payload".
func (*Payload) TypeName() string { return "nros_bench/msg/Payload" }

// MarshalCDR writes stamp_ns (8-aligned) then the octet sequence.
func (p *Payload) MarshalCDR(e *cdr.Encoder) {
	e.WriteInt64(p.StampNs)
	e.WriteOctets(p.Data)
}

// UnmarshalCDR reads stamp_ns and data, reusing Data's storage when it is
// large enough.
func (p *Payload) UnmarshalCDR(d *cdr.Decoder) error {
	p.StampNs = d.ReadInt64()
	p.Data = d.ReadOctets(p.Data)
	return d.Err()
}

// YAMLFields lists stamp_ns and data.
func (p *Payload) YAMLFields() []msg.Field {
	return []msg.Field{{Name: "stamp_ns", Value: p.StampNs}, {Name: "data", Value: p.Data}}
}

func init() {
	msg.Register("nros_bench/msg/Payload", func() msg.Message { return new(Payload) })
}
