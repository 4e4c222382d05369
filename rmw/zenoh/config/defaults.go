package config

import "fmt"

// Builtin returns zenoh's built-in defaults (commons/zenoh-config's
// defaults, zenoh 1.7): what a key left out of a configuration file
// takes. Two defaults differ from zenoh's, for this project's network
// rule (bind loopback, never multicast unless told):
//
//	key                          zenoh                                      here
//	listen/endpoints             router tcp/[::]:7447, peer tcp/[::]:0      router tcp/127.0.0.1:7447, peer tcp/127.0.0.1:0
//	scouting/multicast/enabled   true                                       false
//
// Neither applies with rmw_zenoh's default configuration (Default), which
// sets both keys; they apply to a user's file that leaves them out.
func Builtin() *Config {
	c := &Config{Mode: ModePeer}
	c.Connect.Endpoints = Unique([]Endpoint{})
	c.Connect.TimeoutMS = modes[int64](-1, -1, 0)
	c.Connect.ExitOnFailure = modes(false, false, true)
	c.Connect.Retry = Retry{PeriodInitMS: 1000, PeriodMaxMS: 4000, IncreaseFactor: 2}
	rt, pe := []Endpoint{mustEndpoint("tcp/127.0.0.1:7447")}, []Endpoint{mustEndpoint("tcp/127.0.0.1:0")}
	c.Listen.Endpoints = ModeValue[[]Endpoint]{Router: &rt, Peer: &pe}
	c.Listen.TimeoutMS = Unique[int64](0)
	c.Listen.ExitOnFailure = Unique(true)
	c.Listen.Retry = Retry{PeriodInitMS: 1000, PeriodMaxMS: 4000, IncreaseFactor: 2}
	c.Scouting.TimeoutMS = 3000
	c.Scouting.DelayMS = 500
	c.Scouting.Multicast.Enabled = false
	c.Scouting.Multicast.Address = "224.0.0.224:7446"
	c.Scouting.Multicast.Interface = "auto"
	c.Scouting.Multicast.TTL = 1
	c.Scouting.Multicast.Listen = modes(true, true, false)
	c.Scouting.Multicast.Autoconnect = modes([]string{}, []string{"router", "peer"}, []string{"router"})
	c.Scouting.Gossip.Enabled = true
	c.Scouting.Gossip.Multihop = false
	c.Scouting.Gossip.Target = modes([]string{"router", "peer"}, []string{"router", "peer"}, []string{})
	c.Scouting.Gossip.Autoconnect = modes([]string{}, []string{"router", "peer"}, []string{})
	c.Timestamping.Enabled = modes(true, false, false)
	c.QueriesDefaultTimeoutMS = 10000
	u := &c.Transport.Unicast
	u.OpenTimeoutMS, u.AcceptTimeoutMS, u.AcceptPending, u.MaxSessions, u.MaxLinks = 10000, 10000, 100, 1000, 1
	u.QoS = true
	tx := &c.Transport.Link.TX
	tx.SequenceNumberResolution, tx.LeaseMS, tx.KeepAlive, tx.BatchSize = 32, 10000, 4, 65535
	c.Transport.Link.RX.BufferSize, c.Transport.Link.RX.MaxMessageSize = 65535, 1<<30
	return c
}

func modes[T any](router, peer, client T) ModeValue[T] { return ModeValue[T]{&router, &peer, &client} }

func mustEndpoint(s string) Endpoint {
	e, err := ParseEndpoint(s)
	if err != nil {
		panic(err)
	}
	return e
}

// sessionJSON5 holds the values of rmw_zenoh's
// DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5 (identical in every release from
// Humble 0.1.x to Rolling 0.12) that differ from zenoh's built-in defaults
// or that matter here; the keys it sets to zenoh's defaults are left out.
const sessionJSON5 = `{
  mode: "peer",
  connect: { endpoints: ["tcp/localhost:7447"] },
  listen: { endpoints: ["tcp/localhost:0"] },
  scouting: {
    multicast: { enabled: false, listen: true },
    gossip: {
      enabled: true,
      target: { router: ["router", "peer"], peer: ["router"] },
      autoconnect: { router: [], peer: ["router", "peer"] },
    },
  },
  timestamping: { enabled: { router: true, peer: true, client: true } },
  queries_default_timeout: 600000,
  transport: {
    unicast: { open_timeout: 60000, accept_timeout: 60000, accept_pending: 10000, max_sessions: 10000 },
    link: { tx: { lease: 60000, keep_alive: 2, batch_size: 65535 } },
  },
}`

// routerJSON5 holds DEFAULT_RMW_ZENOH_ROUTER_CONFIG.json5's values the same
// way, with one change: rmw_zenohd listens on tcp/[::]:7447 (every
// interface); this project's router listens on loopback only unless told
// otherwise.
const routerJSON5 = `{
  mode: "router",
  connect: { endpoints: [] },
  listen: { endpoints: ["tcp/127.0.0.1:7447"] },
  scouting: {
    multicast: { enabled: false, listen: true },
    gossip: {
      enabled: true,
      target: { router: ["router", "peer"], peer: ["router"] },
      autoconnect: { router: [], peer: ["router", "peer"] },
    },
  },
  timestamping: { enabled: { router: true, peer: true, client: true } },
  queries_default_timeout: 600000,
  transport: {
    unicast: { open_timeout: 60000, accept_timeout: 60000, accept_pending: 10000, max_sessions: 10000 },
    link: { tx: { lease: 60000, keep_alive: 2, batch_size: 65535 } },
  },
}`

// Default returns rmw_zenoh's default session configuration: peer mode,
// connect tcp/localhost:7447 (the router), listen tcp/localhost:0,
// multicast scouting off, gossip scouting on, timestamping on, queries
// time out after 600 s, lease 60 s with 2 keep-alives per lease.
func Default() *Config { return mustDecode(sessionJSON5) }

// DefaultRouter returns the router configuration of `nros zenohd`:
// rmw_zenohd's, listening on tcp/127.0.0.1:7447 instead of tcp/[::]:7447.
func DefaultRouter() *Config { return mustDecode(routerJSON5) }

func mustDecode(s string) *Config {
	tree, err := ParseJSON5([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("config: built-in JSON5: %v", err))
	}
	c, err := decode(tree)
	if err != nil {
		panic(fmt.Sprintf("config: built-in JSON5: %v", err))
	}
	return c
}
