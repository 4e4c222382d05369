package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

// TCP: each batch is preceded by its length, 2 bytes little endian.

type tcpLink struct {
	conn net.Conn
	// rb holds what was read and not handed out yet, rb[r:w]: whole
	// batches and the start of the next one. ReadBatch and the lead's
	// reads share it (their caller keeps them from overlapping), so a read
	// that yields keeps what it had.
	rb            []byte
	r, w          int
	wmu           sync.Mutex
	wbuf          []byte
	local, remote Endpoint
	closeOnce     sync.Once
	closed        chan struct{}
	lmu           sync.Mutex
	lead          *tcpLead // a leader's descriptor of the socket (lead.go), made on first use
	leadErr       error    // why there is none
}

func newTCPLink(c net.Conn) *tcpLink {
	return &tcpLink{
		conn:   c,
		rb:     make([]byte, 2*(2+MaxBatch)),
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
	for {
		if b, ok := l.NextBatch(); ok {
			if len(b) > len(buf) {
				return 0, fmt.Errorf("zenoh link %s: batch of %d bytes exceeds the %d-byte buffer", l.remote, len(b), len(buf))
			}
			return copy(buf, b), nil
		}
		l.makeRoom()
		n, err := l.conn.Read(l.rb[l.w:])
		l.w += n
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, ErrYield
			}
			if errors.Is(err, io.EOF) && l.w > l.r {
				err = io.ErrUnexpectedEOF
			}
			return 0, l.readErr(err)
		}
	}
}

// NextBatch returns the next whole batch read, if any; it stays valid
// until the next read of the link.
func (l *tcpLink) NextBatch() ([]byte, bool) {
	if !l.whole() {
		return nil, false
	}
	n := int(l.rb[l.r]) | int(l.rb[l.r+1])<<8
	b := l.rb[l.r+2 : l.r+2+n]
	l.r += 2 + n
	return b, true
}

// makeRoom moves a partial batch to the front of rb when a whole batch
// might not fit after it (rb holds two).
func (l *tcpLink) makeRoom() {
	if l.r == l.w {
		l.r, l.w = 0, 0
		return
	}
	if len(l.rb)-l.w < 2+MaxBatch {
		l.w = copy(l.rb, l.rb[l.r:l.w])
		l.r = 0
	}
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
		l.lmu.Lock()
		if l.lead != nil {
			l.lead.close()
		}
		l.leadErr = ErrClosed
		l.lmu.Unlock()
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
