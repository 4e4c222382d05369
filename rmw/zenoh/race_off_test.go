//go:build !race

package zenoh

const raceEnabled = false
