package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *syncBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %q in:\n%s", re, b.String())
	return nil
}

func noEnv(string) string { return "" }

// The command line of nros zenohd: mistakes exit 2 with one line naming
// what was wrong; -h says where it listens.
func TestZenohdCommandLine(t *testing.T) {
	files := map[string]string{
		"peer.json5":   `{ mode: "peer" }`,
		"bad.json5":    `{ mode: "router", transport: { link: { tx: { batch_size: 99999999 } } } }`,
		"badep.json5":  `{ mode: "router", listen: { endpoints: ["quic/127.0.0.1:1"] } }`,
		"router.json5": `{ mode: "router" }`,
	}
	readFile := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tc := range []struct {
		args     []string
		override string
		code     int
		want     string
	}{
		{[]string{"-l", "quic/1.2.3.4:5"}, "", 2, `nros zenohd: -l: zenoh endpoint "quic/1.2.3.4:5": protocol "quic" not supported (tcp, udp)`},
		{[]string{"--listen", "tcp/nonsense"}, "", 2, `~-listen: zenoh endpoint "tcp/nonsense"`},
		{[]string{"extra"}, "", 2, `nros zenohd: unexpected argument "extra" (endpoints go after -l, a config file after -c)`},
		{[]string{"-c", "missing.json5"}, "", 2, `nros zenohd: -c missing.json5: file does not exist`},
		{[]string{"-c", "peer.json5"}, "", 2, `nros zenohd: config: mode: "peer": nros zenohd runs in router mode only`},
		{[]string{"-c", "bad.json5"}, "", 2, `~transport/link/tx/batch_size`},
		{[]string{"-c", "badep.json5"}, "", 2, `~"quic/127.0.0.1:1"`},
		{nil, `mode="client"`, 2, `~mode`},
		{nil, `listen/endpoints=["udp/x"]`, 2, `~"udp/x"`},
		{[]string{"--frobnicate"}, "", 2, `~flag provided but not defined: -frobnicate`},
	} {
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == "ZENOH_CONFIG_OVERRIDE" {
				return tc.override
			}
			return ""
		}
		code := exitCode(&errb, "nros zenohd", zenohdCmd(context.Background(), tc.args, &out, &errb, getenv, readFile))
		line := strings.TrimSuffix(errb.String(), "\n")
		ok := line == tc.want
		if w, sub := strings.CutPrefix(tc.want, "~"); sub {
			ok = strings.Contains(line, w) && strings.HasPrefix(line, "nros zenohd: ")
		}
		if code != tc.code || !ok || strings.Contains(line, "\n") {
			t.Errorf("%q %q: exit %d, stderr %q; want %d %q", tc.args, tc.override, code, errb.String(), tc.code, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"zenohd", "-h"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "tcp/127.0.0.1:7447 (loopback only)") ||
		!strings.Contains(out.String(), "ZENOH_ROUTER_CONFIG_URI") || !strings.Contains(out.String(), "ZENOH_CONFIG_OVERRIDE") {
		t.Errorf("-h: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	run([]string{"help"}, &out, &errb)
	if !strings.Contains(out.String(), "zenohd") {
		t.Error("the usage does not list zenohd")
	}
}

// TestZenohdRuns: the router listens where told, logs a client coming and
// going, and stops cleanly (exit 0) when its context ends (SIGINT and
// SIGTERM end it in run). Loopback only; run it in interop/netns.
func TestZenohdRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- exitCode(errb, "nros zenohd", zenohdCmd(ctx, []string{"-l", "tcp/127.0.0.1:0"}, out, errb, noEnv, os.ReadFile))
	}()
	m := errb.waitFor(t, regexp.MustCompile(`msg="zenoh router up" zid=(\w+) listen=(tcp/127\.0\.0\.1:\d+)`))
	if !strings.HasPrefix(out.String(), "Started Zenoh router with id "+m[1]+".") {
		t.Errorf("stdout %q", out.String())
	}
	c, err := session.Open(session.Config{Mode: wire.Client, Connect: []string{m[2]}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	errb.waitFor(t, regexp.MustCompile(`msg="face up" face=1 zid=`+c.ZID().String()+` whatami=client remote=tcp/127\.0\.0\.1:\d+`))
	c.Close()
	errb.waitFor(t, regexp.MustCompile(`msg="face down" face=1 zid=`+c.ZID().String()+` whatami=client reason=`))
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nros zenohd did not stop")
	}
	if !strings.Contains(errb.String(), "zenoh router stopping") {
		t.Errorf("stderr:\n%s", errb.String())
	}
}

// A port already taken: exit 1, naming the endpoint.
func TestZenohdBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ep := "tcp/" + ln.Addr().String()
	var out, errb bytes.Buffer
	err = zenohdCmd(context.Background(), []string{"-l", ep}, &out, &errb, noEnv, os.ReadFile)
	code := exitCode(&errb, "nros zenohd", err)
	var ue usageError
	if code != 1 || errors.As(err, &ue) || !strings.Contains(errb.String(), ep) {
		t.Errorf("exit %d: %q", code, errb.String())
	}
}
