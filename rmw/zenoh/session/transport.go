package session

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Queue bounds of one link's transmit side.
const (
	// DropThreshold: above this many bytes waiting, droppable messages are
	// dropped (counted).
	DropThreshold = 1 << 20
	// UnresponsiveThreshold: above this many bytes waiting the link is
	// closed (UNRESPONSIVE): the remote does not read.
	UnresponsiveThreshold = 16 << 20
	// closeLinger is how long a closing link may take to write its CLOSE.
	closeLinger = time.Second
)

// transport runs one established link: a reader goroutine (decode, then
// dispatch to the session), a writer goroutine (takes the batches Tx
// prepared while it was busy: batching under load, immediate when idle)
// and a lease goroutine (keep-alives, expiry).
type transport struct {
	s    *Session
	f    *Face
	l    link.Link
	p    Params
	rx   *Rx
	txmu sync.Mutex
	tx   *Tx
	// dropped counts messages dropped because the link could not keep up.
	dropped atomic.Uint64

	wake    chan struct{} // writer has work
	closing chan struct{} // closed when shutdown starts
	once    sync.Once
	err     error // why it closed (set before closing is closed)
	lastRx  atomic.Int64
	lastTx  atomic.Int64
	wg      sync.WaitGroup // writer and lease goroutines
	ld      lead           // a goroutine outside the session that reads the link (lead.go)

	// the rx counts already added to the session's (whoever reads: rmu)
	malformed, outOfOrder uint64
}

func newTransport(s *Session, l link.Link, p Params) *transport {
	t := &transport{s: s, l: l, p: p, rx: NewRx(p, s.cfg.MaxMessageSize), tx: NewTx(p),
		wake: make(chan struct{}, 1), closing: make(chan struct{})}
	t.ld.init()
	now := s.cfg.Clock.Now()
	t.lastRx.Store(now)
	t.lastTx.Store(now)
	return t
}

func (t *transport) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// send queues a network message; it never blocks. It returns false when
// the message was dropped (link closing, or congested and droppable).
func (t *transport) send(m wire.NetworkMessage, reliable bool) bool {
	select {
	case <-t.closing:
		return false
	default:
	}
	t.txmu.Lock()
	pending := t.tx.Pending()
	q := QoSOf(m)
	if pending > DropThreshold && (!reliable || q.CongestionControl() == wire.Drop) {
		t.txmu.Unlock()
		t.dropped.Add(1)
		return false
	}
	err := t.tx.Push(m, reliable)
	pending = t.tx.Pending()
	t.txmu.Unlock()
	if err != nil {
		t.dropped.Add(1)
		return false
	}
	if pending > UnresponsiveThreshold {
		t.shutdown(closeErr(wire.CloseUnresponsive, "%d bytes not written", pending), true)
		return false
	}
	t.signal()
	return true
}

// shutdown starts closing the link once: CLOSE is written after what is
// queued (if sendClose), then the link is closed.
func (t *transport) shutdown(err error, sendClose bool) {
	t.once.Do(func() {
		t.err = err
		if sendClose {
			if b := CloseBatch(err, true); b != nil {
				t.txmu.Lock()
				t.tx.PushBatch(b)
				t.txmu.Unlock()
			}
		}
		close(t.closing)
		t.signal()
		t.s.cfg.Clock.AfterFunc(closeLinger, func() { t.l.Close() })
		if !sendClose {
			t.l.Close()
		}
	})
}

func (t *transport) start() {
	t.wg.Add(2)
	go t.writer()
	go t.lease()
	go t.reader() // counted in s.wg by establish
}

func (t *transport) writer() {
	defer t.wg.Done()
	for {
		select {
		case <-t.wake:
		case <-t.closing:
		}
		t.txmu.Lock()
		batches := t.tx.Take()
		t.txmu.Unlock()
		for _, b := range batches {
			t.s.trace(t.l, false, b.B)
			if err := t.l.WriteBatch(b.B); err != nil {
				t.shutdown(err, false)
				return
			}
			t.lastTx.Store(t.s.cfg.Clock.Now())
		}
		t.txmu.Lock()
		t.tx.Recycle(batches)
		t.txmu.Unlock()
		select {
		case <-t.closing:
			t.txmu.Lock()
			rest := t.tx.Take()
			t.txmu.Unlock()
			for _, b := range rest {
				t.s.trace(t.l, false, b.B)
				if t.l.WriteBatch(b.B) != nil {
					break
				}
			}
			t.l.Close()
			return
		default:
		}
	}
}

// keepAliveInterval is a quarter of our lease, as zenoh.
func (t *transport) keepAliveInterval() time.Duration {
	d := t.p.LocalLease / 4
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

func (t *transport) lease() {
	defer t.wg.Done()
	ka := t.keepAliveInterval()
	clk := t.s.cfg.Clock
	tick, stop := after(clk, ka)
	defer func() { stop() }()
	for {
		select {
		case <-t.closing:
			return
		case <-tick:
			tick, stop = after(clk, ka)
			n := clk.Now()
			if t.p.RemoteLease > 0 && time.Duration(n-t.lastRx.Load()) > t.p.RemoteLease {
				t.shutdown(closeErr(wire.CloseExpired, "nothing received for %v", t.p.RemoteLease), true)
				return
			}
			if time.Duration(n-t.lastTx.Load()) >= ka {
				t.txmu.Lock()
				empty := t.tx.Pending() == 0
				if empty {
					t.tx.PushBatch([]byte{wire.MidKeepAlive})
				}
				t.txmu.Unlock()
				t.signal()
			}
		}
	}
}

func (t *transport) reader() {
	defer t.s.wg.Done()
	buf := make([]byte, link.MaxBatch)
	for t.mayRead() {
		t.ld.rmu.Lock()
		n, err := t.l.ReadBatch(buf)
		if errors.Is(err, link.ErrYield) {
			t.ld.rmu.Unlock()
			continue
		}
		if err != nil {
			t.ld.rmu.Unlock()
			t.shutdown(err, false)
			break
		}
		stop := t.handle(buf[:n])
		t.ld.rmu.Unlock()
		if stop {
			break
		}
	}
	t.wg.Wait()
	t.l.Close()
	// A leader that read a batch handles it (or drops it: closing) before
	// the face goes down; one in WaitBatch returns, the link being closed.
	t.ld.rmu.Lock()
	//lint:ignore SA2001 a barrier: a leader's read and handling end first
	t.ld.rmu.Unlock()
	t.s.faceDown(t.f)
}

// handle handles one received batch (whoever read it holds ld.rmu). It
// reports true when the transport is closing: nothing more is read.
func (t *transport) handle(b []byte) bool {
	t.lastRx.Store(t.s.cfg.Clock.Now())
	t.s.trace(t.l, true, b)
	err := t.rx.Batch(b, func(m wire.NetworkMessage, reliable bool) {
		t.s.dispatch(t.f, m, reliable)
	})
	if d := t.rx.Stats.Malformed - t.malformed; d != 0 {
		t.s.Stats.Malformed.Add(d)
		t.malformed += d
	}
	if d := t.rx.Stats.OutOfOrder - t.outOfOrder; d != 0 {
		t.s.Stats.OutOfOrder.Add(d)
		t.outOfOrder += d
	}
	if err != nil {
		t.shutdown(err, false)
		return true
	}
	select {
	case <-t.closing:
		t.shutdown(nil, false)
		return true
	default:
		return false
	}
}

// closeReason is why the transport closed (nil while open).
func (t *transport) closeReason() error {
	select {
	case <-t.closing:
		if t.err == nil {
			return errors.New("zenoh: closed")
		}
		return t.err
	default:
		return nil
	}
}
