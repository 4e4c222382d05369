//go:build !linux

package main

import "time"

// shortSleep is Linux's cheap short wait; elsewhere waits use a timer.
func shortSleep(time.Duration) bool { return false }
