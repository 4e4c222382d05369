package play

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
)

// DefaultReadAhead is how many messages a Player reads ahead of playback
// unless Options.ReadAhead says otherwise.
const DefaultReadAhead = 1000

// MaxClockRate is the highest Options.ClockRate, in Hz.
const MaxClockRate = 1e6

// ErrClosed is returned by Run and PlayDue once the Player is closed.
var ErrClosed = errors.New("play: player closed")

// errBusy is returned when Run or PlayDue is called while another call of
// either is in progress.
var errBusy = errors.New("play: Run or PlayDue is already in progress")

// Options are the settings of a Player, as `ros2 bag play` has them. The
// zero value plays every topic once, at the recorded pace, without /clock.
type Options struct {
	// Rate is the playback rate (2: twice as fast); 0 stands for 1.
	Rate float64
	// ClockRate, when positive, makes the Player publish /clock (on the
	// node's resolved /clock, rosgraph_msgs/Clock, ClockQoS) this many
	// times per second of wall time, carrying bag time: rosbag2's
	// --clock HZ. The recorded /clock is then not played
	// (ErrClockReplaced). While paused the samples go on with the frozen
	// time.
	ClockRate float64
	// Loop plays the bag again and again: bag time (and /clock) jumps
	// back to the start on each pass.
	Loop bool
	// StartPaused starts paused (Resume or TogglePaused go on, PlayNext
	// steps).
	StartPaused bool
	// StartOffset starts playback this far into the bag.
	StartOffset time.Duration
	// Delay waits this long in wall time before playing; /clock is not
	// published meanwhile.
	Delay time.Duration
	// Topics, when not empty, plays only these topics; Exclude leaves
	// these out. A topic is named as recorded or as resolved against the
	// node.
	Topics, Exclude []string
	// Remap publishes a topic (named as recorded or as resolved) under
	// another name, which is resolved against the node.
	Remap map[string]string
	// ReadAhead is how many messages are read ahead of playback
	// (DefaultReadAhead when 0).
	ReadAhead int
	// Clock is the wall time playback follows (the process's monotonic
	// clock when nil): see Clock.
	Clock Clock
	// Stats are the bag's figures (Bag.Stats); when nil, New counts them
	// and fails on a read error. Pass what Stats returned, error or not,
	// to play what can be read of a damaged bag.
	Stats *bag.Stats

	// OnMessage, when not nil, is called after each message is published,
	// on the goroutine that published it (Run's, PlayDue's or PlayNext's),
	// with no lock of the Player's held that the controls take. It must
	// not call Run, PlayDue, PlayNext or Close.
	OnMessage func(m bag.Message)
	// OnClock, when not nil, is called likewise after each /clock sample,
	// with the bag time it carried (ns) and the wall time since playback
	// started (the first PlayDue or PlayNext), the start delay included.
	OnClock func(t int64, elapsed time.Duration)
	// OnLoop, when not nil, is called likewise when a new pass starts
	// (Loop), with its number (1 for the first repetition).
	OnLoop func(pass int)
}

// Status is a snapshot of a Player.
type Status struct {
	// Time is the bag time now (ns since the epoch): what /clock shows.
	Time int64
	// Start and End are the first and last receive times of the bag.
	Start, End int64
	// Paused and Rate are the playback controls.
	Paused bool
	Rate   float64
	// Published counts the messages published (all passes); Loops the
	// passes begun after the first.
	Published int
	Loops     int
	// Done is true once playback has ended.
	Done bool
}

// Player plays a bag into a node: a publisher per recorded topic, with
// the recorded QoS and the recorded bytes (so messages of any type play),
// at the recorded pace times a rate, optionally publishing /clock from bag
// time, looping, paused, stepped and seeked, as `ros2 bag play` does.
//
// One goroutine plays: it calls Run, or calls PlayDue whenever its own
// notion of time moves (a simulation stepping wall time, see
// simtest.Sim.Play). The controls (Pause, Resume, TogglePaused,
// IsPaused, SetRate, Rate, PlayNext, SeekTo, Status) are safe to call from
// any goroutine at any time; Run wakes up for them at once, a PlayDue
// caller sees them at its next call (PlayNext publishes by itself).
type Player struct {
	clk       Clock
	open      opener
	out       output
	start     int64 // first receive time of the bag
	end       int64 // last receive time
	playStart int64 // start + offset: where every pass begins
	delay     time.Duration
	loop      bool
	readAhead int
	topics    []Topic
	skipped   []Skip
	empty     bool

	onMessage func(bag.Message)
	onClock   func(int64, time.Duration)
	onLoop    func(int)

	// mu guards the controls' state. It is never held while publishing,
	// reading the bag or calling a hook.
	mu       sync.Mutex
	tl       timeline
	began    time.Time // wall time of the first PlayDue
	seekTo   int64
	seeking  bool
	dirty    bool               // a control changed the state since PlayDue looked
	wake     context.CancelFunc // ends Run's current wait
	loops    int
	done     bool
	closed   bool
	finalErr error

	published atomic.Int64

	// own is held by the goroutine that publishes (PlayDue, PlayNext) and
	// by Close; it guards cur.
	own  sync.Mutex
	busy atomic.Bool
	cur  *cursor
}

// New makes a Player that plays b into node: it makes the publishers (on
// the node's transport, named as recorded and resolved against the node,
// with the QoS the recorded publishers offered: their reliability and
// durability when they agree, the default profile otherwise) and, with
// ClockRate, the /clock publisher. It opens nothing: b stays the caller's,
// to close after the Player. Close the Player when done.
func New(node *nros.Node, b *bag.Bag, opts Options) (*Player, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	st := opts.Stats
	if st == nil {
		var err error
		if st, err = b.Stats(); err != nil {
			return nil, err
		}
	}
	sel, err := selectTopics(node, b.Topics(), &opts)
	if err != nil {
		return nil, err
	}
	out, err := newNodeOutput(node, sel, opts.ClockRate > 0)
	if err != nil {
		return nil, err
	}
	played := map[*bag.Topic]bool{}
	for _, t := range sel.topics {
		played[t.Recorded] = true
	}
	open := func(start int64) (source, error) {
		return b.Messages(bag.ReadOptions{Start: start, Topics: func(t *bag.Topic) bool { return played[t] }})
	}
	p := newPlayer(open, out, st.Start, st.End, opts)
	p.topics, p.skipped = sel.topics, sel.skipped
	p.empty = st.MessageCount == 0
	return p, nil
}

// check validates the options.
func (o *Options) check() error {
	switch {
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("play: rate %v must be positive", o.Rate)
	case o.ClockRate < 0 || math.IsNaN(o.ClockRate) || o.ClockRate > MaxClockRate:
		return fmt.Errorf("play: clock rate %v Hz must be in (0, %g]", o.ClockRate, float64(MaxClockRate))
	case o.StartOffset < 0 || o.Delay < 0:
		return errors.New("play: start offset and delay must not be negative")
	case o.ReadAhead < 0:
		return errors.New("play: read-ahead must not be negative")
	}
	return nil
}

// newPlayer makes a Player over any source and output (tests use it with
// fakes); opts must have been checked.
func newPlayer(open opener, out output, start, end int64, opts Options) *Player {
	p := &Player{
		clk: opts.Clock, open: open, out: out, start: start, end: end,
		playStart: start + int64(opts.StartOffset),
		delay:     opts.Delay, loop: opts.Loop, readAhead: opts.ReadAhead,
		onMessage: opts.OnMessage, onClock: opts.OnClock, onLoop: opts.OnLoop,
	}
	if p.clk == nil {
		p.clk = realClock{}
	}
	if p.readAhead == 0 {
		p.readAhead = DefaultReadAhead
	}
	p.tl = timeline{bag0: p.playStart, rate: opts.Rate, paused: opts.StartPaused}
	if p.tl.rate == 0 {
		p.tl.rate = 1
	}
	if opts.ClockRate > 0 {
		p.tl.period = max(time.Duration(float64(time.Second)/opts.ClockRate), 1)
	}
	return p
}

// Topics returns the topics the Player plays.
func (p *Player) Topics() []Topic { return p.topics }

// Skipped returns the recorded topics the Player does not play, and why.
func (p *Player) Skipped() []Skip { return p.skipped }

// Close stops playback (Run returns ErrClosed) and releases the
// publishers. It waits for a PlayDue in progress to return.
func (p *Player) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.touch()
	p.mu.Unlock()
	p.own.Lock()
	defer p.own.Unlock()
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
	p.out.close()
	return nil
}

// Run plays until the bag ends (with Loop, until ctx ends), ctx ends or
// the Player is closed. It returns nil when the bag ended, ctx.Err() when
// ctx ended, ErrClosed after Close, or the error that stopped playback (a
// read or publish error).
func (p *Player) Run(ctx context.Context) error {
	for {
		next, done, err := p.PlayDue()
		if err != nil || done {
			return err
		}
		if err := p.wait(ctx, next); err != nil {
			return err
		}
	}
}

// wait sleeps until next (zero: until a control) or a control, whichever
// comes first; it returns ctx's error when ctx ends, and the clock's when
// it cannot wait.
func (p *Player) wait(ctx context.Context, next time.Time) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	if p.dirty {
		p.mu.Unlock()
		return ctx.Err()
	}
	p.wake = cancel
	p.mu.Unlock()
	var err error
	if next.IsZero() {
		<-wctx.Done()
	} else if err = p.clk.SleepUntil(wctx, next); wctx.Err() != nil {
		err = nil // woken by a control, or ctx ended (below)
	}
	p.mu.Lock()
	p.wake = nil
	p.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err // the clock cannot wait
}

// touch records a change of the controls and wakes Run. Call with mu held.
func (p *Player) touch() {
	p.dirty = true
	if p.wake != nil {
		p.wake()
	}
}

// PlayDue publishes every message and /clock sample due by the clock's
// time now, in order, and returns the wall time at which the next one is
// due (zero when only a control can make one due: paused without /clock),
// or done once playback has ended. It is Run's step, for a caller that
// moves time itself and calls it after every move; playback starts (the
// delay counts) at its first call. It must not be called concurrently
// with itself or Run.
func (p *Player) PlayDue() (next time.Time, done bool, err error) {
	if !p.busy.CompareAndSwap(false, true) {
		return time.Time{}, false, errBusy
	}
	defer p.busy.Store(false)
	p.own.Lock()
	defer p.own.Unlock()
	if over, err := p.prepare(); over || err != nil {
		return time.Time{}, true, err
	}
	for {
		act, at, err := p.step()
		if err != nil {
			return time.Time{}, true, p.finish(err)
		}
		switch act {
		case actWait:
			return at, false, nil
		case actEnd:
			if p.endPass() {
				return time.Time{}, true, p.finish(nil)
			}
		}
	}
}

// prepare starts playback at the first call and reports a Player that is
// closed or done (with the error that ended it).
func (p *Player) prepare() (over bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return true, ErrClosed
	case p.done:
		return true, p.finalErr
	}
	if !p.tl.started {
		now := p.clk.Now()
		p.began = now
		p.tl.begin(now, p.delay)
		p.done = p.empty // nothing to play
	}
	return p.done, nil
}

// finish ends playback with err (nil: the bag ended).
func (p *Player) finish(err error) error {
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
	p.mu.Lock()
	p.done, p.finalErr = true, err
	p.mu.Unlock()
	return err
}

// step does the next thing the scheduler decides: a /clock sample or a
// message, or it reports a wait or the end of the pass.
func (p *Player) step() (actionKind, time.Time, error) {
	if err := p.seekIfAsked(); err != nil {
		return 0, time.Time{}, err
	}
	h, err := p.cur.head()
	if err != nil {
		return 0, time.Time{}, err
	}
	now := p.clk.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, time.Time{}, ErrClosed
	}
	if p.seeking { // came while the head was read: it belongs to the old pass
		p.mu.Unlock()
		return actAgain, time.Time{}, nil
	}
	p.dirty = false
	act, at := decide(&p.tl, h, now)
	var sample int64
	if act == actTick {
		sample = p.tl.tick(now)
	}
	p.mu.Unlock()
	switch act {
	case actTick:
		err = p.publishClock(sample, now)
	case actPublish:
		err = p.publish(p.cur.take())
	}
	return act, at, err
}

// seekIfAsked (re)opens the pass where a seek asked, or at the start of
// playback the first time.
func (p *Player) seekIfAsked() error {
	p.mu.Lock()
	at, seek := p.seekTo, p.seeking
	p.seeking = false
	p.mu.Unlock()
	if !seek && p.cur != nil {
		return nil
	}
	if !seek {
		at = p.playStart
	}
	return p.openPass(at)
}

// openPass starts a pass at bag time at.
func (p *Player) openPass(at int64) error {
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
	src, err := p.open(at)
	if err != nil {
		return err
	}
	p.cur = openCursor(src, p.readAhead)
	return nil
}

// endPass handles the end of a pass: with Loop (and a pass that played
// something) bag time jumps back to the start and a new pass begins;
// otherwise the last /clock sample shows where playback ended, and it
// reports that playback is over.
func (p *Player) endPass() (over bool) {
	now := p.clk.Now()
	if p.loop && p.cur.published > 0 {
		p.mu.Lock()
		p.tl.jump(now, p.playStart)
		p.loops++
		n := p.loops
		p.mu.Unlock()
		p.cur.close()
		p.cur = nil // seekIfAsked opens the next pass at the start
		if p.onLoop != nil {
			p.onLoop(n)
		}
		return false
	}
	p.mu.Lock()
	last := max(min(p.tl.bagAt(now), p.end), p.playStart)
	clock := p.tl.period > 0
	p.mu.Unlock()
	if clock {
		// An error here changes nothing: playback is over.
		p.publishClock(last, now)
	}
	return true
}

// publish sends one message.
func (p *Player) publish(m bag.Message) error {
	if err := p.out.publish(m); err != nil {
		return err
	}
	p.published.Add(1)
	if p.onMessage != nil {
		p.onMessage(m)
	}
	return nil
}

// publishClock sends one /clock sample taken at wall time now.
func (p *Player) publishClock(t int64, now time.Time) error {
	if err := p.out.publishClock(t); err != nil {
		return err
	}
	if p.onClock != nil {
		p.onClock(t, now.Sub(p.began))
	}
	return nil
}

// control applies f to the timeline at the clock's time now, unless
// playback is over, and wakes Run. It reports whether f ran.
func (p *Player) control(f func(now time.Time)) bool {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.closed {
		return false
	}
	f(now)
	p.touch()
	return true
}

// Pause freezes bag time: no message goes out, /clock (if published)
// repeats the frozen time.
func (p *Player) Pause() { p.setPaused(true) }

// Resume lets bag time run again from where it was frozen.
func (p *Player) Resume() { p.setPaused(false) }

func (p *Player) setPaused(paused bool) {
	p.control(func(now time.Time) { p.tl.setPaused(now, paused) })
}

// TogglePaused pauses a playing Player and resumes a paused one; it
// returns whether it is paused now.
func (p *Player) TogglePaused() bool {
	var paused bool
	p.control(func(now time.Time) {
		p.tl.setPaused(now, !p.tl.paused)
		paused = p.tl.paused
	})
	return paused
}

// IsPaused reports whether playback is paused.
func (p *Player) IsPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tl.paused
}

// SetRate changes the playback rate from now on (bag time does not jump).
// It refuses (false) a rate that is not positive and finite.
func (p *Player) SetRate(r float64) bool {
	if !(r > 0) || math.IsInf(r, 0) {
		return false
	}
	return p.control(func(now time.Time) { p.tl.setRate(now, r) })
}

// Rate returns the playback rate.
func (p *Player) Rate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tl.rate
}

// PlayNext, while paused, publishes the next message at once, on the
// calling goroutine (bag time moves forward to it), and reports true; it
// reports false while playing or at the end of the bag, as rosbag2's
// play_next. It waits for a PlayDue in progress to return.
func (p *Player) PlayNext() bool {
	p.own.Lock()
	defer p.own.Unlock()
	if over, _ := p.prepare(); over || !p.IsPaused() {
		return false
	}
	if err := p.seekIfAsked(); err != nil {
		p.finish(err)
		return false
	}
	h, err := p.cur.head()
	if err != nil {
		p.finish(err)
		return false
	}
	if h.eof {
		return false
	}
	now := p.clk.Now()
	p.mu.Lock()
	ok := p.tl.paused && !p.closed
	if ok {
		p.tl.stepTo(now, h.time)
		p.touch()
	}
	p.mu.Unlock()
	if !ok {
		return false
	}
	if err := p.publish(p.cur.take()); err != nil {
		p.finish(err)
		return false
	}
	return true
}

// SeekTo (rosbag2's seek; go vet keeps the name Seek for io.Seeker)
// moves bag time to t (ns since the epoch, clamped to the bag's
// span): playback goes on from the first message at or after t, /clock
// jumps there at once, and a pause stays in force. It reports false once
// playback is over.
func (p *Player) SeekTo(t int64) bool {
	t = min(max(t, p.start), p.end)
	return p.control(func(now time.Time) {
		p.tl.jump(now, t)
		p.seekTo, p.seeking = t, true
	})
}

// Status returns a snapshot of the Player.
func (p *Player) Status() Status {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	return Status{
		Time: p.tl.bagAt(now), Start: p.start, End: p.end,
		Paused: p.tl.paused, Rate: p.tl.rate,
		Published: int(p.published.Load()), Loops: p.loops, Done: p.done,
	}
}
