package session

import (
	"bufio"
	"encoding/hex"
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
