// Package rtps is the DDSI-RTPS transport of nros: an rmw.Transport whose
// publishers and subscriptions talk to ROS 2 nodes running Cyclone DDS or
// Fast DDS (rmw_cyclonedds_cpp, rmw_fastrtps_cpp) over UDP.
//
// One Transport is one DDS participant. It binds the metatraffic and user
// unicast ports of the lowest free participant id of its domain, announces
// itself by SPDP (package discovery), announces its endpoints by SEDP,
// matches them with remote ones by topic name, type name and the DDS QoS
// rules, and moves samples with the writer and reader state machines of
// package endpoint. ROS names are mapped as rmw does: topic "/chatter" is
// "rt/chatter", type "std_msgs/msg/String" is "std_msgs::msg::dds_::String_";
// user endpoints are keyless (entity kinds 0x03 and 0x04). The participant
// announces USER_DATA "enclave=/;", publishes its nodes and their
// endpoints on ros_discovery_info (Gid layout: distro.go) and reads
// the peers' ros_discovery_info: Topics, Endpoints and Nodes answer graph
// queries over local and remote endpoints.
//
// A writer and a reader match when their DDS topic names and type names
// are equal and discovery.Incompatible finds no conflicting QoS policy; a
// refused pair raises rmw.EventIncompatibleQoS on the local endpoint (both
// endpoints when both are local), with the policy name, once per pair, and
// is counted in Stats.IncompatibleQoS.
//
// # Goroutines
//
// A Transport runs one receive goroutine per socket and one timer goroutine
// (SPDP, leases, heartbeats, repairs). All protocol state is guarded by one
// mutex, which is never held while user code runs. Remote samples (copied
// out of the receive buffer) and events are queued under the mutex and
// handed out after it is released, one goroutine at a time, in queue order:
// samples of one writer arrive in order, after the match event. Samples of
// a publisher of the same Transport are handed over directly on the
// publishing goroutine, without a socket. Deliver and OnEvent functions may
// call the Transport (publish, create or close endpoints), but should not
// block: they hold up the receive goroutine that runs them. Close stops
// every goroutine and waits for them.
//
// # Close and callbacks
//
// Callbacks of one Transport run one at a time. Subscription.Close,
// Publisher.Close and Transport.Close mark what they close before they
// return, so no callback of it starts afterwards, and wait for the
// callback of it that is running, if any (rmw.Transport states the
// contract). Called on a goroutine that is itself running a deliver or
// OnEvent function of an rtps Transport (this one or another: the
// transports record which goroutines are handing out callbacks, with
// internal/goid), Close does not wait for the running
// callback, which may be its caller, and Transport.Close does not wait
// for the transport's goroutines either; it still guarantees that no new
// callback of what it closed starts after it returns.
//
// # Security
//
// With Config.Security set (SROS2 artifacts: SecurityFromEnv) the
// participant runs the DDS Security builtin plugins of package
// security/...: authentication of every remote participant before any
// match, access control of local and remote endpoints, and the protection
// governance asks for on the wire; secure.go has the details and
// Stats.Security the counters.
//
// # Safety
//
// In the LOCALHOST range (the default) sockets bind 127.0.0.1 (0.0.0.0 only
// if a static peer on another host is configured) and every destination
// that is not a loopback address, a static peer or the SPDP group on lo is
// dropped before sending (Stats.Filtered). Malformed
// datagrams are dropped and counted, never a panic.
package rtps

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/nros-go/nros/internal/bufpool"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nros-go/nros/internal/goid"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Vendor is the RTPS vendor id nros puts in message headers, PID_VENDORID
// and the first two bytes of its GUID prefixes.
var Vendor = wire.VendorID{0x01, 0xff}

// ErrClosed is returned by operations on a closed Transport or endpoint.
var ErrClosed = errors.New("rtps: closed")

// DiscoveryTopic and DiscoveryType name the ROS graph topic.
const (
	DiscoveryTopic = "ros_discovery_info"
	DiscoveryType  = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
)

// maxBlocking is how long Publish waits for room in a KEEP_ALL history
// (Fast DDS's default max_blocking_time).
const maxBlocking = 100 * time.Millisecond

// Stats are counters of a Transport.
type Stats struct {
	Datagrams      uint64 // datagrams received
	BadDatagrams   uint64 // datagrams that were not RTPS or had a bad header
	BadSubmessages uint64 // datagrams whose walk stopped at a malformed submessage
	OwnDatagrams   uint64 // our own datagrams looped back (multicast)
	Sent           uint64 // datagrams sent (one per destination)
	SendErrors     uint64
	// Filtered counts destinations refused by the discovery range
	// (non-loopback addresses in LOCALHOST).
	Filtered uint64
	// IncompatibleQoS counts (local, remote or local) endpoint pairs on
	// one topic refused by the QoS rules or type names, each pair once.
	IncompatibleQoS uint64
	// BadGraphSamples counts ros_discovery_info samples that did not
	// decode or spoke for another participant.
	BadGraphSamples uint64
	GraphSamples    uint64 // ros_discovery_info samples received from peers
	Publishers      int    // open user publishers
	Subscriptions   int    // open user subscriptions
	Published       uint64
	Delivered       uint64 // samples queued for deliver (remote and local)
	// DroppedSamples counts remote samples dropped because 65536
	// callbacks were already waiting (a deliver function blocked).
	DroppedSamples uint64
	// BadServiceSamples counts service requests and responses dropped
	// because they did not decode in their mapping.
	BadServiceSamples uint64
	// DroppedResponses counts service responses a server dropped: no
	// response reader at all was matched 5 s after SendResponse, or too
	// many responses were waiting.
	DroppedResponses uint64
	// UnmatchedResponses counts service responses sent after 5 s to the
	// response readers that were matched, none of them known to be the
	// client's (as Cyclone and Fast DDS send after their wait).
	UnmatchedResponses uint64
	Discovery          discovery.Stats
	// Guard counts what hostile or silent peers made the user endpoints
	// refuse or stop (guard.go).
	Guard GuardStats
	// Security counts authentication and protection (secure
	// participants only).
	Security SecurityStats
}

// Transport is one RTPS participant implementing rmw.Transport.
type Transport struct {
	cfg      Config
	sec      security           // nil: not secure (secure.go, security_link.go)
	secRS    wire.ReceiverState // secHandleSubmessageLocked's scratch
	secSM    wire.Submessage
	prefix   wire.GuidPrefix
	ports    udp.Ports
	id       int
	meta     udp.Conn
	user     udp.Conn
	mc       udp.Conn
	peers    []netip.Addr
	bindAddr netip.Addr

	mu        sync.Mutex
	ackCond   *sync.Cond
	closed    bool
	disc      *discovery.Discovery
	pubs      map[wire.EntityID]*Publisher
	subs      map[wire.EntityID]*Subscription
	remW      map[wire.GUID]*discovery.Endpoint
	remR      map[wire.GUID]*discovery.Endpoint
	route     map[wire.GUID][]*Subscription // remote writer -> matched local readers
	entitySeq uint32
	callbacks []callback // events and samples to hand out, in order
	spare     []callback // the last handed-out batch, for reuse
	st        Stats
	acks      discovery.AckCounts
	// stashedHB keeps the latest HEARTBEAT of remote writers we have not
	// matched (yet): see stashHeartbeatLocked.
	stashedHB map[wire.GUID]stashedHB
	// remoteGraph is the latest ros_discovery_info of each remote
	// participant.
	remoteGraph map[wire.GuidPrefix]*rmw_dds_common.ParticipantEntitiesInfo
	graph       *Publisher
	graphDirty  bool
	gidLearn    bool            // adopt the first peer's Gid layout (distro.go)
	graphSig    rmw.GraphSignal // closed at the next graph change (graphwatch.go)
	// nextUserData is the USER_DATA of the next endpoint created (service
	// endpoints announce clientid/serviceid), consumed by it.
	nextUserData []byte
	// nextService says the next endpoint created is a service's (its
	// writer keeps a deeper history), consumed by it.
	nextService bool
	// scratch is where service samples are encoded for the wire (guarded
	// by mu; service.go).
	scratch []byte

	draining bool // an event dispatch is running (guarded by mu)

	// running is the gate of the endpoint whose callback is being handed
	// out right now (one at a time: see dispatch), or nil. Close waits on
	// cbDone (with mu) until it no longer names the endpoint it closes;
	// cbWaiters says whether anyone waits.
	running   atomic.Pointer[atomic.Bool]
	cbWaiters atomic.Int32
	cbDone    *sync.Cond

	sleepUntil int64 // the deadline the timer loop sleeps for (guarded by mu)
	kickNeeded bool  // wake the timer loop at the next finishLocked

	wake chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

var _ rmw.Transport = (*Transport)(nil)

// New creates the participant: it binds its sockets, starts its goroutines
// and begins announcing itself.
func New(cfg Config) (*Transport, error) {
	learnGid := cfg.GidSize == 0 // distro.go
	cfg.setDefaults()
	ports, err := udp.PortsFor(cfg.DomainID)
	if err != nil {
		return nil, err
	}
	t := &Transport{
		cfg:       cfg,
		ports:     ports,
		pubs:      map[wire.EntityID]*Publisher{},
		subs:      map[wire.EntityID]*Subscription{},
		remW:      map[wire.GUID]*discovery.Endpoint{},
		remR:      map[wire.GUID]*discovery.Endpoint{},
		route:     map[wire.GUID][]*Subscription{},
		stashedHB: map[wire.GUID]stashedHB{},
		gidLearn:  learnGid,

		remoteGraph: map[wire.GuidPrefix]*rmw_dds_common.ParticipantEntitiesInfo{},
		wake:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	t.ackCond = sync.NewCond(&t.mu)
	t.cbDone = sync.NewCond(&t.mu)
	copy(t.prefix[:2], Vendor[:])
	if _, err := rand.Read(t.prefix[2:]); err != nil {
		return nil, err
	}
	if cfg.Security != nil {
		// The GUID prefix derives from the certificate (secure.go).
		if newSecurity == nil {
			return nil, ErrSecurityNotLinked
		}
		if t.sec, err = newSecurity(t, cfg.Security, time.Unix(0, cfg.WallNow())); err != nil {
			return nil, err
		}
	}
	if len(cfg.StaticPeers) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t.peers, err = udp.ResolvePeers(ctx, cfg.StaticPeers)
		cancel()
		for _, e := range unjoin(err) {
			cfg.Warnf("rtps: ROS_STATIC_PEERS entry ignored: %v", e)
		}
	}
	// LOCALHOST and OFF bind 127.0.0.1, unless the user named a static
	// peer on another host: a socket bound to 127.0.0.1 cannot reach it.
	t.bindAddr = udp.Loopback
	if cfg.Range == udp.RangeSubnet {
		t.bindAddr = netip.IPv4Unspecified()
	}
	for _, p := range t.peers {
		if !p.IsLoopback() {
			t.bindAddr = netip.IPv4Unspecified()
		}
	}
	nw := cfg.Network
	_, isSystem := nw.(udp.System)
	if nw == nil {
		nw = udp.System{Bind: t.bindAddr}
		isSystem = true
	}
	t.meta, t.user, t.id, err = udp.ListenParticipant(nw, ports, cfg.MaxParticipantID)
	if err != nil {
		// Every participant id is taken: bind any free ports, as Cyclone
		// does without a participant index. Peers learn them from our
		// SPDP (multicast, or our probes of their ports).
		if t.meta, t.user, err = listenAnyPorts(nw, err); err != nil {
			return nil, err
		}
		t.id = -1
	}
	var mcIfaces []string
	if cfg.Multicast == MulticastAuto {
		switch {
		case cfg.Range == udp.RangeOff:
		case !isSystem:
			mcIfaces = []string{"lo"}
		case cfg.Range == udp.RangeLocalhost:
			if udp.InterfaceHasMulticast("lo") {
				mcIfaces = []string{"lo"}
			}
		case cfg.Range == udp.RangeSubnet:
			mcIfaces = udp.MulticastInterfaces()
		}
	}
	if len(mcIfaces) > 0 {
		t.mc, err = nw.ListenMulticast(udp.SPDPGroup, ports.SPDPMulticast(), mcIfaces)
		if err != nil {
			cfg.Logf("rtps: no SPDP multicast: %v", err)
			t.mc = nil
		}
	}
	if err := t.startDiscovery(isSystem); err != nil {
		t.closeSockets()
		return nil, err
	}
	if err := t.startGraph(); err != nil {
		t.closeSockets()
		return nil, err
	}
	for _, c := range []udp.Conn{t.meta, t.user, t.mc} {
		if c != nil {
			t.wg.Add(1)
			go t.recvLoop(c, nil)
		}
	}
	t.wg.Add(1)
	go t.timerLoop()
	return t, nil
}

// unjoin lists the errors of an errors.Join (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// advertised returns the unicast addresses the participant announces.
func (t *Transport) advertised(isSystem bool) []netip.Addr {
	if t.bindAddr.IsLoopback() || !isSystem {
		return []netip.Addr{t.meta.LocalAddr().Addr()}
	}
	var out []netip.Addr
	for _, a := range udp.InterfaceAddrs4(udp.MulticastInterfaces()) {
		if !a.IsLoopback() && len(out) < 4 {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = append(out, udp.Loopback)
	}
	return out
}

func (t *Transport) startDiscovery(isSystem bool) error {
	var meta, user, mcast, targets, probes []wire.Locator
	for _, a := range t.advertised(isSystem) {
		meta = append(meta, wire.LocatorFromAddrPort(netip.AddrPortFrom(a, t.meta.LocalAddr().Port())))
		user = append(user, wire.LocatorFromAddrPort(netip.AddrPortFrom(a, t.user.LocalAddr().Port())))
	}
	if t.mc != nil {
		mcast = []wire.Locator{wire.LocatorFromAddrPort(netip.AddrPortFrom(udp.SPDPGroup, t.ports.SPDPMulticast()))}
		targets = append(targets, mcast...)
	}
	probe := func(a netip.Addr) {
		for j := 0; j < t.cfg.ProbeParticipants; j++ {
			if a.IsLoopback() && j == t.id {
				continue
			}
			l := wire.LocatorFromAddrPort(netip.AddrPortFrom(a, t.ports.MetaUnicast(j)))
			if !slices.Contains(probes, l) {
				probes = append(probes, l)
			}
		}
	}
	if t.cfg.Range == udp.RangeLocalhost {
		probe(udp.Loopback)
	}
	for _, p := range t.peers {
		probe(p)
	}
	d, err := discovery.New(discovery.Config{
		Prefix:         t.prefix,
		Vendor:         Vendor,
		DomainID:       uint32(t.cfg.DomainID),
		MetaUnicast:    meta,
		DefaultUnicast: user,
		MetaMulticast:  mcast,
		Targets:        targets,
		ProbeTargets:   probes,
		UserData:       []byte("enclave=" + t.cfg.Enclave + ";"),
		LeaseDuration:  t.cfg.LeaseDuration,
		AnnouncePeriod: t.cfg.AnnouncePeriod,
		Output:         endpoint.OutputFunc(t.send),
		Listener:       (*listener)(t),
		WallNow:        t.cfg.WallNow,
		Secure:         t.secureDiscovery(),
	})
	if err != nil {
		return err
	}
	t.disc = d
	return nil
}

// listenAnyPorts binds two free ports, or returns idsErr (why no
// participant id was free) with what failed.
func listenAnyPorts(nw udp.Network, idsErr error) (meta, user udp.Conn, err error) {
	if meta, err = nw.ListenUnicast(0); err != nil {
		return nil, nil, fmt.Errorf("%w; any port: %w", idsErr, err)
	}
	if user, err = nw.ListenUnicast(0); err != nil {
		meta.Close()
		return nil, nil, fmt.Errorf("%w; any port: %w", idsErr, err)
	}
	return meta, user, nil
}

// ParticipantID returns the participant index whose ports were bound, or
// -1 when every index was taken and the ports are any free ones.
func (t *Transport) ParticipantID() int { return t.id }

// GuidPrefix returns the participant's GUID prefix.
func (t *Transport) GuidPrefix() wire.GuidPrefix { return t.prefix }

// MetaAddr and UserAddr return the bound unicast addresses.
func (t *Transport) MetaAddr() netip.AddrPort { return t.meta.LocalAddr() }

// UserAddr returns the bound user-traffic unicast address.
func (t *Transport) UserAddr() netip.AddrPort { return t.user.LocalAddr() }

// allowed reports whether the discovery range lets us send to a.
func (t *Transport) allowed(a netip.Addr) bool {
	if a.IsMulticast() {
		return t.mc != nil && a == udp.SPDPGroup
	}
	if t.cfg.Range == udp.RangeSubnet {
		return true
	}
	if a.IsLoopback() {
		return true
	}
	return slices.Contains(t.peers, a)
}

// send is the endpoint.Output of every writer, reader and of discovery.
// It runs with t.mu held.
func (t *Transport) send(to []wire.Locator, b []byte) {
	if t.sec != nil {
		if b = t.sec.protect(b); b == nil {
			return
		}
	}
	t.sendRaw(to, b)
}

// sendRaw sends b as it is (t.mu held).
func (t *Transport) sendRaw(to []wire.Locator, b []byte) {
	for _, l := range to {
		ap, ok := l.AddrPort()
		if !ok || !ap.Addr().Is4() || ap.Port() == 0 {
			t.st.Filtered++
			continue
		}
		if !t.allowed(ap.Addr()) {
			t.st.Filtered++
			continue
		}
		c := t.meta
		if ap.Addr().IsMulticast() {
			c = t.mc
		}
		if err := c.WriteTo(b, ap); err != nil {
			t.st.SendErrors++
		} else {
			t.st.Sent++
		}
	}
}

// touchLocked notes that some endpoint's next deadline is d; the timer
// loop is woken only if that is earlier than what it sleeps for.
func (t *Transport) touchLocked(d int64) {
	if d < t.sleepUntil {
		t.kickNeeded = true
	}
}

func (t *Transport) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// recvLoop reads c until it closes. gate, if set, runs before each read:
// it blocks while the read must wait (a feed that an executor holds,
// feed_linux.go) and reports false to stop; a read cut short by its
// deadline goes back to it.
func (t *Transport) recvLoop(c udp.Conn, gate func() bool) {
	defer t.wg.Done()
	buf := make([]byte, udp.MaxDatagram)
	for {
		if gate != nil && !gate() {
			return
		}
		n, src, err := c.ReadFrom(buf)
		if err != nil {
			select {
			case <-t.done:
				return
			default:
			}
			if errors.Is(err, udp.ErrClosed) {
				return
			}
			if gate != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			t.cfg.Logf("rtps: read %v: %v", c.LocalAddr(), err)
			continue
		}
		t.handleDatagramVia(buf[:n], src, c == t.mc, nil)
	}
}

// handleDatagram decodes one datagram and routes its submessages.
func (t *Transport) handleDatagram(b []byte, src netip.AddrPort) {
	t.handleDatagramVia(b, src, false, nil)
}

// handleDatagramVia is handleDatagram; viaGroup tells that the datagram
// came through the SPDP multicast group. feed, if set, is the subscription
// whose feed socket the datagram was read from (feed_linux.go): its DATA
// for that reader (or for any reader) goes to that reader alone, without
// looking up the writer's routes. Only that reader is at that locator, so
// a writer sends there only what is that reader's; the reader drops the
// DATA of a writer it is not matched with, as the routes would.
func (t *Transport) handleDatagramVia(b []byte, src netip.AddrPort, viaGroup bool, feed *Subscription) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.st.Datagrams++
	var r wire.Reader
	if err := r.Reset(b); err != nil {
		t.st.BadDatagrams++
		t.mu.Unlock()
		return
	}
	if r.Header.Prefix == t.prefix {
		t.st.OwnDatagrams++
		t.mu.Unlock()
		return
	}
	if t.sec != nil {
		pb := t.sec.unprotect(b)
		if pb == nil || r.Reset(pb) != nil {
			t.mu.Unlock()
			return
		}
	}
	now := t.cfg.Clock.Now()
	t.disc.Heard(now, r.Header.Prefix, len(b))
	if viaGroup && t.mc != nil {
		t.disc.HeardMulticast(now, r.Header.Prefix)
	}
	for {
		sm, err := r.Next()
		if err != nil {
			t.st.BadSubmessages++
			break
		}
		if sm == nil {
			break
		}
		if !r.State.DestPrefix.IsZero() && r.State.DestPrefix != t.prefix {
			continue
		}
		if t.sec != nil && t.secHandleSubmessageLocked(now, &r.State, sm) {
			continue
		}
		if t.disc.HandleSubmessage(now, &r.State, src, sm) {
			if t.sec != nil && sm.ID == wire.SubmsgData && sm.Data.WriterID == wire.EntityIDSPDPWriter {
				t.sec.onSPDP(now, r.State.SourcePrefix)
			}
			t.touchLocked(t.disc.NextDeadline())
			continue
		}
		wid, rid, toReader := sm.WriterToReader()
		switch {
		case toReader:
		case sm.ID == wire.SubmsgAckNack:
			if p := t.pubs[sm.AckNack.WriterID]; p != nil {
				rg := r.State.SourceGUID(sm.AckNack.ReaderID)
				if t.acks.Restarted(p.guid.Entity, rg, sm.AckNack.Count) && p.remote[rg] {
					if e := t.remR[rg]; e != nil {
						p.w.UnmatchReader(rg)
						t.matchReaderLocked(now, p, e)
					}
				}
				p.w.HandleSubmessage(now, &r.State, sm)
				t.touchLocked(p.w.NextDeadline())
			}
			continue
		case sm.ID == wire.SubmsgNackFrag:
			if p := t.pubs[sm.NackFrag.WriterID]; p != nil {
				p.w.HandleSubmessage(now, &r.State, sm)
				t.touchLocked(p.w.NextDeadline())
			}
			continue
		default:
			continue
		}
		if feed != nil && sm.ID == wire.SubmsgData && (rid == wire.EntityIDUnknown || rid == feed.guid.Entity) {
			feed.r.HandleSubmessage(now, &r.State, sm)
			t.touchLocked(feed.r.NextDeadline())
			continue
		}
		wg := r.State.SourceGUID(wid)
		routes := t.route[wg]
		if len(routes) == 0 && sm.ID == wire.SubmsgHeartbeat {
			t.stashHeartbeatLocked(now, wg, &r.State, &sm.Heartbeat)
		}
		for _, s := range routes {
			if rid == wire.EntityIDUnknown || rid == s.guid.Entity {
				s.r.HandleSubmessage(now, &r.State, sm)
				t.touchLocked(s.r.NextDeadline())
			}
		}
	}
	t.ackCond.Broadcast()
	t.finishLocked()
}

// finishLocked releases t.mu after a change: it republishes the graph if
// needed, wakes the timer loop and dispatches queued events.
func (t *Transport) finishLocked() {
	var graph []byte
	if t.graphDirty && !t.closed && t.graph != nil {
		t.graphDirty = false
		t.notifyGraphLocked()
		graph = t.graphSampleLocked()
	}
	if graph != nil {
		t.writeLocked(t.graph, graph)
		t.kickNeeded = true
	}
	kick := t.kickNeeded
	t.kickNeeded = false
	t.mu.Unlock()
	if kick {
		t.kick()
	}
	t.dispatch()
}

// dispatch hands out queued callbacks.
func (t *Transport) dispatch() {
	// One goroutine hands out callbacks at a time, in the order they were
	// queued (so per writer samples stay in order, and a match event
	// comes before the first sample). A callback that calls the
	// transport (and so comes back here) leaves what it queues to the
	// drainer already running.
	t.mu.Lock()
	if t.draining || len(t.callbacks) == 0 {
		t.mu.Unlock()
		return
	}
	t.draining = true
	tok := dispatching.Enter()
	defer dispatching.Leave(tok)
	done := false
	defer func() {
		if !done { // a callback panicked
			t.running.Store(nil)
			t.mu.Lock()
			t.draining = false
			t.cbDone.Broadcast()
			t.mu.Unlock()
		}
	}()
	for len(t.callbacks) > 0 {
		// Swap in the previous batch's storage: no allocation per batch.
		cbs := t.callbacks
		t.callbacks, t.spare = t.spare[:0], nil
		t.mu.Unlock()
		for i := range cbs {
			t.runCallback(&cbs[i])
			cbs[i] = callback{}
		}
		t.mu.Lock()
		if cap(cbs) <= maxSpareCallbacks { // do not pin a burst's storage
			t.spare = cbs[:0]
		}
	}
	t.draining = false
	done = true
	t.mu.Unlock()
}

// maxSpareCallbacks bounds the queue storage kept between hand-outs.
const maxSpareCallbacks = 4096

// queue queues event ev for fn, the OnEvent function of the endpoint whose
// closed flag is gate (t.mu held).
func (t *Transport) queue(gate *atomic.Bool, fn func(rmw.Event), ev rmw.Event) {
	if fn != nil {
		t.callbacks = append(t.callbacks, callback{gate: gate, onEvent: fn, ev: ev})
	}
}

// runCallback hands out one queued entry (only the dispatching goroutine
// calls it) and recycles its buffer. It announces the entry's endpoint in
// t.running before it looks at the endpoint's closed flag, and Close sets
// the flag before it looks at t.running (both sequentially consistent), so
// either Close sees the callback and waits for it, or the callback sees
// the flag and is dropped.
func (t *Transport) runCallback(c *callback) {
	t.running.Store(c.gate)
	if !c.gate.Load() {
		switch {
		case c.onEvent != nil:
			c.onEvent(c.ev)
		case c.sub.svcDeliver != nil:
			c.sub.svcDeliver(c.smp, c.id)
		default:
			c.sub.deliver(c.smp)
		}
	}
	t.running.Store(nil)
	if t.cbWaiters.Load() > 0 {
		t.mu.Lock()
		t.cbDone.Broadcast()
		t.mu.Unlock()
	}
	if c.buf != nil {
		bufpool.Put(c.buf)
	}
}

// waitCallbacks returns once no callback of the endpoint whose closed flag
// is gate (of any endpoint when gate is nil) is running, the flag(s)
// being set already. On a goroutine that is itself running a callback of
// an rtps Transport it returns at once: the callback being handed out may
// be its caller, which waiting would deadlock. Called without t.mu.
func (t *Transport) waitCallbacks(gate *atomic.Bool) {
	busy := func() bool {
		r := t.running.Load()
		return r != nil && (gate == nil || r == gate)
	}
	if !busy() || inCallback() {
		return
	}
	t.cbWaiters.Add(1)
	t.mu.Lock()
	for busy() {
		t.cbDone.Wait()
	}
	t.mu.Unlock()
	t.cbWaiters.Add(-1)
}

// dispatching holds the goroutines handing out callbacks (in dispatch), of
// any rtps Transport.
var dispatching goid.Set

// inCallback reports whether the calling goroutine is inside a deliver or
// OnEvent function handed out by an rtps Transport (any: a callback of one
// transport closing another's endpoint must not wait for a callback that may
// be waiting for it). It is only asked when Close would otherwise wait.
func inCallback() bool { return dispatching.Has() }

func (t *Transport) timerLoop() {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return
		}
		now := t.cfg.Clock.Now()
		next := t.disc.Tick(now)
		for _, p := range t.pubs {
			next = min(next, p.w.Tick(now))
			if p.server != nil && len(p.server.pending) > 0 {
				next = min(next, p.server.flushLocked(now))
			}
		}
		for _, s := range t.subs {
			next = min(next, s.r.Tick(now))
		}
		if t.sec != nil {
			next = min(next, t.sec.tick(now))
		}
		t.ackCond.Broadcast()
		if t.graphDirty && t.graph != nil {
			t.graphDirty = false
			t.notifyGraphLocked()
			t.writeLocked(t.graph, t.graphSampleLocked())
			next = now // the write may have scheduled work
		}
		wait := time.Hour
		if next != endpoint.Never {
			wait = time.Duration(max(next-now, 0))
		}
		// Set under the same lock as the deadlines were read, so that a
		// receive goroutine that moves one earlier sees it and kicks.
		t.sleepUntil = now + int64(wait)
		t.kickNeeded = false
		t.mu.Unlock()
		t.dispatch()
		if wait == 0 {
			continue
		}
		ch, stop := t.cfg.Clock.After(wait)
		select {
		case <-ch:
		case <-t.wake:
			stop()
		case <-t.done:
			stop()
			return
		}
	}
}

func (t *Transport) closeSockets() {
	for _, c := range []udp.Conn{t.meta, t.user, t.mc} {
		if c != nil {
			c.Close()
		}
	}
}

// Close disposes the participant (a last SPDP), retracts its endpoints,
// closes every socket, and waits for the transport's goroutines to end
// and for any deliver or OnEvent call in progress to return: once it
// returns, no callback of the Transport is running or will start. Called
// from inside a callback of an rtps Transport it does not wait (see
// rmw.Transport). No events are raised. It is idempotent.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	now := t.cfg.Clock.Now()
	for _, p := range t.pubs {
		_ = t.disc.Retract(now, p.guid)
	}
	for _, s := range t.subs {
		_ = t.disc.Retract(now, s.guid)
	}
	t.disc.Close()
	t.closed = true
	for _, p := range t.pubs {
		p.closed = true
		p.cbClosed.Store(true)
	}
	var feeds []*feed
	for _, s := range t.subs {
		s.closed.Store(true)
		if s.feed != nil {
			feeds = append(feeds, s.feed)
		}
	}
	t.callbacks = nil
	t.ackCond.Broadcast()
	t.mu.Unlock()
	close(t.done)
	t.closeSockets()
	for _, f := range feeds {
		f.close()
	}
	// Called from a callback, Close may run on one of the goroutines it
	// would wait for: it then only makes sure no further callback
	// starts (every endpoint is closed, the queue is empty).
	if !inCallback() {
		t.waitCallbacks(nil)
		t.wg.Wait()
	}
	return nil
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.st
	s.Discovery = t.disc.Stats()
	s.Guard = t.guardStatsLocked()
	if t.sec != nil {
		s.Security = t.sec.stats()
	}
	for _, p := range t.pubs {
		if !p.internal {
			s.Publishers++
		}
	}
	for _, sub := range t.subs {
		if !sub.internal {
			s.Subscriptions++
		}
	}
	return s
}

// RemoteParticipants returns the GUID prefixes of the discovered
// participants.
func (t *Transport) RemoteParticipants() []wire.GuidPrefix {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []wire.GuidPrefix
	for _, p := range t.disc.Participants() {
		out = append(out, p.Data.GuidPrefix)
	}
	slices.SortFunc(out, func(a, b wire.GuidPrefix) int { return slices.Compare(a[:], b[:]) })
	return out
}

// names maps a ROS topic and type to DDS names.
func names(topic, typeName string) (string, string, error) {
	if !strings.HasPrefix(topic, "/") {
		return "", "", fmt.Errorf("rtps: topic %q is not a fully qualified name", topic)
	}
	dt, err := msg.DDSTypeName(typeName)
	if err != nil {
		return "", "", err
	}
	return "rt" + topic, dt, nil
}

// newEntityLocked allocates an entity id of the given kind.
func (t *Transport) newEntityLocked(kind byte) wire.EntityID {
	t.entitySeq++
	return wire.NewEntityID(t.entitySeq, kind)
}

func gidString(g wire.GUID) string { return g.String() }

// startGraph creates the ros_discovery_info writer.
func (t *Transport) startGraph() error {
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.newPublisherLocked(rmw.NodeInfo{}, "", DiscoveryTopic, DiscoveryType, q, rmw.EndpointOptions{}, true)
	if err != nil {
		return err
	}
	t.graph = p
	t.graphDirty = true
	// The graph reader: keep-last 100 reliable transient-local, enough
	// for one sample per participant in a burst.
	rq := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 100}
	_, err = t.newSubscriptionLocked(rmw.NodeInfo{}, DiscoveryTopic, DiscoveryType, rq, t.graphSample, rmw.EndpointOptions{}, true)
	return err
}

// graphSampleLocked serializes the ParticipantEntitiesInfo of this
// participant: every node that owns a user endpoint, with its readers and
// writers.
func (t *Transport) graphSampleLocked() []byte {
	type key struct{ ns, name string }
	nodes := map[key]*rmw_dds_common.NodeEntitiesInfo{}
	var order []key
	get := func(n rmw.NodeInfo) *rmw_dds_common.NodeEntitiesInfo {
		ns := n.Namespace
		if ns == "" {
			ns = "/"
		}
		k := key{ns, n.Name}
		if nodes[k] == nil {
			nodes[k] = &rmw_dds_common.NodeEntitiesInfo{NodeNamespace: ns, NodeName: n.Name}
			order = append(order, k)
		}
		return nodes[k]
	}
	var ids []wire.EntityID
	for id, p := range t.pubs {
		if !p.internal && p.node.Name != "" {
			ids = append(ids, id)
		}
	}
	for id, s := range t.subs {
		if s.node.Name != "" {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b wire.EntityID) int { return slices.Compare(a[:], b[:]) })
	for _, id := range ids {
		if p := t.pubs[id]; p != nil {
			n := get(p.node)
			n.WriterGidSeq = append(n.WriterGidSeq, rmw_dds_common.GidFromGUID(p.guid.Bytes()))
		} else if s := t.subs[id]; s != nil {
			n := get(s.node)
			n.ReaderGidSeq = append(n.ReaderGidSeq, rmw_dds_common.GidFromGUID(s.guid.Bytes()))
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	info := rmw_dds_common.ParticipantEntitiesInfo{
		Gid: rmw_dds_common.GidFromGUID(wire.GUID{Prefix: t.prefix, Entity: wire.EntityIDParticipant}.Bytes()),
	}
	for _, k := range order {
		info.NodeEntitiesInfoSeq = append(info.NodeEntitiesInfoSeq, *nodes[k])
	}
	return marshalGraph(&info, t.cfg.GidSize)
}

// A writer's SEDP announcement can reach us after its first HEARTBEAT to
// our reader (the peer matched our reader first). Fast DDS does not answer
// a preemptive ACKNACK and heartbeats only every 3 s, so a short-lived
// peer's transient-local history (e.g. its ros_discovery_info) would never
// be asked for. The latest HEARTBEAT of each unmatched writer of a known
// participant is therefore kept for a while and handed to a reader that
// matches the writer later.
const (
	stashTTL = int64(5e9)
	maxStash = 1024
)

type stashedHB struct {
	rs wire.ReceiverState
	hb wire.Heartbeat
	at int64
}

func (t *Transport) stashHeartbeatLocked(now int64, w wire.GUID, rs *wire.ReceiverState, hb *wire.Heartbeat) {
	if t.disc.Participant(w.Prefix) == nil || w.Entity.IsBuiltin() {
		return
	}
	if _, ok := t.stashedHB[w]; !ok && len(t.stashedHB) >= maxStash {
		for g, e := range t.stashedHB {
			if now-e.at > stashTTL {
				delete(t.stashedHB, g)
			}
		}
		if len(t.stashedHB) >= maxStash {
			return
		}
	}
	t.stashedHB[w] = stashedHB{rs: *rs, hb: *hb, at: now}
}

// replayHeartbeatLocked hands a stashed HEARTBEAT of w to s's reader.
func (t *Transport) replayHeartbeatLocked(now int64, s *Subscription, w wire.GUID) {
	e, ok := t.stashedHB[w]
	if !ok {
		return
	}
	if now-e.at > stashTTL {
		delete(t.stashedHB, w)
		return
	}
	sm := wire.Submessage{ID: wire.SubmsgHeartbeat, Flags: wire.FlagEndianness, Heartbeat: e.hb}
	s.r.HandleSubmessage(now, &e.rs, &sm)
}
