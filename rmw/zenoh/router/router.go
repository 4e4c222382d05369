package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/hlc"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// DefaultListen is where a router listens when told nothing: zenoh's port
// on loopback (rmw_zenohd listens on every interface; this project binds
// loopback unless the user names another endpoint).
const DefaultListen = "tcp/127.0.0.1:7447"

// DefaultQueryTimeout bounds a routed query whose REQUEST carries no
// timeout (zenoh's queries_default_timeout).
const DefaultQueryTimeout = 10 * time.Second

// Config configures a Router.
type Config struct {
	// ZID is the router's id (zero: random).
	ZID wire.ZenohID
	// Listen are the endpoints to listen on (nil: DefaultListen; empty
	// non-nil: none, for routers reached only through Attach).
	Listen []string
	// Connect are endpoints of other zenoh nodes the router keeps a link
	// to (reconnecting with backoff).
	Connect []string
	// Lease, BatchSize, NoQoS and HandshakeTimeout are as in
	// session.Config.
	Lease            time.Duration
	BatchSize        uint16
	NoQoS            bool
	HandshakeTimeout time.Duration
	// QueryTimeout bounds a routed query that names no timeout
	// (DefaultQueryTimeout).
	QueryTimeout time.Duration
	// Timestamping makes the router stamp the puts that come without a
	// timestamp with its hybrid logical clock, and check the others, as
	// zenoh routers do with timestamping/enabled (rmw_zenohd's
	// configuration turns it on). A put stamped more than 500 ms ahead of
	// the clock is restamped, or dropped with DropFutureTimestamp.
	Timestamping        bool
	DropFutureTimestamp bool
	// Clock times the router's sessions and routed queries (nil:
	// session.SystemClock).
	Clock session.Clock
	// Logger, when set, gets faces coming and going (info) and the
	// session's diagnostics (debug).
	Logger *slog.Logger
	// Trace is as session.Config.Trace.
	Trace func(remote link.Endpoint, rx bool, batch []byte)
}

// FromConfig turns a zenoh configuration (rmw/zenoh/config, as
// config.Router reads it for rmw_zenohd) into a router Config. The
// configuration must be in router mode.
func FromConfig(c *config.Config) (Config, error) {
	if c.Mode != config.ModeRouter {
		return Config{}, &config.Error{Key: "mode", Msg: fmt.Sprintf("%q: nros zenohd runs in router mode only", c.Mode)}
	}
	var rc Config
	if c.ID != "" {
		zid, err := wire.ParseZenohID(c.ID)
		if err != nil {
			return Config{}, &config.Error{Key: "id", Msg: err.Error()}
		}
		rc.ZID = zid
	}
	rc.Listen = []string{}
	for _, e := range c.ListenEndpoints() {
		rc.Listen = append(rc.Listen, e.String())
	}
	for _, e := range c.ConnectEndpoints() {
		rc.Connect = append(rc.Connect, e.String())
	}
	rc.Lease = c.Lease()
	rc.BatchSize = c.Transport.Link.TX.BatchSize
	rc.NoQoS = !c.Transport.Unicast.QoS
	if ms := c.Transport.Unicast.AcceptTimeoutMS; ms > 0 {
		rc.HandshakeTimeout = time.Duration(ms) * time.Millisecond
	}
	rc.QueryTimeout = c.QueryTimeout()
	rc.Timestamping = c.TimestampingEnabled()
	rc.DropFutureTimestamp = c.Timestamping.DropFutureTimestamp
	return rc, nil
}

// Router is a zenoh router: it accepts clients and peers (and connects
// where it is told) and routes between them as zenoh 1.x routers do. See
// the package documentation.
type Router struct {
	s     *session.Session
	t     *tables
	log   *slog.Logger
	stats Stats
}

// Open starts a router: it listens (and connects) as cfg says and returns
// at once.
func Open(cfg Config) (*Router, error) {
	if cfg.Listen == nil {
		cfg.Listen = []string{DefaultListen}
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	r := &Router{log: cfg.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.t = newTables(cfg.QueryTimeout, &r.stats)
	if cfg.Clock != nil {
		r.t.clock = cfg.Clock
	}
	if cfg.ZID.IsZero() {
		cfg.ZID = wire.RandomZenohID()
	}
	if cfg.Timestamping {
		r.t.hlc = hlc.New(cfg.ZID, nil, 0)
		r.t.dropFuture = cfg.DropFutureTimestamp
	}
	sc := session.Config{ZID: cfg.ZID, Mode: wire.Router, Listen: cfg.Listen, Connect: cfg.Connect,
		Lease: cfg.Lease, BatchSize: cfg.BatchSize, NoQoS: cfg.NoQoS, HandshakeTimeout: cfg.HandshakeTimeout,
		Clock: cfg.Clock, Trace: cfg.Trace, Logf: func(format string, args ...any) { r.log.Debug(fmt.Sprintf(format, args...)) }}
	s, err := session.Open(sc, &handler{r: r})
	if err != nil {
		return nil, err
	}
	r.s = s
	return r, nil
}

// ZID is the router's id.
func (r *Router) ZID() wire.ZenohID { return r.s.ZID() }

// Listeners returns the endpoints the router listens on (ports chosen).
func (r *Router) Listeners() []link.Endpoint { return r.s.Listeners() }

// Faces returns the faces up now.
func (r *Router) Faces() []*session.Face { return r.s.Faces() }

// Stats are the router's routing counters.
func (r *Router) Stats() *Stats { return &r.stats }

// SessionStats are the drop counters of the router's links and
// declarations.
func (r *Router) SessionStats() *session.Stats { return &r.s.Stats }

// Attach runs the handshake on a link opened elsewhere (an in-memory pipe)
// and adds its face.
func (r *Router) Attach(l link.Link, initiator bool) (*session.Face, error) {
	return r.s.Attach(l, initiator)
}

// Connect opens one link to endpoint now (no retry).
func (r *Router) Connect(ctx context.Context, endpoint string) (*session.Face, error) {
	return r.s.Connect(ctx, endpoint)
}

// Close closes every face (CLOSE sent) and listener; nothing is routed
// after it returns.
func (r *Router) Close() error {
	err := r.s.Close()
	r.t.close()
	return err
}

// handler is the session's Handler: it hands what faces send to the
// routing tables.
type handler struct {
	r *Router
}

var _ session.Routing = (*handler)(nil)

func (h *handler) FaceUp(f *session.Face) {
	h.r.t.faceUp(f.ID, f.ZID, f.WhatAmI, f, f.Params.RequestID)
	h.r.log.Info("face up", "face", f.ID, "zid", f.ZID.String(), "whatami", f.WhatAmI.String(), "remote", f.Remote.String())
}

func (h *handler) FaceDown(f *session.Face, err error) {
	h.r.t.faceDown(f.ID)
	reason := "closed"
	if err != nil {
		reason = err.Error()
	}
	var ce *session.CloseError
	if errors.As(err, &ce) && ce.Received {
		reason = "closed by the remote"
	}
	h.r.log.Info("face down", "face", f.ID, "zid", f.ZID.String(), "whatami", f.WhatAmI.String(), "reason", reason)
}

func (h *handler) Push(f *session.Face, key string, m *wire.Push, reliable bool) {
	h.r.t.push(f.ID, key, m, reliable)
}

func (h *handler) Request(f *session.Face, key string, m *wire.Request) { h.r.t.request(f.ID, key, m) }

func (h *handler) Response(uint32, *session.Face, string, *wire.Response) {}

func (h *handler) ResponseFinal(uint32) {}

func (h *handler) Declared(f *session.Face, d session.Decl) {
	if f != nil {
		h.r.t.declared(f.ID, d)
	}
}

func (h *handler) InterestFinal(uint32) {}

func (h *handler) Interest(f *session.Face, key string, m *wire.Interest) {
	h.r.t.interest(f.ID, key, m)
}

func (h *handler) RoutedResponse(f *session.Face, key string, m *wire.Response) {
	h.r.t.response(f.ID, key, m)
}

func (h *handler) RoutedResponseFinal(f *session.Face, rid uint32) { h.r.t.responseFinal(f.ID, rid) }
