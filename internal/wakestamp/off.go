//go:build !nrosstamp

package wakestamp

// Enabled reports whether the marks are built in (the nrosstamp tag).
const Enabled = false

// Woke marks that the leading goroutine runs its read callback (nothing
// without the nrosstamp tag).
func Woke() {}

// Read marks that a read returned bytes (nothing without the nrosstamp tag).
func Read() {}

// Take returns the marks since the Take before (none without the
// nrosstamp tag).
func Take() (wokeNs, readNs int64) { return 0, 0 }
