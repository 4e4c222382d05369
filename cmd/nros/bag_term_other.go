//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

// keysMode is not available here: bag play prints plain lines.
func keysMode(uintptr) (restore func(), ok bool) { return nil, false }
