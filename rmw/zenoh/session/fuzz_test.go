package session

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// FuzzRx feeds batches to the receive side of an open link (sequence
// numbers, reassembly, dispatch); seeds are the batches zenoh-pico sent.
// It must never panic, and what it delivers must encode.
func FuzzRx(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "wire", "testdata", "pico", "*.txt"))
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if _, hx, ok := strings.Cut(sc.Text(), " "); ok {
				if b, err := hex.DecodeString(hx); err == nil {
					f.Add(b, b)
				}
			}
		}
		fh.Close()
	}
	p := Params{BatchSize: 2048, FrameSN: wire.Bits32, RequestID: wire.Bits32, Patch: wire.PatchCurrent,
		RxInitialSN: 0, LocalLease: 10 * time.Second, RemoteLease: 10 * time.Second}
	f.Fuzz(func(t *testing.T, b1, b2 []byte) {
		for _, qos := range []bool{false, true} {
			p.QoS = qos
			rx := NewRx(p, 4096)
			for _, b := range [][]byte{b1, b2, b1} {
				_ = rx.Batch(b, func(m wire.NetworkMessage, _ bool) {
					if _, err := wire.AppendNetwork(nil, m); err != nil {
						t.Fatalf("delivered %T does not encode: %v", m, err)
					}
				})
			}
		}
	})
}

// FuzzHandshake feeds a link's first batches (what an unknown peer sends
// before anything is open) to both sides of the INIT/OPEN exchange; seeds
// are a real exchange's messages. It must never panic; an error is a
// *CloseError; a handshake that completes agrees on a usable link (a
// batch size, sequence-number widths a receiver and sender can use).
func FuzzHandshake(f *testing.F) {
	a, b := lc(wire.Peer), lc(wire.Client)
	ini, syn, err := NewInitiator(a)
	if err != nil {
		f.Fatal(err)
	}
	acc := NewAcceptor(b)
	ack, _, err := acc.Handle(syn)
	if err != nil {
		f.Fatal(err)
	}
	open, _, err := ini.Handle(ack)
	if err != nil {
		f.Fatal(err)
	}
	openAck, _, err := acc.Handle(open)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(syn, open)
	f.Add(ack, openAck)
	f.Add(syn, []byte{})
	f.Fuzz(func(t *testing.T, b1, b2 []byte) {
		check := func(h *Handshake, b []byte) bool {
			finished := h.state == hsDone || h.state == hsFailed
			_, done, err := h.Handle(b)
			if err != nil {
				var ce *CloseError
				if !errors.As(err, &ce) && !finished {
					t.Fatalf("error %v is not a *CloseError", err)
				}
				return false
			}
			if done {
				p := h.Params()
				if p.BatchSize == 0 {
					t.Fatalf("completed with params %+v", p)
				}
				NewRx(p, 4096).Batch(b1, func(wire.NetworkMessage, bool) {})
				_ = NewTx(p).Push(&wire.Push{WireExpr: wire.WireExpr{Suffix: "a"}, Body: &wire.Put{}}, true)
			}
			return true
		}
		acc := NewAcceptor(b)
		if check(acc, b1) {
			check(acc, b2)
		}
		ini, _, err := NewInitiator(a)
		if err != nil {
			t.Fatal(err)
		}
		if check(ini, b1) {
			check(ini, b2)
		}
	})
}
