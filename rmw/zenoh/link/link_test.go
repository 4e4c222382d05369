package link

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	good := map[string]Endpoint{
		"tcp/127.0.0.1:7447":               {Proto: "tcp", Address: "127.0.0.1:7447"},
		"tcp/localhost:0":                  {Proto: "tcp", Address: "localhost:0"},
		"udp/[::1]:7447":                   {Proto: "udp", Address: "[::1]:7447"},
		"tcp/127.0.0.1:7447#iface=lo":      {Proto: "tcp", Address: "127.0.0.1:7447", Config: "iface=lo"},
		"udp/1.2.3.4:5?rel=1;prio=1-7#a=b": {Proto: "udp", Address: "1.2.3.4:5", Metadata: "rel=1;prio=1-7", Config: "a=b"},
		"mem/x":                            {Proto: "mem", Address: "x"},
	}
	for s, want := range good {
		e, err := ParseEndpoint(s)
		if err != nil || e != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v", s, e, err)
			continue
		}
		if e.String() != s {
			t.Errorf("String() = %q, want %q", e.String(), s)
		}
	}
	if e, _ := ParseEndpoint("tcp/127.0.0.1:7447#iface=lo"); e.Locator() != "tcp/127.0.0.1:7447" {
		t.Errorf("Locator = %q", e.Locator())
	}
	if e, _ := ParseEndpoint("udp/1.2.3.4:5?rel=1;prio=1-7#iface=eth0"); func() bool { v, ok := e.Get("prio"); return v != "1-7" || !ok }() {
		t.Errorf("Get(prio) failed on %+v", e)
	}
	for _, s := range []string{"", "tcp", "tcp/", "/1.2.3.4:5", "tcp/127.0.0.1", "quic/1.2.3.4:5", "tcp/1.2.3.4:5#bad", "serial/dev"} {
		if _, err := ParseEndpoint(s); err == nil {
			t.Errorf("ParseEndpoint(%q) accepted", s)
		}
	}
}

func exchange(t *testing.T, a, b Link, sizes ...int) {
	t.Helper()
	buf := make([]byte, MaxBatch)
	for _, n := range sizes {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		errc := make(chan error, 1)
		go func() { errc <- a.WriteBatch(msg) }()
		got, err := b.ReadBatch(buf)
		if err != nil {
			t.Fatalf("read %d: %v", n, err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
		if !bytes.Equal(buf[:got], msg) {
			t.Fatalf("batch of %d came back as %d bytes", n, got)
		}
	}
}

func TestTCP(t *testing.T) {
	ep, _ := ParseEndpoint("tcp/localhost:0")
	ln, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ln.Endpoint().Address == "127.0.0.1:0" || ln.Endpoint().Proto != "tcp" {
		t.Fatalf("listener endpoint %v", ln.Endpoint())
	}
	acc := make(chan Link, 1)
	go func() { l, _ := ln.Accept(); acc <- l }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, ln.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	if !c.Streamed() || c.MTU() != MaxBatch || c.Remote() != ln.Endpoint() || s.Remote() != c.Local() {
		t.Errorf("endpoints: %v %v %v %v", c.Local(), c.Remote(), s.Local(), s.Remote())
	}
	exchange(t, c, s, 0, 1, 300, MaxBatch)
	exchange(t, s, c, 5, MaxBatch)
	if err := c.WriteBatch(make([]byte, MaxBatch+1)); err == nil {
		t.Error("oversized batch written")
	}
	// a batch larger than the reader's buffer is an error, not a panic
	go c.WriteBatch(make([]byte, 100))
	if _, err := s.ReadBatch(make([]byte, 10)); err == nil {
		t.Error("batch larger than the buffer read")
	}
	// Close unblocks a reader
	done := make(chan error, 1)
	go func() { _, err := c.ReadBatch(make([]byte, MaxBatch)); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("read after close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock ReadBatch")
	}
	s.Close()
}

func TestUDP(t *testing.T) {
	ep, _ := ParseEndpoint("udp/127.0.0.1:0")
	ln, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx := context.Background()
	c1, err := Dial(ctx, ln.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := Dial(ctx, ln.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c1.Streamed() || c1.MTU() != UDPMTU {
		t.Errorf("udp link: streamed %v mtu %d", c1.Streamed(), c1.MTU())
	}
	if err := c1.WriteBatch([]byte("one")); err != nil {
		t.Fatal(err)
	}
	s1, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxBatch)
	if n, err := s1.ReadBatch(buf); err != nil || string(buf[:n]) != "one" {
		t.Fatalf("s1 read %q %v", buf[:n], err)
	}
	if err := c2.WriteBatch([]byte("two")); err != nil {
		t.Fatal(err)
	}
	s2, _ := ln.Accept()
	if n, err := s2.ReadBatch(buf); err != nil || string(buf[:n]) != "two" || s2.Remote() == s1.Remote() {
		t.Fatalf("s2 read %q %v from %v", buf[:n], err, s2.Remote())
	}
	exchange(t, s1, c1, 1, 1000, 60000)
	exchange(t, c2, s2, 7)
	s1.Close()
	if _, err := s1.ReadBatch(buf); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
}

func TestMem(t *testing.T) {
	a, b := Pipe(100)
	exchange(t, a, b, 0, 1, 100)
	exchange(t, b, a, 50)
	if err := a.WriteBatch(make([]byte, 101)); err == nil {
		t.Error("batch beyond the MTU written")
	}
	b.Close()
	if err := a.WriteBatch([]byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("write to a closed pipe: %v", err)
	}
	ep, _ := ParseEndpoint("mem/test-listener")
	ln, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(ep); err == nil {
		t.Error("two listeners on one mem address")
	}
	c, err := Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ln.Accept()
	exchange(t, c, s, 3)
	ln.Close()
	if _, err := Dial(context.Background(), ep); err == nil {
		t.Error("dialed a closed mem listener")
	}
}
