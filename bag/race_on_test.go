//go:build race

package bag

// raceDetector is whether the race detector is on: it slows parsing about
// tenfold, so wall-clock bounds stretch with it.
const raceDetector = true
