// Package wire is the Zenoh 1.x wire codec of nros (protocol version 0x09,
// the one zenoh 1.x and zenoh-pico 1.x speak): pure functions and small
// value types over raw bytes, with no sockets, timers or state machines.
// The session state machines in rmw/zenoh/session are built on it.
//
// # Layers
//
// A batch (one TCP length-prefixed unit, one UDP datagram) holds one or
// more transport messages: INIT, OPEN, CLOSE, KEEP_ALIVE, FRAME, FRAGMENT,
// JOIN and OAM (DecodeTransport, AppendTransport). A FRAME carries network
// messages until the end of the batch: PUSH, REQUEST, RESPONSE,
// RESPONSE_FINAL, DECLARE, INTEREST and OAM (DecodeNetwork,
// AppendNetwork). PUSH, REQUEST and RESPONSE carry the zenoh bodies PUT,
// DEL, QUERY, REPLY and ERR.
//
// # Extensions
//
// Every message may carry extensions: a header byte |Z|ENC|M|ID| (Z: more
// follow, ENC: unit, z64 or zbuf, M: mandatory) then the body. Known
// extensions become fields; an unknown optional extension is skipped (kept
// in an Unknown list where zenoh forwards it: PUT, DEL, QUERY, REPLY,
// ERR); an unknown mandatory extension is an error (ErrMandatoryExtension),
// as are the shared-memory extensions that change how a payload is laid
// out (ErrSharedMemory): nros does not speak zenoh shared memory.
//
// # Decoding
//
// Decoders never panic on outside bytes: a malformed input returns an
// error wrapping ErrMalformed, ErrTruncated, ErrMandatoryExtension,
// ErrSharedMemory or ErrUnknownMessage. Allocations are bounded by the
// input length. Byte slices in decoded messages (payloads, attachments,
// cookies, schemas) alias the input buffer: copy them before reusing it.
// Strings (key expression suffixes, query parameters) are copied.
//
// Encoding is canonical as zenoh's: fields equal to their defaults are
// omitted (QoS Data/Drop, node id 0, consolidation Auto, ...), so decoding
// then encoding gives back the same bytes whenever the input was written by
// zenoh or zenoh-pico.
package wire
