package main

import (
	"os"
	"testing"
)

// These tests drive simtimer in process; the DDS path is tested against
// real peers in interop/.
func TestMain(m *testing.M) {
	if os.Getenv("NROS_TRANSPORT") == "" {
		os.Setenv("NROS_TRANSPORT", "intra")
	}
	os.Exit(m.Run())
}
