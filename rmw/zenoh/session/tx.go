package session

import (
	"fmt"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Batch is a sealed batch ready to be written to the link.
type Batch struct {
	B []byte
	// Droppable is set when every message in the batch is best effort or
	// has congestion control Drop: such a batch may be dropped when the
	// link cannot keep up.
	Droppable bool
}

// Tx packs outgoing network messages into batches, sans IO: consecutive
// messages of one channel (priority and reliability) share a FRAME and its
// sequence number while they fit in a batch; a message larger than a batch
// is cut into FRAGMENTs, one per batch. Take returns what is ready.
type Tx struct {
	batchSize int
	qos       bool
	patch     uint8
	mask      uint32
	next      [wire.NumPriorities][2]uint32

	cur      []byte // open batch with a FRAME header; nil when none
	curHdr   int    // length of the frame header (content starts there)
	curPrio  wire.Priority
	curRel   bool
	curDrop  bool
	curFixed bool // an express message closed the batch
	ready    []Batch
	pending  int
	scratch  []byte
	free     [][]byte // written batch buffers (capacity batchSize), see Recycle
	spare    []Batch  // the list the last Take returned, back from Recycle
}

// maxFree bounds the batch buffers a Tx keeps for reuse: one being filled
// and one being written is the steady state.
const maxFree = 4

// NewTx makes the transmit side of a link agreed by p.
func NewTx(p Params) *Tx {
	t := &Tx{batchSize: p.BatchSize, qos: p.QoS, patch: p.Patch, mask: uint32(p.FrameSN.SNMask())}
	for i := range t.next {
		t.next[i] = [2]uint32{p.TxInitialSN & t.mask, p.TxInitialSN & t.mask}
	}
	return t
}

// Pending is the number of bytes waiting (open batch included).
func (t *Tx) Pending() int { return t.pending + len(t.cur) }

// QoSOf returns the QoS of a network message.
func QoSOf(m wire.NetworkMessage) wire.QoS {
	switch m := m.(type) {
	case *wire.Push:
		return m.QoS
	case *wire.Request:
		return m.QoS
	case *wire.Response:
		return m.QoS
	case *wire.ResponseFinal:
		return m.QoS
	case *wire.Declare:
		return m.QoS
	case *wire.Interest:
		return m.QoS
	case *wire.NetworkOAM:
		return m.QoS
	}
	return wire.QoS{}
}

func rel(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *Tx) channel(q wire.QoS) wire.Priority {
	if !t.qos {
		return wire.PriorityData
	}
	return q.Priority()
}

// buf returns an empty buffer of capacity batchSize, a recycled one when
// there is one.
func (t *Tx) buf() []byte {
	if n := len(t.free); n > 0 {
		b := t.free[n-1]
		t.free[n-1] = nil
		t.free = t.free[:n-1]
		return b
	}
	return make([]byte, 0, t.batchSize)
}

func (t *Tx) open(prio wire.Priority, reliable bool) {
	t.cur = wire.AppendFrameHeader(t.buf(), reliable, t.next[prio][rel(reliable)], prio)
	t.curHdr = len(t.cur)
	t.curPrio, t.curRel, t.curDrop, t.curFixed = prio, reliable, true, false
}

// seal closes the open batch; an empty frame is discarded and its sequence
// number not used.
func (t *Tx) seal() {
	if t.cur == nil {
		return
	}
	if len(t.cur) > t.curHdr {
		t.ready = append(t.ready, Batch{B: t.cur, Droppable: t.curDrop})
		t.pending += len(t.cur)
		n := &t.next[t.curPrio][rel(t.curRel)]
		*n = (*n + 1) & t.mask
	}
	t.cur = nil
}

// Push adds a network message for the given reliability. Its priority,
// congestion control and express flag come from its QoS.
func (t *Tx) Push(m wire.NetworkMessage, reliable bool) error {
	q := QoSOf(m)
	prio := t.channel(q)
	droppable := !reliable || q.CongestionControl() == wire.Drop
	if t.cur != nil && (t.curPrio != prio || t.curRel != reliable || t.curFixed) {
		t.seal()
	}
	if t.cur == nil {
		t.open(prio, reliable)
	}
	mark := len(t.cur)
	var err error
	t.cur, err = wire.AppendNetwork(t.cur, m)
	if err != nil {
		t.cur = t.cur[:mark]
		return err
	}
	if len(t.cur) <= t.batchSize {
		t.added(droppable, q.Express())
		return nil
	}
	// It does not fit: move it to a batch of its own, or fragment it.
	t.scratch = append(t.scratch[:0], t.cur[mark:]...)
	t.cur = t.cur[:mark]
	t.seal()
	t.open(prio, reliable)
	if t.curHdr+len(t.scratch) <= t.batchSize {
		t.cur = append(t.cur, t.scratch...)
		t.added(droppable, q.Express())
		return nil
	}
	t.cur = nil
	return t.fragment(t.scratch, prio, reliable, droppable)
}

func (t *Tx) added(droppable, express bool) {
	t.curDrop = t.curDrop && droppable
	if express {
		t.curFixed = true
	}
}

func (t *Tx) fragment(msg []byte, prio wire.Priority, reliable, droppable bool) error {
	first := true
	for len(msg) > 0 {
		f := wire.Fragment{Reliable: reliable, More: true, SN: t.next[prio][rel(reliable)], Priority: prio,
			First: first && t.patch >= wire.PatchCurrent}
		hdr := wire.AppendFragmentHeader(t.buf(), &f)
		room := t.batchSize - len(hdr)
		if room <= 0 {
			return fmt.Errorf("zenoh tx: batch size %d leaves no room for a fragment", t.batchSize)
		}
		if len(msg) <= room {
			f.More = false
			hdr = wire.AppendFragmentHeader(hdr[:0], &f)
			room = len(msg)
		}
		b := append(hdr, msg[:room]...)
		msg = msg[room:]
		t.ready = append(t.ready, Batch{B: b, Droppable: droppable})
		t.pending += len(b)
		n := &t.next[prio][rel(reliable)]
		*n = (*n + 1) & t.mask
		first = false
	}
	return nil
}

// PushBatch queues a batch built elsewhere (KEEP_ALIVE, CLOSE) after what
// is already queued.
func (t *Tx) PushBatch(b []byte) {
	t.seal()
	t.ready = append(t.ready, Batch{B: b})
	t.pending += len(b)
}

// Take seals the open batch and returns every ready batch, in order. The
// caller owns them until it hands them to Recycle.
func (t *Tx) Take() []Batch {
	t.seal()
	r := t.ready
	t.ready = t.spare
	t.spare = nil
	t.pending = 0
	return r
}

// Recycle gives back what Take returned, once written: its buffers (those
// of capacity batchSize, up to maxFree) and the list itself are reused, so
// that a steady flow of samples allocates no batches. Nothing may use bs
// or its buffers afterwards.
func (t *Tx) Recycle(bs []Batch) {
	for i := range bs {
		if b := bs[i].B; cap(b) == t.batchSize && len(t.free) < maxFree {
			t.free = append(t.free, b[:0])
		}
		bs[i] = Batch{}
	}
	if cap(bs) > cap(t.spare) {
		t.spare = bs[:0]
	}
}

// DropDroppable removes the ready batches that may be dropped and returns
// how many it removed.
func (t *Tx) DropDroppable() int {
	kept := t.ready[:0]
	n := 0
	for _, b := range t.ready {
		if b.Droppable {
			t.pending -= len(b.B)
			n++
			continue
		}
		kept = append(kept, b)
	}
	t.ready = kept
	return n
}
