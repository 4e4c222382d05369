package session

import (
	"github.com/nros-go/nros/internal/fixture/waits"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/goid"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// pushRec records each Push's payload and goroutine.
type pushRec struct {
	NopHandler
	mu   sync.Mutex
	data []string
	on   []int64
	up   chan *Face
}

func (r *pushRec) FaceUp(f *Face) {
	select {
	case r.up <- f:
	default:
	}
}

func (r *pushRec) Push(_ *Face, _ string, m *wire.Push, _ bool) {
	if p, ok := m.Body.(*wire.Put); ok {
		r.mu.Lock()
		r.data = append(r.data, string(p.Payload))
		r.on = append(r.on, int64(goid.Current()))
		r.mu.Unlock()
	}
}

func (r *pushRec) got() ([]string, []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.data...), append([]int64(nil), r.on...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestLeadFace: a goroutine leads a face's TCP link. Unheld, the face's
// reader delivers; a leader's Wait reads the batch and its Pull delivers on
// the leader's goroutine, nothing before; a leader away for longer than
// leadTakeover has the reader take the link back, also after a Wait that
// outlasted a tick; the timeout, ready false
// and Interrupt end a Wait; a wanted face is not led; Hold(-1) gives the
// link back; a link that closes ends a Wait in progress.
func TestLeadFace(t *testing.T) {
	a, face, rb := leadPair(t)
	put := func(s string) { a.Put("k", &wire.Put{Payload: []byte(s)}, PutOptions{}) }
	me := int64(goid.Current())
	yes := func() bool { return true }

	// Not held: the reader delivers.
	put("free")
	waitFor(t, "the reader's delivery", func() bool { d, _ := rb.got(); return len(d) == 1 })
	if readable, ok := face.Wait(-1, yes); readable || ok {
		t.Fatalf("Wait with nobody holding = %v, %v: want no lead", readable, ok)
	}

	// Held: the leader reads and delivers on its goroutine.
	face.Hold(1)
	for i := range 3 {
		// Put once the reader is out of the link (ready runs then).
		readable, ok := face.Wait(5*time.Second, func() bool { put("held"); return true })
		if !readable || !ok {
			t.Fatalf("sample %d: Wait = %v, %v: want a batch", i, readable, ok)
		}
		if d, _ := rb.got(); len(d) != 1+i {
			t.Fatalf("sample %d: %d delivered before Pull", i, len(d))
		}
		face.Pull()
		d, on := rb.got()
		if len(d) != 2+i || on[len(on)-1] != me {
			t.Fatalf("sample %d: after Pull %q on goroutines %v; the leader is %d", i, d, on, me)
		}
	}

	// Away for longer than leadTakeover: the reader reads again.
	put("away")
	waitFor(t, "the reader's delivery while the leader is away", func() bool { d, _ := rb.got(); return len(d) == 5 })
	if _, on := rb.got(); on[4] == me {
		t.Fatal("delivered on the leader's goroutine while it was away")
	}

	// Timeout. The ticker looks during this Wait: the reader still takes
	// the link back after it.
	start := time.Now()
	if readable, ok := face.Wait(leadTakeover+10*time.Millisecond, yes); readable || !ok {
		t.Fatalf("Wait with nothing to read = %v, %v", readable, ok)
	}
	if el := time.Since(start); el < leadTakeover+5*time.Millisecond {
		t.Fatalf("Wait returned after %v, before its timeout", el)
	}
	put("late")
	waitFor(t, "the reader's delivery after a long Wait", func() bool { d, _ := rb.got(); return len(d) == 6 })
	if _, on := rb.got(); on[5] == me {
		t.Fatal("delivered on the leader's goroutine while it was away")
	}

	// Ready false, Interrupt.
	if readable, ok := face.Wait(-1, func() bool { return false }); readable || !ok {
		t.Fatalf("Wait with ready false = %v, %v", readable, ok)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if readable, ok := face.Wait(-1, yes); readable || !ok {
			t.Errorf("interrupted Wait = %v, %v", readable, ok)
		}
	}()
	waits.InterruptUntil(t, face.Interrupt, done)

	// Wanted: no lead, the reader delivers.
	face.Want(1)
	if readable, ok := face.Wait(-1, yes); readable || ok {
		t.Fatalf("Wait while wanted = %v, %v: want no lead", readable, ok)
	}
	put("wanted")
	waitFor(t, "delivery while wanted", func() bool { d, _ := rb.got(); return len(d) == 7 })
	face.Want(-1)

	// Released: the reader delivers at once.
	if readable, ok := face.Wait(5*time.Second, func() bool { put("lead"); return true }); !readable || !ok {
		t.Fatalf("Wait = %v, %v: want a batch", readable, ok)
	}
	face.Pull()
	face.Hold(-1)
	put("released")
	waitFor(t, "delivery once released", func() bool { d, _ := rb.got(); return len(d) == 9 })

	// The link closes during a Wait: it ends.
	face.Hold(1)
	done = make(chan struct{})
	go func() {
		defer close(done)
		for { // a Wait that reads the CLOSE batch pulls it, and the next fails
			readable, ok := face.Wait(-1, yes)
			if !ok {
				return
			}
			if readable {
				face.Pull()
			}
		}
	}()
	time.Sleep(10 * time.Millisecond) // let it block (Close works either way)
	start = time.Now()
	a.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the link closed under a Wait that did not end")
	}
	select {
	case <-face.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the face did not go down")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("the face went down %v after the remote closed", el)
	}
	face.Hold(-1)
	if _, ok := face.Wait(-1, yes); ok {
		t.Fatal("Wait on a closed link led it")
	}
	if d, _ := rb.got(); len(d) != 9 {
		t.Fatalf("delivered %q", d)
	}
}

// leadPair is two sessions over loopback TCP, b connected to a with a
// subscriber on "k" that a matches; it returns b's face and recorder.
func leadPair(t *testing.T) (a *Session, face *Face, rb *pushRec) {
	t.Helper()
	a, err := Open(Config{Listen: []string{"tcp/127.0.0.1:0"}}, NopHandler{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	rb = &pushRec{up: make(chan *Face, 1)}
	b, err := Open(Config{Connect: []string{a.Listeners()[0].String()}}, rb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	select {
	case face = <-rb.up:
	case <-time.After(10 * time.Second):
		t.Fatal("no face")
	}
	if !face.Leadable() {
		t.Skip("TCP links cannot be led on this system")
	}
	if _, err := b.DeclareSubscriber("k"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "match", func() bool { return a.Matching("k") })
	return a, face, rb
}

// TestLeadNothingAfterFaceDown: a transport that closes on another
// goroutine while the leader holds a batch it read: the leader's Pull
// delivers nothing (the transport is closing), and the face goes down only
// after that Pull.
func TestLeadNothingAfterFaceDown(t *testing.T) {
	a, face, rb := leadPair(t)
	face.Hold(1)
	defer face.Hold(-1)
	readable, ok := face.Wait(5*time.Second, func() bool {
		a.Put("k", &wire.Put{Payload: []byte("x")}, PutOptions{})
		return true
	})
	if !readable || !ok {
		t.Fatalf("Wait = %v, %v: want a batch", readable, ok)
	}
	face.t.shutdown(nil, false) // as a lease expiry or a session close does
	select {
	case <-face.Done():
		t.Fatal("the face went down while the leader held a batch")
	case <-time.After(50 * time.Millisecond):
	}
	face.Pull()
	if d, _ := rb.got(); len(d) != 0 {
		t.Fatalf("delivered %q on a closing face", d)
	}
	select {
	case <-face.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the face did not go down after the Pull")
	}
}

// TestLeadTickDuringWait: a tick of the takeover ticker that comes while
// the leader waits does not count as time away; the first tick after the
// leader left keeps the link, the second gives it back. The ticks are
// driven by hand (the runtime's timer stopped after each).
func TestLeadTickDuringWait(t *testing.T) {
	_, face, _ := leadPair(t)
	ld := &face.t.ld
	tick := func() {
		face.t.takeover()
		ld.mu.Lock()
		if ld.timer != nil {
			ld.timer.Stop()
		}
		ld.mu.Unlock()
	}
	leading := func() bool {
		ld.mu.Lock()
		defer ld.mu.Unlock()
		return ld.leading
	}
	face.Hold(1)
	defer face.Hold(-1)
	if _, ok := face.Wait(-1, func() bool { tick(); return false }); !ok {
		t.Fatal("Wait did not lead")
	}
	tick()
	if !leading() {
		t.Fatal("the first tick after the leader left a Wait that spanned a tick took the link back")
	}
	tick()
	if leading() {
		t.Fatal("the second tick with the leader away did not give the link back")
	}
}
