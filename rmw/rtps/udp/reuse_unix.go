//go:build !windows

package udp

import "syscall"

// setReuseAddr sets SO_REUSEADDR on a socket, so that several participants
// on one host can bind the SPDP multicast port.
func setReuseAddr(fd uintptr) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
}
