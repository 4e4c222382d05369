// Package rmw defines the transport interface that nodes use to exchange
// serialized messages and to see the ROS graph. Two implementations exist:
// rmw/intra (in-process, the embedded default) and rmw/rtps (DDSI-RTPS over
// UDP, interoperable with Cyclone DDS and Fast DDS).
//
// Every transport implements the whole of Transport: topics, services
// (ServiceTransport) and the graph (Graph). The layers above use only these
// interfaces and never name a concrete transport; what a tool may want
// beyond them is an optional interface here (Discovering).
//
// The interface deals in serialized bytes only (XCDR1 with its 4-byte
// encapsulation header); typing is the job of the layers above.
package rmw

import (
	"errors"
	"fmt"
	"time"
)

// Reliability is the DDS reliability QoS policy.
type Reliability uint8

const (
	// ReliabilitySystemDefault lets the transport choose (Reliable).
	ReliabilitySystemDefault Reliability = iota
	Reliable
	BestEffort
)

// Durability is the DDS durability QoS policy.
type Durability uint8

const (
	// DurabilitySystemDefault lets the transport choose (Volatile).
	DurabilitySystemDefault Durability = iota
	Volatile
	TransientLocal
)

// History is the DDS history QoS policy.
type History uint8

const (
	// HistorySystemDefault lets the transport choose (KeepLast).
	HistorySystemDefault History = iota
	KeepLast
	KeepAll
)

// Liveliness is the DDS liveliness QoS kind.
type Liveliness uint8

const (
	LivelinessSystemDefault Liveliness = iota
	LivelinessAutomatic
	LivelinessManualByTopic
)

// QoS is a ROS 2 QoS profile. Zero durations mean "infinite" (the DDS
// default) for Deadline, Lifespan and LivelinessLeaseDuration.
type QoS struct {
	Reliability             Reliability
	Durability              Durability
	History                 History
	Depth                   int // for KeepLast; 0 means 1 would be nonsense, so layers above validate
	Deadline                time.Duration
	Lifespan                time.Duration
	Liveliness              Liveliness
	LivelinessLeaseDuration time.Duration
}

// Normalize replaces system defaults by the concrete policies ROS 2 uses
// (reliable, volatile, keep last, automatic liveliness) and a zero depth of a
// keep-last history by 1.
func (q QoS) Normalize() QoS {
	if q.Reliability == ReliabilitySystemDefault {
		q.Reliability = Reliable
	}
	if q.Durability == DurabilitySystemDefault {
		q.Durability = Volatile
	}
	if q.History == HistorySystemDefault {
		q.History = KeepLast
	}
	if q.Liveliness == LivelinessSystemDefault {
		q.Liveliness = LivelinessAutomatic
	}
	if q.History == KeepLast && q.Depth <= 0 {
		q.Depth = 1
	}
	return q
}

// Incompatibility names the QoS policy that prevents a writer and a reader
// from matching, or "" when they are compatible.
//
// The rules are the DDS request/offered rules: a best-effort writer cannot
// serve a reliable reader; a volatile writer cannot serve a transient-local
// reader; a writer's deadline must be no longer than the reader's; automatic
// liveliness cannot serve a manual-by-topic reader, and the writer's lease must
// be no longer than the reader's.
func Incompatibility(writer, reader QoS) string {
	w, r := writer.Normalize(), reader.Normalize()
	if w.Reliability == BestEffort && r.Reliability == Reliable {
		return "RELIABILITY"
	}
	if w.Durability == Volatile && r.Durability == TransientLocal {
		return "DURABILITY"
	}
	if longer(w.Deadline, r.Deadline) {
		return "DEADLINE"
	}
	if w.Liveliness < r.Liveliness {
		return "LIVELINESS"
	}
	if longer(w.LivelinessLeaseDuration, r.LivelinessLeaseDuration) {
		return "LIVELINESS"
	}
	return ""
}

// longer reports whether a > b where 0 means infinite.
func longer(a, b time.Duration) bool {
	if a == 0 {
		return b != 0
	}
	if b == 0 {
		return false
	}
	return a > b
}

// NodeInfo identifies the node that owns an endpoint (for the ROS graph).
type NodeInfo struct {
	Name      string // "talker"
	Namespace string // "/" or "/ns"
	Enclave   string // "/" by default
}

// Sample is one received message.
type Sample struct {
	// Data is the serialized message, starting with the 4-byte encapsulation
	// header. It is owned by the receiver of the callback only for the
	// duration of the call: copy it to keep it.
	Data []byte
	// SourceTimestamp is the writer's timestamp in ns since the UNIX epoch,
	// or 0 when the writer sent none.
	SourceTimestamp int64
	// PublisherGID identifies the writer (a DDS GUID, zero-padded).
	PublisherGID [16]byte
}

// Event reports something that happened to an endpoint outside the data flow.
type Event struct {
	Kind EventKind
	// Policy names the offending QoS policy for incompatible-QoS events.
	Policy string
	// Remote identifies the other endpoint, when known.
	Remote string
}

// EventKind enumerates endpoint events.
type EventKind uint8

const (
	EventMatched EventKind = iota + 1
	EventUnmatched
	EventIncompatibleQoS
	EventSampleLost
)

// PolicyType is the Event.Policy of an EventIncompatibleQoS event raised
// because the two endpoints name different types: not a QoS policy, but
// it prevents the match in the same way.
const PolicyType = "TYPE"

// EndpointOptions carries the optional parts of an endpoint request.
type EndpointOptions struct {
	// OnEvent, if set, is called (on a transport goroutine) for endpoint
	// events. It must not block.
	OnEvent func(Event)
	// TypeHash is the RIHS01 hash of the endpoint's type ("RIHS01_" and
	// 64 hex digits), or "" when the type has none (a hand-written type).
	// For a service endpoint it is the hash of the service type.
	TypeHash string
	// RequestTypeHash and ResponseTypeHash are, for service endpoints, the
	// hashes of the request and response message types.
	RequestTypeHash, ResponseTypeHash string
	// Feed asks for a subscription that a waiting goroutine may read
	// itself (see Feed): a socket of its own, for a best-effort reader. A
	// transport that cannot give one ignores it, and so does a reliable
	// reader (its acknowledgements belong to the transport's goroutines).
	Feed bool
}

// Feed is implemented by a Subscription made with EndpointOptions.Feed on
// a transport that gave it a socket of its own (the DDS transport on
// Linux). An executor whose ROS timers wait for /clock waits on the feed
// itself: the sample is read, installed and the timer it makes due run on
// one goroutine, with no hand-off to another thread on the way. Samples
// are delivered to the subscription's deliver function as usual, on the
// goroutine that reads them.
//
// While no goroutine holds the feed, or while one wants it (Want), the
// transport's own goroutine reads the socket as it reads any other.
type Feed interface {
	// Hold(1) tells the transport that a goroutine will wait on the feed
	// from now on (its own goroutine stops reading the socket, once a read
	// it has begun ends: that one's samples are delivered as usual);
	// Hold(-1) that it stopped.
	Hold(n int)
	// Want(1) tells that a goroutine blocks until an installed sample
	// reaches it, outside any executor: the transport's goroutine reads the
	// socket even while the feed is held, so the sample reaches it while
	// the holder runs callbacks. Want(-1) ends that.
	Want(n int)
	// Wait blocks until a datagram waits on the socket (readable),
	// Interrupt is called, the subscription is closed, or timeout passes
	// (< 0: no limit). It may read that datagram, for the Pull that must
	// follow a readable Wait. It calls ready once its timeout is armed and
	// before it blocks, and returns at once if ready reports false. ok is
	// false when it did not wait: the feed is closed or another goroutine
	// is waiting on it.
	Wait(timeout time.Duration, ready func() bool) (readable, ok bool)
	// Interrupt makes the Wait in progress return, or the next one if it
	// has called ready already.
	Interrupt()
	// Pull delivers the samples of what the readable Wait before it
	// found, on the calling goroutine (unless the transport is handing out
	// callbacks on another goroutine at that moment: that one then does).
	// More datagrams waiting are for the next Wait, which returns at once.
	Pull()
	// Fresh reads and delivers what waits, without blocking, when no
	// goroutine is reading the socket now (the holder is running
	// callbacks): a reader of ROS time calls it to see the latest sample.
	Fresh()
}

// CheckTypeHash returns nil for "" (no hash) and for a well-formed RIHS01
// hash ("RIHS01_" and 64 lowercase hex digits), else an error naming it.
// Transports check the hashes of EndpointOptions with it before they
// announce them.
func CheckTypeHash(h string) error {
	if h == "" {
		return nil
	}
	const prefix = "RIHS01_"
	if len(h) != len(prefix)+64 || h[:len(prefix)] != prefix {
		return fmt.Errorf("rmw: type hash %q is not RIHS01_ and 64 hex digits", h)
	}
	for _, c := range h[len(prefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("rmw: type hash %q is not RIHS01_ and 64 lowercase hex digits", h)
		}
	}
	return nil
}

// CheckEndpointOptions checks the type hashes of o (see CheckTypeHash).
func CheckEndpointOptions(o EndpointOptions) error {
	return errors.Join(CheckTypeHash(o.TypeHash), CheckTypeHash(o.RequestTypeHash), CheckTypeHash(o.ResponseTypeHash))
}

// Transport creates publishers and subscriptions on ROS topics, service
// servers and clients (ServiceTransport), and shows the ROS graph (Graph).
//
// Topic names are fully qualified ROS names ("/clock"); type names are ROS
// type names ("rosgraph_msgs/msg/Clock"). Implementations map them to their
// own conventions (e.g. "rt/clock" and "rosgraph_msgs::msg::dds_::Clock_").
//
// # No callback after Close
//
// A callback is a call of a subscription's deliver function or of an
// endpoint's OnEvent function. Once Subscription.Close returns, no
// callback of that subscription is running or will start; once
// Publisher.Close returns, no OnEvent call of that publisher is running or
// will start; once Transport.Close returns, no callback of any of its
// endpoints is running or will start. Close waits for a callback that is
// running on another goroutine.
//
// Close called from inside a callback (on the goroutine that runs it)
// cannot wait for that callback, which is its own caller. Then Close
// returns without waiting for the callback(s) the calling goroutine is
// running, and it is still true that no new callback of the closed
// endpoint(s) starts after Close returns; the calling callback finishes
// after Close, when it returns. What else such a Close waits for is the
// implementation's to say (rmw/rtps and rmw/intra document it); it never
// deadlocks on its own caller. Because Close waits, it must not be called
// while holding a lock that a callback of the closed endpoint takes.
type Transport interface {
	Graph
	ServiceTransport
	NewPublisher(node NodeInfo, topic, typeName string, qos QoS, opts EndpointOptions) (Publisher, error)
	// NewSubscription registers deliver, which the transport calls on its own
	// goroutine for every sample that arrives, in order per writer. deliver
	// must not block for long (it holds up the transport); it may publish
	// and may create or close endpoints.
	NewSubscription(node NodeInfo, topic, typeName string, qos QoS, deliver func(Sample), opts EndpointOptions) (Subscription, error)
	// Close releases every endpoint and resource. Once it returns no
	// callback of the transport runs (see the type's documentation for a
	// Close called from inside a callback). It is safe to call twice.
	Close() error
}

// Publisher sends serialized samples.
type Publisher interface {
	// Publish sends data (encapsulation header included). The transport does
	// not keep data after Publish returns.
	Publish(data []byte) error
	// MatchedSubscriptions returns how many readers are currently matched.
	MatchedSubscriptions() int
	// Close unmatches and releases the publisher. Once it returns, no
	// OnEvent call of the publisher is running or will start (see
	// Transport for a Close called from inside a callback).
	Close() error
}

// Subscription receives samples through the deliver function it was made with.
type Subscription interface {
	// MatchedPublishers returns how many writers are currently matched.
	MatchedPublishers() int
	// Close unmatches and releases the subscription. Once it returns, no
	// deliver or OnEvent call of the subscription is running or will
	// start (see Transport for a Close called from inside a callback).
	Close() error
}
