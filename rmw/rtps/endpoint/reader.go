package endpoint

import "github.com/nros-go/nros/rmw/rtps/wire"

// Reader is the RTPS reader state machine of one DDS DataReader. See the
// package documentation for its behaviour and concurrency contract (not
// safe for concurrent use).
type Reader struct {
	cfg     ReaderConfig
	out     Output
	deliver func(Sample)
}

// NewReader returns a Reader with cfg (zero fields take defaults) that
// sends ACKNACK and NACK_FRAG through out and delivers samples to deliver.
// deliver is called synchronously and must not call back into the Reader;
// the Sample's slices are valid only during the call.
func NewReader(cfg ReaderConfig, out Output, deliver func(Sample)) (*Reader, error) {
	return &Reader{cfg: cfg, out: out, deliver: deliver}, nil
}

// GUID returns the reader's GUID.
func (r *Reader) GUID() wire.GUID { return r.cfg.GUID }

// MatchWriter adds (or updates the locators of) a matched writer proxy.
// locators are where ACKNACK and NACK_FRAG go. A reliable proxy sends a
// preemptive ACKNACK at once and repeats it until a HEARTBEAT arrives.
func (r *Reader) MatchWriter(now int64, guid wire.GUID, locators []wire.Locator, reliable bool) {}

// UnmatchWriter removes a writer proxy and its buffered samples; unknown
// GUIDs are ignored.
func (r *Reader) UnmatchWriter(guid wire.GUID) {}

// HandleMessage processes one received datagram: DATA, DATA_FRAG,
// HEARTBEAT, HEARTBEAT_FRAG and GAP whose readerId is this reader's entity
// id or ENTITYID_UNKNOWN, and whose INFO_DST is absent or this reader's
// prefix.
func (r *Reader) HandleMessage(now int64, msg []byte) {}

// HandleSubmessage processes one decoded submessage routed to this reader
// by the transport; rs is the receiver state of its message (source prefix
// and timestamp). Other kinds are ignored.
func (r *Reader) HandleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) {}

// Tick performs the timed work due at now (ACKNACK, NACK_FRAG, preemptive
// ACKNACK, initial sync) and returns NextDeadline.
func (r *Reader) Tick(now int64) int64 { return Never }

// NextDeadline returns when Tick next has work to do, or Never.
func (r *Reader) NextDeadline() int64 { return Never }

// Stats returns the reader's counters.
func (r *Reader) Stats() ReaderStats { return ReaderStats{} }
