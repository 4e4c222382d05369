package link

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// TCP: each batch is preceded by its length, 2 bytes little endian.

type tcpLink struct {
	conn          net.Conn
	r             *bufio.Reader
	wmu           sync.Mutex
	wbuf          []byte
	local, remote Endpoint
	closeOnce     sync.Once
	closed        chan struct{}
}

func newTCPLink(c net.Conn) *tcpLink {
	return &tcpLink{
		conn:   c,
		r:      bufio.NewReaderSize(c, 2+MaxBatch),
		local:  endpointOf("tcp", c.LocalAddr()),
		remote: endpointOf("tcp", c.RemoteAddr()),
		closed: make(chan struct{}),
	}
}

func dialTCP(ctx context.Context, e Endpoint) (Link, error) {
	addr, err := resolveAddr(e.Address)
	if err != nil {
		return nil, fmt.Errorf("zenoh link %s: %w", e, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newTCPLink(c), nil
}

func (l *tcpLink) ReadBatch(buf []byte) (int, error) {
	var h [2]byte
	if _, err := io.ReadFull(l.r, h[:]); err != nil {
		return 0, l.readErr(err)
	}
	n := int(h[0]) | int(h[1])<<8
	if n > len(buf) {
		return 0, fmt.Errorf("zenoh link %s: batch of %d bytes exceeds the %d-byte buffer", l.remote, n, len(buf))
	}
	if _, err := io.ReadFull(l.r, buf[:n]); err != nil {
		return 0, l.readErr(err)
	}
	return n, nil
}

func (l *tcpLink) readErr(err error) error {
	select {
	case <-l.closed:
		return ErrClosed
	default:
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("zenoh link %s: stream ended inside a batch: %w", l.remote, err)
	}
	return err
}

func (l *tcpLink) WriteBatch(b []byte) error {
	if len(b) > MaxBatch {
		return fmt.Errorf("zenoh link %s: batch of %d bytes", l.remote, len(b))
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.wbuf = append(l.wbuf[:0], byte(len(b)), byte(len(b)>>8))
	l.wbuf = append(l.wbuf, b...)
	_, err := l.conn.Write(l.wbuf)
	if err != nil {
		select {
		case <-l.closed:
			return ErrClosed
		default:
		}
	}
	return err
}

func (l *tcpLink) Close() error {
	err := ErrClosed
	l.closeOnce.Do(func() {
		close(l.closed)
		err = l.conn.Close()
	})
	return err
}

func (l *tcpLink) MTU() int         { return MaxBatch }
func (l *tcpLink) Streamed() bool   { return true }
func (l *tcpLink) Local() Endpoint  { return l.local }
func (l *tcpLink) Remote() Endpoint { return l.remote }
func (l *tcpLink) String() string   { return l.local.String() + "=>" + l.remote.String() }

type tcpListener struct {
	ln net.Listener
	ep Endpoint
}

func listenTCP(e Endpoint) (Listener, error) {
	addr, err := resolveAddr(e.Address)
	if err != nil {
		return nil, fmt.Errorf("zenoh link %s: %w", e, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ep := endpointOf("tcp", ln.Addr())
	ep.Metadata, ep.Config = e.Metadata, e.Config
	return &tcpListener{ln: ln, ep: ep}, nil
}

func (l *tcpListener) Accept() (Link, error) {
	c, err := l.ln.Accept()
	if err != nil {
		if errors.Is(err, net.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, err
	}
	return newTCPLink(c), nil
}

func (l *tcpListener) Close() error       { return l.ln.Close() }
func (l *tcpListener) Endpoint() Endpoint { return l.ep }
