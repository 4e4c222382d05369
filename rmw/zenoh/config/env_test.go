package config

import (
	"errors"
	"io/fs"
	"math"
	"reflect"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func filesOf(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if s, ok := m[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

func TestSessionFromEnv(t *testing.T) {
	none := filesOf(nil)
	c, err := Session(envOf(nil), none)
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Fatalf("no env: %v", err)
	}
	// the override of the example
	c, err = Session(envOf(map[string]string{EnvOverride: `mode="client";connect/endpoints=["tcp/127.0.0.1:7447"]`}), none)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeClient || c.ConnectEndpoints()[0].String() != "tcp/127.0.0.1:7447" {
		t.Errorf("override: %v %v", c.Mode, c.ConnectEndpoints())
	}
	// a file replaces the defaults; the override applies on top
	files := filesOf(map[string]string{"/cfg.json5": `{mode: "peer", listen: {endpoints: ["tcp/127.0.0.1:9000"]}}`})
	c, err = Session(envOf(map[string]string{EnvSessionConfig: "/cfg.json5", EnvOverride: "scouting/gossip/enabled=false; transport/link/tx/lease=5000;"}), files)
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenEndpoints()[0].Address != "127.0.0.1:9000" || len(c.ConnectEndpoints()) != 0 || c.Scouting.Gossip.Enabled || c.Transport.Link.TX.LeaseMS != 5000 {
		t.Errorf("file+override: %+v", *c)
	}
	if _, err := Session(envOf(map[string]string{EnvSessionConfig: "/missing"}), files); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), EnvSessionConfig) {
		t.Errorf("missing file: %v", err)
	}
	bad := filesOf(map[string]string{"/bad.json5": "{mode: 'peer',\n  listen: {endpoints: [tcp]}}"})
	_, err = Session(envOf(map[string]string{EnvSessionConfig: "/bad.json5"}), bad)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(err.Error(), "/bad.json5") {
		t.Errorf("bad file: %v", err)
	}
	r, err := Router(envOf(map[string]string{EnvOverride: `listen/endpoints=["tcp/0.0.0.0:7447"]`}), none)
	if err != nil || r.Mode != ModeRouter || r.ListenEndpoints()[0].Address != "0.0.0.0:7447" {
		t.Errorf("router override: %v %v", err, r)
	}
}

func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		ov    string
		check func(*Config) bool
	}{
		{`mode = "router"`, func(c *Config) bool { return c.Mode == ModeRouter }},
		{`connect/endpoints=['tcp/a:1', "tcp/b:2"]`, func(c *Config) bool { return len(c.ConnectEndpoints()) == 2 }},
		{`scouting/multicast/interface="a;b";scouting/multicast/ttl=2`, func(c *Config) bool {
			return c.Scouting.Multicast.Interface == "a;b" && c.Scouting.Multicast.TTL == 2
		}},
		{`connect/timeout_ms/client=7`, func(c *Config) bool {
			cl, _ := c.Connect.TimeoutMS.For(ModeClient)
			pe, _ := c.Connect.TimeoutMS.For(ModePeer)
			return cl == 7 && pe == -1
		}},
		{`listen/timeout_ms/router=9`, func(c *Config) bool {
			rt, _ := c.Listen.TimeoutMS.For(ModeRouter)
			pe, _ := c.Listen.TimeoutMS.For(ModePeer)
			return rt == 9 && pe == 0
		}},
		{`transport={link: {tx: {keep_alive: 8}}}`, func(c *Config) bool {
			return c.Transport.Link.TX.KeepAlive == 8 && c.Transport.Link.TX.LeaseMS == 10000
		}},
		{`metadata/name="robot"`, func(c *Config) bool { return reflect.DeepEqual(c.Ignored, []string{"metadata"}) }},
		{``, func(c *Config) bool { return true }},
		{`;;`, func(c *Config) bool { return true }},
	} {
		c, err := ParseWithOverrides([]byte(`{}`), tc.ov)
		if err != nil {
			t.Errorf("%q: %v", tc.ov, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%q: not applied: %+v", tc.ov, *c)
		}
	}
	for _, tc := range []struct{ ov, key, msg string }{
		{`mode=bridge`, "mode", "value"},
		{`mode="bridge"`, "mode", "not peer, client or router"},
		{`mdoe="peer"`, "mdoe", "unknown key"},
		{`connect/timeout_ms/bridge=1`, "connect/timeout_ms/bridge", "unknown key"},
		{`transport/link/tx/batch_size=70000`, "transport/link/tx/batch_size", "0..65535"},
		{`connect/endpoints=["tcp/x"]`, "connect/endpoints", "host:port"},
	} {
		_, err := ParseWithOverrides([]byte(`{}`), tc.ov)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: %v, want key %s saying %q", tc.ov, err, tc.key, tc.msg)
		}
	}
	if _, err := ParseWithOverrides([]byte(`{}`), `justakey`); !errors.Is(err, ErrOverride) {
		t.Errorf("no '=': %v", err)
	}
}

func TestRouterCheck(t *testing.T) {
	for _, tc := range []struct {
		v        string
		attempts uint64
		check    bool
	}{
		{"", 1, true},
		{"5", 5, true},
		{" 3x", 3, true},
		{"0", math.MaxUint64, true},
		{"abc", math.MaxUint64, true}, // strtoll reads 0: check forever, as rmw_zenoh does
		{"-1", 0, false},
		{"99999999999999999999999", math.MaxInt64, true},
	} {
		a, c := RouterCheck(envOf(map[string]string{EnvRouterCheckAttempts: tc.v}))
		if a != tc.attempts || c != tc.check {
			t.Errorf("%q: %d %v, want %d %v", tc.v, a, c, tc.attempts, tc.check)
		}
	}
	if !strings.Contains(NoRouterWarning, "rmw_zenohd") || !strings.Contains(NoRouterGiveUp(3), "after 3 attempt(s)") ||
		!strings.Contains(NoRouterGiveUp(3), EnvRouterCheckAttempts) {
		t.Error("warning texts")
	}
}

func FuzzApplyOverrides(f *testing.F) {
	f.Add(`mode="client";connect/endpoints=["tcp/127.0.0.1:7447"]`)
	f.Add(`connect/timeout_ms/client=7;listen/endpoints={peer: ["tcp/a:1"]}`)
	f.Fuzz(func(t *testing.T, ov string) {
		tree, err := ParseJSON5([]byte(sessionJSON5))
		if err != nil {
			t.Fatal(err)
		}
		if err := ApplyOverrides(tree, ov); err != nil {
			return
		}
		_, _ = decode(tree)
	})
}
