package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// Mode is a zenoh node's mode.
type Mode string

// The modes.
const (
	ModePeer   Mode = "peer"
	ModeClient Mode = "client"
	ModeRouter Mode = "router"
)

// ModeValue is a zenoh mode-dependent value: one value for every mode
// (JSON5 `v`) or one per mode (`{router: v, peer: v, client: v}`, any
// subset). A nil pointer is a mode without a value. For endpoints a mode
// left out has none; for the other keys it keeps zenoh's default.
type ModeValue[T any] struct{ Router, Peer, Client *T }

// Unique returns a ModeValue with v for every mode.
func Unique[T any](v T) ModeValue[T] { return ModeValue[T]{&v, &v, &v} }

// For returns the value for mode m; ok is false when m has none.
func (mv ModeValue[T]) For(m Mode) (v T, ok bool) {
	var p *T
	switch m {
	case ModeRouter:
		p = mv.Router
	case ModePeer:
		p = mv.Peer
	case ModeClient:
		p = mv.Client
	}
	if p == nil {
		return v, false
	}
	return *p, true
}

// Endpoint is a zenoh locator with its options:
// "<protocol>/<address>[?<metadata>][#<config>]", e.g.
// "tcp/127.0.0.1:7447", "tcp/[::1]:0#iface=lo".
type Endpoint struct {
	Protocol string // "tcp", "udp", …
	Address  string // "127.0.0.1:7447", "localhost:7447", "[::]:0"
	Metadata string // after '?', without it
	Config   string // after '#', without it
}

// String returns the endpoint in zenoh's text form.
func (e Endpoint) String() string {
	s := e.Protocol + "/" + e.Address
	if e.Metadata != "" {
		s += "?" + e.Metadata
	}
	if e.Config != "" {
		s += "#" + e.Config
	}
	return s
}

// ParseEndpoint parses an endpoint as zenoh does: a protocol, '/', an
// address, then optional "?metadata" and "#config". For tcp and udp the
// address must be host:port with a port in 0..65535 (an IPv6 host in
// brackets).
func ParseEndpoint(s string) (Endpoint, error) {
	var e Endpoint
	rest := s
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, e.Config = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, e.Metadata = rest[:i], rest[i+1:]
	}
	proto, addr, ok := strings.Cut(rest, "/")
	if !ok || proto == "" || addr == "" {
		return e, fmt.Errorf("endpoint %q: want <protocol>/<address>", s)
	}
	for _, c := range proto {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return e, fmt.Errorf("endpoint %q: bad protocol %q", s, proto)
		}
	}
	e.Protocol, e.Address = proto, addr
	if proto == "tcp" || proto == "udp" {
		if _, _, err := splitHostPort(addr); err != nil {
			return e, fmt.Errorf("endpoint %q: %v", s, err)
		}
	}
	return e, nil
}

// SplitHostPort splits a tcp or udp endpoint address into host and port
// ("[::1]:7447" -> "::1", 7447).
func (e Endpoint) SplitHostPort() (host string, port uint16, err error) {
	return splitHostPort(e.Address)
}

func splitHostPort(addr string) (string, uint16, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("address %q: want host:port", addr)
	}
	host, ps := addr[:i], addr[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, fmt.Errorf("address %q: unclosed '['", addr)
		}
		host = host[1 : len(host)-1]
		if _, err := netip.ParseAddr(host); err != nil {
			return "", 0, fmt.Errorf("address %q: bad IPv6 address", addr)
		}
	} else if strings.ContainsAny(host, ":[]") {
		return "", 0, fmt.Errorf("address %q: an IPv6 host goes in brackets", addr)
	}
	if host == "" {
		return "", 0, fmt.Errorf("address %q: empty host", addr)
	}
	p, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: port %q is not 0..65535", addr, ps)
	}
	return host, uint16(p), nil
}

// Retry is zenoh's connection retry policy.
type Retry struct {
	PeriodInitMS   int64
	PeriodMaxMS    int64
	IncreaseFactor float64
}

// Links is zenoh's connect or listen section.
type Links struct {
	Endpoints     ModeValue[[]Endpoint]
	TimeoutMS     ModeValue[int64] // -1: forever, 0: no wait
	ExitOnFailure ModeValue[bool]
	Retry         Retry
}

// Config is the part of a zenoh configuration a zenoh session or router
// of this project uses, decoded and checked. Build it with Parse, Default,
// DefaultRouter, Session or Router.
type Config struct {
	ID      string // "" for a random id
	Mode    Mode
	Connect Links
	Listen  Links

	Scouting struct {
		TimeoutMS uint64
		DelayMS   uint64
		Multicast struct {
			Enabled     bool
			Address     string // "224.0.0.224:7446"
			Interface   string
			TTL         uint32
			Listen      ModeValue[bool]
			Autoconnect ModeValue[[]string]
		}
		Gossip struct {
			Enabled     bool
			Multihop    bool
			Target      ModeValue[[]string]
			Autoconnect ModeValue[[]string]
		}
	}

	Timestamping struct {
		Enabled             ModeValue[bool]
		DropFutureTimestamp bool
	}

	QueriesDefaultTimeoutMS uint64

	Transport struct {
		Unicast struct {
			OpenTimeoutMS   uint64
			AcceptTimeoutMS uint64
			AcceptPending   uint64
			MaxSessions     uint64
			MaxLinks        uint64
			LowLatency      bool
			QoS             bool
			Compression     bool
		}
		Link struct {
			Protocols []string // nil: all
			TX        struct {
				SequenceNumberResolution uint8 // bits: 8, 16, 32 or 64
				LeaseMS                  uint64
				KeepAlive                uint64 // keep-alives per lease
				BatchSize                uint16
			}
			RX struct {
				BufferSize     uint64
				MaxMessageSize uint64
			}
		}
	}

	// Ignored lists the keys zenoh knows that were set and that this
	// package does not use, sorted.
	Ignored []string
}

// ConnectEndpoints returns the endpoints to connect to in the config's mode.
func (c *Config) ConnectEndpoints() []Endpoint { v, _ := c.Connect.Endpoints.For(c.Mode); return v }

// ListenEndpoints returns the endpoints to listen on in the config's mode.
func (c *Config) ListenEndpoints() []Endpoint { v, _ := c.Listen.Endpoints.For(c.Mode); return v }

// Lease returns the transport lease (transport/link/tx/lease).
func (c *Config) Lease() time.Duration {
	return time.Duration(c.Transport.Link.TX.LeaseMS) * time.Millisecond
}

// KeepAliveInterval returns the period of keep-alive messages: the lease
// divided by transport/link/tx/keep_alive.
func (c *Config) KeepAliveInterval() time.Duration {
	return c.Lease() / time.Duration(c.Transport.Link.TX.KeepAlive)
}

// QueryTimeout returns queries_default_timeout.
func (c *Config) QueryTimeout() time.Duration {
	return time.Duration(c.QueriesDefaultTimeoutMS) * time.Millisecond
}

// TimestampingEnabled reports whether the session timestamps its samples (HLC)
// in its mode.
func (c *Config) TimestampingEnabled() bool { v, _ := c.Timestamping.Enabled.For(c.Mode); return v }

// ConnectTimeout returns how long opening waits for the connect endpoints
// in the config's mode; forever is true for -1.
func (c *Config) ConnectTimeout() (d time.Duration, forever bool) {
	v, _ := c.Connect.TimeoutMS.For(c.Mode)
	if v < 0 {
		return 0, true
	}
	return time.Duration(v) * time.Millisecond, false
}

// ExitOnConnectFailure reports whether opening fails when no connect
// endpoint can be reached in the config's mode.
func (c *Config) ExitOnConnectFailure() bool { v, _ := c.Connect.ExitOnFailure.For(c.Mode); return v }

// Error is a bad value for a configuration key.
type Error struct {
	Key       string // "transport/link/tx/batch_size"
	Line, Col int    // where the value is, 0 when it came from no text
	Msg       string
	err       error // what Unwrap returns
}

// Unwrap returns ErrUnknownKey for an unknown key, else nil.
func (e *Error) Unwrap() error { return e.err }

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config: %s (line %d, column %d): %s", e.Key, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("config: %s: %s", e.Key, e.Msg)
}

// ErrUnknownKey is wrapped by the error for a key zenoh does not know.
var ErrUnknownKey = errors.New("unknown key")

func keyErr(key string, v *Value, format string, args ...any) *Error {
	e := &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	if v != nil {
		e.Line, e.Col = v.Line, v.Col
	}
	return e
}

// Parse decodes a zenoh configuration file (JSON5) on top of zenoh's
// built-in defaults (Builtin), as zenoh::Config::from_file does.
func Parse(data []byte) (*Config, error) {
	tree, err := ParseJSON5(data)
	if err != nil {
		return nil, err
	}
	return decode(tree)
}

// decode checks every key of tree and decodes the ones Config holds on
// top of Builtin.
func decode(tree *Value) (*Config, error) {
	if tree.Kind != Object {
		return nil, keyErr("(top level)", tree, "a %v, want an object", tree.Kind)
	}
	c := Builtin()
	d := decoder{c: c}
	if err := d.walk("", tree); err != nil {
		return nil, err
	}
	sort.Strings(c.Ignored)
	return c, nil
}

type decoder struct {
	c *Config
}

func (d *decoder) walk(prefix string, obj *Value) error {
	for _, m := range obj.Obj {
		path := m.Key
		if prefix != "" {
			path = prefix + "/" + m.Key
		}
		v := m.Value
		switch lookupKey(path) {
		case keyUnknown:
			e := keyErr(path, v, "%v: zenoh has no such key", ErrUnknownKey)
			e.Line, e.Col, e.err = m.Line, m.Col, ErrUnknownKey
			return e
		case keyOpen:
			d.c.Ignored = append(d.c.Ignored, path)
		case keyBranch:
			if v.Kind == Null {
				continue
			}
			if v.Kind != Object {
				return keyErr(path, v, "a %v, want an object", v.Kind)
			}
			if err := d.walk(path, v); err != nil {
				return err
			}
		case keyLeaf:
			if err := d.leaf(path, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// leaf decodes one leaf key into the config (or records it as ignored).
func (d *decoder) leaf(path string, v *Value) error {
	c := d.c
	if v.Kind == Null {
		// zenoh's optional fields take null as "unset": keep the default
		return nil
	}
	var err error
	switch path {
	case "id":
		c.ID, err = zidValue(path, v)
	case "mode":
		var s string
		if s, err = stringValue(path, v); err == nil {
			switch Mode(s) {
			case ModePeer, ModeClient, ModeRouter:
				c.Mode = Mode(s)
			default:
				err = keyErr(path, v, "%q is not peer, client or router", s)
			}
		}
	case "connect/endpoints":
		c.Connect.Endpoints, err = modeValue(path, v, endpointsValue)
	case "listen/endpoints":
		c.Listen.Endpoints, err = modeValue(path, v, endpointsValue)
	case "connect/timeout_ms":
		err = mergeModes(&c.Connect.TimeoutMS, path, v, timeoutValue)
	case "listen/timeout_ms":
		err = mergeModes(&c.Listen.TimeoutMS, path, v, timeoutValue)
	case "connect/exit_on_failure":
		err = mergeModes(&c.Connect.ExitOnFailure, path, v, boolValue)
	case "listen/exit_on_failure":
		err = mergeModes(&c.Listen.ExitOnFailure, path, v, boolValue)
	case "connect/retry/period_init_ms":
		c.Connect.Retry.PeriodInitMS, err = intValue(path, v, -1, math.MaxInt64)
	case "listen/retry/period_init_ms":
		c.Listen.Retry.PeriodInitMS, err = intValue(path, v, -1, math.MaxInt64)
	case "connect/retry/period_max_ms":
		c.Connect.Retry.PeriodMaxMS, err = intValue(path, v, -1, math.MaxInt64)
	case "listen/retry/period_max_ms":
		c.Listen.Retry.PeriodMaxMS, err = intValue(path, v, -1, math.MaxInt64)
	case "connect/retry/period_increase_factor":
		c.Connect.Retry.IncreaseFactor, err = factorValue(path, v)
	case "listen/retry/period_increase_factor":
		c.Listen.Retry.IncreaseFactor, err = factorValue(path, v)
	case "scouting/timeout":
		c.Scouting.TimeoutMS, err = uintValue(path, v, math.MaxUint64)
	case "scouting/delay":
		c.Scouting.DelayMS, err = uintValue(path, v, math.MaxUint64)
	case "scouting/multicast/enabled":
		c.Scouting.Multicast.Enabled, err = boolValue(path, v)
	case "scouting/multicast/address":
		c.Scouting.Multicast.Address, err = socketAddrValue(path, v)
	case "scouting/multicast/interface":
		c.Scouting.Multicast.Interface, err = stringValue(path, v)
	case "scouting/multicast/ttl":
		var n uint64
		n, err = uintValue(path, v, math.MaxUint32)
		c.Scouting.Multicast.TTL = uint32(n)
	case "scouting/multicast/listen":
		err = mergeModes(&c.Scouting.Multicast.Listen, path, v, boolValue)
	case "scouting/multicast/autoconnect":
		err = mergeModes(&c.Scouting.Multicast.Autoconnect, path, v, whatAmIValue)
	case "scouting/gossip/enabled":
		c.Scouting.Gossip.Enabled, err = boolValue(path, v)
	case "scouting/gossip/multihop":
		c.Scouting.Gossip.Multihop, err = boolValue(path, v)
	case "scouting/gossip/target":
		err = mergeModes(&c.Scouting.Gossip.Target, path, v, whatAmIValue)
	case "scouting/gossip/autoconnect":
		err = mergeModes(&c.Scouting.Gossip.Autoconnect, path, v, whatAmIValue)
	case "timestamping/enabled":
		err = mergeModes(&c.Timestamping.Enabled, path, v, boolValue)
	case "timestamping/drop_future_timestamp":
		c.Timestamping.DropFutureTimestamp, err = boolValue(path, v)
	case "queries_default_timeout":
		c.QueriesDefaultTimeoutMS, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/open_timeout":
		c.Transport.Unicast.OpenTimeoutMS, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/accept_timeout":
		c.Transport.Unicast.AcceptTimeoutMS, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/accept_pending":
		c.Transport.Unicast.AcceptPending, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/max_sessions":
		c.Transport.Unicast.MaxSessions, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/max_links":
		c.Transport.Unicast.MaxLinks, err = uintValue(path, v, math.MaxUint64)
	case "transport/unicast/lowlatency":
		c.Transport.Unicast.LowLatency, err = boolValue(path, v)
	case "transport/unicast/qos/enabled":
		c.Transport.Unicast.QoS, err = boolValue(path, v)
	case "transport/unicast/compression/enabled":
		c.Transport.Unicast.Compression, err = boolValue(path, v)
	case "transport/link/protocols":
		c.Transport.Link.Protocols, err = stringsValue(path, v)
	case "transport/link/tx/sequence_number_resolution":
		c.Transport.Link.TX.SequenceNumberResolution, err = bitsValue(path, v)
	case "transport/link/tx/lease":
		c.Transport.Link.TX.LeaseMS, err = uintValue(path, v, math.MaxUint64)
		if err == nil && c.Transport.Link.TX.LeaseMS == 0 {
			err = keyErr(path, v, "a lease of 0 ms")
		}
	case "transport/link/tx/keep_alive":
		c.Transport.Link.TX.KeepAlive, err = uintValue(path, v, math.MaxUint64)
		if err == nil && c.Transport.Link.TX.KeepAlive == 0 {
			err = keyErr(path, v, "0 keep-alives per lease")
		}
	case "transport/link/tx/batch_size":
		var n uint64
		n, err = uintValue(path, v, math.MaxUint16)
		if err == nil && n < wire.MinBatchSize {
			err = keyErr(path, v, "a batch size below %d", wire.MinBatchSize)
		}
		c.Transport.Link.TX.BatchSize = uint16(n)
	case "transport/link/rx/buffer_size":
		c.Transport.Link.RX.BufferSize, err = uintValue(path, v, math.MaxUint64)
	case "transport/link/rx/max_message_size":
		c.Transport.Link.RX.MaxMessageSize, err = uintValue(path, v, math.MaxUint64)
	default:
		c.Ignored = append(c.Ignored, path)
	}
	return err
}

func stringValue(path string, v *Value) (string, error) {
	if v.Kind != String {
		return "", keyErr(path, v, "a %v, want a string", v.Kind)
	}
	return v.Str, nil
}

func boolValue(path string, v *Value) (bool, error) {
	if v.Kind != Bool {
		return false, keyErr(path, v, "a %v, want true or false", v.Kind)
	}
	return v.Bool, nil
}

func uintValue(path string, v *Value, max uint64) (uint64, error) {
	n, err := v.Uint()
	if err != nil {
		return 0, keyErr(path, v, "%v, want an integer in 0..%d", err, max)
	}
	if n > max {
		return 0, keyErr(path, v, "%d, want an integer in 0..%d", n, max)
	}
	return n, nil
}

func intValue(path string, v *Value, min, max int64) (int64, error) {
	n, err := v.Int()
	if err != nil || n < min || n > max {
		if err == nil {
			err = fmt.Errorf("%d", n)
		}
		return 0, keyErr(path, v, "%v, want an integer in %d..%d", err, min, max)
	}
	return n, nil
}

func timeoutValue(path string, v *Value) (int64, error) { return intValue(path, v, -1, math.MaxInt64) }

func factorValue(path string, v *Value) (float64, error) {
	f, err := v.Float()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
		return 0, keyErr(path, v, "want a number of at least 1")
	}
	return f, nil
}

func stringsValue(path string, v *Value) ([]string, error) {
	if v.Kind != Array {
		return nil, keyErr(path, v, "a %v, want a list of strings", v.Kind)
	}
	out := make([]string, 0, len(v.Arr))
	for _, e := range v.Arr {
		s, err := stringValue(path, e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func endpointsValue(path string, v *Value) ([]Endpoint, error) {
	ss, err := stringsValue(path, v)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(ss))
	for i, s := range ss {
		e, err := ParseEndpoint(s)
		if err != nil {
			return nil, keyErr(path, v.Arr[i], "%v", err)
		}
		out = append(out, e)
	}
	return out, nil
}

// whatAmIValue reads a WhatAmIMatcher: a list of "router", "peer",
// "client", or one string of them joined with '|'.
func whatAmIValue(path string, v *Value) ([]string, error) {
	var ss []string
	if v.Kind == String {
		if v.Str != "" {
			ss = strings.Split(v.Str, "|")
		}
	} else {
		var err error
		if ss, err = stringsValue(path, v); err != nil {
			return nil, err
		}
	}
	for _, s := range ss {
		switch Mode(s) {
		case ModeRouter, ModePeer, ModeClient:
		default:
			return nil, keyErr(path, v, "%q is not router, peer or client", s)
		}
	}
	if ss == nil {
		ss = []string{}
	}
	return ss, nil
}

func bitsValue(path string, v *Value) (uint8, error) {
	s, err := stringValue(path, v)
	if err != nil {
		return 0, err
	}
	switch s {
	case "8bit":
		return 8, nil
	case "16bit":
		return 16, nil
	case "32bit":
		return 32, nil
	case "64bit":
		return 64, nil
	}
	return 0, keyErr(path, v, "%q is not 8bit, 16bit, 32bit or 64bit", s)
}

func socketAddrValue(path string, v *Value) (string, error) {
	s, err := stringValue(path, v)
	if err != nil {
		return "", err
	}
	if _, err := netip.ParseAddrPort(s); err != nil {
		return "", keyErr(path, v, "%q is not an ip:port address", s)
	}
	return s, nil
}

func zidValue(path string, v *Value) (string, error) {
	s, err := stringValue(path, v)
	if err != nil {
		return "", err
	}
	if s == "" || len(s) > 32 || s[0] == '0' || strings.Trim(s, "0123456789abcdef") != "" {
		return "", keyErr(path, v, "%q: want 1 to 32 lowercase hex digits without leading zeros", s)
	}
	return s, nil
}

// mergeModes reads a mode-dependent value into dst: the modes it names
// replace dst's, the others keep theirs (zenoh falls back on its default
// per mode for a mode the value leaves out).
func mergeModes[T any](dst *ModeValue[T], path string, v *Value, one func(string, *Value) (T, error)) error {
	mv, err := modeValue(path, v, one)
	if err != nil {
		return err
	}
	if mv.Router != nil {
		dst.Router = mv.Router
	}
	if mv.Peer != nil {
		dst.Peer = mv.Peer
	}
	if mv.Client != nil {
		dst.Client = mv.Client
	}
	return nil
}

// modeValue reads a mode-dependent value: a plain value (for every mode)
// or an object with router, peer and client members (any subset).
func modeValue[T any](path string, v *Value, one func(string, *Value) (T, error)) (ModeValue[T], error) {
	var mv ModeValue[T]
	if v.Kind == Object {
		for _, m := range v.Obj {
			if m.Value.Kind == Null {
				continue
			}
			x, err := one(path+"/"+m.Key, m.Value)
			if err != nil {
				return mv, err
			}
			switch Mode(m.Key) {
			case ModeRouter:
				mv.Router = &x
			case ModePeer:
				mv.Peer = &x
			case ModeClient:
				mv.Client = &x
			default:
				e := keyErr(path+"/"+m.Key, m.Value, "%v: a mode-dependent value has router, peer and client only", ErrUnknownKey)
				e.Line, e.Col, e.err = m.Line, m.Col, ErrUnknownKey
				return mv, e
			}
		}
		return mv, nil
	}
	x, err := one(path, v)
	if err != nil {
		return mv, err
	}
	return Unique(x), nil
}
