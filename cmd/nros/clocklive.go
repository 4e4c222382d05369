package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
)

// liveClock is `nros clock` on a terminal: simulated time runs at rate from
// an anchor, and keys change it as it runs.
type liveClock struct {
	anchorWall time.Time
	anchorSim  int64
	rate       float64
	paused     bool
}

// The keys of the live clock.
const liveKeys = "space pause/resume, + rate x2, - rate /2, b back 5 s, f forward 10 s, q quit"

// sim is the simulated time at wall time w.
func (l *liveClock) sim(w time.Time) int64 {
	if l.paused {
		return l.anchorSim
	}
	return l.anchorSim + int64(float64(w.Sub(l.anchorWall))*l.rate)
}

// reanchor makes the current instant the new anchor (before a change).
func (l *liveClock) reanchor(w time.Time) {
	l.anchorSim, l.anchorWall = l.sim(w), w
}

// key applies one key at wall time w and reports whether it quits.
func (l *liveClock) key(k byte, w time.Time) (quit bool) {
	switch k {
	case ' ':
		l.reanchor(w)
		l.paused = !l.paused
	case '+':
		l.reanchor(w)
		l.rate = math.Min(l.rate*2, 1024)
	case '-':
		l.reanchor(w)
		l.rate = math.Max(l.rate/2, 1.0/1024)
	case 'b':
		l.reanchor(w)
		l.anchorSim = max(l.anchorSim-5*int64(time.Second), 0)
	case 'f':
		l.reanchor(w)
		l.anchorSim += 10 * int64(time.Second)
	case 'q', 3: // q, or Ctrl-C arriving as a byte
		return true
	}
	return false
}

// status is the live status line: sim time, wall time, rate, and the
// real-time factor observed over the last second.
func (l *liveClock) status(sim int64, wall time.Duration, rtf float64) string {
	state := fmt.Sprintf("rate %gx", l.rate)
	if l.paused {
		state = "paused"
	}
	return fmt.Sprintf("sim %s  wall %.1fs  %s  RTF %.2f   [%s]", clockscript.FormatSim(sim), wall.Seconds(), state, rtf, liveKeys)
}

// runLive publishes the live clock at hz until ctx ends or q: keys come from
// keys, the status line goes to status (redrawn in place).
func (e *cliEnv) runLive(ctx context.Context, pub *nros.Publisher[rosgraph_msgs.Clock], keys <-chan byte, hz float64,
	start int64, rate float64, status io.Writer) error {
	t0 := e.clock.Now()
	l := &liveClock{anchorWall: t0, anchorSim: start, rate: rate}
	period := time.Duration(float64(time.Second) / hz)
	next := t0
	type mark struct {
		wall time.Time
		sim  int64
	}
	var hist []mark // the last second of samples, for the RTF
	lastDraw := time.Time{}
	var m rosgraph_msgs.Clock
	for {
		next = next.Add(period)
		if err := e.clock.SleepUntil(ctx, next); err != nil {
			fmt.Fprintln(status)
			return nil
		}
		w := e.clock.Now()
	drain:
		for {
			select {
			case k, ok := <-keys:
				if !ok { // the terminal is gone
					fmt.Fprintln(status)
					return nil
				}
				if l.key(k, w) {
					fmt.Fprintln(status)
					return nil
				}
			default:
				break drain
			}
		}
		sim := l.sim(w)
		sec, nsec, err := nros.TimeFromNanoseconds(sim).SecNanosec()
		if err != nil {
			return fmt.Errorf("sim time %s: %w", clockscript.FormatSim(sim), err)
		}
		m.Clock.Sec, m.Clock.Nanosec = sec, nsec
		if err := pub.Publish(&m); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		hist = append(hist, mark{w, sim})
		for len(hist) > 1 && w.Sub(hist[0].wall) > time.Second {
			hist = hist[1:]
		}
		if w.Sub(lastDraw) >= 100*time.Millisecond {
			lastDraw = w
			rtf := 0.0
			if d := w.Sub(hist[0].wall); d > 0 {
				rtf = float64(sim-hist[0].sim) / float64(d)
			}
			fmt.Fprintf(status, "\r%s\x1b[K", l.status(sim, w.Sub(t0), rtf))
		}
	}
}

// terminalKeys reads keys from a terminal stdin (non-canonical, no echo)
// when both stdin and stdout are terminals; ok is false otherwise.
func terminalKeys(stdout io.Writer) (keys <-chan byte, restore func(), ok bool) {
	out, isFile := stdout.(*os.File)
	if !isFile || out != os.Stdout || !isTerminal(os.Stdin.Fd()) || !isTerminal(os.Stdout.Fd()) {
		return nil, nil, false
	}
	restore, ok = keysMode(os.Stdin.Fd())
	if !ok {
		return nil, nil, false
	}
	ch := make(chan byte, 16)
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := os.Stdin.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			for _, b := range buf[:n] {
				select {
				case ch <- b:
				default:
				}
			}
		}
	}()
	return ch, restore, true
}
