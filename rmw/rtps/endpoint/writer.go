package endpoint

import "github.com/nros-go/nros/rmw/rtps/wire"

// Writer is the RTPS writer state machine of one DDS DataWriter. See the
// package documentation for its behaviour and concurrency contract (not
// safe for concurrent use).
type Writer struct {
	cfg WriterConfig
	out Output
}

// NewWriter returns a Writer with cfg (zero fields take defaults) that
// sends through out.
func NewWriter(cfg WriterConfig, out Output) (*Writer, error) {
	return &Writer{cfg: cfg, out: out}, nil
}

// GUID returns the writer's GUID.
func (w *Writer) GUID() wire.GUID { return w.cfg.GUID }

// MatchReader adds (or updates the locators of) a matched reader proxy.
// locators are where its traffic goes (unicast preferred; the transport
// chooses). reliable and transientLocal are the reader's QoS; a
// transient-local reader of a transient-local writer gets the history.
// A new reliable reader gets a HEARTBEAT at once.
func (w *Writer) MatchReader(now int64, guid wire.GUID, locators []wire.Locator, reliable, transientLocal bool) {
}

// UnmatchReader removes a reader proxy; unknown GUIDs are ignored.
func (w *Writer) UnmatchReader(guid wire.GUID) {}

// Write is WriteChange with only a payload and a source timestamp.
func (w *Writer) Write(now int64, payload []byte, sourceTimestamp int64) (wire.SequenceNumber, error) {
	return 0, nil
}

// WriteChange assigns the next sequence number to c, stores it in the
// history and sends it to every matched reader (followed by a HEARTBEAT if
// a reliable reader is matched). It returns ErrWouldBlock (KEEP_ALL history
// full of unacknowledged samples) or ErrTooLarge without consuming a
// sequence number.
func (w *Writer) WriteChange(now int64, c *Change) (wire.SequenceNumber, error) {
	return 0, nil
}

// HandleMessage processes one received datagram: ACKNACK and NACK_FRAG
// addressed to this writer (writerId equal to its entity id, INFO_DST
// absent or equal to its prefix) are handled, everything else is ignored.
func (w *Writer) HandleMessage(now int64, msg []byte) {}

// HandleSubmessage processes one decoded submessage routed to this writer
// by the transport; rs is the receiver state of its message. Kinds other
// than ACKNACK and NACK_FRAG are ignored.
func (w *Writer) HandleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) {}

// Tick performs the timed work due at now (repairs, HEARTBEATs) and returns
// NextDeadline.
func (w *Writer) Tick(now int64) int64 { return Never }

// NextDeadline returns when Tick next has work to do, or Never.
func (w *Writer) NextDeadline() int64 { return Never }

// LastSN returns the sequence number of the last sample written (0 if
// none).
func (w *Writer) LastSN() wire.SequenceNumber { return 0 }

// Acknowledged reports whether every matched reliable reader has
// acknowledged sn (true if there is none).
func (w *Writer) Acknowledged(sn wire.SequenceNumber) bool { return true }

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats { return WriterStats{} }
