//go:build race

package interop

// raceEnabled reports whether the race detector is on (it slows Go code
// several times, so timing comparisons are only logged then).
const raceEnabled = true
