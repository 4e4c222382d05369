//go:build linux

package main

import (
	"runtime"
	"testing"
	"time"
)

func TestShortSleep(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		if shortSleep(time.Millisecond) {
			t.Fatal("slept holding the only P")
		}
		t.Skip("GOMAXPROCS 1: the timer path is used")
	}
	for _, d := range []time.Duration{50 * time.Microsecond, time.Millisecond, shortSleepMax} {
		start := time.Now()
		if !shortSleep(d) {
			t.Fatalf("%v: not taken", d)
		}
		if got := time.Since(start); got < d {
			t.Fatalf("%v: woke after %v", d, got)
		}
	}
	for _, d := range []time.Duration{0, -time.Millisecond, shortSleepMax + 1} {
		if shortSleep(d) {
			t.Fatalf("%v taken", d)
		}
	}
}
