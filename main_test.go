package nros

import (
	"os"
	"testing"
)

// The root package's tests run on the in-process transport: they are about
// time, parameters and pub/sub semantics, and must not discover each other
// over loopback. The DDS transport has its own tests (rmw/rtps, interop).
func TestMain(m *testing.M) {
	if os.Getenv(TransportEnv) == "" {
		os.Setenv(TransportEnv, "intra")
	}
	os.Exit(m.Run())
}
