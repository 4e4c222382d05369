package nros

import (
	"github.com/nros-go/nros/rmw"
)

// QoS is a ROS 2 quality-of-service profile. The zero value means "system
// default" for every policy (reliable, volatile, keep last 1).
type QoS = rmw.QoS

// QoS policy values (see rmw for their meaning).
const (
	ReliabilityReliable   = rmw.Reliable
	ReliabilityBestEffort = rmw.BestEffort
	DurabilityVolatile    = rmw.Volatile
	DurabilityTransient   = rmw.TransientLocal
	HistoryKeepLast       = rmw.KeepLast
	HistoryKeepAll        = rmw.KeepAll
)

// ClockQoS is the profile of /clock: best effort, keep last 1, volatile. A
// late subscriber wants the next sample, not the simulation's history.
func ClockQoS() QoS {
	return QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}
}

// DefaultQoS is the ROS 2 default profile: reliable, volatile, keep last 10.
func DefaultQoS() QoS {
	return QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
}

// SensorDataQoS is rclcpp's sensor-data profile: best effort, volatile,
// keep last 5.
func SensorDataQoS() QoS {
	return QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 5}
}

// KeepLast returns the default profile with the given depth.
func KeepLast(depth int) QoS {
	q := DefaultQoS()
	q.Depth = depth
	return q
}

// TransientLocalQoS returns a reliable, transient-local, keep-last profile:
// late joiners receive the last depth samples.
func TransientLocalQoS(depth int) QoS {
	return QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: depth}
}

// keepAllCap bounds a keep-all subscription queue, so that a callback that
// stalls cannot make memory grow without limit; samples beyond it are
// dropped and counted.
const keepAllCap = 100_000
