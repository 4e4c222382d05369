package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros/bag/play"
)

// keyCmd is what a key asks of the player.
type keyCmd int

const (
	cmdTogglePause keyCmd = iota + 1
	cmdPlayNext
	cmdFaster // rate +10 %
	cmdSlower // rate -10 %
	cmdQuit
)

// keyCommand maps what a terminal sends for a key to a player command:
// space pause/resume, → play next, ↑/↓ rate ±10 %, q quit. It returns the
// command and how many bytes it used (0: need more bytes; a command of 0:
// an unknown key).
func keyCommand(b []byte) (keyCmd, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case ' ':
		return cmdTogglePause, 1
	case 'q', 'Q':
		return cmdQuit, 1
	case 0x1b: // ESC [ A|B|C|D
		if len(b) < 3 {
			return 0, 0
		}
		if b[1] != '[' {
			return 0, 1
		}
		switch b[2] {
		case 'A':
			return cmdFaster, 3
		case 'B':
			return cmdSlower, 3
		case 'C':
			return cmdPlayNext, 3
		}
		return 0, 3
	}
	return 0, 1
}

// formatProgress renders the status line: a bar of the bag's progress, the
// bag time, ROS time (the bag's receive time, what /clock carries) and the
// rate.
func formatProgress(start, end, now int64, paused bool, rate float64, width int) string {
	frac := 1.0
	if end > start {
		frac = min(max(float64(now-start)/float64(end-start), 0), 1)
	}
	n := int(frac * float64(width))
	state := "Running"
	if paused {
		state = "Paused "
	}
	return fmt.Sprintf("[%s%s] %s  bag %ss / %ss  ROS time %s  rate %.2f",
		strings.Repeat("#", n), strings.Repeat("-", width-n), state,
		formatSeconds(now-start), formatSeconds(end-start), formatSeconds(now), rate)
}

// apply carries out a key's command on p; quit ends playback.
func (c keyCmd) apply(p *play.Player, quit func()) {
	switch c {
	case cmdTogglePause:
		p.TogglePaused()
	case cmdPlayNext:
		p.PlayNext()
	case cmdFaster:
		p.SetRate(p.Rate() * 1.1)
	case cmdSlower:
		p.SetRate(p.Rate() / 1.1)
	case cmdQuit:
		quit()
	}
}

// attachTerminal gives the player terminal controls when `nros bag play`
// runs on one: keys on stdin (the terminal is put in non-canonical,
// no-echo mode and restored on return; Ctrl-C still interrupts) and a
// progress line on stdout, redrawn ten times a second from the player's
// Status. The quit key calls quit. Off a terminal it does nothing: the
// player prints plain log lines. *logf is wrapped so that a log line
// clears the progress line first. It returns a function that detaches
// everything.
func (e *cliEnv) attachTerminal(p *play.Player, quit func(), logf *func(string, ...any)) func() {
	out, ok := e.stdout.(*os.File)
	if !ok || out != os.Stdout || !isTerminal(os.Stdin.Fd()) || !isTerminal(os.Stdout.Fd()) {
		return func() {}
	}
	restore, ok := keysMode(os.Stdin.Fd())
	if !ok {
		return func() {}
	}
	go readKeys(os.Stdin, func(c keyCmd) { c.apply(p, quit) })

	var mu sync.Mutex // one writer of the terminal at a time
	draw := func() {
		st := p.Status()
		line := formatProgress(st.Start, st.End, st.Time, st.Paused, st.Rate, 30)
		mu.Lock()
		fmt.Fprintf(out, "\r%s\x1b[K", line)
		mu.Unlock()
	}
	inner := *logf
	*logf = func(format string, a ...any) {
		mu.Lock()
		fmt.Fprint(out, "\r\x1b[K")
		mu.Unlock()
		inner(format, a...)
	}
	stop := make(chan struct{})
	drawn := make(chan struct{})
	go func() {
		defer close(drawn)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				draw()
				fmt.Fprintln(out)
				return
			case <-t.C:
				draw()
			}
		}
	}()
	fmt.Fprintln(out, "space: pause/resume   →: next message   ↑/↓: rate ±10 %   q: quit")
	return func() {
		close(stop)
		<-drawn
		restore()
	}
}

// readKeys turns what r sends into key commands for do, until r fails.
func readKeys(r io.Reader, do func(keyCmd)) {
	buf := make([]byte, 0, 16)
	tmp := make([]byte, 16)
	for {
		n, err := r.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
		for len(buf) > 0 {
			c, used := keyCommand(buf)
			if used == 0 {
				break
			}
			buf = buf[used:]
			if c != 0 {
				do(c)
			}
		}
	}
}
