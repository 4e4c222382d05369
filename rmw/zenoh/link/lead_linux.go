package link

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// canLead: a leader reads the socket with readRaw.
const canLead = true

// readRaw reads from fd without blocking and without the runtime's system
// call bookkeeping (whose first call after an idle spell wakes the
// runtime's monitor thread: a futex wake on the path of every sample).
func readRaw(fd uintptr, b []byte) (n int, again bool, err error) {
	if len(b) == 0 {
		return 0, false, nil
	}
	for {
		r, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
			unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			return int(r), false, nil
		case unix.EAGAIN:
			return 0, true, nil
		case unix.EINTR:
			continue
		}
		return 0, false, errno
	}
}

// dupFile returns a second descriptor of c's socket as a pollable
// *os.File (its own read deadline and place in the runtime's poller). It
// never calls Fd, which would put the socket, shared by both descriptors,
// in blocking mode for a moment.
func dupFile(c syscall.Conn) (*os.File, error) {
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
	return os.NewFile(uintptr(nfd), "zenoh-lead"), nil
}
