package link

import (
	"bytes"
	"context"
	"errors"
	"github.com/nros-go/nros/internal/fixture/waits"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tcpPair returns a TCP link and the raw connection at its other end.
func tcpPair(t *testing.T) (*tcpLink, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); acc <- c }()
	ep, _ := ParseEndpoint("tcp/" + ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := Dial(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	raw := <-acc
	t.Cleanup(func() { l.Close(); raw.Close() })
	return l.(*tcpLink), raw
}

func frame(b []byte) []byte { return append([]byte{byte(len(b)), byte(len(b) >> 8)}, b...) }

// TestTCPLead: a ReadBatch that yields in the middle of a batch keeps what
// it read, and the leader's WaitBatch completes that batch from its own
// descriptor; batches come out in order whoever reads; the deadline,
// ready false and Interrupt end a WaitBatch; TryFill does not block; a
// closed link fails the leader.
func TestTCPLead(t *testing.T) {
	l, raw := tcpPair(t)
	buf := make([]byte, MaxBatch)

	// A batch in two halves: the reader yields after the first.
	one := bytes.Repeat([]byte("a"), 1000)
	whole := frame(one)
	if _, err := raw.Write(whole[:600]); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := l.ReadBatch(buf); got <- err }()
	waitUntilBuffered(t, l, 600)
	l.Yield(true)
	if err := <-got; !errors.Is(err, ErrYield) {
		t.Fatalf("ReadBatch under Yield: %v", err)
	}
	// The leader completes it; two more batches come with the rest.
	rest := append(whole[600:], frame([]byte("two"))...)
	rest = append(rest, frame([]byte("three"))...)
	readable, err := l.WaitBatch(time.Now().Add(5*time.Second), func() bool {
		_, werr := raw.Write(rest)
		return werr == nil
	})
	if err != nil || !readable {
		t.Fatalf("WaitBatch = %v, %v", readable, err)
	}
	if b, ok := l.NextBatch(); !ok || !bytes.Equal(b, one) {
		t.Fatalf("first batch %d bytes, %v", len(b), ok)
	}
	// The reader, back, takes the next one in order (read by the leader or now).
	l.Yield(false)
	if n, err := l.ReadBatch(buf); err != nil || string(buf[:n]) != "two" {
		t.Fatalf("ReadBatch after the leader = %q, %v", buf[:n], err)
	}
	if ok, err := l.TryFill(); err != nil || !ok {
		t.Fatalf("TryFill = %v, %v: want the third batch", ok, err)
	}
	if b, ok := l.NextBatch(); !ok || string(b) != "three" {
		t.Fatalf("third batch %q, %v", b, ok)
	}
	if ok, err := l.TryFill(); err != nil || ok {
		t.Fatalf("TryFill on an empty socket = %v, %v", ok, err)
	}

	// Deadline, ready false, Interrupt.
	start := time.Now()
	if readable, err := l.WaitBatch(time.Now().Add(20*time.Millisecond), func() bool { return true }); readable || err != nil {
		t.Fatalf("WaitBatch past its deadline = %v, %v", readable, err)
	}
	if el := time.Since(start); el < 15*time.Millisecond {
		t.Fatalf("WaitBatch returned after %v, before its deadline", el)
	}
	if readable, err := l.WaitBatch(time.Time{}, func() bool { return false }); readable || err != nil {
		t.Fatalf("WaitBatch with ready false = %v, %v", readable, err)
	}
	done := make(chan struct{})
	var werr error
	go func() {
		defer close(done)
		_, werr = l.WaitBatch(time.Time{}, func() bool { return true })
	}()
	waits.InterruptUntil(t, l.Interrupt, done)
	if werr != nil {
		t.Fatalf("interrupted WaitBatch: %v", werr)
	}

	// The remote closes mid-batch: the leader fails.
	raw.Write([]byte{10, 0, 1})
	raw.Close()
	if _, err := l.WaitBatch(time.Now().Add(5*time.Second), func() bool { return true }); err == nil {
		t.Fatal("WaitBatch on a stream that ended inside a batch did not fail")
	}
	l.Close()
	if _, err := l.WaitBatch(time.Time{}, func() bool { return true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitBatch on a closed link: %v", err)
	}
}

// waitUntilBuffered waits until the socket has nothing left to read: the
// reader took the bytes written so far (it blocks for the rest).
func waitUntilBuffered(t *testing.T, l *tcpLink, _ int) {
	t.Helper()
	rc, err := l.conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		var n int
		var ierr error
		if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || ierr != nil {
			t.Fatal(err, ierr)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader did not read the first half")
		}
	}
}

// TestTCPLeadAllocs: the leader's WaitBatch and TryFill allocate nothing
// per batch (a closure per read escaped to the heap: one allocation per
// /clock sample on the leader's way to the callback).
func TestTCPLeadAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts differ under -race and -cover")
	}
	l, raw := tcpPair(t)
	l.Yield(true)
	msg := frame([]byte("clock"))
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := raw.Write(msg); err != nil {
			t.Fatal(err)
		}
		if ok, err := l.WaitBatch(time.Now().Add(5*time.Second), func() bool { return true }); !ok || err != nil {
			t.Fatalf("WaitBatch = %v, %v", ok, err)
		}
		if b, ok := l.NextBatch(); !ok || string(b) != "clock" {
			t.Fatalf("batch %q, %v", b, ok)
		}
		if ok, err := l.TryFill(); ok || err != nil {
			t.Fatalf("TryFill with nothing sent = %v, %v", ok, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per batch, want 0", allocs)
	}
}
