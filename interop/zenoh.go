package interop

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// ZenohPeers are the zenoh-pico programs build.sh makes from
// ../shared/zenoh (rmw_zenoh-shaped ROS 2 peers on zenoh-pico 1.7.2) and
// from src/z*.c (zsvcserver).
var ZenohPeers = []string{"zclockpub", "zclocksub", "zchatterpub", "zchattersub", "zlivewatch", "zsvcserver"}

// RequireZenohPeers checks the namespace and that the zenoh-pico peers are
// built (Peers builds them), and skips loudly when they are missing from a
// prebuilt $NROS_INTEROP_PEERS directory.
func RequireZenohPeers(t testing.TB) string {
	t.Helper()
	RequireNamespace(t)
	dir := Peers(t)
	for _, p := range ZenohPeers {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Skipf("INTEROP SKIPPED: zenoh-pico peer %s missing in %s (run interop/build.sh)", p, dir)
		}
	}
	return dir
}

// FreeTCPPort returns a loopback TCP port that was free a moment ago, for
// a peer that must be told where to listen.
func FreeTCPPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("interop: no free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// LoopbackTCP is the zenoh endpoint tcp/127.0.0.1:port.
func LoopbackTCP(port int) string { return "tcp/127.0.0.1:" + strconv.Itoa(port) }
