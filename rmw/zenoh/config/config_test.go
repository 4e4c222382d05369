package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c := Default()
	if c.Mode != ModePeer || !reflect.DeepEqual(c.ConnectEndpoints(), []Endpoint{{Protocol: "tcp", Address: "localhost:7447"}}) ||
		!reflect.DeepEqual(c.ListenEndpoints(), []Endpoint{{Protocol: "tcp", Address: "localhost:0"}}) {
		t.Errorf("session endpoints: %v %v %v", c.Mode, c.ConnectEndpoints(), c.ListenEndpoints())
	}
	if c.Scouting.Multicast.Enabled || !c.Scouting.Gossip.Enabled || !c.TimestampingEnabled() {
		t.Error("session scouting/timestamping")
	}
	if c.QueryTimeout() != 600*time.Second || c.Lease() != 60*time.Second || c.KeepAliveInterval() != 30*time.Second ||
		c.Transport.Link.TX.BatchSize != 65535 || c.Transport.Unicast.OpenTimeoutMS != 60000 {
		t.Error("session timeouts")
	}
	if d, forever := c.ConnectTimeout(); !forever || d != 0 || c.ExitOnConnectFailure() {
		t.Error("peer connect timeout")
	}
	r := DefaultRouter()
	if r.Mode != ModeRouter || len(r.ConnectEndpoints()) != 0 ||
		!reflect.DeepEqual(r.ListenEndpoints(), []Endpoint{{Protocol: "tcp", Address: "127.0.0.1:7447"}}) {
		t.Errorf("router: %v %v %v", r.Mode, r.ConnectEndpoints(), r.ListenEndpoints())
	}
	b := Builtin()
	if b.Scouting.Multicast.Enabled || b.Lease() != 10*time.Second || b.KeepAliveInterval() != 2500*time.Millisecond ||
		b.QueryTimeout() != 10*time.Second || b.TimestampingEnabled() {
		t.Error("builtin")
	}
	// a file that says only the mode takes the built-in defaults for the rest
	cl, err := Parse([]byte(`{mode: "client"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.ListenEndpoints()) != 0 || len(cl.ConnectEndpoints()) != 0 || !cl.ExitOnConnectFailure() {
		t.Errorf("client built-ins: %v %v", cl.ListenEndpoints(), cl.ConnectEndpoints())
	}
	if d, forever := cl.ConnectTimeout(); forever || d != 0 {
		t.Error("client connect timeout")
	}
	pe, _ := Parse([]byte(`{}`))
	if l := pe.ListenEndpoints(); len(l) != 1 || l[0].String() != "tcp/127.0.0.1:0" {
		t.Errorf("peer built-in listen %v (loopback here, tcp/[::]:0 in zenoh)", l)
	}
}

// TestKeys sets every key Config holds and checks the field.
func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		check func(c *Config) bool
	}{
		{`{id: "1a2b"}`, func(c *Config) bool { return c.ID == "1a2b" }},
		{`{mode: "router"}`, func(c *Config) bool { return c.Mode == ModeRouter }},
		{`{mode: null}`, func(c *Config) bool { return c.Mode == ModePeer }},
		{`{connect: {endpoints: ["tcp/127.0.0.1:7447", "udp/[::1]:7447#iface=lo"]}}`, func(c *Config) bool {
			e := c.ConnectEndpoints()
			return len(e) == 2 && e[1] == Endpoint{Protocol: "udp", Address: "[::1]:7447", Config: "iface=lo"}
		}},
		{`{connect: {endpoints: {peer: ["tcp/a:1"], client: ["tcp/b:2"]}}}`, func(c *Config) bool {
			p, _ := c.Connect.Endpoints.For(ModePeer)
			cl, _ := c.Connect.Endpoints.For(ModeClient)
			_, rok := c.Connect.Endpoints.For(ModeRouter)
			return len(p) == 1 && p[0].Address == "a:1" && cl[0].Address == "b:2" && !rok
		}},
		{`{listen: {endpoints: ["tcp/0.0.0.0:7447?prio=1-7"]}}`, func(c *Config) bool {
			return c.ListenEndpoints()[0] == Endpoint{Protocol: "tcp", Address: "0.0.0.0:7447", Metadata: "prio=1-7"}
		}},
		{`{connect: {timeout_ms: 500, exit_on_failure: {peer: true}}}`, func(c *Config) bool {
			d, f := c.ConnectTimeout()
			return d == 500*time.Millisecond && !f && c.ExitOnConnectFailure()
		}},
		{`{listen: {timeout_ms: -1, exit_on_failure: false}}`, func(c *Config) bool {
			v, _ := c.Listen.TimeoutMS.For(ModePeer)
			x, _ := c.Listen.ExitOnFailure.For(ModePeer)
			return v == -1 && !x
		}},
		{`{connect: {retry: {period_init_ms: 10, period_max_ms: 20, period_increase_factor: 1.5}}}`, func(c *Config) bool {
			return c.Connect.Retry == Retry{10, 20, 1.5}
		}},
		{`{listen: {retry: {period_init_ms: -1}}}`, func(c *Config) bool { return c.Listen.Retry.PeriodInitMS == -1 }},
		{`{scouting: {timeout: 1, delay: 2}}`, func(c *Config) bool { return c.Scouting.TimeoutMS == 1 && c.Scouting.DelayMS == 2 }},
		{`{scouting: {multicast: {enabled: true, address: "224.0.0.1:1", interface: "lo", ttl: 3, listen: false, autoconnect: "router|peer"}}}`, func(c *Config) bool {
			m := c.Scouting.Multicast
			a, _ := m.Autoconnect.For(ModeClient)
			l, _ := m.Listen.For(ModeRouter)
			return m.Enabled && m.Address == "224.0.0.1:1" && m.Interface == "lo" && m.TTL == 3 && !l && reflect.DeepEqual(a, []string{"router", "peer"})
		}},
		{`{scouting: {gossip: {enabled: false, multihop: true, target: {peer: ["router"]}, autoconnect: []}}}`, func(c *Config) bool {
			g := c.Scouting.Gossip
			tg, _ := g.Target.For(ModePeer)
			ac, ok := g.Autoconnect.For(ModePeer)
			return !g.Enabled && g.Multihop && reflect.DeepEqual(tg, []string{"router"}) && ok && len(ac) == 0
		}},
		{`{timestamping: {enabled: true, drop_future_timestamp: true}}`, func(c *Config) bool {
			return c.TimestampingEnabled() && c.Timestamping.DropFutureTimestamp
		}},
		{`{queries_default_timeout: 1234}`, func(c *Config) bool { return c.QueryTimeout() == 1234*time.Millisecond }},
		{`{transport: {unicast: {open_timeout: 1, accept_timeout: 2, accept_pending: 3, max_sessions: 4, max_links: 5, lowlatency: true, qos: {enabled: false}, compression: {enabled: true}}}}`, func(c *Config) bool {
			u := c.Transport.Unicast
			return u.OpenTimeoutMS == 1 && u.AcceptTimeoutMS == 2 && u.AcceptPending == 3 && u.MaxSessions == 4 && u.MaxLinks == 5 && u.LowLatency && !u.QoS && u.Compression
		}},
		{`{transport: {link: {protocols: ["tcp"], tx: {sequence_number_resolution: "16bit", lease: 3000, keep_alive: 3, batch_size: 8192}, rx: {buffer_size: 1, max_message_size: 2}}}}`, func(c *Config) bool {
			l := c.Transport.Link
			return reflect.DeepEqual(l.Protocols, []string{"tcp"}) && l.TX.SequenceNumberResolution == 16 && c.Lease() == 3*time.Second &&
				c.KeepAliveInterval() == time.Second && l.TX.BatchSize == 8192 && l.RX.BufferSize == 1 && l.RX.MaxMessageSize == 2
		}},
		{`{adminspace: {enabled: false}, metadata: {name: "x", anything: [1]}, plugins: {rest: {http_port: 8000}}, namespace: "a/b", access_control: {enabled: false, rules: []}}`, func(c *Config) bool {
			return reflect.DeepEqual(c.Ignored, []string{"access_control", "adminspace/enabled", "metadata", "namespace", "plugins"})
		}},
	} {
		c, err := Parse([]byte(tc.doc))
		if err != nil {
			t.Errorf("%s: %v", tc.doc, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%s: not applied: %+v", tc.doc, *c)
		}
	}
}

func TestBadValues(t *testing.T) {
	for _, tc := range []struct {
		doc, key  string
		line, col int
		msg       string
	}{
		{`{mode: "bridge"}`, "mode", 1, 8, "not peer, client or router"},
		{`{mode: 1}`, "mode", 1, 8, "want a string"},
		{"{\n  connect: {endpoints: [\"tcp/localhost\"]}}", "connect/endpoints", 2, 25, "host:port"},
		{`{connect: {endpoints: ["tcp/h:70000"]}}`, "connect/endpoints", 1, 24, "0..65535"},
		{`{connect: {endpoints: ["7447"]}}`, "connect/endpoints", 1, 24, "<protocol>/<address>"},
		{`{connect: {endpoints: ["tcp/::1:7447"]}}`, "connect/endpoints", 1, 24, "brackets"},
		{`{connect: {endpoints: "tcp/h:1"}}`, "connect/endpoints", 1, 23, "want a list"},
		{`{connect: {endpoints: {peer: [1]}}}`, "connect/endpoints/peer", 1, 31, "want a string"},
		{`{connect: {endpoints: {bridge: []}}}`, "connect/endpoints/bridge", 1, 24, "router, peer and client only"},
		{`{connect: {timeout_ms: -2}}`, "connect/timeout_ms", 1, 24, "-1.."},
		{`{connect: {timeout_ms: "5"}}`, "connect/timeout_ms", 1, 24, "not a number"},
		{`{connect: {exit_on_failure: 1}}`, "connect/exit_on_failure", 1, 29, "true or false"},
		{`{connect: {retry: {period_increase_factor: 0.5}}}`, "connect/retry/period_increase_factor", 1, 44, "at least 1"},
		{`{scouting: {multicast: {enabled: "yes"}}}`, "scouting/multicast/enabled", 1, 34, "true or false"},
		{`{scouting: {multicast: {address: "224.0.0.224"}}}`, "scouting/multicast/address", 1, 34, "ip:port"},
		{`{scouting: {multicast: {ttl: 4294967296}}}`, "scouting/multicast/ttl", 1, 30, "0..4294967295"},
		{`{scouting: {gossip: {target: ["bridge"]}}}`, "scouting/gossip/target", 1, 30, "not router, peer or client"},
		{`{queries_default_timeout: -1}`, "queries_default_timeout", 1, 27, "negative"},
		{`{queries_default_timeout: 1.5}`, "queries_default_timeout", 1, 27, "not an integer"},
		{`{transport: {link: {tx: {batch_size: 65536}}}}`, "transport/link/tx/batch_size", 1, 38, "0..65535"},
		{`{transport: {link: {tx: {batch_size: 0}}}}`, "transport/link/tx/batch_size", 1, 38, "batch size below 64"},
		{`{transport: {link: {tx: {batch_size: 63}}}}`, "transport/link/tx/batch_size", 1, 38, "batch size below 64"},
		{`{transport: {link: {tx: {lease: 0}}}}`, "transport/link/tx/lease", 1, 33, "lease of 0"},
		{`{transport: {link: {tx: {keep_alive: 0}}}}`, "transport/link/tx/keep_alive", 1, 38, "0 keep-alives"},
		{`{transport: {link: {tx: {sequence_number_resolution: "12bit"}}}}`, "transport/link/tx/sequence_number_resolution", 1, 54, "8bit"},
		{`{transport: 3}`, "transport", 1, 13, "want an object"},
		{`{id: "0abc"}`, "id", 1, 6, "leading zeros"},
		{`[]`, "(top level)", 1, 1, "want an object"},
	} {
		_, err := Parse([]byte(tc.doc))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *config.Error", tc.doc, err)
			continue
		}
		if ce.Key != tc.key || ce.Line != tc.line || ce.Col != tc.col || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%s: %v, want key %s at %d:%d saying %q", tc.doc, err, tc.key, tc.line, tc.col, tc.msg)
		}
		if !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %q does not name the key", tc.doc, err)
		}
	}
}

func TestUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ doc, key string }{
		{`{mdoe: "peer"}`, "mdoe"},
		{`{connect: {endpoint: []}}`, "connect/endpoint"},
		{"{\n transport: {unicast: {lease: 10000}}}", "transport/unicast/lease"},
		{`{scouting: {multicast: {enable: true}}}`, "scouting/multicast/enable"},
	} {
		_, err := Parse([]byte(tc.doc))
		var ce *Error
		if !errors.Is(err, ErrUnknownKey) || !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s: %v, want unknown key %s", tc.doc, err, tc.key)
		}
	}
	// known keys of zenoh this package does not use are accepted
	c, err := Parse([]byte(`{open: {return_conditions: {declares: false}}, routing: {peer: {mode: "linkstate", linkstate: {transport_weights: []}}},
	  transport: {shared_memory: {enabled: true}, link: {tls: {root_ca_certificate: null}, tx: {queue: {size: {data: 4}}}}}, downsampling: []}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"downsampling", "open/return_conditions/declares", "routing/peer/linkstate", "routing/peer/mode",
		"transport/link/tx/queue/size/data", "transport/shared_memory/enabled"}
	if !reflect.DeepEqual(c.Ignored, want) {
		t.Errorf("Ignored = %v", c.Ignored)
	}
}

func TestEndpoint(t *testing.T) {
	for _, s := range []string{"tcp/127.0.0.1:7447", "tcp/[::]:0", "udp/localhost:7447?prio=1-7#iface=eth0", "quic/host:1", "unixsock-stream//tmp/sock", "serial//dev/ttyUSB0#baudrate=115200"} {
		e, err := ParseEndpoint(s)
		if err != nil || e.String() != s {
			t.Errorf("%s: %+v %v", s, e, err)
		}
	}
	e, _ := ParseEndpoint("tcp/[::1]:7447")
	if h, p, err := e.SplitHostPort(); h != "::1" || p != 7447 || err != nil {
		t.Error(h, p, err)
	}
	for _, s := range []string{"", "tcp", "tcp/", "/a:1", "TCP/a:1", "tcp/a", "tcp/:1", "tcp/[::1:1", "tcp/[zz]:1", "udp/a:-1"} {
		if _, err := ParseEndpoint(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(sessionJSON5)
	f.Add(routerJSON5)
	f.Add(`{mode: "client", connect: {endpoints: {client: ["tcp/h:1"]}}, transport: {link: {tx: {lease: 1}}}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := Parse([]byte(doc))
		if err != nil {
			return
		}
		switch c.Mode {
		case ModePeer, ModeClient, ModeRouter:
		default:
			t.Fatalf("mode %q", c.Mode)
		}
		if c.Transport.Link.TX.LeaseMS == 0 || c.Transport.Link.TX.KeepAlive == 0 || c.Transport.Link.TX.BatchSize == 0 {
			t.Fatal("zero lease, keep-alive or batch size accepted")
		}
		_ = c.KeepAliveInterval()
		for _, e := range append(c.ConnectEndpoints(), c.ListenEndpoints()...) {
			if _, err := ParseEndpoint(e.String()); err != nil {
				t.Fatalf("endpoint %v does not parse back: %v", e, err)
			}
		}
	})
}
