package wire

import (
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"time"
)

// GuidPrefix is the 12-byte prefix shared by all entities of one participant.
type GuidPrefix [12]byte

// GuidPrefixUnknown is the all-zero prefix (GUIDPREFIX_UNKNOWN). In INFO_DST
// it means "every participant".
var GuidPrefixUnknown GuidPrefix

// IsZero reports whether p is GuidPrefixUnknown.
func (p GuidPrefix) IsZero() bool { return p == GuidPrefix{} }

// String formats the prefix as dot-separated 4-byte hex groups.
func (p GuidPrefix) String() string {
	return hex.EncodeToString(p[0:4]) + "." + hex.EncodeToString(p[4:8]) + "." + hex.EncodeToString(p[8:12])
}

// EntityID identifies an entity within a participant: a 3-byte key followed by
// a kind byte, in network order (EntityId_t).
type EntityID [4]byte

// Entity kind bytes (the last byte of an EntityID). The top two bits give
// the source (user, built-in or vendor-specific), the rest the kind.
const (
	EntityKindUnknown         byte = 0x00
	EntityKindWriterWithKey   byte = 0x02
	EntityKindWriterNoKey     byte = 0x03
	EntityKindReaderNoKey     byte = 0x04
	EntityKindReaderWithKey   byte = 0x07
	EntityKindWriterGroup     byte = 0x08
	EntityKindReaderGroup     byte = 0x09
	EntityKindParticipant     byte = 0xc1 // built-in participant
	EntityKindBuiltinWriterWK byte = 0xc2 // built-in writer with key
	EntityKindBuiltinWriterNK byte = 0xc3 // built-in writer without key
	EntityKindBuiltinReaderNK byte = 0xc4 // built-in reader without key
	EntityKindBuiltinReaderWK byte = 0xc7 // built-in reader with key

	// EntitySourceMask selects the source bits of a kind byte.
	EntitySourceMask byte = 0xc0
	// EntitySourceUser marks a user-defined entity.
	EntitySourceUser byte = 0x00
	// EntitySourceBuiltin marks a built-in entity.
	EntitySourceBuiltin byte = 0xc0
	// EntitySourceVendor marks a vendor-specific entity.
	EntitySourceVendor byte = 0x40
)

// Standard entity ids (DDSI-RTPS 2.x section 9.3.1.2 and section 1.4 of the wire notes).
var (
	EntityIDUnknown                     = EntityID{0x00, 0x00, 0x00, 0x00}
	EntityIDParticipant                 = EntityID{0x00, 0x00, 0x01, 0xc1}
	EntityIDSEDPTopicsWriter            = EntityID{0x00, 0x00, 0x02, 0xc2}
	EntityIDSEDPTopicsReader            = EntityID{0x00, 0x00, 0x02, 0xc7}
	EntityIDSEDPPublicationsWriter      = EntityID{0x00, 0x00, 0x03, 0xc2}
	EntityIDSEDPPublicationsReader      = EntityID{0x00, 0x00, 0x03, 0xc7}
	EntityIDSEDPSubscriptionsWriter     = EntityID{0x00, 0x00, 0x04, 0xc2}
	EntityIDSEDPSubscriptionsReader     = EntityID{0x00, 0x00, 0x04, 0xc7}
	EntityIDSPDPWriter                  = EntityID{0x00, 0x01, 0x00, 0xc2}
	EntityIDSPDPReader                  = EntityID{0x00, 0x01, 0x00, 0xc7}
	EntityIDP2PParticipantMessageWriter = EntityID{0x00, 0x02, 0x00, 0xc2}
	EntityIDP2PParticipantMessageReader = EntityID{0x00, 0x02, 0x00, 0xc7}
	EntityIDTypeLookupRequestWriter     = EntityID{0x00, 0x03, 0x00, 0xc3}
	EntityIDTypeLookupRequestReader     = EntityID{0x00, 0x03, 0x00, 0xc4}
	EntityIDTypeLookupReplyWriter       = EntityID{0x00, 0x03, 0x01, 0xc3}
	EntityIDTypeLookupReplyReader       = EntityID{0x00, 0x03, 0x01, 0xc4}
)

// NewEntityID builds an EntityID from a 24-bit key and a kind byte.
func NewEntityID(key uint32, kind byte) EntityID {
	return EntityID{byte(key >> 16), byte(key >> 8), byte(key), kind}
}

// Key returns the 24-bit entity key.
func (e EntityID) Key() uint32 { return uint32(e[0])<<16 | uint32(e[1])<<8 | uint32(e[2]) }

// Kind returns the entity kind byte.
func (e EntityID) Kind() byte { return e[3] }

// IsBuiltin reports whether the entity is a built-in one (source bits 0xc0).
func (e EntityID) IsBuiltin() bool { return e[3]&EntitySourceMask == EntitySourceBuiltin }

// IsVendorSpecific reports whether the entity has the vendor-specific source bits (0x40).
func (e EntityID) IsVendorSpecific() bool { return e[3]&EntitySourceMask == EntitySourceVendor }

// IsWriter reports whether the kind is a writer (with or without key).
func (e EntityID) IsWriter() bool {
	k := e[3] & 0x3f
	return k == 0x02 || k == 0x03
}

// IsReader reports whether the kind is a reader (with or without key).
func (e EntityID) IsReader() bool {
	k := e[3] & 0x3f
	return k == 0x04 || k == 0x07
}

// HasKey reports whether the kind is a keyed writer or reader (0x02 / 0x07
// in the low bits). Fast DDS rejects matches between keyed and keyless kinds.
func (e EntityID) HasKey() bool {
	k := e[3] & 0x3f
	return k == 0x02 || k == 0x07
}

// String formats the id as 8 hex digits.
func (e EntityID) String() string { return hex.EncodeToString(e[:]) }

// GUID is a globally unique entity id: participant prefix plus entity id.
type GUID struct {
	Prefix GuidPrefix
	Entity EntityID
}

// GUIDFromBytes builds a GUID from 16 bytes in network order.
func GUIDFromBytes(b [16]byte) GUID {
	var g GUID
	copy(g.Prefix[:], b[:12])
	copy(g.Entity[:], b[12:])
	return g
}

// Bytes returns the 16-byte network-order form of the GUID.
func (g GUID) Bytes() [16]byte {
	var b [16]byte
	copy(b[:12], g.Prefix[:])
	copy(b[12:], g.Entity[:])
	return b
}

// IsZero reports whether g is the unknown GUID.
func (g GUID) IsZero() bool { return g == GUID{} }

// String formats the GUID as prefix|entity in hex.
func (g GUID) String() string { return g.Prefix.String() + "|" + g.Entity.String() }

// SequenceNumber is an RTPS 64-bit sequence number (SequenceNumber_t). On the
// wire it is {high int32, low uint32}. Valid sample numbers start at 1.
type SequenceNumber int64

// SequenceNumberUnknown is SEQUENCENUMBER_UNKNOWN {-1, 0}.
const SequenceNumberUnknown SequenceNumber = -1 << 32

// SequenceNumberFromHighLow builds a SequenceNumber from its wire halves.
func SequenceNumberFromHighLow(high int32, low uint32) SequenceNumber {
	return SequenceNumber(int64(high)<<32 | int64(low))
}

// High returns the high (signed) 32 bits of the wire form.
func (s SequenceNumber) High() int32 { return int32(int64(s) >> 32) }

// Low returns the low 32 bits of the wire form.
func (s SequenceNumber) Low() uint32 { return uint32(s) }

// Count is a monotonically increasing counter (Count_t) used by HEARTBEAT,
// ACKNACK, NACK_FRAG and HEARTBEAT_FRAG.
type Count int32

// VendorID identifies the implementation that sent a message.
type VendorID [2]byte

// Known vendor ids.
var (
	VendorUnknown    = VendorID{0x00, 0x00}
	VendorRTI        = VendorID{0x01, 0x01}
	VendorOpenSplice = VendorID{0x01, 0x02}
	VendorOCI        = VendorID{0x01, 0x03}
	VendorEProsima   = VendorID{0x01, 0x0f} // Fast DDS
	VendorEclipse    = VendorID{0x01, 0x10} // Cyclone DDS
	VendorRustDDS    = VendorID{0x01, 0x12}
)

// String formats the vendor id as "01.0f".
func (v VendorID) String() string { return fmt.Sprintf("%02x.%02x", v[0], v[1]) }

// ProtocolVersion is the RTPS protocol version (major, minor).
type ProtocolVersion struct {
	Major, Minor uint8
}

// Protocol versions.
var (
	ProtocolVersion21 = ProtocolVersion{2, 1}
	ProtocolVersion22 = ProtocolVersion{2, 2}
	ProtocolVersion23 = ProtocolVersion{2, 3}
	ProtocolVersion24 = ProtocolVersion{2, 4}
)

// String formats the version as "2.1".
func (v ProtocolVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Time is an RTPS timestamp (Time_t): seconds since the Unix epoch plus a
// binary fraction of a second in units of 2^-32 s.
type Time struct {
	Seconds  int32
	Fraction uint32
}

// Special Time values.
var (
	TimeZero     = Time{0, 0}
	TimeInvalid  = Time{-1, 0xffffffff}
	TimeInfinite = Time{0x7fffffff, 0xffffffff}
)

const nsPerSec = 1_000_000_000

// fracFromNs converts nanoseconds within a second (0..1e9-1) to a 2^-32 fraction,
// rounding to nearest. The mapping is injective, so nsFromFrac inverts it exactly.
func fracFromNs(ns uint64) uint32 {
	return uint32((ns<<32 + nsPerSec/2) / nsPerSec)
}

// nsFromFrac converts a 2^-32 fraction to nanoseconds, rounding to nearest.
func nsFromFrac(f uint32) uint64 {
	return (uint64(f)*nsPerSec + 1<<31) >> 32
}

// TimeFromNanos converts nanoseconds since the Unix epoch to a Time. Values
// outside the representable range saturate to TimeZero or TimeInfinite.
func TimeFromNanos(ns int64) Time {
	if ns <= 0 {
		if ns == 0 {
			return TimeZero
		}
		sec := ns / nsPerSec
		rem := ns % nsPerSec
		if rem < 0 {
			rem += nsPerSec
			sec--
		}
		if sec < math.MinInt32 {
			return TimeZero
		}
		return normTime(sec, uint64(rem))
	}
	sec := ns / nsPerSec
	if sec >= math.MaxInt32 {
		return TimeInfinite
	}
	return normTime(sec, uint64(ns%nsPerSec))
}

func normTime(sec int64, rem uint64) Time {
	f := fracFromNs(rem)
	return Time{Seconds: int32(sec), Fraction: f}
}

// Nanos converts t to nanoseconds since the Unix epoch. TimeInfinite maps
// to math.MaxInt64.
func (t Time) Nanos() int64 {
	if t == TimeInfinite {
		return math.MaxInt64
	}
	return int64(t.Seconds)*nsPerSec + int64(nsFromFrac(t.Fraction))
}

// TimeFromTime converts a time.Time to an RTPS Time.
func TimeFromTime(tt time.Time) Time { return TimeFromNanos(tt.UnixNano()) }

// Duration is an RTPS duration (Duration_t): seconds plus a 2^-32 fraction.
// Both Cyclone and Fast DDS put fractions, not nanoseconds, on the wire.
type Duration struct {
	Seconds  int32
	Fraction uint32
}

// Special Duration values.
var (
	DurationZero     = Duration{0, 0}
	DurationInfinite = Duration{0x7fffffff, 0xffffffff}
)

// DurationFromTime converts a time.Duration to a wire Duration. Negative
// values become zero; values too large for int32 seconds become infinite.
func DurationFromTime(d time.Duration) Duration {
	if d <= 0 {
		return DurationZero
	}
	sec := int64(d) / nsPerSec
	if sec >= math.MaxInt32 {
		return DurationInfinite
	}
	return Duration{Seconds: int32(sec), Fraction: fracFromNs(uint64(int64(d) % nsPerSec))}
}

// IsInfinite reports whether d is DurationInfinite. Seconds == 0x7fffffff
// alone is also taken as infinite, as both stacks do.
func (d Duration) IsInfinite() bool { return d.Seconds == math.MaxInt32 }

// Std converts d to a time.Duration; infinite maps to math.MaxInt64 and
// negative to 0.
func (d Duration) Std() time.Duration {
	if d.IsInfinite() {
		return math.MaxInt64
	}
	if d.Seconds < 0 {
		return 0
	}
	return time.Duration(int64(d.Seconds)*nsPerSec + int64(nsFromFrac(d.Fraction)))
}

// Locator kinds.
const (
	LocatorKindInvalid  int32 = -1
	LocatorKindReserved int32 = 0
	LocatorKindUDPv4    int32 = 1
	LocatorKindUDPv6    int32 = 2
	LocatorKindSHM      int32 = 16 // Fast DDS shared memory
)

// Locator is a transport address (Locator_t, 24 bytes on the wire). For
// UDPv4 the address is 12 zero bytes followed by the IPv4 address.
type Locator struct {
	Kind    int32
	Port    uint32
	Address [16]byte
}

// LocatorInvalid is LOCATOR_INVALID.
var LocatorInvalid = Locator{Kind: LocatorKindInvalid}

// LocatorUDPv4 builds a UDPv4 locator.
func LocatorUDPv4(ip [4]byte, port uint16) Locator {
	l := Locator{Kind: LocatorKindUDPv4, Port: uint32(port)}
	copy(l.Address[12:], ip[:])
	return l
}

// LoopbackUDPv4 builds the UDPv4 locator 127.0.0.1:port.
func LoopbackUDPv4(port uint16) Locator { return LocatorUDPv4([4]byte{127, 0, 0, 1}, port) }

// LocatorFromAddrPort builds a UDPv4 or UDPv6 locator from ap.
func LocatorFromAddrPort(ap netip.AddrPort) Locator {
	a := ap.Addr()
	if a.Is4() || a.Is4In6() {
		return LocatorUDPv4(a.Unmap().As4(), ap.Port())
	}
	return Locator{Kind: LocatorKindUDPv6, Port: uint32(ap.Port()), Address: a.As16()}
}

// AddrPort returns the IP address and port of a UDPv4 or UDPv6 locator; ok
// is false for other kinds or for a port that does not fit 16 bits.
func (l Locator) AddrPort() (ap netip.AddrPort, ok bool) {
	if l.Port > 0xffff {
		return ap, false
	}
	switch l.Kind {
	case LocatorKindUDPv4:
		var a4 [4]byte
		copy(a4[:], l.Address[12:])
		return netip.AddrPortFrom(netip.AddrFrom4(a4), uint16(l.Port)), true
	case LocatorKindUDPv6:
		return netip.AddrPortFrom(netip.AddrFrom16(l.Address), uint16(l.Port)), true
	}
	return ap, false
}

// IsLoopback reports whether l is a UDP locator with a loopback address.
func (l Locator) IsLoopback() bool {
	ap, ok := l.AddrPort()
	return ok && ap.Addr().IsLoopback()
}

// IsMulticast reports whether l is a UDP locator with a multicast address.
func (l Locator) IsMulticast() bool {
	ap, ok := l.AddrPort()
	return ok && ap.Addr().IsMulticast()
}

// String formats l as "udpv4:127.0.0.1:7410" or "kind(16):port".
func (l Locator) String() string {
	if ap, ok := l.AddrPort(); ok {
		if l.Kind == LocatorKindUDPv4 {
			return "udpv4:" + ap.String()
		}
		return "udpv6:" + ap.String()
	}
	return fmt.Sprintf("kind(%d):%s:%d", l.Kind, hex.EncodeToString(l.Address[:]), l.Port)
}
