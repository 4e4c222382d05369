package rtps

import (
	"math"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/fixture/waits"
	"github.com/nros-go/nros/internal/goid"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
)

// feedSub makes a best-effort subscription on b with a feed.
func feedSub(t *testing.T, b *Transport, in *inbox, onDeliver func()) rmw.Feed {
	t.Helper()
	s, err := b.NewSubscription(rmw.NodeInfo{Name: "listener", Namespace: "/"}, "/clock_like", strType, bestEffort,
		func(s rmw.Sample) {
			if onDeliver != nil {
				onDeliver()
			}
			in.deliver(s)
		}, rmw.EndpointOptions{Feed: true})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := s.(rmw.Feed)
	if !ok {
		t.Fatalf("a best-effort subscription asked for a feed on a system network is a %T, not an rmw.Feed", s)
	}
	return f
}

// TestFeedSocket: a feed subscription announces a socket of its own; while
// nobody holds it the transport's goroutine reads it; a holder's Wait sees
// the datagram and its Pull delivers it on the holder's goroutine; Want
// lets the transport's goroutine read while it is held; Interrupt, the
// timeout and a false ready end a Wait; Close ends one in progress.
func TestFeedSocket(t *testing.T) {
	a := newLoopback(t)
	defer a.Close()
	b := newLoopback(t)
	defer b.Close()
	in := &inbox{t: t}
	var deliveredOn atomic.Uint64
	f := feedSub(t, b, in, func() { deliveredOn.Store(uint64(goid.Current())) })
	fs := f.(fedSubscription)
	if len(fs.ed.UnicastLocators) == 0 || fs.ed.UnicastLocators[0].Port == uint32(b.UserAddr().Port()) {
		t.Fatalf("reader locators %v: want a port of its own (participant's user port %d)", fs.ed.UnicastLocators, b.UserAddr().Port())
	}
	pub := mustPub(t, a, "/clock_like", bestEffort, nil)
	waitUntil(t, "match", 10*time.Second, func() bool {
		return pub.MatchedSubscriptions() == 1 && fs.MatchedPublishers() == 1
	})

	// Not held: the transport reads it.
	if err := pub.Publish(str("free")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "delivery by the transport", 5*time.Second, func() bool { return len(in.got()) == 1 })

	// Held: only the holder reads it, on its own goroutine, once the
	// transport's goroutine has left a read it may have begun before Hold.
	f.Hold(1)
	waitUntil(t, "the feed's goroutine parked", 5*time.Second, fs.f.parked.Load)
	if err := pub.Publish(str("held")); err != nil {
		t.Fatal(err)
	}
	readable, ok := f.Wait(5*time.Second, func() bool { return true })
	if !ok || !readable {
		t.Fatalf("Wait = %v, %v: want the datagram", readable, ok)
	}
	if n := len(in.got()); n != 1 {
		t.Fatalf("delivered %d before Pull: the held feed was read by another goroutine", n)
	}
	f.Pull()
	if got := in.got(); len(got) != 2 || got[1] != "held" {
		t.Fatalf("after Pull got %q", got)
	}
	if me := uint64(goid.Current()); deliveredOn.Load() != me {
		t.Fatalf("delivered on goroutine %d, the holder is %d", deliveredOn.Load(), me)
	}

	// Timeout, ready false, Interrupt.
	start := time.Now()
	if readable, ok := f.Wait(20*time.Millisecond, func() bool { return true }); readable || !ok {
		t.Fatalf("Wait with nothing to read = %v, %v", readable, ok)
	}
	if el := time.Since(start); el < 15*time.Millisecond {
		t.Fatalf("Wait returned after %v, before its 20ms timeout", el)
	}
	if readable, ok := f.Wait(-1, func() bool { return false }); readable || !ok {
		t.Fatalf("Wait with ready false = %v, %v", readable, ok)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if readable, ok := f.Wait(-1, func() bool { return true }); readable || !ok {
			t.Errorf("interrupted Wait = %v, %v", readable, ok)
		}
	}()
	waits.InterruptUntil(t, f.Interrupt, done)

	// Wanted while held: the transport reads again.
	f.Want(1)
	if err := pub.Publish(str("wanted")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "delivery while wanted", 5*time.Second, func() bool { return len(in.got()) == 3 })
	f.Want(-1)

	// Close ends a Wait in progress; later ones do not wait.
	done = make(chan struct{})
	go func() {
		defer close(done)
		f.Wait(-1, func() bool { return true })
	}()
	time.Sleep(10 * time.Millisecond) // let it block (Close works either way)
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a Wait blocked")
	}
	if _, ok := f.Wait(-1, func() bool { return true }); ok {
		t.Fatal("Wait on a closed feed waited")
	}
	f.Hold(-1)
}

// TestFeedOnlyBestEffort: a reliable reader (its acknowledgements belong to
// the transport) and a transport on an in-memory network get no feed.
func TestFeedOnlyBestEffort(t *testing.T) {
	b := newLoopback(t)
	defer b.Close()
	s, err := b.NewSubscription(node, "/r", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{Feed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(rmw.Feed); ok {
		t.Fatal("a reliable subscription got a feed")
	}
	m := newMem(t, udp.NewMemNetwork(), nil)
	defer m.Close()
	s, err = m.NewSubscription(node, "/be", strType, bestEffort, func(rmw.Sample) {}, rmw.EndpointOptions{Feed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(rmw.Feed); ok {
		t.Fatal("a subscription on an in-memory network got a feed")
	}
}

// A far timeout (a timer that saturated at "never") is no deadline, not
// one that overflowed into the past, which would make Wait return at once,
// over and over.
func TestPollDeadlineSaturates(t *testing.T) {
	if d := pollDeadline(time.Duration(math.MaxInt64)); !d.IsZero() {
		t.Fatalf("pollDeadline(MaxInt64) = %v, want none", d)
	}
	if d := pollDeadline(time.Hour); time.Until(d) < 59*time.Minute {
		t.Fatalf("pollDeadline(1h) = %v", d)
	}
}

// TestFeedWaitAllocs: a held feed's Wait and Pull allocate nothing per
// datagram (a closure made per Wait was one allocation per /clock sample,
// and a cold malloc on the path to the callback).
func TestFeedWaitAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	b := newLoopback(t)
	defer b.Close()
	in := &inbox{t: t}
	f := feedSub(t, b, in, nil)
	fs := f.(fedSubscription)
	f.Hold(1)
	defer f.Hold(-1)
	waitUntil(t, "the feed's goroutine parked", 5*time.Second, fs.f.parked.Load)
	to, ok := fs.ed.UnicastLocators[0].AddrPort()
	if !ok {
		t.Fatalf("locator %v", fs.ed.UnicastLocators[0])
	}
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(udp.Loopback, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	junk := []byte("not RTPS, dropped by handleDatagram")
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := c.WriteToUDPAddrPort(junk, to); err != nil {
			t.Fatal(err)
		}
		if readable, ok := f.Wait(5*time.Second, func() bool { return true }); !readable || !ok {
			t.Fatalf("Wait = %v, %v: want the datagram", readable, ok)
		}
		f.Pull()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per Wait and Pull, want 0", allocs)
	}
}

// TestFeedBesideOtherReader: a held feed and a plain subscription on the
// same topic of one participant each get every sample once: the feed's
// datagrams go to its reader alone (handleDatagramVia's feed route), the
// plain reader gets its own copy at its own locator.
func TestFeedBesideOtherReader(t *testing.T) {
	a := newLoopback(t)
	defer a.Close()
	b := newLoopback(t)
	defer b.Close()
	in, plain := &inbox{t: t}, &inbox{t: t}
	f := feedSub(t, b, in, nil)
	fs := f.(fedSubscription)
	ps, err := b.NewSubscription(node, "/clock_like", strType, bestEffort, plain.deliver, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	pub := mustPub(t, a, "/clock_like", bestEffort, nil)
	waitUntil(t, "match", 10*time.Second, func() bool {
		return pub.MatchedSubscriptions() == 2 && fs.MatchedPublishers() == 1
	})
	f.Hold(1)
	defer f.Hold(-1)
	waitUntil(t, "the feed's goroutine parked", 5*time.Second, fs.f.parked.Load)
	want := []string{"s1", "s2", "s3"}
	for _, s := range want {
		if err := pub.Publish(str(s)); err != nil {
			t.Fatal(err)
		}
		if readable, ok := f.Wait(5*time.Second, func() bool { return true }); !readable || !ok {
			t.Fatalf("Wait = %v, %v: want the datagram", readable, ok)
		}
		f.Pull()
	}
	waitUntil(t, "the plain reader's samples", 5*time.Second, func() bool { return len(plain.got()) == len(want) })
	time.Sleep(20 * time.Millisecond) // a duplicate would come now
	if got := in.got(); !slices.Equal(got, want) {
		t.Fatalf("feed got %q, want %q", got, want)
	}
	if got := plain.got(); !slices.Equal(got, want) {
		t.Fatalf("plain reader got %q, want %q", got, want)
	}
	// (Its Duplicates count the plain reader's datagrams: they carry
	// ENTITYID_UNKNOWN and reach every reader matched with the writer.)
	if st := fs.r.Stats(); st.UnknownWriter != 0 || st.Delivered != uint64(len(want)) {
		t.Fatalf("feed reader stats %+v", st)
	}
}
