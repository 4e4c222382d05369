package endpoint_test

import (
	"fmt"

	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// A transport owns the sockets, the goroutine and the timer; the endpoints
// only transform inputs (datagrams, time) into outputs (datagrams,
// samples). Here the "network" is a slice of pending datagrams.
func Example() {
	type dgram struct {
		to  wire.Locator
		msg []byte
	}
	var pending []dgram
	out := endpoint.OutputFunc(func(to []wire.Locator, msg []byte) {
		for _, l := range to {
			pending = append(pending, dgram{l, append([]byte(nil), msg...)}) // msg is reused: copy
		}
	})
	wg := wire.GUID{Prefix: wire.GuidPrefix{1}, Entity: wire.NewEntityID(1, wire.EntityKindWriterNoKey)}
	rg := wire.GUID{Prefix: wire.GuidPrefix{2}, Entity: wire.NewEntityID(1, wire.EntityKindReaderNoKey)}
	wl, rl := wire.LoopbackUDPv4(7411), wire.LoopbackUDPv4(7413)

	w, _ := endpoint.NewWriter(endpoint.WriterConfig{GUID: wg, Reliable: true, Depth: 10}, out)
	r, _ := endpoint.NewReader(endpoint.ReaderConfig{GUID: rg}, out, func(s endpoint.Sample) {
		fmt.Printf("sample %d from %v: % x\n", s.SN, s.Writer.Entity, s.Payload)
	})
	now := int64(0) // monotonic ns, from the transport's clock
	w.MatchReader(now, rg, []wire.Locator{rl}, true, false)
	r.MatchWriter(now, wg, []wire.Locator{wl}, true)
	w.Write(now, []byte{0, 1, 0, 0, 'h', 'i', 0, 0}, 1_700_000_000_000_000_000)

	// the transport's loop: deliver datagrams, run Tick at NextDeadline
	for len(pending) > 0 || min(w.NextDeadline(), r.NextDeadline()) < 1e9 {
		if len(pending) == 0 {
			now = min(w.NextDeadline(), r.NextDeadline())
			w.Tick(now)
			r.Tick(now)
			continue
		}
		d := pending[0]
		pending = pending[1:]
		switch d.to {
		case rl:
			r.HandleMessage(now, d.msg)
		case wl:
			w.HandleMessage(now, d.msg)
		}
	}
	fmt.Println("acknowledged:", w.Acknowledged(1))
	// Output:
	// sample 1 from 00000103: 00 01 00 00 68 69 00 00
	// acknowledged: true
}
