package rmw_dds_common

// Hand-written helpers next to the generated types of this package.

// Wire sizes of a Gid. They name the layout of ros_discovery_info (see
// rtps.Config.GidSize): this package is the 16-byte layout, package
// rmw_dds_common/humble the 24-byte one.
const (
	GidSizeHumble = 24 // char[24]: Humble and older
	GidSizeJazzy  = 16 // char[16]: Iron, Jazzy and later
)

// NodeNameMaxLen is the bound of node_namespace and node_name (string<=256).
const NodeNameMaxLen = 256

// The generated Gid has the Jazzy size.
var _ [GidSizeJazzy]byte = Gid{}.Data

// GidFromGUID returns the Gid of a 16-byte DDS GUID (12-byte prefix and
// 4-byte entity id, network order).
func GidFromGUID(guid [16]byte) Gid { return Gid{Data: guid} }

// GUID returns the DDS GUID the Gid holds.
func (g *Gid) GUID() [16]byte { return g.Data }
