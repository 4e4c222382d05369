package link

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nros-go/nros/internal/pollfd"
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

// dupFile returns a second descriptor of c's socket for the leader.
func dupFile(c syscall.Conn) (*os.File, error) { return pollfd.Dup(c, "zenoh-lead") }
