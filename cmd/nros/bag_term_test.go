package main

import "testing"

// Keys map to player commands (escape sequences need their three bytes);
// the progress line shows the bag's progress, bag time, ROS time and rate.
func TestKeysAndProgress(t *testing.T) {
	for _, c := range []struct {
		in   string
		cmd  keyCmd
		used int
	}{{" ", cmdTogglePause, 1}, {"q", cmdQuit, 1}, {"\x1b[A", cmdFaster, 3}, {"\x1b[B", cmdSlower, 3},
		{"\x1b[C", cmdPlayNext, 3}, {"\x1b[", 0, 0}, {"x", 0, 1}, {"\x1b[D", 0, 3}} {
		if cmd, used := keyCommand([]byte(c.in)); cmd != c.cmd || used != c.used {
			t.Errorf("%q: %v %d, want %v %d", c.in, cmd, used, c.cmd, c.used)
		}
	}
	got := formatProgress(10e9, 20e9, 15e9, true, 2, 10)
	if want := "[#####-----] Paused   bag 5.000000000s / 10.000000000s  ROS time 15.000000000  rate 2.00"; got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}
