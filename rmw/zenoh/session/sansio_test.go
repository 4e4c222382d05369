package session

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

func cfg(w wire.WhatAmI, batch uint16, qos bool) LinkConfig {
	return LinkConfig{ZID: wire.RandomZenohID(), WhatAmI: w, BatchSize: batch, Resolution: wire.DefaultResolution,
		Lease: 10 * time.Second, QoS: qos, Patch: wire.PatchCurrent}
}

// handshake runs an initiator against an acceptor in memory.
func handshake(t *testing.T, ic, ac LinkConfig) (Params, Params) {
	t.Helper()
	ini, b, err := NewInitiator(ic)
	if err != nil {
		t.Fatal(err)
	}
	acc := NewAcceptor(ac)
	toAcc := true
	for i := 0; i < 4 && !(ini.Done() && acc.Done()); i++ {
		var out []byte
		if toAcc {
			out, _, err = acc.Handle(b)
		} else {
			out, _, err = ini.Handle(b)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		b, toAcc = out, !toAcc
	}
	if !ini.Done() || !acc.Done() {
		t.Fatal("handshake did not finish")
	}
	return ini.Params(), acc.Params()
}

func TestHandshake(t *testing.T) {
	ic, ac := cfg(wire.Client, 65535, true), cfg(wire.Router, 2048, true)
	ac.Lease = 3 * time.Second
	ip, ap := handshake(t, ic, ac)
	if ip.RemoteZID != ac.ZID || ap.RemoteZID != ic.ZID || ip.RemoteWhatAmI != wire.Router || ap.RemoteWhatAmI != wire.Client {
		t.Errorf("ids: %+v / %+v", ip, ap)
	}
	if ip.BatchSize != 2048 || ap.BatchSize != 2048 || !ip.QoS || !ap.QoS || ip.Patch != 1 || ap.Patch != 1 {
		t.Errorf("negotiated: %+v / %+v", ip, ap)
	}
	if ip.TxInitialSN != ap.RxInitialSN || ap.TxInitialSN != ip.RxInitialSN {
		t.Errorf("sn: %+v / %+v", ip, ap)
	}
	if ip.RemoteLease != 3*time.Second || ap.RemoteLease != 10*time.Second {
		t.Errorf("lease: %v %v", ip.RemoteLease, ap.RemoteLease)
	}
	if want := InitialSN(ic.ZID, ac.ZID, wire.Bits32); ip.TxInitialSN != want || want > 0x0fffffff {
		t.Errorf("initial sn %d, want %d", ip.TxInitialSN, want)
	}
	// QoS only when both ask; patch is the minimum
	ic, ac = cfg(wire.Peer, 65535, true), cfg(wire.Peer, 65535, false)
	ac.Patch = wire.PatchNone
	ac.Resolution = wire.DefaultResolution.With(wire.Bits16, wire.Bits32)
	ip, ap = handshake(t, ic, ac)
	if ip.QoS || ap.QoS || ip.Patch != 0 || ap.Patch != 0 || ip.FrameSN != wire.Bits16 || ap.FrameSN != wire.Bits16 {
		t.Errorf("negotiated: %+v / %+v", ip, ap)
	}
}

// TestHandshakeWithPicoBytes: the acceptor answers zenoh-pico's recorded
// InitSyn, and the initiator takes pico's recorded InitAck (empty cookie).
func TestHandshakeWithPicoBytes(t *testing.T) {
	picoInitSyn, _ := hex.DecodeString("c109f12adcba7de57497de35ea9ef6feea5b530a00082701")
	acc := NewAcceptor(cfg(wire.Peer, 65535, true))
	out, done, err := acc.Handle(picoInitSyn)
	if err != nil || done {
		t.Fatal(err, done)
	}
	m, _, err := wire.DecodeTransport(out)
	if err != nil {
		t.Fatal(err)
	}
	ack := m.(*wire.Init)
	if !ack.Ack || ack.BatchSize != 2048 || ack.QoS || ack.Patch != 1 || len(ack.Cookie) != 16 || ack.Resolution != wire.DefaultResolution {
		t.Errorf("InitAck to pico: %+v", ack)
	}
	// pico echoes the cookie in its OpenSyn (lease 10 s, initial sn 0)
	osyn, _ := wire.AppendTransport(nil, &wire.Open{Lease: 10 * time.Second, Cookie: ack.Cookie})
	out, done, err = acc.Handle(osyn)
	if err != nil || !done {
		t.Fatal(err, done)
	}
	if p := acc.Params(); p.RxInitialSN != 0 || p.BatchSize != 2048 || p.QoS {
		t.Errorf("params: %+v", p)
	}
	if m, _, _ := wire.DecodeTransport(out); !m.(*wire.Open).Ack {
		t.Errorf("OpenAck: %+v", m)
	}

	ini, _, _ := NewInitiator(cfg(wire.Peer, 65535, true))
	picoInitAck, _ := hex.DecodeString("e109f1cd159c34332cfdafd1c4eba7c2f507b40a0008002701")
	out, _, err = ini.Handle(picoInitAck)
	if err != nil {
		t.Fatal(err)
	}
	m, _, _ = wire.DecodeTransport(out)
	if o := m.(*wire.Open); o.Ack || o.Cookie == nil || len(o.Cookie) != 0 || o.Lease != 10*time.Second {
		t.Errorf("OpenSyn to pico: %+v", o)
	}
	_, done, err = ini.Handle([]byte{0x62, 0x0a, 0x00}) // pico's OpenAck
	if err != nil || !done || ini.Params().RxInitialSN != 0 || ini.Params().RemoteLease != 10*time.Second {
		t.Errorf("OpenAck: %v %v %+v", err, done, ini.Params())
	}
}

func TestHandshakeFailures(t *testing.T) {
	c := cfg(wire.Peer, 65535, false)
	reason := func(err error) uint8 {
		var ce *CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("not a CloseError: %v", err)
		}
		return ce.Reason
	}
	// wrong version
	bad, _ := wire.AppendTransport(nil, &wire.Init{Version: 8, WhatAmI: wire.Peer, ZID: wire.RandomZenohID(), Resolution: wire.DefaultResolution, BatchSize: 100})
	if _, _, err := NewAcceptor(c).Handle(bad); reason(err) != wire.CloseInvalid {
		t.Errorf("version: %v", err)
	}
	// myself
	self, _ := wire.AppendTransport(nil, &wire.Init{Version: wire.Version, WhatAmI: wire.Peer, ZID: c.ZID, Resolution: wire.DefaultResolution, BatchSize: 100})
	if _, _, err := NewAcceptor(c).Handle(self); reason(err) != wire.CloseConnectionToSelf {
		t.Errorf("self: %v", err)
	}
	// garbage, and an OpenSyn first
	if _, _, err := NewAcceptor(c).Handle([]byte{0xff, 0xff}); reason(err) != wire.CloseInvalid {
		t.Errorf("garbage: %v", err)
	}
	osyn, _ := wire.AppendTransport(nil, &wire.Open{Lease: time.Second})
	if _, _, err := NewAcceptor(c).Handle(osyn); reason(err) != wire.CloseInvalid {
		t.Errorf("open first: %v", err)
	}
	// wrong cookie
	acc := NewAcceptor(c)
	good, _ := wire.AppendTransport(nil, &wire.Init{Version: wire.Version, WhatAmI: wire.Peer, ZID: wire.RandomZenohID(), Resolution: wire.DefaultResolution, BatchSize: 100})
	if _, _, err := acc.Handle(good); err != nil {
		t.Fatal(err)
	}
	if _, _, err := acc.Handle(osyn); reason(err) != wire.CloseInvalid {
		t.Errorf("cookie: %v", err)
	}
	// the remote closes
	ini, _, _ := NewInitiator(c)
	cl, _ := wire.AppendTransport(nil, &wire.Close{Reason: wire.CloseMaxLinks})
	_, _, err := ini.Handle(cl)
	var ce *CloseError
	if !errors.As(err, &ce) || !ce.Received || ce.Reason != wire.CloseMaxLinks || CloseBatch(err, false) != nil {
		t.Errorf("remote close: %v", err)
	}
	// an InitAck above our resolution
	ini, _, _ = NewInitiator(c)
	hi, _ := wire.AppendTransport(nil, &wire.Init{Ack: true, Version: wire.Version, WhatAmI: wire.Peer, ZID: wire.RandomZenohID(),
		Resolution: wire.DefaultResolution.With(wire.Bits64, wire.Bits32), BatchSize: 100})
	if _, _, err := ini.Handle(hi); reason(err) != wire.CloseInvalid {
		t.Errorf("resolution: %v", err)
	}
	if b := CloseBatch(closeErr(wire.CloseExpired, "x"), true); !bytes.Equal(b, []byte{0x23, 0x05}) {
		t.Errorf("CloseBatch = %x", b)
	}
}

func pushMsg(key string, payload int, qos wire.QoS) *wire.Push {
	return &wire.Push{WireExpr: wire.WireExpr{Suffix: key}, QoS: qos,
		Body: &wire.Put{Attachment: make([]byte, 33), Payload: bytes.Repeat([]byte{0xab}, payload)}}
}

type got struct {
	key      string
	n        int
	reliable bool
}

func collect(t *testing.T, rx *Rx, batches []Batch) []got {
	t.Helper()
	var out []got
	for _, b := range batches {
		err := rx.Batch(b.B, func(m wire.NetworkMessage, reliable bool) {
			p := m.(*wire.Push)
			out = append(out, got{p.WireExpr.Suffix, len(p.Body.(*wire.Put).Payload), reliable})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestTxRx(t *testing.T) {
	for _, qos := range []bool{false, true} {
		t.Run(fmt.Sprint("qos=", qos), func(t *testing.T) {
			ip, ap := handshake(t, cfg(wire.Peer, 1024, qos), cfg(wire.Peer, 65535, qos))
			tx, rx := NewTx(ip), NewRx(ap, 0)
			// small messages share batches
			for i := 0; i < 20; i++ {
				if err := tx.Push(pushMsg(fmt.Sprint("k/", i), 100, wire.QoS{}), true); err != nil {
					t.Fatal(err)
				}
			}
			bs := tx.Take()
			if len(bs) < 2 || len(bs) > 4 {
				t.Errorf("20 messages of ~150 bytes in %d batches of 1024", len(bs))
			}
			for _, b := range bs {
				if len(b.B) > 1024 || !b.Droppable { // default QoS: congestion control Drop
					t.Errorf("batch of %d bytes, droppable %v", len(b.B), b.Droppable)
				}
			}
			gs := collect(t, rx, bs)
			if len(gs) != 20 || gs[19].key != "k/19" || !gs[0].reliable {
				t.Fatalf("received %v", gs)
			}
			// a change of channel closes the batch; best effort is droppable
			tx.Push(pushMsg("a", 1, wire.QoS{}), false)
			tx.Push(pushMsg("b", 1, wire.MakeQoS(wire.PriorityRealTime, wire.Block, false)), true)
			bs = tx.Take()
			if len(bs) != 2 || !bs[0].Droppable || bs[1].Droppable {
				t.Errorf("channels: %d batches %+v", len(bs), bs)
			}
			if gs := collect(t, rx, bs); len(gs) != 2 || gs[0].reliable || !gs[1].reliable {
				t.Errorf("received %v", gs)
			}
			// express closes the batch after the message
			tx.Push(pushMsg("e", 1, wire.MakeQoS(wire.PriorityData, wire.Drop, true)), true)
			tx.Push(pushMsg("f", 1, wire.QoS{}), true)
			if bs = tx.Take(); len(bs) != 2 {
				t.Errorf("express: %d batches", len(bs))
			}
			collect(t, rx, bs)
			// a large message is fragmented and reassembled
			tx.Push(pushMsg("small", 10, wire.QoS{}), true)
			tx.Push(pushMsg("big", 5000, wire.QoS{}), true)
			tx.Push(pushMsg("after", 10, wire.QoS{}), true)
			bs = tx.Take()
			if len(bs) < 7 {
				t.Errorf("5000 bytes in batches of 1024: %d batches", len(bs))
			}
			gs = collect(t, rx, bs)
			if len(gs) != 3 || gs[1] != (got{"big", 5000, true}) || gs[2].key != "after" {
				t.Errorf("received %v", gs)
			}
			if rx.Stats.OutOfOrder+rx.Stats.Malformed+rx.Stats.FragDropped != 0 {
				t.Errorf("stats %+v", rx.Stats)
			}
			// a replayed batch is out of order
			collect(t, rx, bs[:1])
			if rx.Stats.OutOfOrder != 1 {
				t.Errorf("replay: %+v", rx.Stats)
			}
		})
	}
}

func TestRxFragments(t *testing.T) {
	ip, ap := handshake(t, cfg(wire.Peer, 512, false), cfg(wire.Peer, 512, false))
	tx := NewTx(ip)
	tx.Push(pushMsg("big", 3000, wire.QoS{}), true)
	frags := tx.Take()
	if len(frags) < 6 {
		t.Fatalf("%d fragments", len(frags))
	}
	// a missing middle fragment drops the message, the next one arrives
	rx := NewRx(ap, 0)
	lost := append(append([]Batch{}, frags[:2]...), frags[3:]...)
	if gs := collect(t, rx, lost); len(gs) != 0 || rx.Stats.FragDropped == 0 {
		t.Errorf("with a gap: %v %+v", gs, rx.Stats)
	}
	tx.Push(pushMsg("next", 1, wire.QoS{}), true)
	if gs := collect(t, rx, tx.Take()); len(gs) != 1 {
		t.Errorf("after the gap: %v", gs)
	}
	// a reassembled message beyond the bound is dropped
	rx = NewRx(ap, 1000)
	if gs := collect(t, rx, frags); len(gs) != 0 || rx.Stats.Oversized != 1 {
		t.Errorf("oversized: %v %+v", gs, rx.Stats)
	}
	// without the first-fragment marker the start is unknown (patch 1)
	rx = NewRx(ap, 0)
	if gs := collect(t, rx, frags[1:]); len(gs) != 0 {
		t.Errorf("without the first fragment: %v", gs)
	}
}

// TestSNWrap: sequence numbers wrap at the resolution (28 bits for 32-bit
// resolution, as zenoh) and frames keep flowing.
func TestSNWrap(t *testing.T) {
	ip, ap := handshake(t, cfg(wire.Peer, 65535, false), cfg(wire.Peer, 65535, false))
	ip.TxInitialSN, ap.RxInitialSN = 0x0ffffffe, 0x0ffffffe
	tx, rx := NewTx(ip), NewRx(ap, 0)
	for i := 0; i < 5; i++ {
		tx.Push(pushMsg("k", 1, wire.QoS{}), true)
		if gs := collect(t, rx, tx.Take()); len(gs) != 1 {
			t.Fatalf("frame %d: %v %+v", i, gs, rx.Stats)
		}
	}
	if tx.next[wire.PriorityData][1] != 3 {
		t.Errorf("next sn %d", tx.next[wire.PriorityData][1])
	}
}

// TestRxGarbage: garbage is counted and dropped; CLOSE is reported.
func TestRxGarbage(t *testing.T) {
	_, ap := handshake(t, cfg(wire.Peer, 65535, false), cfg(wire.Peer, 65535, false))
	rx := NewRx(ap, 0)
	for _, b := range [][]byte{{0xff}, {0x25}, {0x25, 0x00, 0xff}, {0x06, 0x80}, nil} {
		if err := rx.Batch(b, func(wire.NetworkMessage, bool) { t.Error("delivered garbage") }); err != nil {
			t.Errorf("%x: %v", b, err)
		}
	}
	if rx.Stats.Malformed < 3 {
		t.Errorf("stats %+v", rx.Stats)
	}
	err := rx.Batch([]byte{0x04, 0x23, 0x05}, func(wire.NetworkMessage, bool) {})
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Reason != wire.CloseExpired || !ce.Received || rx.Stats.KeepAlives != 1 {
		t.Errorf("close: %v %+v", err, rx.Stats)
	}
}

// TestTxRecycle: batches given back after writing are reused, so a steady
// flow of samples allocates no batch buffers (each used to be a fresh
// batch-size buffer, 64 KiB by default), and a reused buffer carries only
// its new content, fragments included.
func TestTxRecycle(t *testing.T) {
	ip, ap := handshake(t, cfg(wire.Peer, 65535, false), cfg(wire.Peer, 65535, false))
	tx, rx := NewTx(ip), NewRx(ap, 0)
	small := pushMsg("k", 40, wire.QoS{})
	for i := range 3 {
		tx.Push(pushMsg(fmt.Sprint("big/", i), 200_000, wire.QoS{}), true) // 4 fragments
		tx.Push(pushMsg(fmt.Sprint("s/", i), 10, wire.QoS{}), true)
		bs := tx.Take()
		gs := collect(t, rx, bs)
		if len(gs) != 2 || gs[0] != (got{fmt.Sprint("big/", i), 200_000, true}) || gs[1] != (got{fmt.Sprint("s/", i), 10, true}) {
			t.Fatalf("round %d: received %v, stats %+v", i, gs, rx.Stats)
		}
		tx.Recycle(bs)
		if len(tx.free) > maxFree {
			t.Fatalf("%d free buffers kept, at most %d", len(tx.free), maxFree)
		}
	}
	allocs := testing.AllocsPerRun(200, func() {
		if err := tx.Push(small, false); err != nil {
			t.Fatal(err)
		}
		tx.Recycle(tx.Take())
	})
	if allocs != 0 {
		t.Errorf("Push, Take and Recycle of one sample: %v allocations, want 0", allocs)
	}
	tx.Push(small, false)
	if gs := collect(t, rx, tx.Take()); len(gs) != 1 || gs[0] != (got{"k", 40, false}) {
		t.Errorf("after 200 reuses: %v, stats %+v", gs, rx.Stats)
	}
}

// Receiving a sample allocates nothing: the frame, PUSH, PUT and their
// timestamps are decoded into the Rx's own structures, and a key seen
// before is the string it kept (each is valid only during the delivery).
func TestRxSampleAllocatesNothing(t *testing.T) {
	ip, ap := handshake(t, cfg(wire.Peer, 65535, false), cfg(wire.Peer, 65535, false))
	tx, rx := NewTx(ip), NewRx(ap, 0)
	id, err := wire.NewZenohID([]byte{7, 7})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	var batches [][]byte
	for i := range runs + 2 {
		m := pushMsg("0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_x", 12, wire.QoS{})
		m.Timestamp = &wire.Timestamp{Time: uint64(i), ID: id}
		m.Body.(*wire.Put).Timestamp = &wire.Timestamp{Time: uint64(i) + 1, ID: id}
		if err := tx.Push(m, false); err != nil {
			t.Fatal(err)
		}
		for _, b := range tx.Take() {
			batches = append(batches, b.B)
		}
	}
	var n int
	var last uint64
	deliver := func(m wire.NetworkMessage, _ bool) {
		p := m.(*wire.Push)
		n++
		last = p.Body.(*wire.Put).Timestamp.Time
	}
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if err := rx.Batch(batches[i], deliver); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if n != runs+1 || last != runs+1 {
		t.Fatalf("%d samples delivered, the last with time %d; want %d and %d (stats %+v)", n, last, runs+1, runs+1, rx.Stats)
	}
	if allocs != 0 {
		t.Errorf("a received sample costs %v allocations, want 0", allocs)
	}
}
