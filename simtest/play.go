package simtest

import (
	"context"
	"errors"
	"io"
	"math"
	"time"
)

// Playable publishes into the world on a schedule of wall time of its own:
// a bag player (package github.com/nros-go/nros/bag/play) is one. Make it
// read the Sim's wall time (play.Options{Clock: sim.WallClock()}) and hand
// it to Play.
type Playable interface {
	// PlayDue publishes what is due by the time of its clock now and
	// returns the wall time at which more will be due (zero: not before
	// a control), or done once it has nothing more to play.
	PlayDue() (next time.Time, done bool, err error)
}

// played is a Playable that the Sim steps, and what it said last.
type played struct {
	p    Playable
	next time.Time
	done bool
}

// WallClock is the Sim's wall time as a clock for what the Sim plays
// (play.Options.Clock): Now reads the Sim's steady time, which only
// Advance moves.
type WallClock struct{ s *Sim }

// WallClock returns the Sim's wall time as a clock.
func (s *Sim) WallClock() WallClock { return WallClock{s} }

// Now returns the Sim's wall time (its steady clock).
func (c WallClock) Now() time.Time { return time.Unix(0, c.s.steadyNow()) }

// ErrSteppedClock is what WallClock.SleepUntil returns: nothing waits on
// the Sim's wall time from a goroutine of its own (a Player's Run); the
// Sim steps what it plays itself (Play).
var ErrSteppedClock = errors.New("simtest: the Sim's wall time is stepped by Advance: hand the player to Sim.Play instead of running it")

// SleepUntil returns ErrSteppedClock at once, or ctx.Err() if ctx has
// ended.
func (c WallClock) SleepUntil(ctx context.Context, _ time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrSteppedClock
}

// Play makes p part of the world, in step with its wall time: p plays at
// once (what is due at the start goes out), and from then on Advance
// stops at every wall time p needs (besides its clock-period steps), lets
// p publish what is due then, and runs the executor. So a bag plays
// deterministically: every message and /clock sample goes out at its
// exact wall time, and the callbacks it triggers run before Advance
// returns. A failure of p fails the test; p is closed when the test ends
// if it has a Close method.
//
// The controls of a player (Pause, SetRate, SeekTo, ...) take effect at
// the next step; PlayNext publishes at once (call RunUntilIdle to deliver).
// When the bag brings its own /clock (recorded, or the player's
// ClockRate), start the Sim with NotStarted (or call StopClock) so that
// the Sim's simulator does not publish /clock too; nodes with use_sim_time
// then follow the bag's time.
func (s *Sim) Play(p Playable) {
	s.t.Helper()
	if c, ok := p.(io.Closer); ok {
		s.t.Cleanup(func() { c.Close() })
	}
	s.played = append(s.played, &played{p: p})
	s.playDue()
	s.RunUntilIdle()
}

// playDue lets everything the Sim plays publish what is due now.
func (s *Sim) playDue() {
	s.t.Helper()
	now := s.WallClock().Now()
	for _, pl := range s.played {
		if pl.done {
			continue
		}
		next, done, err := pl.p.PlayDue()
		if err != nil {
			s.t.Fatalf("simtest: playing: %v", err)
		}
		if !next.IsZero() && next.Sub(now).Abs() > 24*time.Hour {
			s.t.Fatalf("simtest: Play: the player's next event is at %v, not on the Sim's wall time (%v): give it the Sim's clock (Options.Clock: sim.WallClock())", next, now)
		}
		pl.next, pl.done = next, done
	}
}

// untilPlayed is the wall time until the next event of what the Sim plays
// (a very long time when none is due).
func (s *Sim) untilPlayed() time.Duration {
	d := time.Duration(math.MaxInt64)
	now := s.WallClock().Now()
	for _, pl := range s.played {
		if pl.done || pl.next.IsZero() {
			continue
		}
		if u := pl.next.Sub(now); u > 0 {
			d = min(d, u)
		}
	}
	return d
}
