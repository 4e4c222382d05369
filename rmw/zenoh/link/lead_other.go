//go:build !linux

package link

import (
	"errors"
	"os"
	"syscall"
)

// canLead: only Linux has a leader's read (links elsewhere are read by
// their reader alone).
const canLead = false

func readRaw(uintptr, []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }

func dupFile(syscall.Conn) (*os.File, error) { return nil, errors.ErrUnsupported }
