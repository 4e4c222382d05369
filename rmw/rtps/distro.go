package rtps

import (
	"strings"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg/rmw_dds_common"
)

// The ros_discovery_info Gid is char[24] on Humble and older and uint8[16]
// from Iron on, and the two layouts do not interoperate. The layout a
// Transport writes comes from Config.GidSize when set, else from
// ROS_DISTRO (ConfigFromEnv), else it is learned: the transport starts
// with Jazzy's (the current LTS) and adopts the layout of the first peer
// sample that parses in one layout only (and republishes its own). Both
// layouts are always read.

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

// decodeGraph decodes a ros_discovery_info sample, in layout size first,
// then in the other. only is the layout when exactly one parses (0 when
// both or neither do); info is nil when neither does.
func decodeGraph(data []byte, size int) (info *rmw_dds_common.ParticipantEntitiesInfo, only int) {
	var ok [2]*rmw_dds_common.ParticipantEntitiesInfo
	for i, s := range [2]int{size, otherGidSize(size)} {
		m := &rmw_dds_common.ParticipantEntitiesInfo{GidSize: s}
		// Strictly: the sample must end with the message (up to the
		// padding to 4): a Humble sample also reads as a Jazzy one with
		// no nodes, and bytes left over.
		d, err := cdr.NewDecoder(data)
		if err == nil && m.UnmarshalCDR(d) == nil && d.Err() == nil && d.Remaining() < 4 {
			ok[i] = m
		}
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
