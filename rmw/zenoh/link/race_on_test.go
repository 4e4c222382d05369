//go:build race

package link

// raceOn: the race detector changes allocation counts.
const raceOn = true
