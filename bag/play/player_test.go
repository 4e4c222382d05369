package play

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/bag"
)

// sliceSource plays a fixed list of messages.
type sliceSource struct {
	msgs []bag.Message
	i    int
}

func (s *sliceSource) Next() (bag.Message, error) {
	if s.i >= len(s.msgs) {
		return bag.Message{}, io.EOF
	}
	s.i++
	return s.msgs[s.i-1], nil
}

func (s *sliceSource) Close() error { return nil }

type pubEvent struct {
	wall  time.Duration // since the test began
	clock bool
	t     int64 // message time or /clock value
}

// recorder is an output that records what is published and when (on the
// time package: the tests run in synctest bubbles).
type recorder struct {
	w0     time.Time
	mu     sync.Mutex
	ev     []pubEvent
	closed bool
}

func (r *recorder) add(clock bool, t int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ev = append(r.ev, pubEvent{time.Since(r.w0), clock, t})
	return nil
}

func (r *recorder) publish(m bag.Message) error { return r.add(false, m.Time) }
func (r *recorder) publishClock(t int64) error  { return r.add(true, t) }
func (r *recorder) close()                      { r.closed = true }

func (r *recorder) events() []pubEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pubEvent(nil), r.ev...)
}

// messages returns the published messages' events.
func (r *recorder) messages() []pubEvent {
	var out []pubEvent
	for _, e := range r.events() {
		if !e.clock {
			out = append(out, e)
		}
	}
	return out
}

// testPlayer makes a player over msgs that records what it publishes.
func testPlayer(t *testing.T, msgs []bag.Message, opts Options) (*Player, *recorder) {
	t.Helper()
	if err := opts.check(); err != nil {
		t.Fatal(err)
	}
	if opts.ReadAhead == 0 {
		opts.ReadAhead = 4
	}
	rec := &recorder{w0: time.Now()}
	open := func(start int64) (source, error) {
		s := &sliceSource{msgs: msgs}
		for s.i < len(msgs) && msgs[s.i].Time < start {
			s.i++
		}
		return s, nil
	}
	return newPlayer(open, rec, msgs[0].Time, msgs[len(msgs)-1].Time, opts), rec
}

var tp = &bag.Topic{Name: "/a", Type: "std_msgs/msg/String"}

// msgsAt makes messages at the given times (ms after 1000 s).
func msgsAt(ms ...int64) []bag.Message {
	var out []bag.Message
	for _, t := range ms {
		out = append(out, bag.Message{Topic: tp, Time: 1000e9 + t*1e6})
	}
	return out
}

// At rate 2 each message is published at half its bag offset, once, in
// order, and /clock (100 Hz wall) advances 2 ms of ROS time per wall ms.
func TestPlayerRateAndClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 10, 10, 250, 1000, 1999)
		p, rec := testPlayer(t, msgs, Options{Rate: 2, ClockRate: 100})
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := p.Status(); st.Published != len(msgs) || !st.Done {
			t.Fatalf("status %+v", st)
		}
		ev := rec.events()
		var got []int64
		clocks := 0
		for i, e := range ev {
			if e.clock {
				clocks++
				if off := e.t - msgs[0].Time; off != 2*int64(e.wall) && i != len(ev)-1 {
					t.Fatalf("/clock %d ns into the bag at wall %v: not 2x", off, e.wall)
				}
				continue
			}
			got = append(got, e.t)
			if want := time.Duration((e.t - msgs[0].Time) / 2); e.wall != want {
				t.Fatalf("message at %d published at %v, want %v", e.t, e.wall, want)
			}
		}
		for i := range msgs {
			if got[i] != msgs[i].Time {
				t.Fatalf("message %d: %d, want %d", i, got[i], msgs[i].Time)
			}
		}
		// 1 s of wall time at 100 Hz, plus the one at the end.
		if clocks != 101 {
			t.Fatalf("%d /clock samples", clocks)
		}
		if last := ev[len(ev)-1]; !last.clock || last.t != msgs[len(msgs)-1].Time {
			t.Fatalf("last event %+v, want /clock at the bag's end", last)
		}
	})
}

// With Loop, ROS time jumps back to the start on each pass and every pass
// publishes every message.
func TestPlayerLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200)
		var loops []int
		p, rec := testPlayer(t, msgs, Options{Loop: true, ClockRate: 20, OnLoop: func(n int) { loops = append(loops, n) }})
		ctx, cancel := context.WithTimeout(context.Background(), 1050*time.Millisecond)
		defer cancel()
		if err := p.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		// Passes begin at 0, 200, 400, ... ms of wall time: six in 1.05 s.
		if n := p.Status().Published; n != 16 {
			t.Fatalf("%d messages in 1.05 s of a 0.2 s bag looped", n)
		}
		if len(loops) != 5 || loops[4] != 5 || p.Status().Loops != 5 {
			t.Fatalf("loops %v", loops)
		}
		jumps := 0
		var last int64
		for _, e := range rec.events() {
			if e.clock {
				if e.t < last {
					jumps++
					if e.t != msgs[0].Time || e.wall%(200*time.Millisecond) != 0 {
						t.Fatalf("jumped back to %d at %v, not to the start at the end of a pass", e.t, e.wall)
					}
				}
				last = e.t
			}
		}
		if jumps != 5 {
			t.Fatalf("%d backward jumps of /clock", jumps)
		}
	})
}

// Delay waits in wall time with /clock held; StartOffset skips the start
// of the bag.
func TestPlayerDelayOffset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200, 300)
		p, rec := testPlayer(t, msgs, Options{Delay: time.Second, StartOffset: 150 * time.Millisecond, ClockRate: 10})
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		ev := rec.events()
		if ev[0].wall != time.Second || !ev[0].clock || ev[0].t != msgs[0].Time+150e6 {
			t.Fatalf("first event %+v, want /clock at the offset after the delay", ev[0])
		}
		pub := rec.messages()
		for _, e := range pub {
			if want := time.Second + time.Duration(e.t-msgs[0].Time-150e6); e.wall != want {
				t.Fatalf("message %d at %v, want %v", e.t, e.wall, want)
			}
		}
		if len(pub) != 2 || pub[0].t != msgs[2].Time {
			t.Fatalf("published %+v", pub)
		}
	})
}

// StartPaused holds until resumed, with /clock repeating the start; play
// next steps one message at a time and moves bag time to it; the controls
// work from another goroutine while Run plays.
func TestPlayerPauseAndPlayNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200)
		p, rec := testPlayer(t, msgs, Options{StartPaused: true, ClockRate: 10})
		done := make(chan error)
		go func() { done <- p.Run(context.Background()) }()
		time.Sleep(time.Second)
		synctest.Wait()
		for _, e := range rec.events() {
			if !e.clock || e.t != msgs[0].Time {
				t.Fatalf("while paused: %+v", e)
			}
		}
		if !p.IsPaused() || p.Status().Time != msgs[0].Time {
			t.Fatalf("status %+v", p.Status())
		}
		for range 2 { // the first message, then the second: bag time moves to it
			if !p.PlayNext() {
				t.Fatal("play next refused while paused")
			}
		}
		pub := rec.messages() // published by PlayNext itself
		if len(pub) != 2 || pub[1].t != msgs[1].Time || pub[1].wall != time.Second {
			t.Fatalf("after play-next: %+v", pub)
		}
		if st := p.Status(); st.Time != msgs[1].Time {
			t.Fatalf("bag time %d after play-next, want %d", st.Time, msgs[1].Time)
		}
		if p.TogglePaused() {
			t.Fatal("toggle did not resume")
		}
		if p.PlayNext() {
			t.Fatal("play next accepted while playing")
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ev := rec.events()
		if n := p.Status().Published; n != 3 || ev[len(ev)-2].wall != 1100*time.Millisecond {
			t.Fatalf("%d published, last at %v", n, ev[len(ev)-2].wall)
		}
	})
}

// SetRate re-anchors (bag time does not jump) and refuses bad rates; a
// seek jumps /clock at once, plays from the first message at or after the
// target and keeps a pause.
func TestPlayerRateAndSeek(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200, 300, 400, 500, 600, 700, 800, 900)
		p, rec := testPlayer(t, msgs, Options{ClockRate: 100})
		done := make(chan error)
		go func() { done <- p.Run(context.Background()) }()
		time.Sleep(150 * time.Millisecond) // bag at 150 ms: two messages out
		if p.SetRate(0) || p.SetRate(-1) || !p.SetRate(0.5) || p.Rate() != 0.5 {
			t.Fatal("SetRate")
		}
		time.Sleep(100 * time.Millisecond) // bag at 200 ms
		synctest.Wait()
		if st := p.Status(); st.Time != msgs[0].Time+200e6 || st.Published != 3 {
			t.Fatalf("after 100 ms at 0.5x: %+v", st)
		}
		p.Pause()
		if !p.SeekTo(msgs[0].Time + 650e6) {
			t.Fatal("seek refused")
		}
		synctest.Wait()
		ev := rec.events()
		if last := ev[len(ev)-1]; !last.clock || last.t != msgs[0].Time+650e6 || last.wall != 250*time.Millisecond {
			t.Fatalf("after the seek: %+v", last)
		}
		p.Resume()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		pub := rec.messages()
		if len(pub) != 6 || pub[3].t != msgs[7].Time || pub[3].wall != 350*time.Millisecond {
			t.Fatalf("after the seek, published %+v", pub)
		}
		if p.SeekTo(0) || p.SetRate(2) {
			t.Fatal("controls accepted after the end")
		}
	})
}

// PlayDue is Run's step for a caller that moves time itself: it publishes
// what is due and says when to call again; Close stops playback and
// releases the output.
func TestPlayerPlayDueAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200)
		p, rec := testPlayer(t, msgs, Options{})
		w0 := time.Now()
		next, done, err := p.PlayDue()
		if err != nil || done || !next.Equal(w0.Add(100*time.Millisecond)) || len(rec.messages()) != 1 {
			t.Fatalf("first PlayDue: %v %v %v, %d published", next.Sub(w0), done, err, len(rec.messages()))
		}
		time.Sleep(250 * time.Millisecond) // late: both remaining messages are due
		if next, done, err = p.PlayDue(); err != nil || !done || !next.IsZero() || len(rec.messages()) != 3 {
			t.Fatalf("second PlayDue: %v %v, %d published", done, err, len(rec.messages()))
		}
		if p.PlayNext() {
			t.Fatal("play next after the end")
		}

		// Paused without /clock: PlayDue has nothing to wait for but a
		// control; PlayNext publishes by itself, before or after the start,
		// and reports false at the end of the bag.
		p, rec = testPlayer(t, msgs, Options{StartPaused: true})
		if !p.PlayNext() || len(rec.messages()) != 1 {
			t.Fatal("play next before the start")
		}
		if next, done, err := p.PlayDue(); err != nil || done || !next.IsZero() {
			t.Fatalf("paused PlayDue: %v %v %v", next, done, err)
		}
		for i, want := range []bool{true, true, false} {
			if p.PlayNext() != want {
				t.Fatalf("play next %d: not %v", i, want)
			}
		}
		if st := p.Status(); st.Published != 3 || st.Time != msgs[2].Time || st.Done {
			t.Fatalf("status %+v", st)
		}
		if _, done, err = p.PlayDue(); !done || err != nil {
			t.Fatalf("after the end: %v %v", done, err)
		}

		p, rec = testPlayer(t, msgs, Options{Loop: true})
		ran := make(chan error)
		go func() { ran <- p.Run(context.Background()) }()
		time.Sleep(50 * time.Millisecond)
		p.Close()
		if err := <-ran; !errors.Is(err, ErrClosed) || !rec.closed {
			t.Fatalf("Run after Close: %v, output closed %v", err, rec.closed)
		}
		if _, _, err := p.PlayDue(); !errors.Is(err, ErrClosed) {
			t.Fatalf("PlayDue after Close: %v", err)
		}
	})
}

// A read error ends playback with that error, after the messages before it.
func TestPlayerReadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := errors.New("corrupt chunk")
		msgs := msgsAt(0, 100)
		rec := &recorder{w0: time.Now()}
		open := func(int64) (source, error) { return &failingSource{msgs: msgs, err: bad}, nil }
		p := newPlayer(open, rec, msgs[0].Time, msgs[1].Time+1e9, Options{})
		if err := p.Run(context.Background()); !errors.Is(err, bad) {
			t.Fatalf("Run: %v", err)
		}
		if n := len(rec.messages()); n != 2 {
			t.Fatalf("%d published before the error", n)
		}
	})
}

// failingSource returns its messages, then err.
type failingSource struct {
	msgs []bag.Message
	err  error
}

func (s *failingSource) Next() (bag.Message, error) {
	if len(s.msgs) == 0 {
		return bag.Message{}, s.err
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *failingSource) Close() error { return nil }

func TestOptionsCheck(t *testing.T) {
	for _, o := range []Options{{Rate: -1}, {ClockRate: -1}, {ClockRate: 2e6}, {StartOffset: -1}, {Delay: -1}, {ReadAhead: -1}} {
		if o.check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := (&Options{Rate: 2, ClockRate: 1e6}).check(); err != nil {
		t.Fatal(err)
	}
}
