package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps"
)

// TestPingPongPeers pairs the Go ping and pong over DDSI-RTPS with the
// reference peers (Cyclone DDS and Fast DDS pingpong), in both directions.
// It runs only when NROS_PINGPONG_PEERS names the directory of the built
// peers and the process sees nothing but loopback, e.g.
//
//	go test -c -o /tmp/nros.test ./cmd/nros
//	NROS_PINGPONG_PEERS=/tmp/nros-peers shared/peers/netns /tmp/nros.test -test.run PingPongPeers -test.v
func TestPingPongPeers(t *testing.T) {
	dir := peersDir(t)
	peerLine := regexp.MustCompile(`^(cyclone|fastdds) reliable size=\d+ samples=\d+ lost=0 rtt_us `)
	for _, vendor := range []string{"cyclone", "fastdds"} {
		bin := filepath.Join(dir, "pingpong_"+vendor)
		if _, err := os.Stat(bin); err != nil {
			t.Logf("skipping %s: %v", vendor, err)
			continue
		}
		t.Run("go ping "+vendor+" pong throughput", func(t *testing.T) {
			peer := exec.Command(bin, "pong", "--depth", "0")
			var peerErr bytes.Buffer
			peer.Stderr = &peerErr
			if err := peer.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { peer.Process.Kill(); peer.Wait() }()
			tr, err := rtps.New(rtps.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			e, out, errb := testEnv(tr, realClock{})
			args := []string{"pingpong", "ping", "--mode", "throughput", "--duration", "1", "--depth", "0", "--wait-timeout", "10"}
			if code := e.benchCmd(context.Background(), args, 300*time.Millisecond); code != 0 {
				t.Fatalf("ping: exit %d: %s", code, errb)
			}
			m := throughputRE.FindStringSubmatch(out.String())
			if m == nil || m[7] == "0" {
				t.Fatalf("ping printed %q", out)
			}
			t.Log(strings.TrimSpace(out.String()))
		})
		for _, size := range []string{"64", "65536"} {
			args := []string{"--size", size, "--count", "500", "--warmup", "50", "--wait-timeout", "10"}
			t.Run("go ping "+vendor+" pong "+size, func(t *testing.T) {
				peer := exec.Command(bin, "pong")
				var peerErr bytes.Buffer
				peer.Stderr = &peerErr
				if err := peer.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { peer.Process.Kill(); peer.Wait() }()
				tr, err := rtps.New(rtps.Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				e, out, errb := testEnv(tr, realClock{})
				if code := e.benchCmd(context.Background(), append([]string{"pingpong", "ping"}, args...), 300*time.Millisecond); code != 0 {
					t.Fatalf("ping: exit %d: %s", code, errb)
				}
				if latencyRE.FindStringSubmatch(out.String()) == nil || !strings.Contains(out.String(), " lost=0 ") {
					t.Fatalf("ping printed %q", out)
				}
				t.Log(strings.TrimSpace(out.String()))
				done := make(chan error, 1)
				go func() { done <- peer.Wait() }()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("%s pong: %v (%s)", vendor, err, peerErr.String())
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s pong did not quit", vendor)
				}
			})
			t.Run(vendor+" ping go pong "+size, func(t *testing.T) {
				tr, err := rtps.New(rtps.Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				e, _, errb := testEnv(tr, realClock{})
				pongDone := runAsync(func() int { return e.benchCmd(context.Background(), []string{"pingpong", "pong"}, 0) })
				peer := exec.Command(bin, append([]string{"ping"}, args...)...)
				var peerErr bytes.Buffer
				peer.Stderr = &peerErr
				out, err := peer.Output()
				if err != nil {
					t.Fatalf("%s ping: %v (%s)", vendor, err, peerErr.String())
				}
				if !peerLine.Match(out) {
					t.Fatalf("%s ping printed %q", vendor, out)
				}
				t.Log(strings.TrimSpace(string(out)))
				waitCode(t, pongDone, "go pong", errb)
			})
		}
	}
}

// TestCLIPeers checks `nros clock` and `nros topic pub/echo` over
// DDSI-RTPS against the reference peers (same opt-in as TestPingPongPeers):
// the clock subscriber sees the script's exact samples, echo finds the type
// and QoS of a remote publisher by discovery, pub reaches a remote reader.
func TestCLIPeers(t *testing.T) {
	dir := peersDir(t)
	const script = "start=100.0;play 1x 0.5s;pause 0.2s;play 2x 0.3s;jump -5s;play 0.5x 0.2s;jump +10s;play 1x 0.2s"
	for _, vendor := range []string{"cyclone", "fastdds"} {
		t.Run("clock to "+vendor, func(t *testing.T) {
			sub := exec.Command(filepath.Join(dir, "clocksub_"+vendor), "--count", "138", "--timeout", "15")
			var subOut bytes.Buffer
			sub.Stdout = &subOut
			if err := sub.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { sub.Process.Kill(); sub.Wait() }()
			tr, err := rtps.New(rtps.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			e, out, errb := testEnv(tr, realClock{})
			if code := e.clockCmd(context.Background(), []string{"--hz", "100", "--script", script, "--wait-subs", "1", "--wait-timeout", "10"}); code != 0 {
				t.Fatalf("clock: exit %d: %s", code, errb)
			}
			if err := sub.Wait(); err != nil {
				t.Fatalf("clocksub: %v; got %d lines:\n%s", err, strings.Count(subOut.String(), "\n"), subOut.String())
			}
			var pubSim, subSim []int64
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var wall, sim int64
				fmt.Sscanf(l, "clock %d %d", &wall, &sim)
				pubSim = append(pubSim, sim)
			}
			for _, l := range strings.Split(strings.TrimSpace(subOut.String()), "\n") {
				var wall, sec, nsec int64
				fmt.Sscan(l, &wall, &sec, &nsec)
				subSim = append(subSim, sec*1e9+nsec)
			}
			// Best effort into a KEEP_LAST 1 reader on a busy 2-CPU VM: the
			// reference peers (Cyclone -> Fast DDS) also miss one of the 140
			// now and then, so up to 2 may be skipped; the rest must come
			// exactly, in order.
			if len(pubSim) != 140 || len(subSim) != 138 {
				t.Fatalf("published %d, received %d", len(pubSim), len(subSim))
			}
			j := 0
			for i, v := range subSim {
				for j < len(pubSim) && pubSim[j] != v {
					j++
				}
				if j == len(pubSim) || j-i > 2 {
					t.Fatalf("received sample %d (%d ns) out of order or too many missing", i, v)
				}
				j++
			}
		})
		t.Run("chatter from "+vendor+" to echo", func(t *testing.T) {
			tr, err := rtps.New(rtps.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			e, out, errb := testEnv(tr, realClock{})
			echoDone := runAsync(func() int {
				return e.topicCmd(context.Background(), []string{"echo", "/chatter", "--count", "5", "--wait-timeout", "10"})
			})
			pub := exec.Command(filepath.Join(dir, "chatter_pub_"+vendor), "--count", "5", "--hz", "50", "--wait-subs", "1", "--wait-timeout", "10")
			if b, err := pub.CombinedOutput(); err != nil {
				t.Fatalf("chatter_pub: %v: %s", err, b)
			}
			waitCode(t, echoDone, "echo", errb)
			var want strings.Builder
			for i := 1; i <= 5; i++ {
				want.WriteString("data: 'Hello World: " + string(rune('0'+i)) + "'\n---\n")
			}
			if out.String() != want.String() {
				t.Fatalf("echo printed %q, want %q", out, want.String())
			}
		})
		t.Run("pub to "+vendor, func(t *testing.T) {
			sub := exec.Command(filepath.Join(dir, "chatter_sub_"+vendor), "--count", "3", "--timeout", "15")
			var subOut bytes.Buffer
			sub.Stdout = &subOut
			if err := sub.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { sub.Process.Kill(); sub.Wait() }()
			tr, err := rtps.New(rtps.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			e, _, errb := testEnv(tr, realClock{})
			if code := e.topicCmd(context.Background(), []string{"pub", "/chatter", "std_msgs/String", "{data: from go}", "--rate", "20", "--times", "3"}); code != 0 {
				t.Fatalf("pub: exit %d: %s", code, errb)
			}
			if err := sub.Wait(); err != nil {
				t.Fatalf("chatter_sub: %v (%s)", err, subOut.String())
			}
			if n := strings.Count(subOut.String(), " from go\n"); n != 3 {
				t.Fatalf("subscriber printed %q", subOut.String())
			}
		})
	}
}

// peersDir returns $NROS_PINGPONG_PEERS, skipping the test when it is unset
// or when the process can see a non-loopback interface.
func peersDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("NROS_PINGPONG_PEERS")
	if dir == "" {
		t.Skip("NROS_PINGPONG_PEERS not set")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			t.Skipf("interface %s is not loopback: run inside interop/netns", i.Name)
		}
	}
	return dir
}
