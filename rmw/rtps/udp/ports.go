package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// The RTPS well-known port constants (DDSI-RTPS 9.6.1.1), as both Cyclone
// DDS and Fast DDS use them.
const (
	PortBase        = 7400 // PB
	DomainGain      = 250  // DG
	ParticipantGain = 2    // PG
	OffsetD0        = 0    // SPDP multicast
	OffsetD1        = 10   // metatraffic unicast
	OffsetD2        = 1    // user multicast
	OffsetD3        = 11   // user unicast
)

// SPDPGroup is the default SPDP multicast group 239.255.0.1.
var SPDPGroup = netip.AddrFrom4([4]byte{239, 255, 0, 1})

// Loopback is 127.0.0.1.
var Loopback = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// Ports is the port mapping of one DDS domain.
type Ports struct{ Domain int }

// PortsFor returns the port mapping of domain, which must be in
// [0, MaxDomain].
func PortsFor(domain int) (Ports, error) {
	if domain < 0 || domain > MaxDomain {
		return Ports{}, fmt.Errorf("udp: domain id %d out of range [0, %d]", domain, MaxDomain)
	}
	return Ports{Domain: domain}, nil
}

// MaxDomain is the largest domain id whose ports (with participant ids up
// to MaxParticipantID) fit 16 bits.
const MaxDomain = 232

// MaxParticipantID bounds the participant index ListenParticipant tries and
// the index range SPDP probes may use.
const MaxParticipantID = 62

func (p Ports) base() int { return PortBase + DomainGain*p.Domain }

// SPDPMulticast is the SPDP multicast port (7400 in domain 0).
func (p Ports) SPDPMulticast() uint16 { return uint16(p.base() + OffsetD0) }

// UserMulticast is the user-traffic multicast port (7401 in domain 0).
func (p Ports) UserMulticast() uint16 { return uint16(p.base() + OffsetD2) }

// MetaUnicast is the metatraffic (discovery) unicast port of participant
// id (7410+2·id in domain 0).
func (p Ports) MetaUnicast(id int) uint16 {
	return uint16(p.base() + OffsetD1 + ParticipantGain*id)
}

// UserUnicast is the user-traffic unicast port of participant id
// (7411+2·id in domain 0).
func (p Ports) UserUnicast(id int) uint16 {
	return uint16(p.base() + OffsetD3 + ParticipantGain*id)
}

// ListenParticipant binds the metatraffic and user unicast ports of the
// lowest participant id in [0, maxID] for which both bind, as Cyclone's
// "auto" participant index does. It returns both Conns and the id.
func ListenParticipant(n Network, ports Ports, maxID int) (meta, user Conn, id int, err error) {
	if maxID > MaxParticipantID {
		maxID = MaxParticipantID
	}
	var last error
	for id = 0; id <= maxID; id++ {
		meta, err = n.ListenUnicast(ports.MetaUnicast(id))
		if err != nil {
			last = err
			continue
		}
		user, err = n.ListenUnicast(ports.UserUnicast(id))
		if err != nil {
			last = err
			meta.Close()
			continue
		}
		return meta, user, id, nil
	}
	return nil, nil, -1, fmt.Errorf("udp: no free participant id in [0, %d] of domain %d: %w", maxID, ports.Domain, last)
}

// Range is the ROS automatic discovery range (ROS_AUTOMATIC_DISCOVERY_RANGE).
type Range uint8

const (
	// RangeLocalhost (the default) binds and sends on 127.0.0.1 only:
	// SPDP goes to the loopback ports of a bounded range of participant
	// ids, to the static peers, and to 239.255.0.1 on lo when lo has the
	// MULTICAST flag.
	RangeLocalhost Range = iota
	// RangeSubnet binds 0.0.0.0 and uses SPDP multicast on every
	// multicast-capable interface, plus the static peers.
	RangeSubnet
	// RangeOff sends no discovery traffic except to the static peers.
	RangeOff
)

// String returns the ROS spelling of r.
func (r Range) String() string {
	switch r {
	case RangeLocalhost:
		return "LOCALHOST"
	case RangeSubnet:
		return "SUBNET"
	case RangeOff:
		return "OFF"
	}
	return fmt.Sprintf("Range(%d)", uint8(r))
}

// ParseRange parses a ROS_AUTOMATIC_DISCOVERY_RANGE value (case-insensitive;
// "" and "SYSTEM_DEFAULT" give RangeLocalhost, the nros default).
func ParseRange(s string) (Range, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "SYSTEM_DEFAULT", "LOCALHOST":
		return RangeLocalhost, nil
	case "SUBNET":
		return RangeSubnet, nil
	case "OFF":
		return RangeOff, nil
	}
	return RangeLocalhost, fmt.Errorf("udp: unknown ROS_AUTOMATIC_DISCOVERY_RANGE %q (want LOCALHOST, SUBNET, OFF or SYSTEM_DEFAULT)", s)
}

// ParseStaticPeers splits a ROS_STATIC_PEERS value ("host1;10.0.0.2;...")
// into trimmed, non-empty entries.
func ParseStaticPeers(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// CheckStaticPeer reports why a ROS_STATIC_PEERS entry cannot be used,
// without any lookup: an entry is an IPv4 address, "localhost" or a host
// name (letters, digits and hyphens in dot-separated labels of at most 63
// characters, 253 in all, not all digits). Ports, IPv6 addresses and
// anything else are refused.
func CheckStaticPeer(p string) error {
	if a, err := netip.ParseAddr(p); err == nil {
		if !a.Unmap().Is4() {
			return fmt.Errorf("udp: static peer %q is not IPv4", p)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(p); err == nil {
		return fmt.Errorf("udp: static peer %q: give a host or address without a port", p)
	}
	if len(p) == 0 || len(p) > 253 {
		return fmt.Errorf("udp: static peer %q is not a host name or IPv4 address", p)
	}
	numeric := true
	for _, label := range strings.Split(strings.TrimSuffix(p, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("udp: static peer %q is not a host name or IPv4 address", p)
		}
		for _, c := range label {
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return fmt.Errorf("udp: static peer %q is not a host name or IPv4 address", p)
			}
		}
	}
	if numeric {
		return fmt.Errorf("udp: static peer %q is not a valid IPv4 address", p)
	}
	return nil
}

// ResolvePeers turns static peer entries into IPv4 addresses. Entries that
// CheckStaticPeer refuses are skipped without any lookup; IP literals and
// "localhost" are resolved without any lookup; other names go through the
// system resolver. Entries that are refused or do not resolve are reported
// in err (joined, one error per entry, each naming it) and skipped.
func ResolvePeers(ctx context.Context, peers []string) ([]netip.Addr, error) {
	var out []netip.Addr
	var errs []error
	for _, p := range peers {
		if err := CheckStaticPeer(p); err != nil {
			errs = append(errs, err)
			continue
		}
		if a, err := netip.ParseAddr(p); err == nil {
			a = a.Unmap()
			if !a.Is4() {
				errs = append(errs, fmt.Errorf("udp: static peer %q is not IPv4", p))
				continue
			}
			out = append(out, a)
			continue
		}
		if strings.EqualFold(p, "localhost") {
			out = append(out, Loopback)
			continue
		}
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", p)
		if err != nil || len(addrs) == 0 {
			errs = append(errs, fmt.Errorf("udp: static peer %q: %v", p, err))
			continue
		}
		out = append(out, addrs[0].Unmap())
	}
	return out, errors.Join(errs...)
}
