// Package wire is the DDSI-RTPS 2.x wire codec of nros: pure functions and
// small value types over raw bytes, with no sockets, timers or state
// machines. Discovery (SPDP/SEDP), the reliable and best-effort endpoints
// and the UDP layer are built on it.
//
// # Basic types
//
// GuidPrefix, EntityID (with the built-in ids EntityIDSPDPWriter, ... and
// kind helpers IsWriter, IsReader, HasKey, IsBuiltin), GUID,
// SequenceNumber (int64; wire {high int32, low uint32}), SequenceNumberSet
// and FragmentNumberSet (base + up to 256 bits), Time and Duration
// (seconds + 2^-32 fraction, with conversions to nanoseconds and
// time.Duration), Locator (with LoopbackUDPv4, LocatorFromAddrPort,
// AddrPort), VendorID, ProtocolVersion and Count.
//
// # Decoding
//
// A Reader walks one message. Reset parses the 20-byte header; each Next
// returns the next DATA, DATA_FRAG, HEARTBEAT, ACKNACK, GAP, NACK_FRAG,
// HEARTBEAT_FRAG, INFO_TS, INFO_DST, INFO_SRC, INFO_REPLY or
// INFO_REPLY_IP4 as a *Submessage whose ID selects the valid typed field.
// PAD, vendor-specific (id >= 0x80, e.g. Fast DDS statistics) and unknown
// submessages are skipped. The E flag is honoured per submessage;
// octetsToNextHeader 0 means "to the end of the message" except for PAD
// and INFO_TS. INFO_SRC, INFO_DST, INFO_TS and INFO_REPLY update
// Reader.State (the spec's receiver: source prefix, vendor and version,
// destination prefix, timestamp, reply locators), so the writer of a DATA
// is GUID{r.State.SourcePrefix, sm.Data.WriterID}.
//
// The Reader does not allocate. Slices it yields (Data.SerializedPayload,
// Data.InlineQos.Data, DataFrag.Fragments) alias the message buffer: copy
// them before the buffer is reused. The *Submessage itself is overwritten
// by the next call. A malformed submessage makes Next return an error
// (wrapping ErrMalformed) and the rest of the message is ignored, as the
// spec says; submessages returned before it remain valid.
//
// Decoding checks structure only (lengths, numBits <= 256, fragment
// arithmetic, D and K not both set; bitmap bits beyond numBits are
// cleared). Semantic rules are left to the endpoints, with helpers
// Heartbeat.Valid, Gap.Valid and AckNack.Valid (Fast DDS sends ACKNACK
// base 0, which the spec calls invalid). ReceiverState.IsFor tells whether
// INFO_DST addressed the following submessages to a given participant.
// Like Fast DDS (and unlike Cyclone) the Reader accepts submessage lengths
// that are not multiples of 4; the Builder never produces them.
//
// Data.SerializedPayload runs to the end of the submessage, so it may
// carry up to 3 bytes of zero padding after the CDR data; CDR decoders
// ignore trailing bytes.
//
// # Encoding
//
// A Builder appends a message to a caller buffer: Reset(buf[:0], Header)
// and then InfoTS, InfoDst, InfoSrc, InfoReply, Pad, Data, DataFrag,
// Heartbeat, HeartbeatFrag, AckNack, Gap, NackFrag. Everything is little
// endian, each submessage is padded to 4 bytes and octetsToNextHeader is
// always exact. Methods whose input can be invalid (bitmap sets over 256
// bits, big-endian inline QoS, a submessage over 64 KiB) return an error
// and leave the message unchanged. A reused Builder does not allocate.
//
// # Parameter lists
//
// ParameterList and its ParameterIterator walk PL_CDR lists (PID_PAD
// skipped, PID_SENTINEL required, lengths rounded up to 4).
// ParsePLPayload checks the PL_CDR_LE/PL_CDR_BE encapsulation of a
// discovery payload. ParticipantData (SPDP) and EndpointData (SEDP) have
// Encode (append PL_CDR_LE to a buffer) and Decode (copying, defaults for
// absent PIDs, unknown and vendor PIDs skipped, unknown non-vendor PIDs
// with the must-understand bit 0x4000 rejected with ErrMustUnderstand),
// plus Validate for the PIDs peers require. InlineQos covers KEY_HASH,
// STATUS_INFO and RELATED_SAMPLE_IDENTITY (0x0083 and Fast DDS's 0x800f)
// for DATA: DecodeInlineQos does not allocate, InlineQos.Append writes a
// little-endian list with sentinel. AppendParameter and AppendSentinel
// build other lists by hand.
package wire
