package interop

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestZenohdPicoClock: zclockpub (client) -> `nros zenohd` -> zclocksub
// (client), the nano-ros arrangement with the router in the nros binary:
// every sample arrives in order with its attachment; the router logs both
// clients and stops cleanly on SIGTERM.
func TestZenohdPicoClock(t *testing.T) {
	RequireZenohPeers(t)
	ep := LoopbackTCP(FreeTCPPort(t))
	zd := startNros(t, 0, "zenohd", "-l", ep)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(zd.stderr(), `msg="zenoh router up"`) {
		if time.Now().After(deadline) {
			t.Fatalf("nros zenohd did not start: %s", zd.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(zd.stdout(), "Started Zenoh router with id ") || !strings.Contains(zd.stderr(), "listen="+ep) {
		t.Fatalf("stdout %q stderr %q", zd.stdout(), zd.stderr())
	}
	sub := Start(t, "zclocksub", "--mode", "client", "--connect", ep, "--domain", "0", "--timeout", "40")
	if err := sub.WaitStderr("subscribed to", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	pub := Start(t, "zclockpub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--script", "start=3;play 1x 0.4s;jump +5s;play 2x 0.4s", "--hz", "50",
		"--wait-subs", "1", "--wait-timeout", "15", "--linger", "0.5")
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub exit %d: %v", code, err)
	}
	sent := pub.Lines()
	got, err := sub.WaitLines(len(sent), 10*time.Second)
	if err != nil || len(sent) < 30 {
		t.Fatalf("%d samples received of %d: %v", len(sub.Lines()), len(sent), err)
	}
	for i := range sent {
		f, g := strings.Fields(sent[i]), strings.Fields(got[i])
		if g[1] != f[1] || g[2] != f[2] || g[3] != fmt.Sprintf("seq=%d", i+1) || g[5] != "att=33" || g[6] != "cdr=ok" {
			t.Fatalf("sample %d: received %q, published %q", i, got[i], sent[i])
		}
	}
	if n := strings.Count(zd.stderr(), `msg="face up"`); n != 2 {
		t.Errorf("%d faces logged up:\n%s", n, zd.stderr())
	}
	zd.cmd.Process.Signal(syscall.SIGTERM)
	if code, err := zd.wait(10 * time.Second); err != nil || code != 0 {
		t.Errorf("nros zenohd after SIGTERM: exit %d, %v", code, err)
	}
	if !strings.Contains(zd.stderr(), "zenoh router stopping") || !strings.Contains(zd.stderr(), `msg="face down"`) {
		t.Errorf("stderr:\n%s", zd.stderr())
	}
}
