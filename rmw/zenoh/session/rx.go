package session

import (
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// DefaultMaxMessageSize bounds a message reassembled from fragments.
const DefaultMaxMessageSize = 16 << 20

// RxStats counts what a receiver dropped.
type RxStats struct {
	Batches     uint64 // batches handled
	Messages    uint64 // network messages delivered
	Malformed   uint64 // batches, frames or messages that did not decode (the rest of the batch is dropped)
	OutOfOrder  uint64 // frames and fragments with a sequence number not after the last one
	FragDropped uint64 // partial messages dropped (gap, marker, overflow)
	Oversized   uint64 // reassembled messages beyond the size bound
	KeepAlives  uint64
	Unexpected  uint64 // INIT, OPEN, JOIN or OAM on an open link
	LastError   error
}

type defrag struct {
	buf      []byte
	active   bool
	overflow bool
}

// Rx checks the sequence numbers of received frames and fragments,
// reassembles fragments and delivers network messages, sans IO.
type Rx struct {
	qos    bool
	patch  uint8
	mask   uint32
	last   [wire.NumPriorities][2]uint32
	defrag [wire.NumPriorities][2]defrag
	maxMsg int
	sc     wire.Scratch // what a batch decodes into, reused
	Stats  RxStats
}

// NewRx makes the receive side of a link agreed by p; maxMsg bounds a
// reassembled message (0: DefaultMaxMessageSize).
func NewRx(p Params, maxMsg int) *Rx {
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessageSize
	}
	r := &Rx{qos: p.QoS, patch: p.Patch, mask: uint32(p.FrameSN.SNMask()), maxMsg: maxMsg}
	// as if the message before the initial sn had been received
	prev := (p.RxInitialSN - 1) & r.mask
	for i := range r.last {
		r.last[i] = [2]uint32{prev, prev}
	}
	return r
}

// precedes reports whether sn comes after last (within half the range).
func (r *Rx) precedes(last, sn uint32) bool {
	if sn&^r.mask != 0 {
		return false
	}
	gap := (sn - last) & r.mask
	return gap != 0 && gap&^(r.mask>>1) == 0
}

func (r *Rx) chanOf(p wire.Priority) wire.Priority {
	if !r.qos {
		return 0
	}
	return p & 7
}

// Deliver receives each network message of a batch with the reliability
// of its frame. The message aliases the batch (or the reassembly buffer)
// and the Rx's reused structures: it is valid only during the call.
type Deliver func(m wire.NetworkMessage, reliable bool)

// Batch handles one received batch. It returns a *CloseError (Received)
// when the batch holds CLOSE; malformed content is counted and dropped.
func (r *Rx) Batch(b []byte, deliver Deliver) error {
	r.Stats.Batches++
	for len(b) > 0 {
		m, n, err := r.sc.DecodeTransport(b)
		if err != nil {
			r.Stats.Malformed++
			r.Stats.LastError = err
			return nil
		}
		b = b[n:]
		switch m := m.(type) {
		case *wire.Frame:
			r.frame(m, deliver)
		case *wire.Fragment:
			r.fragment(m, deliver)
		case *wire.KeepAlive:
			r.Stats.KeepAlives++
		case *wire.Close:
			return &CloseError{Reason: m.Reason, Received: true}
		default:
			r.Stats.Unexpected++
		}
	}
	return nil
}

func (r *Rx) frame(f *wire.Frame, deliver Deliver) {
	ch, rl := r.chanOf(f.Priority), rel(f.Reliable)
	if !r.precedes(r.last[ch][rl], f.SN) {
		r.Stats.OutOfOrder++
		r.resetDefrag(ch, rl)
		return
	}
	r.last[ch][rl] = f.SN
	err := r.sc.DecodeFrame(f.Payload, func(m wire.NetworkMessage) error {
		r.Stats.Messages++
		deliver(m, f.Reliable)
		return nil
	})
	if err != nil {
		r.Stats.Malformed++
		r.Stats.LastError = err
	}
}

func (r *Rx) resetDefrag(ch wire.Priority, rl int) {
	d := &r.defrag[ch][rl]
	if d.active {
		r.Stats.FragDropped++
	}
	d.buf, d.active, d.overflow = d.buf[:0], false, false
}

func (r *Rx) fragment(f *wire.Fragment, deliver Deliver) {
	ch, rl := r.chanOf(f.Priority), rel(f.Reliable)
	last := r.last[ch][rl]
	if !r.precedes(last, f.SN) {
		r.Stats.OutOfOrder++
		r.resetDefrag(ch, rl)
		return
	}
	r.last[ch][rl] = f.SN
	d := &r.defrag[ch][rl]
	if d.active && (f.SN-last)&r.mask != 1 {
		r.resetDefrag(ch, rl) // a fragment went missing
	}
	if r.patch >= wire.PatchCurrent {
		if f.First {
			r.resetDefrag(ch, rl)
		} else if !d.active {
			r.Stats.FragDropped++ // the middle of a message whose start we missed
			return
		}
		if f.Drop {
			r.resetDefrag(ch, rl)
			return
		}
	}
	d.active = true
	if !d.overflow {
		if len(d.buf)+len(f.Payload) > r.maxMsg {
			d.overflow = true
			d.buf = d.buf[:0]
		} else {
			d.buf = append(d.buf, f.Payload...)
		}
	}
	if f.More {
		return
	}
	if d.overflow {
		r.Stats.Oversized++
	} else {
		err := r.sc.DecodeFrame(d.buf, func(m wire.NetworkMessage) error {
			r.Stats.Messages++
			deliver(m, f.Reliable)
			return nil
		})
		r.sc.Release() // nothing of the reassembly buffer stays reachable (a frame's batch is the link's anyway)
		if err != nil {
			r.Stats.Malformed++
			r.Stats.LastError = err
		}
	}
	if cap(d.buf) > 1<<20 {
		d.buf = nil // do not keep a large buffer for the next message
	}
	d.buf, d.active, d.overflow = d.buf[:0], false, false
}
