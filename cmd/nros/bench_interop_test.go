package main

import (
	"bytes"
	"context"
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
			t.Skipf("interface %s is not loopback: run inside shared/peers/netns", i.Name)
		}
	}
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
