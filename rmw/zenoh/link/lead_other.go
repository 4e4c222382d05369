//go:build !linux

package link

import "errors"

// canLead: only Linux has a leader's read (links elsewhere are read by
// their reader alone).
const canLead = false

func readRaw(uintptr, []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
