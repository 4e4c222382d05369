package discovery

import (
	"math"
	"slices"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Policy names reported for matching failures that are not QoS policies of
// rmw.Incompatibility.
const (
	PolicyType             = rmw.PolicyType        // type names differ
	PolicyTopicKind        = "TOPIC_KIND"          // keyed vs keyless entity kinds
	PolicyOwnership        = "OWNERSHIP"           // ownership kinds differ
	PolicyDestinationOrder = "DESTINATION_ORDER"   // reader BY_SOURCE, writer BY_RECEPTION
	PolicyPresentation     = "PRESENTATION"        // reader asks for more
	PolicyPartition        = "PARTITION"           // no common partition
	PolicyDataRep          = "DATA_REPRESENTATION" // writer's first id not accepted
)

// SetQoS writes the policies of q (normalized) into e, a writer's or a
// reader's SEDP data, as rmw_cyclonedds and rmw_fastrtps map a ROS QoS
// profile: reliability (max_blocking_time 100 ms), durability, history,
// deadline, lifespan (writers) and liveliness. Zero durations are infinite.
func SetQoS(e *wire.EndpointData, q rmw.QoS, writer bool) {
	q = q.Normalize()
	e.Reliability = wire.Reliability{Kind: wire.ReliabilityReliable, MaxBlockingTime: wire.DurationFromTime(100 * time.Millisecond)}
	if q.Reliability == rmw.BestEffort {
		e.Reliability.Kind = wire.ReliabilityBestEffort
	}
	e.Durability = wire.DurabilityVolatile
	if q.Durability == rmw.TransientLocal {
		e.Durability = wire.DurabilityTransientLocal
	}
	e.History = wire.History{Kind: wire.HistoryKeepLast, Depth: int32(min(q.Depth, math.MaxInt32))}
	if q.History == rmw.KeepAll {
		e.History = wire.History{Kind: wire.HistoryKeepAll, Depth: 1}
	}
	e.Deadline = durationOrInfinite(q.Deadline)
	if writer {
		e.Lifespan = durationOrInfinite(q.Lifespan)
	}
	e.Liveliness = wire.Liveliness{Kind: wire.LivelinessAutomatic, LeaseDuration: durationOrInfinite(q.LivelinessLeaseDuration)}
	if q.Liveliness == rmw.LivelinessManualByTopic {
		e.Liveliness.Kind = wire.LivelinessManualByTopic
	}
}

func durationOrInfinite(d time.Duration) wire.Duration {
	if d <= 0 {
		return wire.DurationInfinite
	}
	return wire.DurationFromTime(d)
}

func stdOrZero(d wire.Duration) time.Duration {
	if d.IsInfinite() {
		return 0
	}
	return d.Std()
}

// QoSOf returns the rmw view of an endpoint's SEDP policies (infinite
// durations become 0). rmw has no manual-by-participant liveliness: any
// manual kind is reported as rmw.LivelinessManualByTopic (Incompatible
// reads the wire kinds themselves).
func QoSOf(e *wire.EndpointData) rmw.QoS {
	q := rmw.QoS{
		Reliability:             rmw.Reliable,
		Durability:              rmw.Volatile,
		History:                 rmw.KeepLast,
		Depth:                   int(e.History.Depth),
		Deadline:                stdOrZero(e.Deadline),
		Lifespan:                stdOrZero(e.Lifespan),
		Liveliness:              rmw.LivelinessAutomatic,
		LivelinessLeaseDuration: stdOrZero(e.Liveliness.LeaseDuration),
	}
	if e.Reliability.Kind == wire.ReliabilityBestEffort {
		q.Reliability = rmw.BestEffort
	}
	if e.Durability >= wire.DurabilityTransientLocal {
		q.Durability = rmw.TransientLocal
	}
	if e.History.Kind == wire.HistoryKeepAll {
		q.History = rmw.KeepAll
		q.Depth = 0
	}
	if e.Liveliness.Kind != wire.LivelinessAutomatic {
		q.Liveliness = rmw.LivelinessManualByTopic
	}
	return q
}

// Incompatible applies the DDS requested-vs-offered rules (and the topic
// kind rule of Fast DDS) to a writer and a reader on the same topic name.
// It returns "" when they match, or the name of the first policy that
// prevents it: PolicyType, PolicyTopicKind, "RELIABILITY", "DURABILITY",
// "DEADLINE", "LIVELINESS", PolicyOwnership, PolicyDestinationOrder,
// PolicyPresentation, PolicyPartition or PolicyDataRep.
func Incompatible(w, r *wire.EndpointData) string {
	if w.TypeName != r.TypeName {
		return PolicyType
	}
	if w.EndpointGUID.Entity.HasKey() != r.EndpointGUID.Entity.HasKey() {
		return PolicyTopicKind
	}
	if w.Reliability.Kind == wire.ReliabilityBestEffort && r.Reliability.Kind == wire.ReliabilityReliable {
		return "RELIABILITY"
	}
	if w.Durability < r.Durability {
		return "DURABILITY"
	}
	if longer(w.Deadline, r.Deadline) {
		return "DEADLINE"
	}
	if w.Liveliness.Kind < r.Liveliness.Kind || longer(w.Liveliness.LeaseDuration, r.Liveliness.LeaseDuration) {
		return "LIVELINESS"
	}
	if w.Ownership != r.Ownership {
		return PolicyOwnership
	}
	if w.DestinationOrder < r.DestinationOrder {
		return PolicyDestinationOrder
	}
	if w.Presentation.AccessScope < r.Presentation.AccessScope ||
		(r.Presentation.CoherentAccess && !w.Presentation.CoherentAccess) ||
		(r.Presentation.OrderedAccess && !w.Presentation.OrderedAccess) {
		return PolicyPresentation
	}
	if !partitionsMatch(w.Partitions, r.Partitions) {
		return PolicyPartition
	}
	wrep := wire.DataRepresentationXCDR1
	if len(w.DataRepresentation) > 0 {
		wrep = w.DataRepresentation[0]
	}
	rreps := r.DataRepresentation
	if len(rreps) == 0 {
		rreps = []int16{wire.DataRepresentationXCDR1}
	}
	if !slices.Contains(rreps, wrep) {
		return PolicyDataRep
	}
	return ""
}

// longer reports whether wire duration a > b (infinite is the largest).
func longer(a, b wire.Duration) bool {
	if a.IsInfinite() {
		return !b.IsInfinite()
	}
	if b.IsInfinite() {
		return false
	}
	return a.Std() > b.Std()
}

// partitionsMatch: the empty partition list is the default partition "";
// exact names only (ROS uses none; wildcards are not supported).
func partitionsMatch(a, b []string) bool {
	if len(a) == 0 {
		a = []string{""}
	}
	if len(b) == 0 {
		b = []string{""}
	}
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
