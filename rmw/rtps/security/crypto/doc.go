// Package crypto is the DDS:Crypto:AES-GCM-GMAC builtin plugin of OMG DDS
// Security 1.1 (§9.5) as sans-IO code: key material and its CDR, the crypto
// tokens exchanged over DCPSParticipantVolatileMessageSecure, session keys,
// and the three transforms (serialized payload, writer/reader submessage,
// whole RTPS message) with their decoders. It opens no socket and keeps no
// timer; the transport feeds it bytes and key material.
//
// # Wire format
//
// Every protected unit carries a CryptoHeader (20 bytes: transformation kind
// and key id, 4 bytes each, then the 12-byte IV = session id (4) + IV suffix
// (8)), the protected bytes, and a CryptoFooter (16-byte common MAC, a
// big-endian count and that many receiver-specific MACs of 4-byte key id +
// 16-byte MAC). With an AES-GCM kind the protected bytes are a big-endian
// length and the ciphertext (no additional authenticated data); with an
// AES-GMAC kind they are the plain bytes, authenticated as GCM additional
// data over an empty plaintext. A receiver-specific MAC is the GMAC of the
// common MAC under the receiver-specific session key with the same IV.
//
//   - payload: CryptoHeader, body, CryptoFooter, back to back (a GCM body is
//     length-prefixed, a GMAC body is the plain payload).
//   - submessage: SEC_PREFIX (0x31, the CryptoHeader), then SEC_BODY (0x30,
//     length + ciphertext, padded to 4) or the plain submessage, then
//     SEC_POSTFIX (0x32, the CryptoFooter).
//   - RTPS message: the 20-byte RTPS header in clear, SRTPS_PREFIX (0x33),
//     SEC_BODY or the plain submessages, SRTPS_POSTFIX (0x34). The protected
//     bytes start with an INFO_SRC that repeats the header (version, vendor,
//     GUID prefix), which is how the header is authenticated; Cyclone DDS and
//     Fast DDS 2.9 both write it (Cyclone requires it under GMAC). The
//     decoder also accepts a body without it, refuses an INFO_SRC that does
//     not match the header, strips a matching one, and drops unprotected
//     submessages after SRTPS_POSTFIX (Fast DDS appends its statistics
//     submessage 0x80 there).
//
// Session keys are HMAC-SHA256(master key, "SessionKey" | master salt |
// session id) and HMAC-SHA256(master receiver-specific key,
// "SessionReceiverKey" | master salt | session id), truncated to the key size;
// the salt is the key size long and the session id enters as its 4 wire bytes
// (Cyclone writes them big-endian, Fast DDS in host order: both derive from
// the bytes they send, so the bytes are what counts).
//
// # Refusals
//
// A decoder never panics on outside bytes. Every refusal wraps one of the
// sentinel errors (ErrMalformed, ErrUnknownKey, ErrProtection, ErrAuth,
// ErrReceiverMAC, ErrReplay) and is counted in the Opener's Counters.
package crypto
