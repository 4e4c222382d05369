package udp

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
)

// MemNetwork is an in-memory Network for tests: datagrams are copied into
// the receiving Conn's queue, in order, with no real sockets. It is
// deterministic: a datagram is lost only when Drop says so or when the
// receiver's queue is full (QueueLen).
//
// Every host of a MemNetwork binds Addr (127.0.0.1 by default); several
// Transports share one MemNetwork to talk to each other, and
// unicast ports collide exactly as real ones do.
type MemNetwork struct {
	// Addr is the address unicast Conns bind (default 127.0.0.1).
	Addr netip.Addr
	// QueueLen bounds each Conn's receive queue (default 1024);
	// datagrams beyond it are dropped, like a full socket buffer.
	QueueLen int
	// Drop, if set, is asked for every datagram sent and to every
	// receiver; returning true loses that copy. It is called with no
	// MemNetwork lock held, on the sending goroutine.
	Drop func(src, dst netip.AddrPort, b []byte) bool

	mu      sync.Mutex
	unicast map[netip.AddrPort]*memConn
	groups  map[netip.AddrPort][]*memConn
	next    uint16 // next ephemeral port
	sent    uint64
	dropped uint64
}

// NewMemNetwork returns an empty in-memory network on 127.0.0.1.
func NewMemNetwork() *MemNetwork { return &MemNetwork{} }

func (m *MemNetwork) init() {
	if m.unicast == nil {
		m.unicast = map[netip.AddrPort]*memConn{}
		m.groups = map[netip.AddrPort][]*memConn{}
		m.next = 40000
	}
	if !m.Addr.IsValid() {
		m.Addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
}

// Counts returns the datagram copies delivered to queues and those dropped.
func (m *MemNetwork) Counts() (delivered, dropped uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent, m.dropped
}

// ListenUnicast binds Addr:port; port 0 picks a free port from 40000 up.
func (m *MemNetwork) ListenUnicast(port uint16) (Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if port == 0 {
		for {
			m.next++
			if m.next == 0 {
				m.next = 40001
			}
			if _, used := m.unicast[netip.AddrPortFrom(m.Addr, m.next)]; !used {
				port = m.next
				break
			}
		}
	}
	ap := netip.AddrPortFrom(m.Addr, port)
	if _, used := m.unicast[ap]; used {
		return nil, fmt.Errorf("udp: mem address %v in use", ap)
	}
	c := m.newConn(ap)
	m.unicast[ap] = c
	return c, nil
}

// ListenMulticast joins group:port; any number of Conns may.
func (m *MemNetwork) ListenMulticast(group netip.Addr, port uint16, ifaces []string) (Conn, error) {
	if !group.IsMulticast() {
		return nil, fmt.Errorf("udp: %v is not a multicast group", group)
	}
	if len(ifaces) == 0 {
		return nil, errors.New("udp: multicast needs at least one interface")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	ap := netip.AddrPortFrom(group, port)
	c := m.newConn(ap)
	c.group = true
	m.groups[ap] = append(m.groups[ap], c)
	return c, nil
}

func (m *MemNetwork) newConn(ap netip.AddrPort) *memConn {
	n := m.QueueLen
	if n <= 0 {
		n = 1024
	}
	return &memConn{m: m, local: ap, q: make(chan memDatagram, n), done: make(chan struct{})}
}

type memDatagram struct {
	b   []byte
	src netip.AddrPort
}

type memConn struct {
	m     *MemNetwork
	local netip.AddrPort
	group bool
	q     chan memDatagram
	done  chan struct{}
	once  sync.Once
}

func (c *memConn) ReadFrom(buf []byte) (int, netip.AddrPort, error) {
	select {
	case d := <-c.q:
		return copy(buf, d.b), d.src, nil
	case <-c.done:
		return 0, netip.AddrPort{}, ErrClosed
	}
}

func (c *memConn) WriteTo(b []byte, dst netip.AddrPort) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if len(b) > MaxDatagram {
		return fmt.Errorf("udp: datagram of %d bytes too large", len(b))
	}
	m := c.m
	src := c.local
	if c.group {
		src = netip.AddrPortFrom(m.Addr, c.local.Port())
	}
	m.mu.Lock()
	var targets []*memConn
	if dst.Addr().IsMulticast() {
		targets = append(targets, m.groups[dst]...)
	} else if t := m.unicast[dst]; t != nil {
		targets = append(targets, t)
	}
	m.mu.Unlock()
	for _, t := range targets {
		if m.Drop != nil && m.Drop(src, dst, b) {
			m.count(false)
			continue
		}
		d := memDatagram{b: append([]byte(nil), b...), src: src}
		select {
		case <-t.done:
		case t.q <- d:
			m.count(true)
		default:
			m.count(false)
		}
	}
	return nil
}

func (m *MemNetwork) count(ok bool) {
	m.mu.Lock()
	if ok {
		m.sent++
	} else {
		m.dropped++
	}
	m.mu.Unlock()
}

func (c *memConn) LocalAddr() netip.AddrPort { return c.local }

func (c *memConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		m := c.m
		m.mu.Lock()
		defer m.mu.Unlock()
		if c.group {
			list := m.groups[c.local]
			out := list[:0:0]
			for _, x := range list {
				if x != c {
					out = append(out, x)
				}
			}
			m.groups[c.local] = out
		} else if m.unicast[c.local] == c {
			delete(m.unicast, c.local)
		}
	})
	return nil
}
