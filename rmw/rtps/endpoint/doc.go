// Package endpoint holds the DDSI-RTPS writer and reader state machines of
// nros: best-effort and reliable, with fragmentation (DATA_FRAG), built on
// the codec in rmw/rtps/wire.
//
// # Shape
//
// Writer and Reader are pure state machines. They own no goroutines, no
// sockets and no timers:
//
//   - time is passed in as now, a monotonic clock reading in nanoseconds,
//     to every method whose behaviour depends on it;
//   - outgoing datagrams leave through the Output interface given at
//     construction, synchronously, from inside the method that produced
//     them (Write, Handle*, Match*, Tick);
//   - incoming traffic is fed in either as whole datagrams (HandleMessage)
//     or as submessages the transport has already decoded and routed
//     (HandleSubmessage, with the wire.ReceiverState of the message);
//   - timed work (periodic HEARTBEATs, delayed ACKNACK and repair
//     responses, preemptive ACKNACKs, the reader's initial sync) happens in
//     Tick(now). NextDeadline reports when Tick wants to run next (Never
//     if nothing is pending); it can move earlier after any other call, so
//     a transport re-reads it after each call it makes.
//
// # Concurrency
//
// Neither type is safe for concurrent use: the caller serialises all calls
// on one Writer or Reader (one goroutine or a mutex). Output.Send and the
// Reader's deliver callback are called synchronously with that
// serialisation held; they must not call back into the same endpoint. The
// msg passed to Send is a reused buffer, valid only until Send returns: the
// transport writes it to its sockets or copies it. Likewise Sample.Payload
// and Sample.InlineQos are valid only during the deliver callback.
//
// # Writer
//
// A Writer assigns sequence numbers (from 1), keeps a history
// (KEEP_LAST depth, or KEEP_ALL up to MaxSamples) and sends each sample
// (INFO_TS + DATA, or DATA_FRAG groups when the payload exceeds
// FragmentSize) to the union of the locators of its matched readers,
// followed by a piggybacked HEARTBEAT when any reliable reader is matched.
// Reliable reader proxies get: a HEARTBEAT on match (non-final), periodic
// non-final HEARTBEATs while they have not acknowledged everything, repairs
// (DATA/DATA_FRAG to their locators, prefixed by INFO_DST and INFO_TS) for
// SNs their ACKNACK or NACK_FRAG requests, after NackResponseDelay, lowest
// SN first and at most MaxRepairBytes per round (the reader asks again for
// the rest), and GAP for requested SNs that are no longer available
// (overwritten, or written before a volatile reader matched). A
// transient-local reader gets the
// history: reliable ones by HEARTBEAT and repair, best-effort ones by a
// direct push on match.
//
// KEEP_LAST overwrites the oldest sample even if unacknowledged (as DDS
// does); a reliable writer never drops a sample a reliable reader has not
// acknowledged while it is within the last depth. A Keyed writer applies
// the depth per instance (Change.Instance), which is what the SEDP and
// ros_discovery_info writers need; replaced samples become GAPs. KEEP_ALL never
// drops an unacknowledged sample: when MaxSamples unacknowledged samples are
// held, Write returns ErrWouldBlock without consuming a sequence number, and
// the caller retries after the next ACKNACK (the transport implements
// max_blocking_time). HEARTBEAT_FRAG is not sent. An ACKNACK that asks for
// nothing while the reader is behind (the preemptive ACKNACK), and the
// first ACKNACK of a reader, are answered by a HEARTBEAT (rate-limited to
// one per HeartbeatPeriod/10), so a peer learns quickly that it matched.
// Periodic HEARTBEATs to a reader that leaves them unanswered back off
// (three at HeartbeatPeriod, then doubling up to MaxHeartbeatPeriod, as
// Cyclone DDS does), and a reader that has never sent an ACKNACK gets none
// after MaxUnansweredHeartbeats, until it speaks: a locator copied from a
// forged announcement is not sent HEARTBEATs forever.
//
// Data goes to all matched readers in one datagram per locator (readerId
// ENTITYID_UNKNOWN, no INFO_DST); repairs, GAPs and HEARTBEATs for one
// reader carry INFO_DST and its readerId. Every DATA and DATA_FRAG is
// preceded by INFO_TS with the source timestamp.
//
// # Reader
//
// A Reader accepts DATA and DATA_FRAG only from matched writers (or from
// anyone in MatchAny mode, meant for the best-effort SPDP reader), drops
// and counts everything else. Best-effort proxies deliver any SN newer than
// the last delivered one. Reliable proxies deliver strictly in SN order
// without duplicates, buffer up to Window samples out of order, answer
// non-final HEARTBEATs (and final ones when something is missing) with an
// ACKNACK after AckDelay, treat GAP SNs as received and SNs below a
// HEARTBEAT's firstSN as lost, and ask for missing fragments with
// NACK_FRAG (on HEARTBEAT and HEARTBEAT_FRAG). DATA_FRAG reassembly has
// bounded memory (MaxSampleSize, MaxFragmentedSamples per writer,
// MaxReassemblyBytes per reader, which also bounds the out-of-order
// buffers); incomplete samples that are superseded are dropped. A DATA
// without payload (dispose/unregister, as SPDP and SEDP send) is delivered
// with a nil Payload and its inline QoS.
//
// A reliable proxy starts unsynchronised: it buffers what arrives until the
// first HEARTBEAT tells it where the writer's history starts (or, for
// writers slow to send one, until InitialSyncTimeout has passed, after
// which it starts at the lowest SN it holds; a negative InitialSyncTimeout
// starts at the first SN received, as Cyclone does for volatile readers).
// Until that HEARTBEAT it sends preemptive ACKNACKs, PreemptiveAckPeriod
// apart and doubling up to MaxPreemptiveAckPeriod, and none after
// MaxPreemptiveAcks unanswered ones, until the writer is heard from.
// ACKNACK and NACK_FRAG counts are reader-wide, so they keep increasing
// when a writer is matched again.
//
// A HEARTBEAT's firstSN or a GAP that moves a reliable proxy past the
// highest SN seen in DATA is a claim, not evidence. While samples are
// buffered out of order it waits for DATA at or above it (nothing buffered
// is delivered past a hole on a claim); otherwise it is applied, and until
// DATA at or above it confirms it, DATA from the writer below it (newer
// than anything delivered) or a HEARTBEAT whose lastSN is below it proves
// it false, and the proxy goes back to where it was
// (Stats.JumpsReverted) without losing a sample. Meanwhile ACKNACKs
// acknowledge only what arrived (some writers take a base beyond their last
// SN as "everything") and ask for everything from there, until the writer
// has repeated the claim for a second. A forged HEARTBEAT or GAP with a
// writer's GUID therefore cannot cut that writer off. HEARTBEAT counts not
// above the last are refused for HeartbeatCountTimeout only.
//
// # Robustness
//
// Malformed or hostile input (SN <= 0, HEARTBEAT with firstSN > lastSN+1,
// fragment numbers out of range, inconsistent fragment sizes, samples over
// MaxSampleSize, huge GAP ranges, ACKNACKs for SNs never written, stale
// counts) is dropped and counted in Stats, never a panic, and never makes
// memory grow beyond the configured bounds.
package endpoint
