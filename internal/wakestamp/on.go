//go:build nrosstamp

package wakestamp

import (
	"sync/atomic"
	"time"
)

// Enabled reports whether the marks are built in (the nrosstamp tag).
const Enabled = true

var woke, read atomic.Int64

// Woke marks that the leading goroutine runs its read callback: the last
// call before the read that returns bytes is the one the poller's wake
// made.
func Woke() { woke.Store(time.Now().UnixNano()) }

// Read marks that a read returned bytes; only the first since the last
// Take counts.
func Read() { read.CompareAndSwap(0, time.Now().UnixNano()) }

// Take returns the wall times (ns since the epoch) of the last Woke and of
// the first Read since the Take before, and clears them; 0 for none.
func Take() (wokeNs, readNs int64) { return woke.Swap(0), read.Swap(0) }
