package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw"
)

func TestPayloadStamp(t *testing.T) {
	for _, st := range []int64{1, -9, 1 << 40} {
		b := payload(st, 5)
		if len(b) != 21 {
			t.Fatalf("len %d", len(b))
		}
		if got, ok := stampOf(b); !ok || got != st {
			t.Errorf("stampOf(payload(%d)) = %d, %v", st, got, ok)
		}
	}
	if _, ok := stampOf([]byte{0, 1, 0, 0, 1}); ok {
		t.Error("short sample decoded")
	}
	be := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}
	if got, _ := stampOf(be); got != 7 {
		t.Errorf("big endian stamp %d", got)
	}
}

func TestResultLine(t *testing.T) {
	got := resultLine("go-direct reliable", 64, []int64{3000, 1000, 2000, 4000}, 1)
	want := "go-direct reliable size=64 samples=4 lost=1 rtt_us min=1.0 mean=2.5 p50=2.0 p90=4.0 p99=4.0 max=4.0\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := resultLine("x", 8, nil, 3); got != "x size=8 samples=0 lost=3\n" {
		t.Errorf("empty: %q", got)
	}
}

// TestPingerProtocol drives the pinger with a fake transport: each publish
// is echoed back synchronously except the ones the test drops, which the
// watchdog must count as lost.
func TestPingerProtocol(t *testing.T) {
	p := &pinger{buf: payload(1, 4), total: 2 + 5, warmup: 2, done: make(chan struct{})}
	var mu sync.Mutex
	var pending [][]byte
	sent := 0
	p.publishFn = func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		sent++
		if sent != 4 { // lose the 4th (a measured one)
			pending = append(pending, bytes.Clone(b))
		}
		return nil
	}
	p.mu.Lock()
	p.sendLocked()
	p.mu.Unlock()
	for {
		mu.Lock()
		if len(pending) == 0 {
			mu.Unlock()
			p.mu.Lock()
			if p.finished {
				p.mu.Unlock()
				break
			}
			// the lost one: what the watchdog does on timeout
			p.lost++
			p.sendLocked()
			p.mu.Unlock()
			continue
		}
		b := pending[0]
		pending = pending[1:]
		mu.Unlock()
		p.deliver(rmw.Sample{Data: b})
	}
	if len(p.rtt) != 4 || p.lost != 1 || sent != 7 {
		t.Fatalf("rtt %d, lost %d, sent %d; want 4, 1, 7", len(p.rtt), p.lost, sent)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"pong"}, {"--count", "0"}, {"--size", "-1"}, {"--timeout-ms", "0"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), nros.NewContext(), args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage") {
			t.Errorf("%q: exit %d (%s)", args, code, errb.String())
		}
	}
}
