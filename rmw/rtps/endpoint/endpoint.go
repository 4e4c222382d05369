package endpoint

import (
	"errors"
	"math"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Never is the deadline that means "no timed work pending".
const Never int64 = math.MaxInt64

// Output is where an endpoint's datagrams go. Send is called synchronously
// from inside the endpoint method that produced msg; msg is a reused buffer
// valid only until Send returns. to lists the destination locators (at
// least one, deduplicated); the transport sends msg to each of them. Send
// must not call back into the endpoint.
type Output interface {
	Send(to []wire.Locator, msg []byte)
}

// OutputFunc adapts a function to Output.
type OutputFunc func(to []wire.Locator, msg []byte)

// Send calls f(to, msg).
func (f OutputFunc) Send(to []wire.Locator, msg []byte) { f(to, msg) }

// Errors returned by the endpoints.
var (
	// ErrWouldBlock is returned by Writer.Write for a KEEP_ALL writer whose
	// history holds MaxSamples samples not yet acknowledged by every
	// matched reliable reader. No sequence number is consumed.
	ErrWouldBlock = errors.New("endpoint: writer history full (would block)")
	// ErrTooLarge is returned by Writer.Write for a payload over
	// MaxSampleSize.
	ErrTooLarge = errors.New("endpoint: sample too large")
	// ErrConfig is returned by NewWriter and NewReader for an invalid
	// configuration.
	ErrConfig = errors.New("endpoint: invalid configuration")
)

// Defaults used when a config field is zero.
const (
	// DefaultFragmentSize is Cyclone DDS's fragment size: payloads larger
	// than this are sent as DATA_FRAG.
	DefaultFragmentSize = 1344
	// DefaultMaxMessageSize is the largest datagram a Writer builds
	// (Cyclone's MaxMessageSize).
	DefaultMaxMessageSize = 14720
	// MaxMessageSizeLimit is the largest MaxMessageSize accepted (Fast DDS
	// accepts datagrams up to 65500 bytes).
	MaxMessageSizeLimit = 65000
	// DefaultHeartbeatPeriod is the period of HEARTBEATs to readers that
	// have not acknowledged everything.
	DefaultHeartbeatPeriod int64 = 100e6
	// DefaultNackResponseDelay is how long a writer waits before repairing.
	DefaultNackResponseDelay int64 = 5e6
	// DefaultMaxRepairBytes bounds one repair round to one reader.
	DefaultMaxRepairBytes = 256 << 10
	// DefaultMaxSamples bounds a KEEP_ALL writer's history.
	DefaultMaxSamples = 1000
	// DefaultMaxSampleSize bounds one sample (writer and reader).
	DefaultMaxSampleSize = 16 << 20
	// DefaultAckDelay is how long a reader waits before answering a
	// HEARTBEAT.
	DefaultAckDelay int64 = 5e6
	// DefaultPreemptiveAckPeriod is the first interval at which a
	// reliable reader repeats its preemptive ACKNACK until the writer's
	// first HEARTBEAT; the interval doubles with every unanswered one.
	DefaultPreemptiveAckPeriod int64 = 1e9
	// DefaultMaxPreemptiveAckPeriod caps that interval (Cyclone DDS
	// settles at 10 s too).
	DefaultMaxPreemptiveAckPeriod int64 = 10e9
	// DefaultMaxPreemptiveAcks is how many preemptive ACKNACKs a reader
	// sends to a writer that never answers (no HEARTBEAT, no DATA) before
	// it stops until the writer is heard from.
	DefaultMaxPreemptiveAcks = 8
	// DefaultMaxHeartbeatPeriod caps the interval of periodic HEARTBEATs
	// to a reader that does not acknowledge (Cyclone DDS's maximum
	// heartbeat interval).
	DefaultMaxHeartbeatPeriod int64 = 8e9
	// DefaultMaxUnansweredHeartbeats is how many HEARTBEATs a writer sends
	// to a matched reader that has never sent an ACKNACK before it stops
	// until the reader speaks.
	DefaultMaxUnansweredHeartbeats = 12
	// HeartbeatCountTimeout is how long a HEARTBEAT count (and an
	// ACKNACK count) not above the last one is refused: after it any count
	// is accepted again (Cyclone DDS uses 500 ms), so one forged count
	// cannot make a peer's real ones stale for good.
	HeartbeatCountTimeout int64 = 500e6
	// DefaultInitialSyncTimeout is how long a reliable reader holds data
	// from a writer that has not sent a HEARTBEAT yet (prompting it every
	// 100 ms) before it starts at the lowest SN it holds. It outlasts
	// Fast DDS's 3 s HEARTBEAT period: starting without the writer's word
	// skips, and acknowledges, any earlier SN that was lost (it was 200 ms
	// until a lossy Fast DDS run lost its first sample that way).
	DefaultInitialSyncTimeout int64 = 3500e6
	// DefaultWindow is how many samples a reliable reader buffers out of
	// order per writer (the reach of one ACKNACK bitmap).
	DefaultWindow = 256
	// DefaultMaxFragmentedSamples is how many partially received
	// fragmented samples a reader keeps per writer.
	DefaultMaxFragmentedSamples = 4
	// MaxFragmentedSamplesLimit is the largest MaxFragmentedSamples
	// accepted (one ACKNACK datagram carries a NACK_FRAG for each).
	MaxFragmentedSamplesLimit = 64
	// DefaultMaxReassemblyBytes bounds the reassembly memory of a Reader.
	DefaultMaxReassemblyBytes = 64 << 20
	// DefaultMaxImplicitWriters bounds the writers a MatchAny reader
	// tracks.
	DefaultMaxImplicitWriters = 256
)

// backoff returns base doubled n times, capped at most.
func backoff(base int64, n int, most int64) int64 {
	if n <= 0 {
		return min(base, most)
	}
	if n > 40 || base > most>>n {
		return most
	}
	return min(base<<n, most)
}

// Participant holds the RTPS header fields (besides the GUID prefix) an
// endpoint puts on its messages.
type Participant struct {
	// Vendor is the vendor id of the RTPS header.
	Vendor wire.VendorID
	// Version is the protocol version of the RTPS header; zero means 2.1.
	Version wire.ProtocolVersion
}

// WriterConfig configures a Writer. Zero fields take the defaults above.
type WriterConfig struct {
	// GUID is the writer's GUID; its prefix is the participant's.
	GUID wire.GUID
	// Participant fills the RTPS header.
	Participant Participant
	// Reliable selects RELIABLE (heartbeats, repairs, acknowledgement
	// tracking); otherwise BEST_EFFORT.
	Reliable bool
	// TransientLocal selects TRANSIENT_LOCAL durability: late-joining
	// transient-local readers get the history.
	TransientLocal bool
	// KeepAll selects KEEP_ALL history bounded by MaxSamples; otherwise
	// KEEP_LAST Depth.
	KeepAll bool
	// Keyed makes KEEP_LAST Depth apply per instance (Change.Instance, as
	// for the SEDP and ros_discovery_info writers): writing an instance
	// drops its oldest sample beyond Depth from the history, and a reader
	// asking for it gets a GAP. The history then holds up to MaxSamples
	// samples in total (the oldest is dropped when full).
	Keyed bool
	// Depth is the KEEP_LAST depth (>= 1; zero means 1).
	Depth int
	// MaxHistoryBytes, if > 0, also bounds a KEEP_LAST (not keyed)
	// history by payload bytes: writing drops the oldest samples while
	// the history holds more (the newest always stays).
	MaxHistoryBytes int
	// MaxSamples bounds a KEEP_ALL history.
	MaxSamples int
	// HeartbeatPeriod is the period of HEARTBEATs (ns) to reliable readers
	// that are behind. To a reader that leaves them unanswered it doubles
	// after three, up to MaxHeartbeatPeriod, and a reader that has never
	// answered gets none after MaxUnansweredHeartbeats (until its first
	// ACKNACK).
	HeartbeatPeriod int64
	// MaxHeartbeatPeriod caps the backed-off HEARTBEAT interval.
	MaxHeartbeatPeriod int64
	// MaxUnansweredHeartbeats: see HeartbeatPeriod.
	MaxUnansweredHeartbeats int
	// NackResponseDelay (ns) delays repairs after an ACKNACK or NACK_FRAG
	// so that requests can be merged; negative means 0 (repair at once).
	NackResponseDelay int64
	// FragmentSize: payloads (encapsulation included) larger than this
	// are sent as DATA_FRAG with fragments of this size. At most 65000.
	FragmentSize int
	// MaxMessageSize bounds every datagram the writer builds (several
	// fragments of one sample share a datagram up to it). At most 65000.
	MaxMessageSize int
	// MaxSampleSize bounds the payload of one Write.
	MaxSampleSize int
	// MaxRepairBytes bounds the payload bytes resent to one reader per
	// repair round (at least one sample or fragment group is sent), so a
	// burst of NACKs does not overflow socket buffers; the rest is asked
	// for again after the HEARTBEAT that ends the round.
	MaxRepairBytes int
}

// ReaderConfig configures a Reader. Zero fields take the defaults above.
type ReaderConfig struct {
	// GUID is the reader's GUID.
	GUID wire.GUID
	// Participant fills the RTPS header of ACKNACK and NACK_FRAG.
	Participant Participant
	// MatchAny makes the reader accept DATA from any writer as a
	// best-effort one (for the SPDP reader). At most MaxImplicitWriters
	// are tracked; the least recently heard is forgotten first.
	MatchAny bool
	// MaxImplicitWriters bounds the writers a MatchAny reader tracks.
	MaxImplicitWriters int
	// AckDelay (ns) delays ACKNACK and NACK_FRAG after a HEARTBEAT;
	// negative means 0.
	AckDelay int64
	// PreemptiveAckPeriod (ns) is the first interval at which the
	// preemptive ACKNACK is repeated until a HEARTBEAT arrives; it doubles
	// with each unanswered one up to MaxPreemptiveAckPeriod, and after
	// MaxPreemptiveAcks the reader stops until the writer is heard from.
	PreemptiveAckPeriod int64
	// MaxPreemptiveAckPeriod caps the backed-off interval.
	MaxPreemptiveAckPeriod int64
	// MaxPreemptiveAcks: see PreemptiveAckPeriod.
	MaxPreemptiveAcks int
	// InitialSyncTimeout (ns): see the package documentation; negative
	// means 0 (start at the first SN received).
	InitialSyncTimeout int64
	// Durable marks a reader whose writers keep history for it
	// (TRANSIENT_LOCAL, and the SEDP readers): when InitialSyncTimeout
	// passes without a HEARTBEAT it starts at SN 1 (as far back as its
	// window reaches), not at the lowest SN it holds, so SNs lost before
	// the writer's first HEARTBEAT are asked for rather than skipped.
	Durable bool
	// Window is how many samples a reliable proxy buffers out of order
	// (1..256 is typical; the ACKNACK bitmap reaches 256).
	Window int
	// MaxSampleSize bounds one (reassembled) sample.
	MaxSampleSize int
	// MaxFragmentedSamples bounds partially received samples per writer.
	MaxFragmentedSamples int
	// MaxReassemblyBytes bounds the memory the reader holds for DATA_FRAG
	// reassembly and for samples buffered out of order, across writers.
	MaxReassemblyBytes int
}

// Change is one sample handed to Writer.WriteChange.
type Change struct {
	// Payload is the serialized payload including its 4-byte
	// encapsulation header (or a serialized key if Key is set). It is
	// copied.
	Payload []byte
	// SourceTimestamp (ns since the Unix epoch) goes into INFO_TS.
	SourceTimestamp int64
	// InlineQos is a little-endian parameter list including its
	// sentinel (see wire.InlineQos.Append), or nil. It is copied.
	InlineQos []byte
	// Key marks Payload as a serialized key (DATA K flag), as for
	// dispose/unregister.
	Key bool
	// HasInstance and Instance name the instance (e.g. the key hash) for
	// a Keyed writer; ignored otherwise.
	HasInstance bool
	Instance    [16]byte
}

// Sample is one delivered sample. Payload and InlineQos alias the
// reader's buffers and are valid only during the deliver callback.
type Sample struct {
	// Writer is the GUID of the writer.
	Writer wire.GUID
	// SN is the writer's sequence number.
	SN wire.SequenceNumber
	// Payload is the serialized payload with its encapsulation header (a
	// serialized key if Key), possibly with trailing padding; nil for a
	// DATA with neither D nor K.
	Payload []byte
	// InlineQos is the inline QoS list, empty if none.
	InlineQos wire.ParameterList
	// Key is the K flag.
	Key bool
	// HasSourceTimestamp says whether SourceTimestamp is valid.
	HasSourceTimestamp bool
	// SourceTimestamp is the INFO_TS time in ns since the Unix epoch.
	SourceTimestamp int64
}

// WriterStats counts what a Writer did and what it dropped.
type WriterStats struct {
	Writes          uint64 // samples accepted by Write
	WouldBlock      uint64 // Write calls refused with ErrWouldBlock
	DataSent        uint64 // DATA submessages sent (first sends and repairs)
	DataFragSent    uint64 // DATA_FRAG submessages sent
	Resends         uint64 // samples resent after ACKNACK (or pushed to a late joiner)
	RepairsDeferred uint64 // requested samples left for a later round by MaxRepairBytes
	FragResends     uint64 // fragments resent after NACK_FRAG
	Gaps            uint64 // GAP submessages sent
	Heartbeats      uint64 // HEARTBEAT submessages sent
	// ReadersSilenced counts reader proxies that got no more periodic
	// HEARTBEATs because they never answered MaxUnansweredHeartbeats.
	ReadersSilenced uint64
	AckNacks        uint64 // ACKNACKs accepted
	NackFrags       uint64 // NACK_FRAGs accepted
	Overwritten     uint64 // KEEP_LAST samples dropped from history while some reliable reader had not acknowledged them
	UnknownReader   uint64 // ACKNACK/NACK_FRAG from readers not matched
	StaleCount      uint64 // ACKNACK/NACK_FRAG with a count not newer than the last
	Malformed       uint64 // ACKNACK/NACK_FRAG with impossible contents, undecodable datagrams
	HistorySize     int    // samples currently in history
	HistoryBytes    int    // payload bytes currently held
	MatchedReaders  int    // matched reader proxies
	ReliableReaders int    // of which reliable
}

// ReaderStats counts what a Reader did and what it dropped.
type ReaderStats struct {
	Delivered        uint64 // samples passed to the callback
	Duplicates       uint64 // DATA for SNs already delivered, buffered or older than the last (best effort)
	UnknownWriter    uint64 // DATA/DATA_FRAG/HEARTBEAT/GAP from writers not matched
	OutOfWindow      uint64 // reliable DATA too far ahead of the next expected SN, or over the memory bound
	Lost             uint64 // SNs skipped because the writer said they are gone (HEARTBEAT firstSN) or sync
	GapSNs           uint64 // SNs declared irrelevant by GAP (counted within the window only)
	Heartbeats       uint64 // HEARTBEATs accepted
	StaleCount       uint64 // HEARTBEAT/HEARTBEAT_FRAG with a count not newer than the last
	AckNacksSent     uint64
	NackFragsSent    uint64
	FragmentsDropped uint64 // DATA_FRAG dropped (inconsistent, out of range, over the bounds)
	Superseded       uint64 // incomplete fragmented samples abandoned
	TooLarge         uint64 // samples over MaxSampleSize
	Malformed        uint64 // impossible SNs, ranges or fragment numbers; undecodable datagrams
	// JumpsReverted counts advances by HEARTBEAT or GAP that later DATA
	// proved false (a forged or stale claim that SNs were gone): the
	// proxy went back and lost nothing.
	JumpsReverted uint64
	// WritersSilenced counts writer proxies that got no more preemptive
	// ACKNACKs because they never answered MaxPreemptiveAcks.
	WritersSilenced uint64
	MatchedWriters  int
	ReassemblyBytes int // reassembly and reordering memory currently held (bounded by MaxReassemblyBytes)
	BufferedSamples int // out-of-order samples currently held
}
