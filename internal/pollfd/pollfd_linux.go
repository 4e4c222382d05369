// Package pollfd gives a goroutine a descriptor of its own on a socket that
// another goroutine reads, so that each waits in the Go runtime's poller
// with its own read deadline (the transports' /clock feeds).
package pollfd

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dup returns a second descriptor of c's socket as a pollable *os.File
// named name. It never calls Fd, which would put the socket, shared by
// both descriptors, in blocking mode for a moment; it fails if the
// runtime's poller did not take the descriptor (deadlines would not work).
func Dup(c syscall.Conn, name string) (*os.File, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	f := os.NewFile(uintptr(nfd), name)
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
