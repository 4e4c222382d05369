//go:build nros_nozenoh

package nros

import (
	"strings"
	"testing"
)

// Built with -tags nros_nozenoh, a context asked for Zenoh fails every
// call with an error that says why.
func TestNoZenohBuild(t *testing.T) {
	t.Setenv(TransportEnv, "zenoh")
	c := NewContext()
	ft, ok := c.Transport().(failedTransport)
	if !ok || !strings.Contains(ft.err.Error(), "nros_nozenoh") {
		t.Fatalf("transport %T (%v), want one that fails naming the build tag", c.Transport(), ft.err)
	}
}
