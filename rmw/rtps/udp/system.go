package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
)

// System is the Network of the operating system. Unicast sockets bind
// Bind (127.0.0.1 for the LOCALHOST range, 0.0.0.0 for SUBNET).
type System struct {
	Bind netip.Addr
}

// ListenUnicast binds Bind:port without address reuse.
func (s System) ListenUnicast(port uint16) (Conn, error) {
	if !s.Bind.Is4() {
		return nil, fmt.Errorf("udp: bind address %v is not IPv4", s.Bind)
	}
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(s.Bind, port)))
	if err != nil {
		return nil, err
	}
	setBuffers(c)
	return &sysConn{c: c, local: c.LocalAddr().(*net.UDPAddr).AddrPort()}, nil
}

// ListenMulticast binds group:port with SO_REUSEADDR (so that several
// participants on one host share it), joins group on every interface in
// ifaces and turns multicast loopback on.
func (s System) ListenMulticast(group netip.Addr, port uint16, ifaces []string) (Conn, error) {
	if !group.Is4() || !group.IsMulticast() {
		return nil, fmt.Errorf("udp: %v is not an IPv4 multicast group", group)
	}
	if len(ifaces) == 0 {
		return nil, errors.New("udp: multicast needs at least one interface")
	}
	var ifis []*net.Interface
	for _, name := range ifaces {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return nil, err
		}
		if ifi.Flags&net.FlagMulticast == 0 {
			return nil, fmt.Errorf("udp: interface %s has no MULTICAST flag", name)
		}
		ifis = append(ifis, ifi)
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = setReuseAddr(fd)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	// Binding the group address (not 0.0.0.0) keeps unicast traffic to
	// this port on other addresses out of the socket.
	pc, err := lc.ListenPacket(context.Background(), "udp4", netip.AddrPortFrom(group, port).String())
	if err != nil {
		return nil, err
	}
	c := pc.(*net.UDPConn)
	setBuffers(c)
	p := ipv4.NewPacketConn(c)
	for _, ifi := range ifis {
		if err := p.JoinGroup(ifi, &net.UDPAddr{IP: group.AsSlice()}); err != nil {
			c.Close()
			return nil, fmt.Errorf("udp: join %v on %s: %w", group, ifi.Name, err)
		}
	}
	if err := p.SetMulticastLoopback(true); err != nil {
		c.Close()
		return nil, err
	}
	_ = p.SetMulticastTTL(1)
	return &sysConn{c: c, p: p, ifis: ifis, local: netip.AddrPortFrom(group, port)}, nil
}

// SocketBuffer is the receive and send buffer size requested for every
// socket (the kernel caps it at net.core.rmem_max / wmem_max). Bursts of
// small samples overflow the usual 208 KiB default and cost repairs.
const SocketBuffer = 4 << 20

func setBuffers(c *net.UDPConn) {
	_ = c.SetReadBuffer(SocketBuffer)
	_ = c.SetWriteBuffer(SocketBuffer)
}

type sysConn struct {
	c     *net.UDPConn
	p     *ipv4.PacketConn // multicast only
	ifis  []*net.Interface // multicast only
	local netip.AddrPort
	wmu   sync.Mutex // serializes SetMulticastInterface + write
}

func (c *sysConn) ReadFrom(buf []byte) (int, netip.AddrPort, error) {
	n, src, err := c.c.ReadFromUDPAddrPort(buf)
	if err != nil && errors.Is(err, net.ErrClosed) {
		err = ErrClosed
	}
	return n, netip.AddrPortFrom(src.Addr().Unmap(), src.Port()), err
}

func (c *sysConn) WriteTo(b []byte, dst netip.AddrPort) error {
	if c.p != nil && dst.Addr().IsMulticast() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		var first error
		for _, ifi := range c.ifis {
			if err := c.p.SetMulticastInterface(ifi); err != nil {
				first = errors.Join(first, err)
				continue
			}
			if _, err := c.c.WriteToUDPAddrPort(b, dst); err != nil {
				first = errors.Join(first, err)
			}
		}
		return first
	}
	_, err := c.c.WriteToUDPAddrPort(b, dst)
	return err
}

func (c *sysConn) LocalAddr() netip.AddrPort { return c.local }

// SyscallConn returns the socket's raw connection (see Raw).
func (c *sysConn) SyscallConn() (syscall.RawConn, error) { return c.c.SyscallConn() }

// SetReadDeadline sets the deadline of ReadFrom (see Raw).
func (c *sysConn) SetReadDeadline(t time.Time) error { return c.c.SetReadDeadline(t) }

func (c *sysConn) Close() error {
	err := c.c.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// InterfaceHasMulticast reports whether the named interface exists, is up
// and has the MULTICAST flag (Linux lo has it only after
// `ip link set lo multicast on`).
func InterfaceHasMulticast(name string) bool {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return false
	}
	return ifi.Flags&net.FlagMulticast != 0 && ifi.Flags&net.FlagUp != 0
}

// MulticastInterfaces returns the names of the interfaces that are up and
// multicast-capable and have an IPv4 address, loopback included only if it
// has the MULTICAST flag. It is what the SUBNET range uses.
func MulticastInterfaces() []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []string
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagMulticast == 0 {
			continue
		}
		addrs, _ := ifi.Addrs()
		has4 := false
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				has4 = true
			}
		}
		if has4 {
			out = append(out, ifi.Name)
		}
	}
	return out
}

// InterfaceAddrs4 returns the IPv4 addresses of the named interfaces.
func InterfaceAddrs4(names []string) []netip.Addr {
	var out []netip.Addr
	for _, name := range names {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			continue
		}
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP.To4()); ok && ipn.IP.To4() != nil {
					out = append(out, ip)
				}
			}
		}
	}
	return out
}
