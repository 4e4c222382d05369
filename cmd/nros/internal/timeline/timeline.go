// Package timeline draws ROS time against wall time as an SVG picture: the
// /clock samples as a line (pauses flat, rates as slopes, jumps as vertical
// steps), ROS-timer activations as red dots on it, wall-timer activations as
// blue ticks in their own lane, and labelled spans (a script's steps, a
// bag's loops). `nros demo --svg` and `nros bag play --svg` use it.
package timeline

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros/cmd/nros/internal/clockscript"
)

// point is one event of the timeline: wall time since the start, ROS time.
type point struct {
	wall time.Duration
	sim  int64
}

// Timeline records what the picture shows. It is safe for concurrent use;
// a nil *Timeline records nothing.
type Timeline struct {
	mu               sync.Mutex
	clock, ros, wall []point
}

// Span labels a stretch of wall time (a zero-length span marks an instant,
// such as a jump).
type Span struct {
	Start time.Duration
	Label string
}

// Kinds of events.
const (
	Clock = iota // a /clock sample
	Ros          // a ROS-timer activation
	Wall         // a wall-timer activation
)

// Add records one event of kind at wall time since the start, with the
// ROS time then.
func (t *Timeline) Add(kind int, wall time.Duration, sim int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := point{wall, sim}
	switch kind {
	case Clock:
		t.clock = append(t.clock, p)
	case Ros:
		t.ros = append(t.ros, p)
	default:
		t.wall = append(t.wall, p)
	}
}

// SVG geometry.
const (
	svgW, svgH      = 1000, 560
	padL, padR      = 70, 20
	padT, padB      = 30, 110
	wallLaneY       = svgH - padB + 40 // the wall timer's lane, under the plot
	labelRowY       = svgH - 18
	plotW, plotH    = svgW - padL - padR, svgH - padT - padB
	colorClock      = "#555"
	colorRos        = "#d62728"
	colorWall       = "#1f77b4"
	colorStepBorder = "#bbb"
)

// WriteSVG writes the picture, titled title, over total wall time, with the
// spans labelled under the plot.
func (t *Timeline) WriteSVG(w io.Writer, title string, spans []Span, total time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, l := range [][]point{t.clock, t.ros} {
		for _, p := range l {
			lo, hi = min(lo, p.sim), max(hi, p.sim)
		}
	}
	if lo > hi {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + int64(time.Second)
	}
	margin := (hi - lo) / 20
	lo, hi = lo-margin, hi+margin
	if total <= 0 {
		total = time.Second
	}
	x := func(d time.Duration) float64 { return padL + float64(d)/float64(total)*plotW }
	y := func(sim int64) float64 { return padT + plotH - float64(sim-lo)/float64(hi-lo)*plotH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13">%s</text>`+"\n", padL, html.EscapeString(title))
	// Spans: a band each, labelled under the plot.
	for i, s := range spans {
		end := total
		if i+1 < len(spans) {
			end = spans[i+1].Start
		}
		x0 := x(s.Start)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="3,3"/>`+"\n", x0, padT, x0, wallLaneY+10, colorStepBorder)
		mid := (x0 + x(end)) / 2
		if end == s.Start { // an instant: label at the line
			mid = x0
		}
		row := labelRowY - 14*(i%2)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", mid, row, html.EscapeString(s.Label))
	}
	// Axes.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", padL, padT+plotH, padL+plotW, padT+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", padL, padT, padL, padT+plotH)
	wstep := time.Duration(niceStep(int64(total) * 8 / 10)) // about ten ticks
	for d := time.Duration(0); d <= total; d += wstep {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(d), padT+plotH+14, clockscript.FormatSim(int64(d)))
	}
	// Epoch-sized ROS times are labelled from a base, named in the axis title.
	var base int64
	yTitle := "ROS time"
	if lo > 1e6*int64(time.Second) {
		base = lo / int64(time.Second) * int64(time.Second)
		yTitle = "ROS time − " + clockscript.FormatSim(base)
	}
	step := niceStep(hi - lo)
	for v := base + ((lo-base)/step+1)*step; v < hi; v += step {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", padL-6, y(v)+4, clockscript.FormatSim(v-base))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">wall time</text>`+"\n", padL+plotW-50, padT+plotH+28)
	fmt.Fprintf(&b, `<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`+"\n", padT+plotH/2, padT+plotH/2, html.EscapeString(yTitle))
	if len(t.wall) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">wall timer</text>`+"\n", 8, wallLaneY+4, colorWall)
	}
	// The clock: a step line through the samples.
	if len(t.clock) > 0 {
		var path strings.Builder
		for i, p := range t.clock {
			if i == 0 {
				fmt.Fprintf(&path, "M%.1f %.1f", x(p.wall), y(p.sim))
				continue
			}
			fmt.Fprintf(&path, " H%.1f V%.1f", x(p.wall), y(p.sim))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.2"/>`+"\n", path.String(), colorClock)
	}
	for _, p := range t.ros {
		fmt.Fprintf(&b, `<circle class="ros" cx="%.1f" cy="%.1f" r="2.6" fill="%s"/>`+"\n", x(p.wall), y(p.sim), colorRos)
	}
	for _, p := range t.wall {
		fmt.Fprintf(&b, `<line class="wall" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x(p.wall), wallLaneY-6, x(p.wall), wallLaneY+6, colorWall)
	}
	legend := padL + 10
	if len(t.ros) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">● ROS-timer activation (%d)</text>`+"\n", legend, padT+14, colorRos, len(t.ros))
		legend += 200
	}
	if len(t.wall) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">| wall-timer activation (%d)</text>`+"\n", legend, padT+14, colorWall, len(t.wall))
		legend += 200
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">— /clock samples (%d)</text>`+"\n", legend, padT+14, colorClock, len(t.clock))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep picks a tick spacing (1, 2 or 5 times a power of ten seconds)
// giving about eight ticks over span nanoseconds.
func niceStep(span int64) int64 {
	raw := float64(span) / 8
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return max(int64(m*p), 1)
		}
	}
	return max(int64(10*p), 1)
}
