//go:build race

package link

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
