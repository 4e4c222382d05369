// Package rmw_dds_common holds the messages of the ROS 2 graph topic
// ros_discovery_info (DDS type
// rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_), which tells other
// participants which nodes live in a DDS participant and which readers and
// writers each node owns.
//
// The Gid layout differs between distros and the two do not interoperate:
// Humble sends char[24] (the 16-byte GUID followed by 8 zero bytes), Jazzy
// uint8[16]. The GidSize field of the messages below selects the layout.
package rmw_dds_common

import (
	"fmt"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
)

// Wire sizes of a Gid.
const (
	GidSizeHumble = 24 // char[24]: Humble (the default)
	GidSizeJazzy  = 16 // uint8[16]: Jazzy and later
)

// NodeNameMaxLen is the bound of node_namespace and node_name (string<=256).
const NodeNameMaxLen = 256

// Gid is rmw_dds_common/msg/Gid: a DDS GUID (12-byte prefix and 4-byte
// entity id, network order) padded with zeros. As a standalone message it
// uses the Humble layout (24 bytes).
type Gid struct {
	Data [GidSizeHumble]byte
}

// GidFromGUID returns the Gid of a 16-byte DDS GUID.
func GidFromGUID(guid [16]byte) Gid {
	var g Gid
	copy(g.Data[:], guid[:])
	return g
}

// GUID returns the first 16 bytes of the Gid.
func (g *Gid) GUID() [16]byte {
	var u [16]byte
	copy(u[:], g.Data[:16])
	return u
}

// TypeName returns "rmw_dds_common/msg/Gid".
func (*Gid) TypeName() string { return "rmw_dds_common/msg/Gid" }

// MarshalCDR writes the 24-byte Humble layout.
func (g *Gid) MarshalCDR(e *cdr.Encoder) { g.marshal(e, GidSizeHumble) }

// UnmarshalCDR reads the 24-byte Humble layout.
func (g *Gid) UnmarshalCDR(d *cdr.Decoder) error {
	g.unmarshal(d, GidSizeHumble)
	return d.Err()
}

func (g *Gid) marshal(e *cdr.Encoder, size int) { e.WriteOctetArray(g.Data[:size]) }

func (g *Gid) unmarshal(d *cdr.Decoder, size int) {
	*g = Gid{}
	d.ReadOctetArray(g.Data[:size])
}

// YAMLFields lists data.
func (g *Gid) YAMLFields() []msg.Field { return []msg.Field{{Name: "data", Value: g.Data[:]}} }

// NodeEntitiesInfo is rmw_dds_common/msg/NodeEntitiesInfo: one node and the
// GIDs of the DDS readers and writers it owns.
type NodeEntitiesInfo struct {
	NodeNamespace string // e.g. "/"; at most 256 bytes
	NodeName      string // e.g. "talker"; at most 256 bytes
	ReaderGidSeq  []Gid
	WriterGidSeq  []Gid
	// GidSize selects the wire layout when this message is (un)marshaled on
	// its own: 0 or GidSizeHumble, or GidSizeJazzy. Not on the wire.
	GidSize int
}

// TypeName returns "rmw_dds_common/msg/NodeEntitiesInfo".
func (*NodeEntitiesInfo) TypeName() string { return "rmw_dds_common/msg/NodeEntitiesInfo" }

// MarshalCDR writes the node with n.GidSize-byte gids.
func (n *NodeEntitiesInfo) MarshalCDR(e *cdr.Encoder) { n.marshal(e, gidSize(n.GidSize)) }

// UnmarshalCDR reads the node with n.GidSize-byte gids.
func (n *NodeEntitiesInfo) UnmarshalCDR(d *cdr.Decoder) error {
	if n.GidSize != 0 && !validGidSize(n.GidSize) {
		d.Fail("NodeEntitiesInfo", fmt.Sprintf("unsupported GidSize %d", n.GidSize))
		return d.Err()
	}
	n.unmarshal(d, gidSize(n.GidSize))
	return d.Err()
}

func (n *NodeEntitiesInfo) marshal(e *cdr.Encoder, size int) {
	e.WriteString(n.NodeNamespace)
	e.WriteString(n.NodeName)
	writeGids(e, n.ReaderGidSeq, size)
	writeGids(e, n.WriterGidSeq, size)
}

func (n *NodeEntitiesInfo) unmarshal(d *cdr.Decoder, size int) {
	n.NodeNamespace = d.ReadBoundedString(NodeNameMaxLen)
	n.NodeName = d.ReadBoundedString(NodeNameMaxLen)
	n.ReaderGidSeq = readGids(d, n.ReaderGidSeq, size)
	n.WriterGidSeq = readGids(d, n.WriterGidSeq, size)
	n.GidSize = size
}

// YAMLFields lists the four message fields.
func (n *NodeEntitiesInfo) YAMLFields() []msg.Field {
	return []msg.Field{
		{Name: "node_namespace", Value: n.NodeNamespace},
		{Name: "node_name", Value: n.NodeName},
		{Name: "reader_gid_seq", Value: n.ReaderGidSeq},
		{Name: "writer_gid_seq", Value: n.WriterGidSeq},
	}
}

// ParticipantEntitiesInfo is rmw_dds_common/msg/ParticipantEntitiesInfo, the
// sample on ros_discovery_info: a participant's GID and its nodes.
type ParticipantEntitiesInfo struct {
	Gid                 Gid
	NodeEntitiesInfoSeq []NodeEntitiesInfo
	// GidSize selects the layout: GidSizeHumble or GidSizeJazzy. Marshal
	// treats 0 as Humble. Unmarshal with 0 detects the layout (the one that
	// consumes the sample up to at most 3 padding bytes, Humble first) and
	// stores it here. Detection is a heuristic: a Jazzy sample with no
	// nodes is 20 bytes, the same as the first 20 bytes of any Humble
	// sample, so a receiver that knows the peer's distro (Jazzy endpoints
	// announce typehash= in USER_DATA, Humble ones do not) should set it.
	GidSize int
}

// TypeName returns "rmw_dds_common/msg/ParticipantEntitiesInfo".
func (*ParticipantEntitiesInfo) TypeName() string {
	return "rmw_dds_common/msg/ParticipantEntitiesInfo"
}

// MarshalCDR writes the participant in the layout of p.GidSize.
func (p *ParticipantEntitiesInfo) MarshalCDR(e *cdr.Encoder) {
	size := gidSize(p.GidSize)
	p.Gid.marshal(e, size)
	e.WriteSequenceLen(len(p.NodeEntitiesInfoSeq))
	for i := range p.NodeEntitiesInfoSeq {
		p.NodeEntitiesInfoSeq[i].marshal(e, size)
	}
}

// UnmarshalCDR reads the participant; see GidSize for layout detection.
func (p *ParticipantEntitiesInfo) UnmarshalCDR(d *cdr.Decoder) error {
	if p.GidSize != 0 {
		if !validGidSize(p.GidSize) {
			d.Fail("ParticipantEntitiesInfo", fmt.Sprintf("unsupported GidSize %d", p.GidSize))
			return d.Err()
		}
		p.unmarshal(d, p.GidSize)
		return d.Err()
	}
	start, storage := *d, p.NodeEntitiesInfoSeq
	p.unmarshal(d, GidSizeHumble)
	humbleErr, humbleRest := d.Err(), d.Remaining()
	if humbleErr == nil && humbleRest <= 3 {
		p.GidSize = GidSizeHumble
		return nil
	}
	*d, p.NodeEntitiesInfoSeq = start, storage
	p.unmarshal(d, GidSizeJazzy)
	if d.Err() == nil && d.Remaining() <= 3 {
		p.GidSize = GidSizeJazzy
		return nil
	}
	// Neither layout fits exactly: report Humble's result (its error, or
	// its decoding with trailing bytes).
	*d, p.NodeEntitiesInfoSeq = start, storage
	p.unmarshal(d, GidSizeHumble)
	if d.Err() == nil {
		p.GidSize = GidSizeHumble
	}
	return d.Err()
}

func (p *ParticipantEntitiesInfo) unmarshal(d *cdr.Decoder, size int) {
	p.Gid.unmarshal(d, size)
	p.NodeEntitiesInfoSeq = cdr.ReadSequenceFunc(d, p.NodeEntitiesInfoSeq[:0], 16,
		func(d *cdr.Decoder, n *NodeEntitiesInfo) { n.unmarshal(d, size) })
}

// YAMLFields lists gid and node_entities_info_seq.
func (p *ParticipantEntitiesInfo) YAMLFields() []msg.Field {
	return []msg.Field{
		{Name: "gid", Value: &p.Gid},
		{Name: "node_entities_info_seq", Value: p.NodeEntitiesInfoSeq},
	}
}

// gidSize maps the GidSize field to a wire size: 16 for Jazzy, 24 for 0
// (the default) and anything else (unmarshal rejects other values first).
func gidSize(s int) int {
	if s == GidSizeJazzy {
		return GidSizeJazzy
	}
	return GidSizeHumble
}

func validGidSize(s int) bool { return s == GidSizeHumble || s == GidSizeJazzy }

func writeGids(e *cdr.Encoder, gids []Gid, size int) {
	e.WriteSequenceLen(len(gids))
	for i := range gids {
		gids[i].marshal(e, size)
	}
}

func readGids(d *cdr.Decoder, dst []Gid, size int) []Gid {
	return cdr.ReadSequenceFunc(d, dst[:0], size, func(d *cdr.Decoder, g *Gid) { g.unmarshal(d, size) })
}

func init() {
	msg.Register("rmw_dds_common/msg/Gid", func() msg.Message { return new(Gid) })
	msg.Register("rmw_dds_common/msg/NodeEntitiesInfo", func() msg.Message { return new(NodeEntitiesInfo) })
	msg.Register("rmw_dds_common/msg/ParticipantEntitiesInfo", func() msg.Message { return new(ParticipantEntitiesInfo) })
}
