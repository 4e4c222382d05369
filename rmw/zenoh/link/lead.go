package link

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/nros-go/nros/internal/wakestamp"
)

// ErrYield is what ReadBatch returns while a leader has the link's reads
// (Leadable.Yield).
var ErrYield = errors.New("zenoh link: reads yielded to a leader")

// Leadable is a link whose reading another goroutine than its reader, a
// leader, can take over: an executor waits on the link that carries its
// /clock so that the sample's callback runs on the thread the kernel woke.
// The leader waits on a descriptor of its own (WaitBatch), so the reader's
// deadline (Yield) and the leader's (WaitBatch, Interrupt) are apart.
// Batches are handed out in order whoever reads them; the caller keeps
// ReadBatch, WaitBatch, TryFill and NextBatch from overlapping. Yield and
// Interrupt may come from any goroutine.
type Leadable interface {
	Link
	// Yield(true) makes a ReadBatch blocked now or later return ErrYield
	// at once; what it read stays for the next read. Yield(false) ends it.
	// A ReadBatch that has started its read may still complete it.
	Yield(on bool)
	// WaitBatch blocks until a whole batch has been read (NextBatch returns
	// it), deadline passes (zero: none), Interrupt is called or the link
	// fails. It calls ready once its deadline is set and before it blocks,
	// and returns at once if ready reports false. It reports whether a
	// whole batch waits.
	WaitBatch(deadline time.Time, ready func() bool) (bool, error)
	// Interrupt makes the WaitBatch in progress return, or the next one
	// once it has called ready.
	Interrupt()
	// TryFill reads what waits on the socket without blocking and reports
	// whether a whole batch waits.
	TryFill() (bool, error)
	// NextBatch returns the next whole batch read, if any; it stays valid
	// until the next read of the link.
	NextBatch() ([]byte, bool)
}

var _ Leadable = (*tcpLink)(nil)

// tcpLead is a leader's descriptor of a TCP link's socket.
type tcpLead struct {
	f  *os.File
	rc syscall.RawConn
	// waitRead and tryRead are WaitBatch's and TryFill's reads, made once
	// (a closure made per read escapes to the heap: an allocation per
	// batch); rerr is what the latest one met. The lead's reads do not
	// overlap (their caller keeps them apart, as for rb).
	waitRead func(fd uintptr) bool
	tryRead  func(fd uintptr)
	rerr     error
}

func (d *tcpLead) close() { _ = d.f.Close() }

// past is a deadline that has always passed.
var past = time.Unix(1, 0)

// Yield implements Leadable.
func (l *tcpLink) Yield(on bool) {
	if on {
		_ = l.conn.SetReadDeadline(past)
	} else {
		_ = l.conn.SetReadDeadline(time.Time{})
	}
}

// leader returns the leader's descriptor, made on first use.
func (l *tcpLink) leader() (*tcpLead, error) {
	l.lmu.Lock()
	defer l.lmu.Unlock()
	if l.lead != nil || l.leadErr != nil {
		return l.lead, l.leadErr
	}
	select {
	case <-l.closed:
		return nil, ErrClosed
	default:
	}
	l.lead, l.leadErr = newTCPLead(l.conn)
	if d := l.lead; d != nil {
		d.waitRead = func(fd uintptr) bool {
			wakestamp.Woke()
			whole, again, err := l.fill(fd)
			if err != nil {
				d.rerr = err
				return true
			}
			return whole || !again
		}
		d.tryRead = func(fd uintptr) { _, _, d.rerr = l.fill(fd) }
	}
	return l.lead, l.leadErr
}

func newTCPLead(c net.Conn) (*tcpLead, error) {
	sc, ok := c.(syscall.Conn)
	if !canLead || !ok {
		return nil, errors.ErrUnsupported
	}
	f, err := dupFile(sc)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &tcpLead{f: f, rc: rc}, nil
}

// WaitBatch implements Leadable.
func (l *tcpLink) WaitBatch(deadline time.Time, ready func() bool) (bool, error) {
	d, err := l.leader()
	if err != nil {
		return false, err
	}
	_ = d.f.SetReadDeadline(deadline)
	if !ready() {
		return false, nil
	}
	if l.whole() {
		return true, nil
	}
	d.rerr = nil
	err = d.rc.Read(d.waitRead)
	rerr := d.rerr
	switch {
	case rerr != nil:
		return false, l.readErr(rerr)
	case err == nil:
		return l.whole(), nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, nil
	default:
		return false, l.readErr(err)
	}
}

// Interrupt implements Leadable.
func (l *tcpLink) Interrupt() {
	if d, _ := l.leader(); d != nil {
		_ = d.f.SetReadDeadline(past)
	}
}

// TryFill implements Leadable.
func (l *tcpLink) TryFill() (bool, error) {
	d, err := l.leader()
	if err != nil {
		return false, err
	}
	d.rerr = nil
	if err := d.rc.Control(d.tryRead); err != nil {
		return false, l.readErr(err)
	}
	if rerr := d.rerr; rerr != nil {
		return false, l.readErr(rerr)
	}
	return l.whole(), nil
}

// fill reads from fd without blocking until a whole batch is in rb or
// nothing more waits (again).
func (l *tcpLink) fill(fd uintptr) (whole, again bool, err error) {
	for !l.whole() {
		l.makeRoom()
		n, again, err := readRaw(fd, l.rb[l.w:])
		if again {
			return false, true, nil
		}
		if err != nil {
			return false, false, err
		}
		if n == 0 {
			if l.w > l.r {
				return false, false, io.ErrUnexpectedEOF
			}
			return false, false, io.EOF
		}
		l.w += n
		wakestamp.Read()
	}
	return true, false, nil
}

// whole reports whether rb holds a whole batch.
func (l *tcpLink) whole() bool {
	if l.w-l.r < 2 {
		return false
	}
	n := int(l.rb[l.r]) | int(l.rb[l.r+1])<<8
	return l.w-l.r >= 2+n
}
