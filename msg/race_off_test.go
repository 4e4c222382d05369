//go:build !race

package msg_test

const raceEnabled = false
