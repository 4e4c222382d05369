//go:build race

package zenoh

// raceEnabled: the race detector changes what allocates.
const raceEnabled = true
