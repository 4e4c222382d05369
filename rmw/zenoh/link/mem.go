package link

import (
	"fmt"
	"sync"
)

// In-memory links for tests: Pipe makes a connected pair; "mem/NAME"
// endpoints dial and listen within the process.

const memQueue = 64

type memLink struct {
	in            chan []byte
	peer          *memLink
	closed        chan struct{}
	once          *sync.Once
	local, remote Endpoint
	mtu           int
}

// Pipe returns two connected in-memory links (each batch is copied; a
// write blocks while 64 batches wait unread). Closing either end closes
// both. mtu is their MTU (0: MaxBatch).
func Pipe(mtu int) (Link, Link) {
	if mtu <= 0 || mtu > MaxBatch {
		mtu = MaxBatch
	}
	closed := make(chan struct{})
	once := &sync.Once{}
	a := &memLink{in: make(chan []byte, memQueue), closed: closed, once: once, mtu: mtu,
		local: Endpoint{Proto: "mem", Address: "a"}, remote: Endpoint{Proto: "mem", Address: "b"}}
	b := &memLink{in: make(chan []byte, memQueue), closed: closed, once: once, mtu: mtu,
		local: a.remote, remote: a.local}
	a.peer, b.peer = b, a
	return a, b
}

func (l *memLink) ReadBatch(buf []byte) (int, error) {
	var d []byte
	select {
	case d = <-l.in:
	case <-l.closed:
		// like a stream: what was written before the close is still read
		select {
		case d = <-l.in:
		default:
			return 0, ErrClosed
		}
	}
	if len(d) > len(buf) {
		return 0, fmt.Errorf("zenoh link mem: batch of %d bytes exceeds the %d-byte buffer", len(d), len(buf))
	}
	return copy(buf, d), nil
}

func (l *memLink) WriteBatch(b []byte) error {
	if len(b) > l.mtu {
		return fmt.Errorf("zenoh link mem: batch of %d bytes exceeds the MTU %d", len(b), l.mtu)
	}
	select {
	case <-l.closed:
		return ErrClosed
	default:
	}
	select {
	case l.peer.in <- append([]byte(nil), b...):
		return nil
	case <-l.closed:
		return ErrClosed
	}
}

func (l *memLink) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memLink) MTU() int         { return l.mtu }
func (l *memLink) Streamed() bool   { return true }
func (l *memLink) Local() Endpoint  { return l.local }
func (l *memLink) Remote() Endpoint { return l.remote }

var memRegistry = struct {
	sync.Mutex
	m map[string]*memListener
}{m: map[string]*memListener{}}

type memListener struct {
	ep      Endpoint
	accepts chan Link
	done    chan struct{}
	once    sync.Once
}

func listenMem(e Endpoint) (Listener, error) {
	memRegistry.Lock()
	defer memRegistry.Unlock()
	if _, ok := memRegistry.m[e.Address]; ok {
		return nil, fmt.Errorf("zenoh link %s: address in use", e)
	}
	l := &memListener{ep: e, accepts: make(chan Link, 16), done: make(chan struct{})}
	memRegistry.m[e.Address] = l
	return l, nil
}

func dialMem(e Endpoint) (Link, error) {
	memRegistry.Lock()
	l := memRegistry.m[e.Address]
	memRegistry.Unlock()
	if l == nil {
		return nil, fmt.Errorf("zenoh link %s: connection refused", e)
	}
	a, b := Pipe(0)
	a.(*memLink).remote, b.(*memLink).local = e, e
	select {
	case l.accepts <- b:
		return a, nil
	case <-l.done:
		return nil, fmt.Errorf("zenoh link %s: connection refused", e)
	}
}

func (l *memListener) Accept() (Link, error) {
	select {
	case c := <-l.accepts:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		memRegistry.Lock()
		if memRegistry.m[l.ep.Address] == l {
			delete(memRegistry.m, l.ep.Address)
		}
		memRegistry.Unlock()
	})
	return nil
}

func (l *memListener) Endpoint() Endpoint { return l.ep }
