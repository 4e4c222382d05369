//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// keysMode puts the terminal fd in non-canonical, no-echo mode (keys
// arrive one by one; Ctrl-C still interrupts) and returns what restores it.
func keysMode(fd uintptr) (restore func(), ok bool) {
	return termiosKeysMode(int(fd), unix.TIOCGETA, unix.TIOCSETA)
}
