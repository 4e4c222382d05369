package exec

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/clock"
	"github.com/nros-go/nros/internal/goid"
	"github.com/nros-go/nros/internal/timer"
)

// fakeFeed stands for a clock subscription's socket: send queues a sample
// time, Wait blocks until one is queued or Interrupt, Pull installs it.
type fakeFeed struct {
	ov *clock.Override

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []clock.RosTime
	intr     bool
	holds    int
	wants    int
	waiting  bool // one Wait at a time, as the DDS feed
	waits    int
	timeouts []time.Duration
	pulledOn uintptr
}

func newFakeFeed(ov *clock.Override) *fakeFeed {
	f := &fakeFeed{ov: ov}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *fakeFeed) send(t clock.RosTime) {
	f.mu.Lock()
	f.queue = append(f.queue, t)
	f.cond.Broadcast()
	f.mu.Unlock()
}

func (f *fakeFeed) Hold(n int) { f.mu.Lock(); f.holds += n; f.mu.Unlock() }
func (f *fakeFeed) Want(n int) { f.mu.Lock(); f.wants += n; f.mu.Unlock() }
func (f *fakeFeed) Fresh()     {}

func (f *fakeFeed) Interrupt() {
	f.mu.Lock()
	f.intr = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

func (f *fakeFeed) Wait(d time.Duration, ready func() bool) (bool, bool) {
	f.mu.Lock()
	if f.waiting {
		f.mu.Unlock()
		return false, false
	}
	f.waiting = true
	defer func() { f.mu.Lock(); f.waiting = false; f.mu.Unlock() }()
	f.waits++
	f.timeouts = append(f.timeouts, d)
	f.intr = false
	f.mu.Unlock()
	if !ready() {
		return false, true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 && !f.intr {
		f.cond.Wait()
	}
	return len(f.queue) > 0, true
}

func (f *fakeFeed) Pull() {
	f.mu.Lock()
	q := f.queue
	f.queue = nil
	f.pulledOn = goid.Current()
	f.mu.Unlock()
	for _, t := range q {
		f.ov.Install(t)
	}
}

func (f *fakeFeed) state() (holds, waits int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holds, f.waits
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 5000 {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLoopWaitsOnFeed: a loop whose ROS timer waits on a clock with a feed
// waits on the feed itself; the sample it pulls makes the timer due and the
// callback runs on the spinning goroutine in the one pass right after; Wake interrupts
// the wait; a steady timer's deadline is the feed wait's timeout; ending
// Spin lets go of the feed.
func TestLoopWaitsOnFeed(t *testing.T) {
	ov := clock.NewOverride(nil)
	ov.Attach()
	ov.Install(10 * sec)
	f := newFakeFeed(ov)
	ov.SetFeed(f)
	l := New(Options{})
	fired := make(chan uintptr, 10)
	tm := NewTimer(Config{ID: 1, Clock: Clock{Kind: Ros, Sources: l.Sources(), Ov: ov}, Period: sec,
		Policy: timer.Skip, Autostart: true, Callback: func() { fired <- goid.Current() }})
	if err := l.Add(tm); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var spinner atomic.Uintptr
	spun := make(chan error)
	go func() {
		spinner.Store(goid.Current())
		spun <- l.Spin(ctx)
	}()
	waitFor(t, "the loop to wait on the feed", func() bool { h, w := f.state(); return h == 1 && w >= 1 })

	_, w0 := f.state()
	p0 := l.Passes()
	f.send(11 * sec)
	select {
	case g := <-fired:
		if g != spinner.Load() {
			t.Fatalf("callback on goroutine %d, the spinner is %d", g, spinner.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pulled sample did not fire the timer")
	}
	if f.pulledOn != spinner.Load() {
		t.Fatalf("pulled on goroutine %d, the spinner is %d", f.pulledOn, spinner.Load())
	}
	waitFor(t, "the next wait", func() bool { _, w := f.state(); return w > w0 })
	if n := l.Passes() - p0; n != 1 {
		t.Fatalf("%d passes for one sample", n)
	}

	// Wake interrupts the feed wait, also when a stale token (a late
	// alarm's, which pokes nobody) sits in the channel.
	_, w1 := f.state()
	l.Wake()
	waitFor(t, "a pass after Wake", func() bool { _, w := f.state(); return w > w1 })
	waitFor(t, "the wait after it", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.waiting })
	l.wake <- struct{}{} // the stale token
	_, w2 := f.state()
	l.Wake()
	waitFor(t, "a pass after Wake with a token already there", func() bool { _, w := f.state(); return w > w2 })

	// A steady timer bounds the wait.
	st := NewTimer(Config{ID: 2, Clock: Clock{Kind: Steady, Sources: l.Sources()}, Period: int64(time.Hour),
		Autostart: true, Callback: func() {}})
	if err := l.Add(st); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a wait with the steady timer's timeout", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		d := f.timeouts[len(f.timeouts)-1]
		return d > 59*time.Minute && d <= time.Hour
	})

	cancel()
	select {
	case err := <-spun:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the context did not end a Spin waiting on the feed")
	}
	if h, _ := f.state(); h != 0 {
		t.Fatalf("holds after Spin returned: %d", h)
	}
	l.Close()
}

// TestSecondLoopWantsTheFeed: a loop that cannot wait on the feed (another
// loop does) waits on its channel and wants the feed meanwhile, so that
// the feed's own goroutine reads while the first loop runs callbacks.
func TestSecondLoopWantsTheFeed(t *testing.T) {
	ov := clock.NewOverride(nil)
	ov.Attach()
	ov.Install(10 * sec)
	f := newFakeFeed(ov)
	ov.SetFeed(f)
	loops := []*Loop{New(Options{}), New(Options{})}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, l := range loops {
		tm := NewTimer(Config{ID: uint64(i + 1), Clock: Clock{Kind: Ros, Sources: l.Sources(), Ov: ov}, Period: sec,
			Policy: timer.Skip, Autostart: true, Callback: func() {}})
		if err := l.Add(tm); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = l.Spin(ctx) }()
	}
	waitFor(t, "one loop to hold and wait on the feed, the other to want it", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.holds == 1 && f.wants == 1 && f.waiting
	})
	cancel()
	wg.Wait()
	for _, l := range loops {
		l.Close()
	}
	if f.holds != 0 || f.wants != 0 {
		t.Fatalf("after Spin: holds %d, wants %d", f.holds, f.wants)
	}
}
