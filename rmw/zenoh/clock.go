package zenoh

import (
	"sync"
	"time"
)

// The system clock sources: the only place of the package that reads the
// runtime's clocks. Everything else takes time from Config.Clock and
// Config.WallNow.

// systemClock is the operating system's monotonic clock (time.Since a
// reading taken when it was made, so it also runs on the fake clock of a
// testing/synctest bubble).
type systemClock struct{ epoch time.Time }

func newSystemClock() systemClock { return systemClock{epoch: time.Now()} }

func (c systemClock) Now() int64 { return int64(time.Since(c.epoch)) }

func (systemClock) After(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	tm := time.AfterFunc(d, func() { once.Do(func() { close(ch) }) })
	return ch, func() { tm.Stop() }
}

func systemWallNow() int64 { return time.Now().UnixNano() }
