package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// UDP unicast: one batch per datagram. A listener demultiplexes the
// datagrams it receives by source address into one link per remote.

// UDPMTU is the largest batch on UDP (65535 less the IPv6 and UDP headers,
// as zenoh).
const UDPMTU = 65535 - 8 - 40

const (
	udpQueue    = 256  // datagrams queued per accepted link before drops
	udpMaxLinks = 1024 // remotes one listener serves
)

type udpDialed struct {
	conn          *net.UDPConn
	local, remote Endpoint
}

func dialUDP(ctx context.Context, e Endpoint) (Link, error) {
	addr, err := resolveAddr(e.Address)
	if err != nil {
		return nil, fmt.Errorf("zenoh link %s: %w", e, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UDPConn)
	return &udpDialed{conn: uc, local: endpointOf("udp", uc.LocalAddr()), remote: endpointOf("udp", uc.RemoteAddr())}, nil
}

func (l *udpDialed) ReadBatch(buf []byte) (int, error) {
	n, err := l.conn.Read(buf)
	if errors.Is(err, net.ErrClosed) {
		return 0, ErrClosed
	}
	return n, err
}

func (l *udpDialed) WriteBatch(b []byte) error {
	if len(b) > UDPMTU {
		return fmt.Errorf("zenoh link %s: batch of %d bytes exceeds the UDP MTU", l.remote, len(b))
	}
	_, err := l.conn.Write(b)
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return err
}

func (l *udpDialed) Close() error     { return l.conn.Close() }
func (l *udpDialed) MTU() int         { return UDPMTU }
func (l *udpDialed) Streamed() bool   { return false }
func (l *udpDialed) Local() Endpoint  { return l.local }
func (l *udpDialed) Remote() Endpoint { return l.remote }

type udpListener struct {
	conn    *net.UDPConn
	ep      Endpoint
	accepts chan *udpAccepted
	mu      sync.Mutex
	links   map[netip.AddrPort]*udpAccepted
	done    chan struct{}
	once    sync.Once
	// Drops counts datagrams dropped (queue full, too many remotes).
	drops int
}

type udpAccepted struct {
	ln     *udpListener
	from   netip.AddrPort
	in     chan []byte
	closed chan struct{}
	once   sync.Once
	remote Endpoint
}

func listenUDP(e Endpoint) (Listener, error) {
	addr, err := resolveAddr(e.Address)
	if err != nil {
		return nil, fmt.Errorf("zenoh link %s: %w", e, err)
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, err
	}
	ep := endpointOf("udp", c.LocalAddr())
	ep.Metadata, ep.Config = e.Metadata, e.Config
	l := &udpListener{conn: c, ep: ep, accepts: make(chan *udpAccepted, 16),
		links: map[netip.AddrPort]*udpAccepted{}, done: make(chan struct{})}
	go l.readLoop()
	return l, nil
}

func (l *udpListener) readLoop() {
	buf := make([]byte, 65535)
	for {
		n, from, err := l.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.Close()
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		l.mu.Lock()
		a := l.links[from]
		if a == nil {
			if len(l.links) >= udpMaxLinks {
				l.drops++
				l.mu.Unlock()
				continue
			}
			a = &udpAccepted{ln: l, from: from, in: make(chan []byte, udpQueue), closed: make(chan struct{}),
				remote: Endpoint{Proto: "udp", Address: from.String()}}
			select {
			case l.accepts <- a:
				l.links[from] = a
			default:
				l.drops++
				l.mu.Unlock()
				continue
			}
		}
		l.mu.Unlock()
		select {
		case a.in <- append([]byte(nil), buf[:n]...):
		default:
			l.mu.Lock()
			l.drops++
			l.mu.Unlock()
		}
	}
}

func (l *udpListener) Accept() (Link, error) {
	select {
	case a := <-l.accepts:
		return a, nil
	case <-l.done:
		return nil, ErrClosed
	}
}

func (l *udpListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.conn.Close()
	})
	return nil
}

func (l *udpListener) Endpoint() Endpoint { return l.ep }

func (a *udpAccepted) ReadBatch(buf []byte) (int, error) {
	select {
	case d := <-a.in:
		if len(d) > len(buf) {
			return 0, fmt.Errorf("zenoh link %s: datagram of %d bytes exceeds the %d-byte buffer", a.remote, len(d), len(buf))
		}
		return copy(buf, d), nil
	case <-a.closed:
		return 0, ErrClosed
	case <-a.ln.done:
		return 0, ErrClosed
	}
}

func (a *udpAccepted) WriteBatch(b []byte) error {
	select {
	case <-a.closed:
		return ErrClosed
	default:
	}
	if len(b) > UDPMTU {
		return fmt.Errorf("zenoh link %s: batch of %d bytes exceeds the UDP MTU", a.remote, len(b))
	}
	_, err := a.ln.conn.WriteToUDPAddrPort(b, a.from)
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return err
}

func (a *udpAccepted) Close() error {
	a.once.Do(func() {
		close(a.closed)
		a.ln.mu.Lock()
		if a.ln.links[a.from] == a {
			delete(a.ln.links, a.from)
		}
		a.ln.mu.Unlock()
	})
	return nil
}

func (a *udpAccepted) MTU() int         { return UDPMTU }
func (a *udpAccepted) Streamed() bool   { return false }
func (a *udpAccepted) Local() Endpoint  { return a.ln.ep }
func (a *udpAccepted) Remote() Endpoint { return a.remote }
