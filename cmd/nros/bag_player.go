package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/nros-go/nros/bag"
)

// playerSource yields a pass over the bag's messages, from the first one at
// or after start, in time order (io.EOF after the last).
type playerSource interface {
	Next() (bag.Message, error)
	Close() error
}

// playerCommand is a live control of playback (terminal keys).
type playerCommand int

const (
	cmdTogglePause playerCommand = iota + 1
	cmdPlayNext
	cmdFaster // rate +10 %
	cmdSlower // rate -10 %
	cmdQuit
	// The player services' requests (playerRequest) only:
	cmdPause
	cmdResume
	cmdIsPaused
	cmdSetRate
	cmdGetRate
	cmdSeek
)

// playerRequest is a control from the player's services (~/pause, ...):
// the player answers it on reply (buffered) once applied.
type playerRequest struct {
	kind  playerCommand
	rate  float64 // cmdSetRate
	seek  int64   // cmdSeek: bag time, ns
	reply chan playerReply
}

// playerReply is the player's answer to a request.
type playerReply struct {
	paused bool
	rate   float64
	ok     bool
}

// player is the scheduler of `nros bag play`: it maps bag time to wall
// time, decides when each message and each /clock sample is due, and hands
// them to its publish functions. It keeps no state of its own outside Run
// and reads time only through the time package, so a test drives it in a
// testing/synctest bubble with fake time.
//
// Bag time b and wall time w are tied by an anchor (w0, b0):
// b = b0 + (w - w0) * rate while playing; a pause freezes b, and a resume,
// a rate change or a loop sets a new anchor.
type player struct {
	// open starts a pass over the messages from start (ns).
	open func(start int64) (playerSource, error)
	// start is the bag's first receive time, end its last.
	start, end int64
	// publish sends a message; publishClock a /clock sample.
	publish      func(m bag.Message) error
	publishClock func(t int64) error
	// clockPeriod is the /clock period in wall time (0: no /clock).
	clockPeriod time.Duration
	rate        float64
	loop        bool
	startPaused bool
	startOffset int64 // ns after start
	delay       time.Duration
	queueSize   int
	// commands, when not nil, carries live controls (terminal keys).
	commands <-chan playerCommand
	// requests, when not nil, carries the player services' controls.
	requests <-chan playerRequest
	// logf prints a line of progress (may be nil).
	logf func(format string, a ...any)
	// onState, when not nil, is told the bag time, paused state and rate
	// after every change and at every /clock tick (for a progress line).
	onState func(bagTime int64, paused bool, rate float64)
}

// errQuit ends playback at the user's request.
var errQuit = errors.New("quit")

// item is what the read-ahead goroutine hands the scheduler.
type item struct {
	m   bag.Message
	err error // io.EOF at the end of a pass
}

// readAheadBatch is how many messages the read-ahead goroutine hands over
// at a time: one channel operation per message would cost more than
// reading the message.
const readAheadBatch = 64

// readAhead fills a queue from a pass over the bag until it ends or ctx is
// done. The queue holds about queueSize messages, in batches.
func (p *player) readAhead(ctx context.Context, src playerSource) <-chan []item {
	ch := make(chan []item, max(p.queueSize/readAheadBatch, 1))
	go func() {
		defer close(ch)
		defer src.Close()
		batch := make([]item, 0, readAheadBatch)
		for {
			m, err := src.Next()
			batch = append(batch, item{m, err})
			if err == nil && len(batch) < readAheadBatch {
				continue
			}
			select {
			case ch <- batch:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
			batch = make([]item, 0, readAheadBatch)
		}
	}()
	return ch
}

// Run plays until the bag ends (and, with loop, for ever), ctx is done or
// a quit command comes. It returns the number of messages published.
func (p *player) Run(ctx context.Context) (int, error) {
	if p.rate <= 0 || math.IsInf(p.rate, 0) || math.IsNaN(p.rate) {
		return 0, fmt.Errorf("rate must be positive, got %v", p.rate)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	playStart := p.start + p.startOffset
	published := 0

	// The delay passes before anything else: /clock does not advance (and
	// is not published) during it.
	if p.delay > 0 {
		if err := sleepCtx(ctx, p.delay); err != nil {
			return 0, nil
		}
	}

	paused := p.startPaused
	anchorWall := time.Now()
	anchorBag := playStart
	bagNow := func(w time.Time) int64 {
		if paused {
			return anchorBag
		}
		return anchorBag + int64(float64(w.Sub(anchorWall))*p.rate)
	}
	reanchor := func(w time.Time) {
		anchorBag = bagNow(w)
		anchorWall = w
	}
	state := func(w time.Time) {
		if p.onState != nil {
			p.onState(bagNow(w), paused, p.rate)
		}
	}
	var nextTick time.Time
	tick := func(w time.Time) error {
		if p.clockPeriod <= 0 {
			return nil
		}
		// The sample carries the bag time of its grid instant (not of the
		// moment the goroutine woke up), so that /clock steps evenly.
		at := w
		if !nextTick.IsZero() && nextTick.Before(w) && !nextTick.Before(anchorWall) {
			at = nextTick
		}
		if err := p.publishClock(bagNow(at)); err != nil {
			return fmt.Errorf("publish /clock: %w", err)
		}
		state(w)
		nextTick = nextTick.Add(p.clockPeriod)
		if nextTick.Before(w) { // fell behind: do not burst to catch up
			nextTick = w.Add(p.clockPeriod)
		}
		return nil
	}
	nextTick = anchorWall
	if p.startPaused && p.logf != nil {
		p.logf("paused at start (space resumes)")
	}

	openAt := playStart // where the next pass starts (a seek moves it)
	seeking := false
	for pass := 0; ; pass++ {
		src, err := p.open(openAt)
		if err != nil {
			return published, err
		}
		if pass > 0 && !seeking {
			// Loop: ROS time jumps back to the start.
			w := time.Now()
			anchorWall, anchorBag = w, playStart
			if p.logf != nil {
				p.logf("loop %d: back to %s", pass, formatSeconds(playStart))
			}
			nextTick = w
		}
		seeking = false
		passCtx, passCancel := context.WithCancel(ctx)
		q := p.readAhead(passCtx, src)
		before := published
		var timer *time.Timer
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		var batch []item
	messages:
		for {
			if len(batch) == 0 {
				var ok bool
				if batch, ok = <-q; !ok {
					stop()
					passCancel()
					return published, nil // ctx is done
				}
			}
			it := batch[0]
			batch = batch[1:]
			if it.err == io.EOF {
				break
			}
			if it.err != nil {
				stop()
				passCancel()
				return published, it.err
			}
			m := it.m
			// Wait for the message's time, publishing /clock meanwhile and
			// obeying commands.
			for {
				w := time.Now()
				if !nextTick.IsZero() && p.clockPeriod > 0 && !w.Before(nextTick) {
					if err := tick(w); err != nil {
						stop()
						passCancel()
						return published, err
					}
					continue
				}
				var due time.Time
				if !paused {
					due = p.wallAt(anchorWall, anchorBag, m.Time)
					if !w.Before(due) {
						break
					}
				}
				if p.clockPeriod > 0 && (due.IsZero() || nextTick.Before(due)) {
					due = nextTick
				}
				var tc <-chan time.Time
				if !due.IsZero() {
					d := due.Sub(w)
					if timer == nil {
						timer = time.NewTimer(d)
					} else {
						timer.Reset(d)
					}
					tc = timer.C
				}
				playNext := false
				select {
				case <-ctx.Done():
					stop()
					passCancel()
					return published, nil
				case <-tc:
					continue
				case r := <-p.requests:
					if timer != nil {
						timer.Stop()
					}
					w = time.Now()
					var rep playerReply
					switch r.kind {
					case cmdPause, cmdResume, cmdTogglePause:
						pause := r.kind == cmdPause || (r.kind == cmdTogglePause && !paused)
						if pause && !paused {
							reanchor(w)
							paused = true
						} else if !pause && paused {
							anchorWall, paused = w, false
						}
						rep.ok = true
					case cmdSetRate:
						if r.rate > 0 && !math.IsInf(r.rate, 0) {
							reanchor(w)
							p.rate, rep.ok = r.rate, true
						}
					case cmdPlayNext:
						playNext, rep.ok = paused, paused
					case cmdSeek:
						// Bag time jumps to the target (ROS time with it);
						// the pass restarts there.
						openAt = min(max(r.seek, p.start), p.end)
						anchorWall, anchorBag = w, openAt
						nextTick = w
						seeking, rep.ok = true, true
					case cmdIsPaused, cmdGetRate:
						rep.ok = true
					}
					rep.paused, rep.rate = paused, p.rate
					r.reply <- rep
					state(w)
					if seeking {
						break messages
					}
				case c := <-p.commands:
					if timer != nil {
						timer.Stop()
					}
					w = time.Now()
					switch c {
					case cmdTogglePause:
						if paused {
							anchorWall, paused = w, false
						} else {
							reanchor(w)
							paused = true
						}
					case cmdFaster, cmdSlower:
						reanchor(w)
						if c == cmdFaster {
							p.rate *= 1.1
						} else {
							p.rate /= 1.1
						}
					case cmdPlayNext:
						playNext = paused
					case cmdQuit:
						stop()
						passCancel()
						return published, errQuit
					}
					state(w)
				}
				if playNext {
					// Publish this message now; bag time moves to it.
					anchorBag = max(anchorBag, m.Time)
					break
				}
			}
			if err := p.publish(m); err != nil {
				stop()
				passCancel()
				return published, fmt.Errorf("publish on %s: %w", m.Topic.Name, err)
			}
			published++
			if p.onState != nil {
				state(time.Now())
			}
		}
		stop()
		passCancel()
		if seeking {
			continue
		}
		if !p.loop {
			// The last /clock sample shows the bag's end.
			if p.clockPeriod > 0 {
				if err := p.publishClock(max(min(bagNow(time.Now()), p.end), playStart)); err != nil {
					return published, err
				}
			}
			if p.onState != nil {
				p.onState(max(min(bagNow(time.Now()), p.end), playStart), paused, p.rate)
			}
			return published, nil
		}
		if published == before {
			return published, nil // nothing to loop over
		}
	}
}

// wallAt is the wall time at which bag time reaches t, rounded up to the
// nanosecond so that bag time is never short of t then.
func (p *player) wallAt(anchorWall time.Time, anchorBag, t int64) time.Time {
	if t <= anchorBag {
		return anchorWall
	}
	return anchorWall.Add(time.Duration(math.Ceil(float64(t-anchorBag) / p.rate)))
}

// sleepCtx sleeps for d unless ctx ends first (then it returns its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
