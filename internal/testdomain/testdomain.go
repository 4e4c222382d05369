// Package testdomain hands out DDS domain ids to tests that open real
// sockets, so that test processes running at the same time (go test runs
// packages in parallel) never share a domain and never see each other's
// topics. A domain is held through a lock file in the temp directory.
package testdomain

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Lock takes a free domain in 1..232 and returns it with the function that
// releases it.
func Lock() (int, func(), error) {
	start := os.Getpid() % 232
	for k := 0; k < 232; k++ {
		d := 1 + (start+k)%232
		path := filepath.Join(os.TempDir(), fmt.Sprintf("nros-interop-domain-%d.lock", d))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return 0, nil, fmt.Errorf("testdomain: %w", err)
		}
		if err := tryLock(f); err != nil {
			f.Close()
			continue
		}
		return d, func() { f.Close() }, nil // closing releases the lock
	}
	return 0, nil, fmt.Errorf("testdomain: all 232 DDS domains are in use")
}

// Acquire takes a free domain for the test and releases it when the test ends.
func Acquire(t testing.TB) int {
	t.Helper()
	d, release, err := Lock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return d
}
