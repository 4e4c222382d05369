// Package discovery implements the DDSI-RTPS discovery protocols of nros:
// SPDP (participants: periodic announcements, leases on the monotonic
// clock, rediscovery) and SEDP (endpoints: the built-in publications and
// subscriptions writers and readers, reliable and transient-local, built on
// rmw/rtps/endpoint), plus the DDS QoS matching rules (Incompatible).
//
// # Shape
//
// A Discovery is a state machine like the endpoints: no goroutines, no
// sockets, no timers. Time is passed in as now (monotonic ns); datagrams
// leave through the Output given in Config, synchronously; received
// submessages are fed in with HandleSubmessage; timed work (announcements,
// lease checks, SEDP heartbeats and acknowledgements) runs in Tick, and
// NextDeadline says when. Results come out through the Listener, called
// synchronously. It is not safe for concurrent use: the transport
// serialises all calls.
//
// # Leases
//
// A remote participant expires when nothing renewed it for its lease
// duration on the monotonic clock the caller passes in (never ROS time, so
// a paused simulation does not drop peers). SPDP from it, and any message
// the transport attributes to it (Renew), renew the lease. An expired or
// disposed participant takes its endpoints with it (Listener calls for each
// of them); when it shows up again, with the same or a new GUID prefix, it
// is discovered afresh.
//
// # Hostile announcements
//
// SPDP is unauthenticated: anyone can announce participants, with any
// lease and any locators. A participant is therefore only a claim until it
// answers: it is reported, matched and announced to once confirmed, and
// the table, what unconfirmed participants cost and what is sent to
// anyone's locators are bounded (see guard.go: MaxUnconfirmed,
// MaxParticipantBytes, UnconfirmedLease, the probes and the SEDP budgets).
package discovery

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Defaults for Config fields left zero.
const (
	DefaultLeaseDuration    = 20 * time.Second
	DefaultAnnouncePeriod   = 3 * time.Second
	DefaultInitialAnnounces = 4
	DefaultInitialPeriod    = 200 * time.Millisecond
	// DefaultProbePeriod is the first gap between announcements to
	// ProbeTargets after the initial ones (Cyclone DDS's default SPDP
	// interval); each gap doubles, up to MaxProbeGaps times it.
	DefaultProbePeriod = 30 * time.Second
	// MaxProbeGaps caps the gap between announcements to ProbeTargets at
	// this multiple of ProbePeriod (4 min by default).
	MaxProbeGaps = 8
	// DefaultSEDPDepth is the KEEP_LAST depth of the SEDP writers.
	DefaultSEDPDepth = 1024
	// MaxParticipants bounds the remote participants tracked, confirmed
	// or not. A new one still gets in: an unconfirmed one (the oldest) is
	// evicted to make room, or else the confirmed one heard from least
	// recently (Stats.ParticipantsEvicted).
	MaxParticipants = 1024
	// MaxEndpoints bounds the remote endpoints tracked.
	MaxEndpoints = 65536
)

// BuiltinEndpoints is what nros advertises: SPDP and SEDP publications and
// subscriptions, both directions (0x3f).
const BuiltinEndpoints = wire.BuiltinEndpointsMinimal

// Listener receives discovery results. Its methods are called
// synchronously from HandleSubmessage, Tick and Close, and must not call
// back into the Discovery.
type Listener interface {
	// ParticipantDiscovered reports a new remote participant once it is
	// confirmed (it sent SEDP or other discovery traffic besides SPDP),
	// also after it expired and came back.
	ParticipantDiscovered(p *Participant)
	// ParticipantLost reports that p expired (lease) or was disposed.
	// Its endpoints have been reported lost before.
	ParticipantLost(p *Participant, expired bool)
	// EndpointDiscovered reports a new remote writer or reader, or a change
	// of its QoS or locators (same GUID).
	EndpointDiscovered(e *Endpoint)
	// EndpointLost reports that a remote writer or reader is gone.
	EndpointLost(e *Endpoint)
}

// Participant is a discovered remote participant.
type Participant struct {
	Data wire.ParticipantData
	// Source is the address its first SPDP came from.
	Source netip.AddrPort
	// LastSN is the sequence number of its newest SPDP.
	LastSN wire.SequenceNumber
	// Expiry is when its lease runs out (monotonic ns).
	Expiry int64

	lease     int64 // ns; 0: infinite (capped while unconfirmed)
	announced int64 // the lease it announced; 0: infinite
	endpoints map[wire.GUID]*Endpoint

	confirmed bool
	seq       uint64 // admission number (the eviction order of unconfirmed ones)
	heard     int64  // when anything attributed to it last arrived
	// mcastHeard is when a datagram of it last came through the
	// multicast group (0: never).
	mcastHeard int64
	cost       int            // estimated bytes held for it
	spdpCost   int            // of which its announcement
	metaLocs   []wire.Locator // MetaLocators, computed once per announcement
	owed       int64          // bytes Heard has not yet credited (settle)

	// probes (while unconfirmed)
	probes     int
	lastProbe  int64
	nextProbe  int64
	probeBytes int // bytes of the probes sent to it (refunded when it answers)
}

// Confirmed reports whether the participant has answered (sent
// discovery traffic besides SPDP): only confirmed participants are
// reported, matched and announced to.
func (p *Participant) Confirmed() bool { return p.confirmed }

// MetaLocators returns where its discovery traffic goes: its
// metatraffic unicast locators (at most MaxLocators), or its SPDP source
// address. The slice is shared: do not modify it.
func (p *Participant) MetaLocators() []wire.Locator {
	if p.metaLocs == nil {
		p.metaLocs = metaLocators(&p.Data, p.Source)
	}
	return p.metaLocs
}

// metaLocators computes Participant.MetaLocators (never nil).
func metaLocators(pd *wire.ParticipantData, src netip.AddrPort) []wire.Locator {
	if locs := udpOnly(pd.MetatrafficUnicastLocators); len(locs) > 0 {
		return locs
	}
	if src.IsValid() {
		return []wire.Locator{wire.LocatorFromAddrPort(src)}
	}
	return []wire.Locator{}
}

// Endpoint is a discovered remote writer or reader.
type Endpoint struct {
	Data   wire.EndpointData
	Writer bool
	// Locators is where its user traffic goes: its own unicast locators,
	// or its participant's default unicast locators.
	Locators []wire.Locator
	// Vendor is its participant's vendor id.
	Vendor wire.VendorID

	cost int // estimated bytes held for it
}

// GUID returns the endpoint's GUID.
func (e *Endpoint) GUID() wire.GUID { return e.Data.EndpointGUID }

// Config configures a Discovery.
type Config struct {
	// Prefix is the local participant's GUID prefix.
	Prefix wire.GuidPrefix
	// Vendor goes into the RTPS header and PID_VENDORID.
	Vendor wire.VendorID
	// DomainID is sent as PID_DOMAIN_ID; SPDP with another domain id is
	// ignored.
	DomainID uint32
	// MetaUnicast, DefaultUnicast and MetaMulticast are the locators the
	// local participant announces.
	MetaUnicast, DefaultUnicast, MetaMulticast []wire.Locator
	// Targets are where every periodic SPDP announcement goes (the
	// multicast group). Confirmed participants' metatraffic locators are
	// added, except those of participants whose own announcements arrive
	// through the multicast group (HeardMulticast): they hear ours there.
	Targets []wire.Locator
	// ProbeTargets are unicast locators where a participant not known yet
	// may listen (the metatraffic ports of the participant ids on loopback
	// and on static peers, each address's ids in increasing order). They
	// get the initial announcements, then one after ProbePeriod (default
	// DefaultProbePeriod), with gaps doubling up to MaxProbeGaps x
	// ProbePeriod, skipping the locators of participants already known and
	// the ids more than 4 past the highest known one (a newcomer takes the
	// lowest free id). A participant that starts later
	// announces itself: probing faster only sent datagrams to empty ports
	// (31 every 3 s per participant, 10 a second, and as many ICMP errors).
	ProbeTargets []wire.Locator
	ProbePeriod  time.Duration
	// UserData is the participant USER_DATA (e.g. "enclave=/;").
	UserData []byte
	// EntityName is PID_ENTITY_NAME (optional).
	EntityName string
	// LeaseDuration is the lease announced (default 20 s).
	LeaseDuration time.Duration
	// AnnouncePeriod is the SPDP period (default 3 s); InitialAnnounces
	// announcements InitialPeriod apart come first.
	AnnouncePeriod   time.Duration
	InitialAnnounces int
	InitialPeriod    time.Duration
	// Output sends datagrams (the transport filters destinations).
	Output endpoint.Output
	// Listener receives results.
	// Secure makes SEDP run on the secure builtin endpoints of DDS
	// Security (DCPSPublicationsSecure, DCPSSubscriptionsSecure) instead
	// of the plain ones, and matches them with a participant only once
	// Authorized says it is authenticated (then call Authorize). Nil
	// means plain discovery.
	Secure   *Secure
	Listener Listener
	// WallNow returns the wall-clock time (ns since the epoch) for
	// INFO_TS; default 0 (no INFO_TS).
	WallNow func() int64
	// SEDPDepth is the history depth of the SEDP writers (default
	// DefaultSEDPDepth, at least 32).
	SEDPDepth int
	// MaxParticipantBytes bounds the estimated memory of the remote
	// participant table (default DefaultMaxParticipantBytes).
	MaxParticipantBytes int
	// MaxUnconfirmed bounds the participants not confirmed yet (default
	// DefaultMaxUnconfirmed).
	MaxUnconfirmed int
	// UnconfirmedLease caps the lease of a participant until it is
	// confirmed (default DefaultUnconfirmedLease).
	UnconfirmedLease time.Duration
}

// Secure configures secure discovery (Config.Secure).
type Secure struct {
	// Builtin are the builtin endpoint bits advertised besides SPDP and
	// the secure SEDP ones (stateless and volatile message endpoints).
	Builtin wire.BuiltinEndpointSet
	// Parameters are appended to the SPDP announcement (tokens, security
	// info).
	Parameters []wire.Parameter
	// Authorized reports whether a participant may be matched.
	Authorized func(wire.GuidPrefix) bool
}

// Secure SEDP entity ids (DDS Security 1.1, 7.4.5).
var (
	EntityIDSEDPPublicationsSecureWriter  = wire.EntityID{0xff, 0x00, 0x03, 0xc2}
	EntityIDSEDPPublicationsSecureReader  = wire.EntityID{0xff, 0x00, 0x03, 0xc7}
	EntityIDSEDPSubscriptionsSecureWriter = wire.EntityID{0xff, 0x00, 0x04, 0xc2}
	EntityIDSEDPSubscriptionsSecureReader = wire.EntityID{0xff, 0x00, 0x04, 0xc7}
)

// Secure SEDP builtin endpoint bits (DDS Security 1.1, 7.4.7).
const (
	BuiltinPublicationsSecureAnnouncer  wire.BuiltinEndpointSet = 1 << 16
	BuiltinPublicationsSecureDetector   wire.BuiltinEndpointSet = 1 << 17
	BuiltinSubscriptionsSecureAnnouncer wire.BuiltinEndpointSet = 1 << 18
	BuiltinSubscriptionsSecureDetector  wire.BuiltinEndpointSet = 1 << 19
)

// sedpIDs are the entity ids and bits SEDP runs on.
type sedpIDs struct {
	pubW, pubR, subW, subR         wire.EntityID
	pubAnn, pubDet, subAnn, subDet wire.BuiltinEndpointSet
}

var plainSEDP = sedpIDs{wire.EntityIDSEDPPublicationsWriter, wire.EntityIDSEDPPublicationsReader,
	wire.EntityIDSEDPSubscriptionsWriter, wire.EntityIDSEDPSubscriptionsReader,
	wire.BuiltinPublicationsAnnouncer, wire.BuiltinPublicationsDetector,
	wire.BuiltinSubscriptionsAnnouncer, wire.BuiltinSubscriptionsDetector}

var secureSEDP = sedpIDs{EntityIDSEDPPublicationsSecureWriter, EntityIDSEDPPublicationsSecureReader,
	EntityIDSEDPSubscriptionsSecureWriter, EntityIDSEDPSubscriptionsSecureReader,
	BuiltinPublicationsSecureAnnouncer, BuiltinPublicationsSecureDetector,
	BuiltinSubscriptionsSecureAnnouncer, BuiltinSubscriptionsSecureDetector}

// Stats counts discovery events and dropped input.
type Stats struct {
	SPDPSent, SPDPReceived uint64
	SPDPMalformed          uint64 // undecodable or invalid SPDP payloads
	SPDPIgnored            uint64 // other domain, own prefix, domain tag
	SEDPMalformed          uint64 // undecodable or invalid SEDP payloads
	ParticipantsDiscovered uint64 // confirmed (and reported)
	ParticipantsExpired    uint64 // confirmed ones whose lease ran out
	ParticipantsDisposed   uint64
	// ParticipantsEvicted counts participants dropped to make room for a
	// newer one (unconfirmed ones first); ParticipantsRefused counts
	// announcements too large for the table on their own.
	ParticipantsEvicted uint64
	ParticipantsRefused uint64
	// UnconfirmedExpired counts unconfirmed participants whose (capped)
	// lease ran out: announcements nobody stood by.
	UnconfirmedExpired uint64
	// ProbesSent counts probes (unicast SPDP with SEDP HEARTBEATs) to
	// unconfirmed participants; ProbesLimited those the rate limits or a
	// locator's back-off held back.
	ProbesSent, ProbesLimited uint64
	// SEDPSendsLimited counts SEDP datagrams (per destination) not sent
	// because the locator's budget was spent.
	SEDPSendsLimited uint64
	// EndpointsRefused counts SEDP announcements dropped because the
	// table's memory bound was reached.
	EndpointsRefused    uint64
	SEDPRefreshes       uint64 // live announcements written again (see Announce)
	EndpointsDiscovered uint64
	EndpointsLost       uint64
	// Participants are the confirmed remote participants, Unconfirmed
	// the others; ParticipantBytes is the table's estimated memory.
	Participants, Unconfirmed, Endpoints int
	ParticipantBytes                     int
	PubsWriter, SubsWriter               endpoint.WriterStats
	PubsReader, SubsReader               endpoint.ReaderStats
}

// Discovery is the SPDP + SEDP state machine of one participant.
type Discovery struct {
	cfg   Config
	lease int64
	hdr   wire.Header

	spdpSN       wire.SequenceNumber
	spdpPayload  []byte
	nextAnnounce int64
	announced    int
	nextProbeAll int64 // when ProbeTargets next get an announcement
	probeGap     int64 // the gap after it
	buf          []byte
	b            wire.Builder

	parts      map[wire.GuidPrefix]*Participant
	nextExpiry int64

	// the bounds of guard.go
	now         int64 // time of the call in progress (for sedpOutput)
	maxBytes    int
	bytes       int // estimated memory of the table
	unconfBytes int // of which unconfirmed participants
	nUnconf     int
	admitted    uint64
	unconfQ     []queued // unconfirmed participants in admission order (lazily pruned)
	nextProbe   int64
	probeSent   float64 // probe bytes sent (decayed: see decayProbes)
	probeRecv   float64 // unconfirmed SPDP bytes received (decayed)
	probeAt     int64
	probeLocs   map[wire.Locator]*probeLoc
	budgets     map[wire.Locator]*budget
	owing       []*Participant // those Heard owes credit to (settle)
	lastHeard   *Participant   // Heard's previous participant
	nextGC      int64
	scratch     []wire.Locator
	sedpTo      []wire.Locator
	unconfLease int64
	answered    answers

	pubW, subW *endpoint.Writer
	pubR, subR *endpoint.Reader
	ids        sedpIDs

	local     map[wire.GUID]*localEndpoint // local endpoints announced
	sedpDepth int

	// acks holds the last ACKNACK count of each remote SEDP reader, to
	// spot a reader that restarted its counts (see AckCounts).
	acks AckCounts

	st     Stats
	closed bool
}

// New returns a Discovery for cfg. It starts announcing at the first Tick.
func New(cfg Config) (*Discovery, error) {
	if cfg.Output == nil || cfg.Listener == nil {
		return nil, errors.New("discovery: Output and Listener are required")
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.AnnouncePeriod <= 0 {
		cfg.AnnouncePeriod = DefaultAnnouncePeriod
	}
	if cfg.InitialAnnounces < 0 {
		cfg.InitialAnnounces = 0
	} else if cfg.InitialAnnounces == 0 {
		cfg.InitialAnnounces = DefaultInitialAnnounces
	}
	if cfg.InitialPeriod <= 0 {
		cfg.InitialPeriod = DefaultInitialPeriod
	}
	if cfg.ProbePeriod <= 0 {
		cfg.ProbePeriod = DefaultProbePeriod
	}
	if cfg.MaxParticipantBytes <= 0 {
		cfg.MaxParticipantBytes = DefaultMaxParticipantBytes
	}
	if cfg.MaxUnconfirmed <= 0 {
		cfg.MaxUnconfirmed = DefaultMaxUnconfirmed
	}
	if cfg.UnconfirmedLease <= 0 {
		cfg.UnconfirmedLease = DefaultUnconfirmedLease
	}
	d := &Discovery{
		cfg:         cfg,
		lease:       int64(cfg.LeaseDuration),
		hdr:         wire.Header{Version: wire.ProtocolVersion21, Vendor: cfg.Vendor, Prefix: cfg.Prefix},
		parts:       map[wire.GuidPrefix]*Participant{},
		local:       map[wire.GUID]*localEndpoint{},
		nextExpiry:  endpoint.Never,
		sedpDepth:   max(cmp.Or(cfg.SEDPDepth, DefaultSEDPDepth), 32),
		maxBytes:    cfg.MaxParticipantBytes,
		nextProbe:   endpoint.Never,
		probeLocs:   map[wire.Locator]*probeLoc{},
		budgets:     map[wire.Locator]*budget{},
		unconfLease: int64(cfg.UnconfirmedLease),
	}
	d.ids = plainSEDP
	if cfg.Secure != nil {
		d.ids = secureSEDP
	}
	sedpOut := sedpOutput{d}
	part := endpoint.Participant{Vendor: cfg.Vendor, Version: wire.ProtocolVersion21}
	mkW := func(id wire.EntityID) (*endpoint.Writer, error) {
		return endpoint.NewWriter(endpoint.WriterConfig{
			GUID: wire.GUID{Prefix: cfg.Prefix, Entity: id}, Participant: part,
			Reliable: true, TransientLocal: true, Depth: d.sedpDepth,
			// Discovery data is small: keep it in single datagrams
			// as long as possible.
			FragmentSize: 8192, MaxMessageSize: 16384,
		}, sedpOut)
	}
	mkR := func(id wire.EntityID, writer bool) (*endpoint.Reader, error) {
		return endpoint.NewReader(endpoint.ReaderConfig{
			GUID: wire.GUID{Prefix: cfg.Prefix, Entity: id}, Participant: part,
			MaxSampleSize: 1 << 20,
			// SEDP writers keep every live announcement: one skipped
			// because it was lost before the first HEARTBEAT would hide
			// that endpoint for good (Fast DDS does not repeat them).
			Durable: true,
		}, sedpOut, func(s endpoint.Sample) { d.sedpSample(s, writer) })
	}
	var err error
	if d.pubW, err = mkW(d.ids.pubW); err != nil {
		return nil, err
	}
	if d.subW, err = mkW(d.ids.subW); err != nil {
		return nil, err
	}
	if d.pubR, err = mkR(d.ids.pubR, true); err != nil {
		return nil, err
	}
	if d.subR, err = mkR(d.ids.subR, false); err != nil {
		return nil, err
	}
	if err := d.rebuildSPDP(); err != nil {
		return nil, err
	}
	return d, nil
}

// ParticipantData returns the local SPDP announcement.
func (d *Discovery) ParticipantData() wire.ParticipantData {
	return wire.ParticipantData{
		ProtocolVersion:              wire.ProtocolVersion21,
		VendorID:                     d.cfg.Vendor,
		GuidPrefix:                   d.cfg.Prefix,
		MetatrafficUnicastLocators:   d.cfg.MetaUnicast,
		DefaultUnicastLocators:       d.cfg.DefaultUnicast,
		MetatrafficMulticastLocators: d.cfg.MetaMulticast,
		BuiltinEndpoints:             d.builtinEndpoints(),
		LeaseDuration:                wire.DurationFromTime(d.cfg.LeaseDuration),
		UserData:                     d.cfg.UserData,
		EntityName:                   d.cfg.EntityName,
		HasDomainID:                  true,
		DomainID:                     d.cfg.DomainID,
		// Cyclone DDS and Fast DDS always send a property list; an
		// empty one keeps our SPDP the same shape without telling the
		// network our host or process.
		Properties: []wire.Property{},
	}
}

// builtinEndpoints is the advertised builtin endpoint set.
func (d *Discovery) builtinEndpoints() wire.BuiltinEndpointSet {
	if d.cfg.Secure == nil {
		return BuiltinEndpoints
	}
	return wire.BuiltinParticipantAnnouncer | wire.BuiltinParticipantDetector |
		d.ids.pubAnn | d.ids.pubDet | d.ids.subAnn | d.ids.subDet | d.cfg.Secure.Builtin
}

func (d *Discovery) rebuildSPDP() error {
	pd := d.ParticipantData()
	if d.cfg.Secure != nil {
		pd.Security = d.cfg.Secure.Parameters
	}
	p, err := pd.Encode(nil)
	if err != nil {
		return fmt.Errorf("discovery: encode SPDP: %w", err)
	}
	d.spdpSN++
	d.spdpPayload = p
	return nil
}

// SetUserData changes the participant USER_DATA and announces the change
// (with a new SPDP sequence number) at the next Tick.
func (d *Discovery) SetUserData(ud []byte) error {
	d.cfg.UserData = ud
	d.nextAnnounce = 0
	return d.rebuildSPDP()
}

// spdpMessage builds the SPDP datagram. dst, if non-zero, adds INFO_DST
// (never used for probes: Cyclone answers only undirected SPDP).
func (d *Discovery) spdpMessage() []byte {
	d.b.Reset(d.buf[:0], d.hdr)
	if d.cfg.WallNow != nil {
		d.b.InfoTS(wire.TimeFromNanos(d.cfg.WallNow()))
	}
	_ = d.b.Data(&wire.Data{
		ReaderID:          wire.EntityIDSPDPReader,
		WriterID:          wire.EntityIDSPDPWriter,
		WriterSN:          d.spdpSN,
		SerializedPayload: d.spdpPayload,
	})
	d.buf = d.b.Bytes()
	return d.buf
}

func (d *Discovery) sendSPDP(to []wire.Locator) {
	if len(to) == 0 {
		return
	}
	d.cfg.Output.Send(to, d.spdpMessage())
	d.st.SPDPSent++
}

// announceTargets is Targets plus the metatraffic locators of every
// confirmed participant heard from in the last quietCutoff, deduplicated.
// Unless all is set, participants that hear the multicast group (their
// announcements arrived through it lately, and they announce a multicast
// locator) are left to the group's copy when Targets has one.
// Unconfirmed participants get probes instead (guard.go); a participant
// silent that long (real ones announce themselves at least every 30 s)
// gets nothing until it speaks again or its lease ends.
func (d *Discovery) announceTargets(all bool) []wire.Locator {
	out := slices.Clone(d.cfg.Targets)
	group := !all && slices.ContainsFunc(d.cfg.Targets, wire.Locator.IsMulticast)
	for _, p := range d.parts {
		if !p.confirmed || d.now-p.heard > quietCutoff {
			continue
		}
		if group && p.mcastHeard != 0 && d.now-p.mcastHeard <= quietCutoff &&
			len(p.Data.MetatrafficMulticastLocators) > 0 {
			continue
		}
		for _, l := range p.MetaLocators() {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// probeBeyond is how many participant ids past the highest one known on
// an address a periodic probe round reaches.
const probeBeyond = 4

// addProbeTargets appends to out the ProbeTargets that are neither in it
// nor the metatraffic locator of a participant already known. With near
// (the periodic rounds after the initial announcements) it keeps, per
// address, only the ids up to probeBeyond past the highest known one:
// every vendor takes the lowest free participant id, so a peer we have not
// heard of sits in a gap or just above the ids in use, and a port above
// them is empty (each datagram there costs an ICMP error as well).
func (d *Discovery) addProbeTargets(out []wire.Locator, near bool) []wire.Locator {
	if len(d.cfg.ProbeTargets) == 0 {
		return out
	}
	known := make(map[wire.Locator]bool, len(d.parts))
	for _, p := range d.parts {
		for _, l := range p.MetaLocators() {
			known[l] = true
		}
	}
	// ProbeTargets lists each address's ids in increasing order.
	type addrPos struct{ next, lastKnown int }
	var pos map[[16]byte]*addrPos
	if near {
		pos = map[[16]byte]*addrPos{}
		for _, l := range d.cfg.ProbeTargets {
			ap := pos[l.Address]
			if ap == nil {
				ap = &addrPos{lastKnown: -1}
				pos[l.Address] = ap
			}
			if known[l] {
				ap.lastKnown = ap.next
			}
			ap.next++
		}
		for _, ap := range pos {
			ap.next = 0
		}
	}
	for _, l := range d.cfg.ProbeTargets {
		if near {
			ap := pos[l.Address]
			i := ap.next
			ap.next++
			if i > ap.lastKnown+probeBeyond {
				continue
			}
		}
		if !known[l] && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Tick performs the timed work due at now: SPDP announcements, lease
// expiry, SEDP heartbeats and acknowledgements. It returns NextDeadline.
func (d *Discovery) Tick(now int64) int64 {
	if d.closed {
		return endpoint.Never
	}
	d.now = now
	if now >= d.nextAnnounce {
		to := d.announceTargets(false)
		if initial := d.announced < d.cfg.InitialAnnounces; initial || now >= d.nextProbeAll {
			to = d.addProbeTargets(to, !initial)
			if d.announced+1 >= d.cfg.InitialAnnounces {
				d.probeGap = min(max(2*d.probeGap, int64(d.cfg.ProbePeriod)), MaxProbeGaps*int64(d.cfg.ProbePeriod))
				d.nextProbeAll = now + d.probeGap
			}
		}
		d.sendSPDP(to)
		d.announced++
		if d.announced < d.cfg.InitialAnnounces {
			d.nextAnnounce = now + int64(d.cfg.InitialPeriod)
		} else {
			d.nextAnnounce = now + int64(d.cfg.AnnouncePeriod)
		}
	}
	if now >= d.nextExpiry {
		d.expire(now)
	}
	if now >= d.nextProbe {
		d.probeDue(now)
	}
	if now >= d.nextGC {
		d.gcBudgets()
		d.gcProbeLocs(now)
		d.nextGC = now + budgetGCPeriod
	}
	d.pubW.Tick(now)
	d.subW.Tick(now)
	d.pubR.Tick(now)
	d.subR.Tick(now)
	return d.NextDeadline()
}

// NextDeadline returns when Tick next has work to do.
func (d *Discovery) NextDeadline() int64 {
	if d.closed {
		return endpoint.Never
	}
	t := min(d.nextAnnounce, d.nextExpiry, d.nextProbe)
	if len(d.budgets) > 0 || len(d.probeLocs) > 0 {
		t = min(t, d.nextGC)
	}
	t = min(t, d.pubW.NextDeadline(), d.subW.NextDeadline())
	return min(t, d.pubR.NextDeadline(), d.subR.NextDeadline())
}

func (d *Discovery) expire(now int64) {
	next := endpoint.Never
	var gone []*Participant
	for _, p := range d.parts {
		if p.lease == 0 {
			continue
		}
		if p.Expiry <= now {
			gone = append(gone, p)
		} else {
			next = min(next, p.Expiry)
		}
	}
	d.nextExpiry = next
	for _, p := range gone {
		if p.confirmed {
			d.st.ParticipantsExpired++
		} else {
			d.st.UnconfirmedExpired++
		}
		d.removeParticipant(p, true)
	}
}

// Confirm marks the participant with prefix as confirmed (it answered us,
// e.g. on a secure builtin endpoint the transport handles); see confirm.
func (d *Discovery) Confirm(now int64, prefix wire.GuidPrefix) {
	d.now = now
	d.confirm(now, prefix)
}

// Authorize matches the SEDP endpoints with the participant with prefix
// (Config.Secure: once Authorized reports it authenticated).
func (d *Discovery) Authorize(now int64, prefix wire.GuidPrefix) {
	d.now = now
	d.confirm(now, prefix)
	if p := d.parts[prefix]; p != nil && p.confirmed {
		d.matchBuiltins(now, p)
	}
}

// Drop forgets the participant with prefix as if it had left: its
// endpoints are reported lost, then the participant (not expired). Its next
// SPDP announcement discovers it again. The transport drops a secure
// participant this way when its credentials expire.
func (d *Discovery) Drop(now int64, prefix wire.GuidPrefix) {
	d.now = now
	if p := d.parts[prefix]; p != nil {
		d.removeParticipant(p, false)
	}
}

// Renew extends the lease of the participant with prefix, if known (call
// it for any message attributed to it, as Fast DDS does). Heard does that
// and more.
func (d *Discovery) Renew(prefix wire.GuidPrefix, now int64) { d.Heard(now, prefix, 0) }

// Heard notes a datagram of size bytes attributed to the participant with
// prefix (its RTPS header): it renews its lease, as Fast DDS does, and,
// if the participant is confirmed, adds to the SEDP budgets of its
// locators (what it sent bounds what it is sent).
//
// It runs for every datagram, the /clock samples among them, so it does
// the least it can: the participant of the previous call is looked at
// before the table, and the bytes are owed to the budgets until a budget
// is next read (settle): the budgets only add and cap, so adding later
// gives the same tokens.
func (d *Discovery) Heard(now int64, prefix wire.GuidPrefix, size int) {
	p := d.lastHeard
	if p == nil || p.Data.GuidPrefix != prefix {
		if p = d.parts[prefix]; p == nil {
			return
		}
		d.lastHeard = p
	}
	p.heard = now
	if p.lease != 0 {
		p.Expiry = now + p.lease
	}
	if p.confirmed && size > 0 {
		if p.owed == 0 {
			d.owing = append(d.owing, p)
		}
		p.owed += int64(size)
	}
}

// settle credits the bytes Heard owes to the SEDP budgets (before a budget
// is read or dropped, and before a participant's locators change or it
// goes).
func (d *Discovery) settle(now int64) {
	for i, p := range d.owing {
		if p.owed > 0 {
			d.credit(now, p, p.owed)
			p.owed = 0
		}
		d.owing[i] = nil
	}
	d.owing = d.owing[:0]
}

// HeardMulticast notes that a datagram of the participant with prefix
// arrived through the SPDP multicast group: it is on the group, so the
// periodic announcements reach it there without a unicast copy.
func (d *Discovery) HeardMulticast(now int64, prefix wire.GuidPrefix) {
	if p := d.parts[prefix]; p != nil {
		p.mcastHeard = max(now, 1) // 0 is never
	}
}

// Participant returns the remote participant with prefix, confirmed or
// not, or nil.
func (d *Discovery) Participant(prefix wire.GuidPrefix) *Participant { return d.parts[prefix] }

// Participants returns the confirmed remote participants (in no
// particular order).
func (d *Discovery) Participants() []*Participant {
	out := make([]*Participant, 0, len(d.parts)-d.nUnconf)
	for _, p := range d.parts {
		if p.confirmed {
			out = append(out, p)
		}
	}
	return out
}

// Stats returns the counters.
func (d *Discovery) Stats() Stats {
	s := d.st
	s.Participants = len(d.parts) - d.nUnconf
	s.Unconfirmed = d.nUnconf
	s.ParticipantBytes = d.bytes
	for _, p := range d.parts {
		s.Endpoints += len(p.endpoints)
	}
	s.PubsWriter, s.SubsWriter = d.pubW.Stats(), d.subW.Stats()
	s.PubsReader, s.SubsReader = d.pubR.Stats(), d.subR.Stats()
	return s
}

// HandleSubmessage processes one decoded submessage of a received message
// (rs is its receiver state, src its source address). It returns true if
// the submessage belonged to discovery (SPDP or SEDP traffic), false if
// the transport should route it to user endpoints.
func (d *Discovery) HandleSubmessage(now int64, rs *wire.ReceiverState, src netip.AddrPort, sm *wire.Submessage) bool {
	if d.closed {
		return false
	}
	d.now = now
	switch sm.ID {
	case wire.SubmsgData:
		switch sm.Data.WriterID {
		case wire.EntityIDSPDPWriter:
			d.handleSPDP(now, rs, src, &sm.Data)
			return true
		case d.ids.pubW:
			d.confirm(now, rs.SourcePrefix)
			d.pubR.HandleSubmessage(now, rs, sm)
			return true
		case d.ids.subW:
			d.confirm(now, rs.SourcePrefix)
			d.subR.HandleSubmessage(now, rs, sm)
			return true
		}
	case wire.SubmsgDataFrag:
		return d.toReader(now, rs, sm, sm.DataFrag.WriterID)
	case wire.SubmsgHeartbeat:
		return d.toReader(now, rs, sm, sm.Heartbeat.WriterID)
	case wire.SubmsgHeartbeatFrag:
		return d.toReader(now, rs, sm, sm.HeartbeatFrag.WriterID)
	case wire.SubmsgGap:
		return d.toReader(now, rs, sm, sm.Gap.WriterID)
	case wire.SubmsgAckNack:
		return d.toWriter(now, rs, sm, sm.AckNack.WriterID)
	case wire.SubmsgNackFrag:
		return d.toWriter(now, rs, sm, sm.NackFrag.WriterID)
	}
	return false
}

func (d *Discovery) toReader(now int64, rs *wire.ReceiverState, sm *wire.Submessage, w wire.EntityID) bool {
	if w != wire.EntityIDSPDPWriter && w.IsBuiltin() {
		d.confirm(now, rs.SourcePrefix)
	}
	switch w {
	case d.ids.pubW:
		d.pubR.HandleSubmessage(now, rs, sm)
	case d.ids.subW:
		d.subR.HandleSubmessage(now, rs, sm)
	case wire.EntityIDSPDPWriter, wire.EntityIDP2PParticipantMessageWriter:
	default:
		return w.IsBuiltin()
	}
	return true
}

func (d *Discovery) toWriter(now int64, rs *wire.ReceiverState, sm *wire.Submessage, w wire.EntityID) bool {
	if w.IsBuiltin() {
		d.confirm(now, rs.SourcePrefix)
	}
	switch w {
	case d.ids.pubW, d.ids.subW:
		wr := d.pubW
		if w == d.ids.subW {
			wr = d.subW
		}
		if sm.ID == wire.SubmsgAckNack {
			rg := rs.SourceGUID(sm.AckNack.ReaderID)
			if d.acks.Restarted(w, rg, sm.AckNack.Count) {
				if p := d.parts[rg.Prefix]; p != nil {
					wr.UnmatchReader(rg)
					wr.MatchReader(now, rg, p.MetaLocators(), true, true)
				}
			}
		}
		wr.HandleSubmessage(now, rs, sm)
	default:
		// ACKNACKs to built-in writers we do not have (TypeLookup,
		// participant message) are ignored.
		return w.IsBuiltin()
	}
	return true
}

func (d *Discovery) handleSPDP(now int64, rs *wire.ReceiverState, src netip.AddrPort, data *wire.Data) {
	d.st.SPDPReceived++
	if data.SerializedPayload == nil || data.Key {
		// Disposal: key hash (or key payload) names the participant.
		var prefix wire.GuidPrefix
		ok := false
		if q, err := wire.DecodeInlineQos(data.InlineQos); err == nil && q.HasKeyHash {
			copy(prefix[:], q.KeyHash[:12])
			ok = true
		} else if data.Key && data.SerializedPayload != nil {
			var pd wire.ParticipantData
			if pd.Decode(data.SerializedPayload) == nil {
				prefix, ok = pd.GuidPrefix, true
			}
		} else {
			prefix, ok = rs.SourcePrefix, true
		}
		if p := d.parts[prefix]; ok && p != nil {
			d.st.ParticipantsDisposed++
			d.removeParticipant(p, false)
		}
		return
	}
	if q, err := wire.DecodeInlineQos(data.InlineQos); err == nil && q.HasStatusInfo &&
		q.StatusInfo&(wire.StatusInfoDisposed|wire.StatusInfoUnregistered) != 0 {
		if p := d.parts[rs.SourcePrefix]; p != nil {
			d.st.ParticipantsDisposed++
			d.removeParticipant(p, false)
		}
		return
	}
	var pd wire.ParticipantData
	if err := pd.Decode(data.SerializedPayload); err != nil || pd.Validate() != nil {
		d.st.SPDPMalformed++
		return
	}
	if pd.GuidPrefix == d.cfg.Prefix || (pd.HasDomainID && pd.DomainID != d.cfg.DomainID) || pd.DomainTag != "" {
		d.st.SPDPIgnored++
		return
	}
	lease := int64(0)
	if !pd.LeaseDuration.IsInfinite() {
		lease = int64(pd.LeaseDuration.Std())
		if lease <= 0 {
			lease = int64(time.Second)
		}
	}
	cost := participantCost(len(data.SerializedPayload))
	p := d.parts[pd.GuidPrefix]
	if p == nil || !p.confirmed {
		d.unconfirmedSPDP(now, len(data.SerializedPayload)+spdpOverhead)
	}
	if p == nil {
		if cost > d.maxBytes/4 {
			d.st.ParticipantsRefused++
			return
		}
		d.makeRoom(now, cost, nil)
		p = &Participant{Data: pd, Source: src, LastSN: data.WriterSN, announced: lease, endpoints: map[wire.GUID]*Endpoint{},
			heard: now, cost: cost, spdpCost: cost}
		d.admitted++
		p.seq = d.admitted
		d.parts[pd.GuidPrefix] = p
		d.nUnconf++
		d.bytes += cost
		d.unconfBytes += cost
		d.unconfQ = append(d.unconfQ, queued{pd.GuidPrefix, p.seq})
		d.setLease(now, p)
		if d.answered.recent(now, pd.GuidPrefix) {
			d.confirm(now, pd.GuidPrefix) // it spoke before we knew it
			return
		}
		// Ask it at once whether it knows us (and tell it about us).
		d.probe(now, p)
		d.nextProbe = min(d.nextProbe, p.nextProbe)
		return
	}
	p.announced = lease
	d.setLease(now, p)
	if !p.confirmed {
		d.spdpAgain(p)
	}
	if data.WriterSN > p.LastSN {
		p.LastSN = data.WriterSN
		changed := !slices.Equal(pd.MetatrafficUnicastLocators, p.Data.MetatrafficUnicastLocators) ||
			!slices.Equal(pd.DefaultUnicastLocators, p.Data.DefaultUnicastLocators) ||
			pd.BuiltinEndpoints != p.Data.BuiltinEndpoints
		if changed {
			d.settle(now) // what it sent so far earns its old locators' budgets
		}
		p.Data = pd
		p.metaLocs = nil // recomputed from the new announcement
		d.recost(p, cost)
		if changed && p.confirmed {
			d.matchBuiltins(now, p)
		}
	}
}

// queued is an entry of the admission queue of unconfirmed participants.
type queued struct {
	prefix wire.GuidPrefix
	seq    uint64
}

// setLease sets p's lease from what it announced (capped while it is
// unconfirmed) and renews it.
func (d *Discovery) setLease(now int64, p *Participant) {
	p.lease = p.announced
	if !p.confirmed && (p.lease == 0 || p.lease > d.unconfLease) {
		p.lease = d.unconfLease
	}
	if p.lease != 0 {
		p.Expiry = now + p.lease
		d.nextExpiry = min(d.nextExpiry, p.Expiry)
	}
}

// confirm marks the participant with prefix, if known and not yet
// confirmed, as confirmed: it answered. It is reported and matched with
// the SEDP endpoints, and its announced lease applies.
func (d *Discovery) confirm(now int64, prefix wire.GuidPrefix) {
	p := d.parts[prefix]
	if p == nil {
		if prefix != d.cfg.Prefix && !prefix.IsZero() {
			d.answered.note(now, prefix)
		}
		return
	}
	if p.confirmed {
		return
	}
	p.confirmed = true
	d.nUnconf--
	d.unconfBytes -= p.cost
	p.cost += confirmedOverhead
	d.bytes += confirmedOverhead
	p.heard = now
	p.nextProbe = endpoint.Never
	d.refundProbes(now, p)
	for _, l := range p.MetaLocators() {
		delete(d.probeLocs, l) // it answers there: no back-off
	}
	d.setLease(now, p)
	d.makeRoom(now, 0, p)
	d.st.ParticipantsDiscovered++
	d.cfg.Listener.ParticipantDiscovered(p)
	d.matchBuiltins(now, p)
}

// makeRoom evicts participants (never keep) until one more of cost bytes
// fits: unconfirmed ones in admission order first, then the confirmed one
// heard from least recently.
func (d *Discovery) makeRoom(now int64, cost int, keep *Participant) {
	d.evict(cost, keep, false)
}

// evict is makeRoom; unconfirmedOnly leaves confirmed participants alone
// (their removal touches the SEDP endpoints, which must not happen from
// inside an endpoint's callback).
func (d *Discovery) evict(cost int, keep *Participant, unconfirmedOnly bool) {
	for {
		fits := d.bytes+cost <= d.maxBytes && (keep != nil || len(d.parts) < MaxParticipants)
		if keep == nil {
			fits = fits && d.nUnconf < d.cfg.MaxUnconfirmed && d.unconfBytes+cost <= d.maxBytes/4
		}
		if fits {
			return
		}
		victim := d.oldestUnconfirmed(keep)
		if victim == nil && !unconfirmedOnly {
			for _, p := range d.parts {
				if p != keep && p.confirmed && (victim == nil || p.heard < victim.heard) {
					victim = p
				}
			}
		}
		if victim == nil {
			return
		}
		d.st.ParticipantsEvicted++
		d.removeParticipant(victim, true)
	}
}

// oldestUnconfirmed returns the unconfirmed participant admitted first
// (not keep), pruning the queue of entries that are gone.
func (d *Discovery) oldestUnconfirmed(keep *Participant) *Participant {
	for len(d.unconfQ) > 0 {
		q := d.unconfQ[0]
		if p := d.parts[q.prefix]; p != nil && !p.confirmed && p.seq == q.seq && p != keep {
			return p
		}
		d.unconfQ = d.unconfQ[1:]
	}
	d.unconfQ = nil // let the backing array go
	return nil
}

// recost sets the estimated cost of p's announcement to cost.
func (d *Discovery) recost(p *Participant, cost int) {
	delta := cost - p.spdpCost
	p.spdpCost = cost
	p.cost += delta
	d.bytes += delta
	if !p.confirmed {
		d.unconfBytes += delta
	}
}

// matchBuiltins matches the local SEDP endpoints with p's, per its
// built-in endpoint set.
func (d *Discovery) matchBuiltins(now int64, p *Participant) {
	locs := p.MetaLocators()
	bes := p.Data.BuiltinEndpoints
	pre := p.Data.GuidPrefix
	g := func(id wire.EntityID) wire.GUID { return wire.GUID{Prefix: pre, Entity: id} }
	if d.cfg.Secure != nil && (d.cfg.Secure.Authorized == nil || !d.cfg.Secure.Authorized(pre)) {
		return
	}
	if bes&d.ids.pubDet != 0 {
		d.pubW.MatchReader(now, g(d.ids.pubR), locs, true, true)
	}
	if bes&d.ids.subDet != 0 {
		d.subW.MatchReader(now, g(d.ids.subR), locs, true, true)
	}
	if bes&d.ids.pubAnn != 0 {
		d.pubR.MatchWriter(now, g(d.ids.pubW), locs, true)
	}
	if bes&d.ids.subAnn != 0 {
		d.subR.MatchWriter(now, g(d.ids.subW), locs, true)
	}
}

func (d *Discovery) removeParticipant(p *Participant, expired bool) {
	pre := p.Data.GuidPrefix
	if p.owed > 0 {
		d.settle(d.now)
	}
	if d.lastHeard == p {
		d.lastHeard = nil
	}
	delete(d.parts, pre)
	d.bytes -= p.cost
	if !p.confirmed {
		// Never reported, never matched.
		d.nUnconf--
		d.unconfBytes -= p.cost
		return
	}
	g := func(id wire.EntityID) wire.GUID { return wire.GUID{Prefix: pre, Entity: id} }
	d.pubW.UnmatchReader(g(d.ids.pubR))
	d.subW.UnmatchReader(g(d.ids.subR))
	d.pubR.UnmatchWriter(g(d.ids.pubW))
	d.subR.UnmatchWriter(g(d.ids.subW))
	d.acks.Forget(pre)
	for _, e := range sortedEndpoints(p.endpoints) {
		delete(p.endpoints, e.GUID())
		d.st.EndpointsLost++
		d.cfg.Listener.EndpointLost(e)
	}
	d.cfg.Listener.ParticipantLost(p, expired)
}

func sortedEndpoints(m map[wire.GUID]*Endpoint) []*Endpoint {
	out := make([]*Endpoint, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Endpoint) int {
		x, y := a.GUID().Bytes(), b.GUID().Bytes()
		return slices.Compare(x[:], y[:])
	})
	return out
}

// sedpSample handles a sample delivered by an SEDP reader.
func (d *Discovery) sedpSample(s endpoint.Sample, writer bool) {
	p := d.parts[s.Writer.Prefix]
	if p == nil {
		return
	}
	alive := s.Payload != nil && !s.Key
	var key wire.GUID
	if q, err := wire.DecodeInlineQos(s.InlineQos); err == nil {
		if q.HasStatusInfo && q.StatusInfo&(wire.StatusInfoDisposed|wire.StatusInfoUnregistered) != 0 {
			alive = false
		}
		if q.HasKeyHash {
			key = wire.GUIDFromBytes(q.KeyHash)
		}
	}
	if !alive {
		if key.IsZero() && s.Payload != nil {
			var ed wire.EndpointData
			if ed.Decode(s.Payload, writer) == nil {
				key = ed.EndpointGUID
			}
		}
		if e := p.endpoints[key]; e != nil {
			delete(p.endpoints, key)
			p.cost -= e.cost
			d.bytes -= e.cost
			d.st.EndpointsLost++
			d.cfg.Listener.EndpointLost(e)
		}
		return
	}
	var ed wire.EndpointData
	if err := ed.Decode(s.Payload, writer); err != nil || ed.Validate() != nil ||
		ed.EndpointGUID.Prefix != p.Data.GuidPrefix || ed.EndpointGUID.Entity.IsWriter() != writer {
		d.st.SEDPMalformed++
		return
	}
	if ed.ExpectsInlineQos {
		// Neither do we send inline QoS, as Cyclone refuses such
		// readers too.
		d.st.SEDPMalformed++
		return
	}
	e := p.endpoints[ed.EndpointGUID]
	cost := endpointCost(len(s.Payload))
	if e == nil {
		if d.countEndpoints() >= MaxEndpoints {
			d.st.EndpointsRefused++
			return
		}
		d.evict(cost, p, true)
		if d.bytes+cost > d.maxBytes {
			d.st.EndpointsRefused++
			return
		}
		e = &Endpoint{Writer: writer}
		p.endpoints[ed.EndpointGUID] = e
		d.st.EndpointsDiscovered++
	}
	p.cost += cost - e.cost
	d.bytes += cost - e.cost
	e.cost = cost
	e.Data = ed
	e.Vendor = p.Data.VendorID
	e.Locators = udpOnly(ed.UnicastLocators)
	if len(e.Locators) == 0 {
		e.Locators = udpOnly(p.Data.DefaultUnicastLocators)
	}
	if len(e.Locators) == 0 && p.Source.IsValid() {
		e.Locators = []wire.Locator{wire.LocatorFromAddrPort(p.Source)}
	}
	d.cfg.Listener.EndpointDiscovered(e)
}

func (d *Discovery) countEndpoints() int {
	n := 0
	for _, p := range d.parts {
		n += len(p.endpoints)
	}
	return n
}

// udpOnly keeps the UDPv4 unicast locators (Fast DDS also lists
// shared-memory ones; IPv6 is not supported by the transport), the first
// MaxLocators of them.
func udpOnly(locs []wire.Locator) []wire.Locator {
	var out []wire.Locator
	for _, l := range locs {
		if l.Kind == wire.LocatorKindUDPv4 && !l.IsMulticast() && l.Port != 0 && l.Port < 65536 && !slices.Contains(out, l) {
			out = append(out, l)
			if len(out) == MaxLocators {
				break
			}
		}
	}
	return out
}

// Announce publishes (or re-publishes after a change) a local endpoint on
// SEDP. e.EndpointGUID must carry the local prefix.
//
// The SEDP writers are keyless KEEP_LAST histories of SEDPDepth samples,
// while DDS keeps the last sample per endpoint: so that a late joiner
// still gets every live endpoint after many creations and retractions, a
// live announcement about to fall out of the history is written again.
func (d *Discovery) Announce(now int64, e *wire.EndpointData) error {
	if e.EndpointGUID.Prefix != d.cfg.Prefix {
		return errors.New("discovery: endpoint GUID has a foreign prefix")
	}
	d.now = now
	e.ProtocolVersion, e.VendorID = wire.ProtocolVersion21, d.cfg.Vendor
	payload, err := e.Encode(nil)
	if err != nil {
		return err
	}
	// No inline QoS: neither Cyclone DDS nor Fast DDS sends the key hash
	// of a live announcement (the key, ENDPOINT_GUID, is in the payload),
	// and receivers that expect the payload right after the fixed part
	// of the DATA submessage drop announcements that carry one.
	le := &localEndpoint{writer: e.EndpointGUID.Entity.IsWriter(), payload: payload}
	d.local[e.EndpointGUID] = le
	return d.write(now, le, &endpoint.Change{Payload: payload, SourceTimestamp: d.wall()})
}

// localEndpoint is the SEDP state of a local endpoint.
type localEndpoint struct {
	writer  bool
	payload []byte
	sn      wire.SequenceNumber
}

// write writes c on the SEDP writer of le (le.sn records it when c is an
// announcement) and then refreshes announcements that are about to be
// overwritten.
func (d *Discovery) write(now int64, le *localEndpoint, c *endpoint.Change) error {
	w := d.subW
	if le.writer {
		w = d.pubW
	}
	sn, err := w.WriteChange(now, c)
	if err != nil {
		return err
	}
	if c.Payload != nil {
		le.sn = sn
	}
	limit := sn - wire.SequenceNumber(d.sedpDepth) + sedpRefreshMargin
	for _, o := range d.local {
		if o.writer == le.writer && o.sn <= limit {
			if o.sn, err = w.WriteChange(now, &endpoint.Change{Payload: o.payload, SourceTimestamp: d.wall()}); err != nil {
				return err
			}
			d.st.SEDPRefreshes++
		}
	}
	return nil
}

// sedpRefreshMargin: live announcements within this many samples of the
// history's end are written again.
const sedpRefreshMargin = 8

// Retract announces that a local endpoint is gone (dispose + unregister).
func (d *Discovery) Retract(now int64, guid wire.GUID) error {
	le, ok := d.local[guid]
	if !ok {
		return nil
	}
	d.now = now
	delete(d.local, guid)
	q := wire.InlineQos{HasKeyHash: true, KeyHash: guid.Bytes(), HasStatusInfo: true,
		StatusInfo: wire.StatusInfoDisposed | wire.StatusInfoUnregistered}
	return d.write(now, le, &endpoint.Change{InlineQos: q.Append(nil), SourceTimestamp: d.wall()})
}

func (d *Discovery) wall() int64 {
	if d.cfg.WallNow != nil {
		return d.cfg.WallNow()
	}
	return 0
}

// Close announces the local participant's departure (SPDP dispose to every
// target) and stops all work. It reports nothing to the Listener.
func (d *Discovery) Close() {
	if d.closed {
		return
	}
	targets := d.announceTargets(true)
	if len(targets) > 0 {
		d.b.Reset(d.buf[:0], d.hdr)
		if d.cfg.WallNow != nil {
			d.b.InfoTS(wire.TimeFromNanos(d.cfg.WallNow()))
		}
		q := wire.InlineQos{HasKeyHash: true, HasStatusInfo: true,
			StatusInfo: wire.StatusInfoDisposed | wire.StatusInfoUnregistered}
		q.KeyHash = wire.GUID{Prefix: d.cfg.Prefix, Entity: wire.EntityIDParticipant}.Bytes()
		_ = d.b.Data(&wire.Data{
			ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter,
			WriterSN: d.spdpSN + 1, InlineQos: wire.ParameterList{Data: q.Append(nil)},
		})
		d.buf = d.b.Bytes()
		d.cfg.Output.Send(targets, d.buf)
	}
	d.closed = true
}

// AckCounts remembers the last ACKNACK count each remote reader sent to
// each local writer. A count lower than the last one means the reader
// started counting afresh: its participant expired our participant (or
// was restarted with the same GUID) and matched our writer again, while
// we kept the old reader proxy, whose count check would ignore it
// forever. The caller then re-creates the proxy (Unmatch + Match). An
// equal count (a duplicate datagram) is not a restart.
type AckCounts struct {
	m map[ackKey]wire.Count
}

type ackKey struct {
	writer wire.EntityID
	reader wire.GUID
}

// Restarted records count and reports whether it is lower than the last
// count seen for (writer, reader).
func (a *AckCounts) Restarted(writer wire.EntityID, reader wire.GUID, count wire.Count) bool {
	if a.m == nil {
		a.m = map[ackKey]wire.Count{}
	}
	k := ackKey{writer, reader}
	last, ok := a.m[k]
	a.m[k] = count
	return ok && count < last
}

// Forget drops what is known about the readers of a participant.
func (a *AckCounts) Forget(prefix wire.GuidPrefix) {
	for k := range a.m {
		if k.reader.Prefix == prefix {
			delete(a.m, k)
		}
	}
}

// ForgetReader drops what is known about one reader.
func (a *AckCounts) ForgetReader(reader wire.GUID) {
	for k := range a.m {
		if k.reader == reader {
			delete(a.m, k)
		}
	}
}
