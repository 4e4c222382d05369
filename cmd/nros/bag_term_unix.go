//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// termiosKeysMode clears ICANON and ECHO with the platform's get and set
// requests.
func termiosKeysMode(fd int, get, set uint) (func(), bool) {
	old, err := unix.IoctlGetTermios(fd, get)
	if err != nil {
		return nil, false
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, set, &raw); err != nil {
		return nil, false
	}
	return func() { unix.IoctlSetTermios(fd, set, old) }, true
}
