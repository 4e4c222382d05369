package rtps

import (
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nros-go/nros/internal/pollfd"
	"github.com/nros-go/nros/internal/wakestamp"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// A feed is the socket of its own that a best-effort subscription made
// with rmw.EndpointOptions.Feed reads from: the reader announces it as its
// unicast locator, so its writers send it there and nothing else arrives.
// Whoever reads a datagram hands it to handleDatagram:
//
//   - the feed's goroutine (recvLoop, with mayRead as its gate), while no
//     executor holds the feed or while someone wants it (rmw.Feed.Want);
//   - an executor that holds it, in Wait and Pull, on its own goroutine:
//     the sample is installed and the timer it makes due runs on one thread;
//   - a reader of ROS time, in Fresh, while the holder runs callbacks.
//
// The read deadline of the socket says which: it is in the past exactly
// while the feed's goroutine must stay out (held and not wanted), set under
// ctl together with the counts, so the goroutine cannot slip into a read
// once the feed is held.
type feed struct {
	t    *Transport
	sub  *Subscription // whose feed it is
	conn udp.Raw       // the feed's recvLoop reads it
	// econn is a second descriptor of the same socket, for the holder:
	// its read deadline is Wait's timeout and Interrupt, apart from the
	// one that keeps the feed's recvLoop out.
	econn *os.File
	erc   syscall.RawConn
	// waitRead and pullRead are f.readWait and f.readPull, bound once: a
	// closure made per read escapes to the heap (one allocation per sample).
	waitRead func(fd uintptr) bool
	pullRead func(fd uintptr)

	ctl   sync.Mutex // guards holds/wants changes and the deadline
	holds atomic.Int32
	wants atomic.Int32
	park  chan struct{} // wakes the feed's recvLoop when it may read again
	// parked: the feed's recvLoop waits in its gate. A read that it began
	// before a Hold can still complete after it (the deadline is checked
	// when a read starts), so a datagram sent just after Hold may be
	// delivered by that goroutine, as usual; tests wait for parked.
	parked atomic.Bool

	waiting atomic.Bool // a holder is inside Wait, or between Wait and Pull
	wbuf    []byte      // what Wait read, for Pull (guarded by waiting)
	wn      int         // its length; -1: none
	wsrc    netip.AddrPort
	closed  atomic.Bool

	mu       sync.Mutex // one puller at a time; guards buf and the pn fields
	buf      []byte     // Fresh's (made on first use, as wbuf)
	pn       int        // readPull's result
	psrc     netip.AddrPort
	perr     syscall.Errno
	lastPull atomic.Int64 // t.cfg.Clock reading of the latest Pull
}

// freshEvery bounds how often Fresh reads the socket: readers of ROS time
// inside a callback see samples at most this late.
const freshEvery = 100 * time.Microsecond

// past is a read deadline that has always passed.
var past = time.Unix(1, 0)

// fedSubscription is a Subscription with a feed: it implements rmw.Feed.
type fedSubscription struct {
	*Subscription
	f *feed
}

var _ rmw.Feed = fedSubscription{}

// newFeedLocked opens s's socket and announces it as s's locator. It
// returns nil (and s reads through the participant's sockets) when the
// network has no raw sockets or the reader is reliable.
func (t *Transport) newFeedLocked(s *Subscription) *feed {
	if s.qos.Reliability != rmw.BestEffort {
		return nil
	}
	nw := t.cfg.Network
	if nw == nil {
		nw = udp.System{Bind: t.bindAddr}
	}
	if _, ok := nw.(udp.System); !ok {
		return nil
	}
	c, err := nw.ListenUnicast(0)
	if err != nil {
		t.cfg.Logf("rtps: no socket of its own for %s: %v", s.ed.TopicName, err)
		return nil
	}
	raw, ok := c.(udp.Raw)
	if !ok {
		c.Close()
		return nil
	}
	econn, err := pollfd.Dup(raw, "rtps-feed")
	if err != nil {
		c.Close()
		t.cfg.Logf("rtps: no socket of its own for %s: %v", s.ed.TopicName, err)
		return nil
	}
	erc, err := econn.SyscallConn()
	if err != nil {
		c.Close()
		econn.Close()
		return nil
	}
	f := &feed{t: t, sub: s, conn: raw, econn: econn, erc: erc, park: make(chan struct{}, 1), wn: -1}
	f.waitRead, f.pullRead = f.readWait, f.readPull
	for _, a := range t.advertised(true) {
		s.ed.UnicastLocators = append(s.ed.UnicastLocators,
			wire.LocatorFromAddrPort(netip.AddrPortFrom(a, c.LocalAddr().Port())))
	}
	t.wg.Add(1)
	go t.recvLoop(raw, f.mayRead)
	return f
}

// mayRead is the gate of the feed's recvLoop: it reads while the feed is
// not held (or is wanted), and stops once the feed is closed.
func (f *feed) mayRead() bool {
	for !f.closed.Load() {
		if f.holds.Load() == 0 || f.wants.Load() > 0 {
			return true
		}
		f.parked.Store(true)
		select {
		case <-f.park:
		case <-f.t.done:
			f.parked.Store(false)
			return false
		}
		f.parked.Store(false)
	}
	return false
}

// adjust changes a count and, with it, whether the feed's recvLoop may read.
func (f *feed) adjust(c *atomic.Int32, n int) {
	f.ctl.Lock()
	defer f.ctl.Unlock()
	before := f.holds.Load() > 0 && f.wants.Load() == 0
	c.Add(int32(n))
	after := f.holds.Load() > 0 && f.wants.Load() == 0
	switch {
	case after && !before:
		_ = f.conn.SetReadDeadline(past)
	case before && !after:
		_ = f.conn.SetReadDeadline(time.Time{})
		select {
		case f.park <- struct{}{}:
		default:
		}
	}
}

// Hold implements rmw.Feed.
func (s fedSubscription) Hold(n int) { s.f.adjust(&s.f.holds, n) }

// Want implements rmw.Feed.
func (s fedSubscription) Want(n int) { s.f.adjust(&s.f.wants, n) }

// Wait implements rmw.Feed: it waits in the Go runtime's poller, so the
// thread that the kernel wakes for the datagram runs the holder on. The
// datagram is read here, into the holder's buffer, and handled by the Pull
// that follows (until then the feed stays the holder's: waiting is
// cleared by that Pull).
func (s fedSubscription) Wait(timeout time.Duration, ready func() bool) (readable, ok bool) {
	f := s.f
	if f.closed.Load() || !f.waiting.CompareAndSwap(false, true) {
		return false, false
	}
	var dl time.Time
	if timeout >= 0 {
		dl = pollDeadline(timeout)
	}
	_ = f.econn.SetReadDeadline(dl)
	if !ready() {
		f.waiting.Store(false)
		return false, true
	}
	f.wn = -1
	if f.wbuf == nil {
		f.wbuf = make([]byte, udp.MaxDatagram)
	}
	err := f.erc.Read(f.waitRead)
	if err != nil || f.wn < 0 || f.closed.Load() {
		f.wn = -1
		f.waiting.Store(false)
		return false, true
	}
	return true, true
}

// readWait is Wait's read of the socket: false (nothing yet) waits in the
// poller.
func (f *feed) readWait(fd uintptr) bool {
	wakestamp.Woke()
	n, src, errno := recvRaw(fd, f.wbuf)
	switch errno {
	case unix.EAGAIN:
		return false
	case 0:
		wakestamp.Read()
		f.wn, f.wsrc = n, src
	}
	return true
}

// Interrupt implements rmw.Feed.
func (s fedSubscription) Interrupt() { _ = s.f.econn.SetReadDeadline(past) }

// Pull implements rmw.Feed: it handles the datagram Wait read. More
// datagrams waiting are read by the next Wait, at once.
func (s fedSubscription) Pull() {
	f := s.f
	if !f.waiting.Load() {
		return
	}
	if f.wn >= 0 && !f.closed.Load() {
		f.t.handleDatagramVia(f.wbuf[:f.wn], f.wsrc, false, f.sub)
	}
	f.wn = -1
	f.lastPull.Store(f.t.cfg.Clock.Now())
	f.waiting.Store(false)
}

// Fresh implements rmw.Feed.
func (s fedSubscription) Fresh() {
	f := s.f
	if f.holds.Load() == 0 || f.wants.Load() > 0 || f.waiting.Load() || f.closed.Load() {
		return // a goroutine is reading the socket
	}
	if f.t.cfg.Clock.Now()-f.lastPull.Load() < int64(freshEvery) {
		return
	}
	if !f.mu.TryLock() {
		return // pulling now, or called from inside a pull
	}
	f.pullLocked()
	f.mu.Unlock()
}

// pullLocked reads every datagram waiting, without blocking (f.mu held).
func (f *feed) pullLocked() {
	f.lastPull.Store(f.t.cfg.Clock.Now())
	if f.buf == nil {
		f.buf = make([]byte, udp.MaxDatagram)
	}
	for !f.closed.Load() {
		n, src, ok := f.recv()
		if !ok {
			return
		}
		f.t.handleDatagramVia(f.buf[:n], src, false, f.sub)
	}
}

// recv reads one datagram into f.buf without blocking.
func (f *feed) recv() (n int, src netip.AddrPort, ok bool) {
	err := f.erc.Control(f.pullRead)
	return f.pn, f.psrc, err == nil && f.perr == 0
}

// readPull is recv's read (f.mu held).
func (f *feed) readPull(fd uintptr) { f.pn, f.psrc, f.perr = recvRaw(fd, f.buf) }

// recvRaw reads one datagram from fd into buf without blocking and with no
// allocation (the source address is read into a sockaddr on the stack).
func recvRaw(fd uintptr, buf []byte) (int, netip.AddrPort, syscall.Errno) {
	var sa unix.RawSockaddrInet4
	salen := uint32(unsafe.Sizeof(sa))
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
		unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&salen)))
	if errno != 0 {
		return 0, netip.AddrPort{}, errno
	}
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	return int(n), netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(p[0])<<8|uint16(p[1])), 0
}

// close stops the feed: a Wait in progress returns, the socket closes
// and the feed's recvLoop ends.
func (f *feed) close() {
	if !f.closed.CompareAndSwap(false, true) {
		return
	}
	_ = f.econn.Close() // unblocks a Wait
	_ = f.conn.Close()  // ends the recvLoop's read, and a pull's next one
	select {
	case f.park <- struct{}{}: // a recvLoop parked behind a hold sees closed
	default:
	}
}

// public is what NewSubscription returns for s: with a feed, a value that
// implements rmw.Feed.
func (s *Subscription) public() rmw.Subscription {
	if s.feed != nil {
		return fedSubscription{s, s.feed}
	}
	return s
}
