//go:build race

package rtps

// raceEnabled: the race detector makes sync.Pool drop buffers at random.
const raceEnabled = true
