package rtps

import (
	"strings"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
)

// The ros_discovery_info Gid is char[24] on Humble and older and char[16]
// from Iron on, and the two layouts do not interoperate. The layout a
// Transport writes comes from Config.GidSize when set, else from
// ROS_DISTRO (ConfigFromEnv), else it is learned: the transport starts
// with Jazzy's (the current LTS) and adopts the layout of the first peer
// sample that parses in one layout only (and republishes its own). Both
// layouts are always read. The graph is kept in the current layout
// (package rmw_dds_common); package rmw_dds_common/humble encodes and
// decodes the Humble one.

// GidSizeForDistro returns the ros_discovery_info Gid layout of a ROS 2
// distribution (ROS_DISTRO): rmw_dds_common.GidSizeHumble for Humble and
// older, GidSizeJazzy for Iron and later, 0 for "" or a name it does not
// know.
func GidSizeForDistro(distro string) int {
	switch strings.ToLower(strings.TrimSpace(distro)) {
	case "ardent", "bouncy", "crystal", "dashing", "eloquent", "foxy", "galactic", "humble":
		return rmw_dds_common.GidSizeHumble
	case "iron", "jazzy", "kilted", "lyrical", "rolling":
		return rmw_dds_common.GidSizeJazzy
	}
	return 0
}

func otherGidSize(size int) int {
	if size == rmw_dds_common.GidSizeJazzy {
		return rmw_dds_common.GidSizeHumble
	}
	return rmw_dds_common.GidSizeJazzy
}

// marshalGraph encodes info (with the encapsulation header) in the layout
// size: Jazzy's for GidSizeJazzy, else Humble's.
func marshalGraph(info *rmw_dds_common.ParticipantEntitiesInfo, size int) []byte {
	if size == rmw_dds_common.GidSizeJazzy {
		return msg.Marshal(info, true, nil)
	}
	return msg.Marshal(humble.FromCurrent(info), true, nil)
}

// decodeGraph decodes a ros_discovery_info sample, in layout size first,
// then in the other. only is the layout when exactly one parses (0 when
// both or neither do); info is nil when neither does.
func decodeGraph(data []byte, size int) (info *rmw_dds_common.ParticipantEntitiesInfo, only int) {
	var ok [2]*rmw_dds_common.ParticipantEntitiesInfo
	for i, s := range [2]int{size, otherGidSize(size)} {
		ok[i] = decodeGraphLayout(data, s)
	}
	switch {
	case ok[0] != nil && ok[1] == nil:
		return ok[0], size
	case ok[0] == nil && ok[1] != nil:
		return ok[1], otherGidSize(size)
	case ok[0] != nil:
		return ok[0], 0
	}
	return nil, 0
}

// decodeGraphLayout decodes a sample in the layout size, strictly: the
// sample must end with the message (up to the padding to 4), since a
// Humble sample also reads as a Jazzy one with no nodes and bytes left
// over. It returns nil when the sample does not parse so.
func decodeGraphLayout(data []byte, size int) *rmw_dds_common.ParticipantEntitiesInfo {
	d, err := cdr.NewDecoder(data)
	if err != nil {
		return nil
	}
	whole := func(m msg.Message) bool { return m.UnmarshalCDR(d) == nil && d.Err() == nil && d.Remaining() < 4 }
	switch size {
	case rmw_dds_common.GidSizeHumble:
		if h := new(humble.ParticipantEntitiesInfo); whole(h) {
			return h.ToCurrent()
		}
	case rmw_dds_common.GidSizeJazzy:
		if m := new(rmw_dds_common.ParticipantEntitiesInfo); whole(m) {
			return m
		}
	}
	return nil
}

// learnGidSizeLocked adopts a peer's layout while the layout is not
// pinned (t.mu held).
func (t *Transport) learnGidSizeLocked(only int) {
	if !t.gidLearn || only == 0 {
		return
	}
	t.gidLearn = false
	if only != t.cfg.GidSize {
		t.cfg.Logf("rtps: ros_discovery_info: a peer uses %d-byte gids: switching to its layout", only)
		t.cfg.GidSize = only
		t.graphDirty = true
		t.kickNeeded = true
	}
}
