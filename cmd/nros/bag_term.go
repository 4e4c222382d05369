package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// keyCommand maps what a terminal sends for a key to a player command:
// space pause/resume, → play next, ↑/↓ rate ±10 %, q quit. It returns the
// command and how many bytes it used (0: need more bytes; a command of 0:
// an unknown key).
func keyCommand(b []byte) (playerCommand, int) {
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

// attachTerminal gives the player terminal controls when `nros bag play`
// runs on one: keys on stdin (the terminal is put in non-canonical,
// no-echo mode and restored on return; Ctrl-C still interrupts) and a
// progress line on stdout, redrawn ten times a second. Off a terminal it
// does nothing: the player prints plain log lines. It returns a function
// that detaches everything.
func (e *cliEnv) attachTerminal(p *player) func() {
	out, ok := e.stdout.(*os.File)
	if !ok || out != os.Stdout || !isTerminal(os.Stdin.Fd()) || !isTerminal(os.Stdout.Fd()) {
		return func() {}
	}
	restore, ok := keysMode(os.Stdin.Fd())
	if !ok {
		return func() {}
	}
	cmds := make(chan playerCommand, 16)
	p.commands = cmds
	go func() {
		buf := make([]byte, 0, 16)
		tmp := make([]byte, 16)
		for {
			n, err := os.Stdin.Read(tmp)
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
					select {
					case cmds <- c:
					default:
					}
				}
			}
		}
	}()

	// The progress line: the player reports its state; a ticker draws.
	var mu sync.Mutex
	now, paused, rate := p.start+p.startOffset, p.startPaused, p.rate
	p.onState = func(t int64, ps bool, r float64) {
		mu.Lock()
		now, paused, rate = t, ps, r
		mu.Unlock()
	}
	logf := p.logf
	draw := func(w io.Writer) {
		mu.Lock()
		line := formatProgress(p.start, p.end, now, paused, rate, 30)
		mu.Unlock()
		fmt.Fprintf(w, "\r%s\x1b[K", line)
	}
	p.logf = func(format string, a ...any) {
		mu.Lock()
		fmt.Fprint(out, "\r\x1b[K")
		mu.Unlock()
		if logf != nil {
			logf(format, a...)
		}
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
				draw(out)
				fmt.Fprintln(out)
				return
			case <-t.C:
				draw(out)
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
