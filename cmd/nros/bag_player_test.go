package main

import (
	"context"
	"io"
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
	wall  time.Duration // since the player started
	clock bool
	t     int64 // message time or /clock value
}

// testPlayer makes a player over msgs that records what it publishes.
func testPlayer(msgs []bag.Message, ev *[]pubEvent) *player {
	w0 := time.Now()
	return &player{
		start: msgs[0].Time, end: msgs[len(msgs)-1].Time,
		open: func(start int64) (playerSource, error) {
			s := &sliceSource{msgs: msgs}
			for s.i < len(msgs) && msgs[s.i].Time < start {
				s.i++
			}
			return s, nil
		},
		publish: func(m bag.Message) error {
			*ev = append(*ev, pubEvent{time.Since(w0), false, m.Time})
			return nil
		},
		publishClock: func(t int64) error {
			*ev = append(*ev, pubEvent{time.Since(w0), true, t})
			return nil
		},
		rate: 1, queueSize: 4,
	}
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

// At --rate 2 each message is published at half its bag offset, once, in
// order, and /clock (100 Hz wall) advances 2 ms of ROS time per wall ms.
func TestPlayerRateAndClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 10, 10, 250, 1000, 1999)
		var ev []pubEvent
		p := testPlayer(msgs, &ev)
		p.rate = 2
		p.clockPeriod = 10 * time.Millisecond
		n, err := p.Run(context.Background())
		if err != nil || n != len(msgs) {
			t.Fatalf("published %d, %v", n, err)
		}
		var got []int64
		clocks := 0
		for _, e := range ev {
			if e.clock {
				clocks++
				if off := e.t - msgs[0].Time; off != 2*int64(e.wall) && e != ev[len(ev)-1] {
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
		if clocks < 100 || clocks > 102 {
			t.Fatalf("%d /clock samples", clocks)
		}
	})
}

// With --loop, ROS time jumps back to the start on each pass and every
// pass publishes every message.
func TestPlayerLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200)
		var ev []pubEvent
		p := testPlayer(msgs, &ev)
		p.loop = true
		p.clockPeriod = 50 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 1050*time.Millisecond)
		defer cancel()
		n, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n < 12 {
			t.Fatalf("%d messages in 1 s of a 0.2 s bag looped", n)
		}
		jumps := 0
		var last int64
		for _, e := range ev {
			if e.clock {
				if e.t < last {
					jumps++
					if e.t != msgs[0].Time {
						t.Fatalf("jumped back to %d, not the start", e.t)
					}
				}
				last = e.t
			}
		}
		if jumps < 4 {
			t.Fatalf("%d backward jumps of /clock", jumps)
		}
	})
}

// --delay waits in wall time with /clock held; --start-offset skips the
// start of the bag; --start-paused holds until resumed; play-next steps.
func TestPlayerDelayOffsetPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200, 300)
		var ev []pubEvent
		p := testPlayer(msgs, &ev)
		p.delay = time.Second
		p.startOffset = 150e6
		p.clockPeriod = 100 * time.Millisecond
		if _, err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ev[0].wall != time.Second || !ev[0].clock || ev[0].t != msgs[0].Time+150e6 {
			t.Fatalf("first event %+v, want /clock at the offset after the delay", ev[0])
		}
		var pub []int64
		for _, e := range ev {
			if !e.clock {
				pub = append(pub, e.t)
				if want := time.Second + time.Duration(e.t-msgs[0].Time-150e6); e.wall != want {
					t.Fatalf("message %d at %v, want %v", e.t, e.wall, want)
				}
			}
		}
		if len(pub) != 2 || pub[0] != msgs[2].Time {
			t.Fatalf("published %v", pub)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		msgs := msgsAt(0, 100, 200)
		var ev []pubEvent
		p := testPlayer(msgs, &ev)
		p.startPaused = true
		p.clockPeriod = 100 * time.Millisecond
		cmds := make(chan playerCommand)
		p.commands = cmds
		done := make(chan int)
		go func() {
			n, _ := p.Run(context.Background())
			done <- n
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		for _, e := range ev {
			if !e.clock || e.t != msgs[0].Time {
				t.Fatalf("while paused: %+v", e)
			}
		}
		cmds <- cmdPlayNext // the first message, at once
		cmds <- cmdPlayNext // the second: bag time moves to it
		synctest.Wait()
		var pub []pubEvent
		for _, e := range ev {
			if !e.clock {
				pub = append(pub, e)
			}
		}
		if len(pub) != 2 || pub[1].t != msgs[1].Time || pub[1].wall != time.Second {
			t.Fatalf("after play-next: %+v", pub)
		}
		cmds <- cmdTogglePause
		n := <-done
		if n != 3 || ev[len(ev)-2].wall != 1100*time.Millisecond {
			t.Fatalf("%d published, last at %v", n, ev[len(ev)-2].wall)
		}
	})
}

func TestKeysAndProgress(t *testing.T) {
	for _, c := range []struct {
		in   string
		cmd  playerCommand
		used int
	}{{" ", cmdTogglePause, 1}, {"q", cmdQuit, 1}, {"\x1b[A", cmdFaster, 3}, {"\x1b[B", cmdSlower, 3},
		{"\x1b[C", cmdPlayNext, 3}, {"\x1b[", 0, 0}, {"x", 0, 1}, {"\x1b[D", 0, 3}} {
		if cmd, used := keyCommand([]byte(c.in)); cmd != c.cmd || used != c.used {
			t.Errorf("%q: %v %d, want %v %d", c.in, cmd, used, c.cmd, c.used)
		}
	}
	got := formatProgress(10e9, 20e9, 15e9, true, 2, 10)
	if want := "[#####-----] Paused   bag 5.000000000s / 10.000000000s  ROS time 15.000000000  rate 2.00"; got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}
