//go:build !race

package rtps

const raceEnabled = false
