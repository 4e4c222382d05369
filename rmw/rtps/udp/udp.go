// Package udp is the datagram layer of the nros RTPS transport: UDP sockets
// behind a small interface (Network and Conn), an in-memory Network for
// deterministic tests (MemNetwork), the RTPS port mapping of a domain
// (Ports), the choice of a participant index (ListenParticipant) and the ROS
// discovery-range settings (ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS).
//
// # Network safety
//
// The system network (System) binds the address it is given. In the
// LOCALHOST range the transport binds 127.0.0.1 only and sends to
// 127.0.0.1 only (plus the multicast group on lo when lo has the MULTICAST
// flag); see Range.
package udp

import (
	"errors"
	"net/netip"
	"syscall"
	"time"
)

// MaxDatagram is the largest datagram the layer reads (the largest UDP
// payload).
const MaxDatagram = 65536

// ErrClosed is returned by a closed Conn.
var ErrClosed = errors.New("udp: closed")

// Conn is a bound datagram socket.
type Conn interface {
	// ReadFrom blocks until a datagram arrives or the Conn is closed
	// (then it returns an error). The datagram is copied into buf; a
	// datagram longer than buf is truncated.
	ReadFrom(buf []byte) (n int, src netip.AddrPort, err error)
	// WriteTo sends one datagram to dst. For a Conn made by
	// ListenMulticast and a multicast dst, the datagram leaves through
	// every interface the Conn joined the group on.
	WriteTo(b []byte, dst netip.AddrPort) error
	// LocalAddr is the bound address (for multicast: the group and port).
	LocalAddr() netip.AddrPort
	// Close releases the socket and unblocks ReadFrom. It is idempotent.
	Close() error
}

// Raw is a Conn on an operating-system socket, which a goroutine may poll
// itself (the DDS transport's feeds, see rmw.Feed). Conns of System are
// Raw; MemNetwork's are not.
type Raw interface {
	Conn
	// SyscallConn gives the socket's file descriptor.
	SyscallConn() (syscall.RawConn, error)
	// SetReadDeadline makes a ReadFrom blocked now or later return an
	// error wrapping os.ErrDeadlineExceeded once t has passed (a t in the
	// past: at once); the zero Time removes the deadline.
	SetReadDeadline(t time.Time) error
}

// Network opens Conns.
type Network interface {
	// ListenUnicast binds a unicast socket on the network's bind address
	// and port (0: any free port). It fails if the port is taken: no
	// address reuse, so the caller can probe for a free participant index.
	ListenUnicast(port uint16) (Conn, error)
	// ListenMulticast binds port with address reuse and joins group on
	// each named interface (at least one). Datagrams written to a
	// multicast destination are sent on every one of them, with
	// multicast loopback on.
	ListenMulticast(group netip.Addr, port uint16, ifaces []string) (Conn, error)
}
