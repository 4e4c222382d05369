//go:build race

package nros

// raceDetector is whether the race detector is on: the soaks scale down
// under it (it slows them about tenfold).
const raceDetector = true
