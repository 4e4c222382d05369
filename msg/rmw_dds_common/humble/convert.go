package humble

// Hand-written helpers next to the generated types of this package.

import "github.com/nros-go/nros/msg/rmw_dds_common"

// The generated Gid has the Humble size.
var _ [rmw_dds_common.GidSizeHumble]byte = Gid{}.Data

// GidFromGUID returns the Gid of a 16-byte DDS GUID: the GUID followed by
// 8 zero bytes, as Humble's rmws fill it.
func GidFromGUID(guid [16]byte) Gid {
	var g Gid
	copy(g.Data[:], guid[:])
	return g
}

// GUID returns the DDS GUID the Gid holds (its first 16 bytes).
func (g *Gid) GUID() [16]byte { return [16]byte(g.Data[:16]) }

// FromCurrent returns info in the Humble layout: the same nodes, each Gid
// padded with 8 zero bytes.
func FromCurrent(info *rmw_dds_common.ParticipantEntitiesInfo) *ParticipantEntitiesInfo {
	out := &ParticipantEntitiesInfo{Gid: GidFromGUID(info.Gid.GUID())}
	if info.NodeEntitiesInfoSeq != nil {
		out.NodeEntitiesInfoSeq = make([]NodeEntitiesInfo, len(info.NodeEntitiesInfoSeq))
	}
	for i, n := range info.NodeEntitiesInfoSeq {
		out.NodeEntitiesInfoSeq[i] = NodeEntitiesInfo{NodeNamespace: n.NodeNamespace, NodeName: n.NodeName,
			ReaderGidSeq: fromCurrent(n.ReaderGidSeq), WriterGidSeq: fromCurrent(n.WriterGidSeq)}
	}
	return out
}

// ToCurrent returns p in the current layout: the same nodes, each Gid cut
// to the GUID (its padding dropped).
func (p *ParticipantEntitiesInfo) ToCurrent() *rmw_dds_common.ParticipantEntitiesInfo {
	out := &rmw_dds_common.ParticipantEntitiesInfo{Gid: rmw_dds_common.GidFromGUID(p.Gid.GUID())}
	if p.NodeEntitiesInfoSeq != nil {
		out.NodeEntitiesInfoSeq = make([]rmw_dds_common.NodeEntitiesInfo, len(p.NodeEntitiesInfoSeq))
	}
	for i, n := range p.NodeEntitiesInfoSeq {
		out.NodeEntitiesInfoSeq[i] = rmw_dds_common.NodeEntitiesInfo{NodeNamespace: n.NodeNamespace, NodeName: n.NodeName,
			ReaderGidSeq: toCurrent(n.ReaderGidSeq), WriterGidSeq: toCurrent(n.WriterGidSeq)}
	}
	return out
}

func fromCurrent(gids []rmw_dds_common.Gid) []Gid {
	if gids == nil {
		return nil
	}
	out := make([]Gid, len(gids))
	for i := range gids {
		out[i] = GidFromGUID(gids[i].GUID())
	}
	return out
}

func toCurrent(gids []Gid) []rmw_dds_common.Gid {
	if gids == nil {
		return nil
	}
	out := make([]rmw_dds_common.Gid, len(gids))
	for i := range gids {
		out[i] = rmw_dds_common.GidFromGUID(gids[i].GUID())
	}
	return out
}
