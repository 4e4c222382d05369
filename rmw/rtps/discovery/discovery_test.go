package discovery

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

func ed(writer bool, q rmw.QoS) wire.EndpointData {
	e := wire.NewEndpointData(writer)
	kind := wire.EntityKindReaderNoKey
	if writer {
		kind = wire.EntityKindWriterNoKey
	}
	e.EndpointGUID = wire.GUID{Entity: wire.NewEntityID(1, kind)}
	e.TopicName, e.TypeName = "rt/t", "pkg::msg::dds_::T_"
	SetQoS(&e, q, writer)
	return e
}

func TestIncompatible(t *testing.T) {
	rel := rmw.QoS{Reliability: rmw.Reliable}
	be := rmw.QoS{Reliability: rmw.BestEffort}
	tl := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal}
	dl := func(q rmw.QoS, d time.Duration) rmw.QoS { q.Deadline = d; return q }
	lv := func(q rmw.QoS, k rmw.Liveliness, d time.Duration) rmw.QoS {
		q.Liveliness, q.LivelinessLeaseDuration = k, d
		return q
	}
	cases := []struct {
		name string
		w, r rmw.QoS
		mod  func(w, r *wire.EndpointData)
		want string
	}{
		{"defaults", rmw.QoS{}, rmw.QoS{}, nil, ""},
		{"rel/be", rel, be, nil, ""},
		{"be/rel", be, rel, nil, "RELIABILITY"},
		{"tl/volatile", tl, rel, nil, ""},
		{"volatile/tl", rel, tl, nil, "DURABILITY"},
		{"deadline ok", dl(rel, time.Second), dl(rel, 2*time.Second), nil, ""},
		{"deadline writer longer", dl(rel, 2*time.Second), dl(rel, time.Second), nil, "DEADLINE"},
		{"deadline writer infinite", rel, dl(rel, time.Second), nil, "DEADLINE"},
		{"liveliness kind", lv(rel, rmw.LivelinessAutomatic, 0), lv(rel, rmw.LivelinessManualByTopic, 0), nil, "LIVELINESS"},
		{"liveliness lease", lv(rel, rmw.LivelinessAutomatic, 2*time.Second), lv(rel, rmw.LivelinessAutomatic, time.Second), nil, "LIVELINESS"},
		{"type", rel, rel, func(w, r *wire.EndpointData) { r.TypeName = "x" }, PolicyType},
		{"keyed reader", rel, rel, func(w, r *wire.EndpointData) {
			r.EndpointGUID.Entity = wire.NewEntityID(1, wire.EntityKindReaderWithKey)
		}, PolicyTopicKind},
		{"ownership", rel, rel, func(w, r *wire.EndpointData) { r.Ownership = wire.OwnershipExclusive }, PolicyOwnership},
		{"destination order", rel, rel, func(w, r *wire.EndpointData) { r.DestinationOrder = wire.DestinationOrderBySource }, PolicyDestinationOrder},
		{"presentation", rel, rel, func(w, r *wire.EndpointData) { r.Presentation.AccessScope = wire.PresentationTopic }, PolicyPresentation},
		{"partition", rel, rel, func(w, r *wire.EndpointData) { w.Partitions = []string{"a"} }, PolicyPartition},
		{"partition common", rel, rel, func(w, r *wire.EndpointData) { w.Partitions = []string{"a", "b"}; r.Partitions = []string{"b"} }, ""},
		{"xcdr2 writer", rel, rel, func(w, r *wire.EndpointData) { w.DataRepresentation = []int16{wire.DataRepresentationXCDR2} }, PolicyDataRep},
		{"xcdr2 both", rel, rel, func(w, r *wire.EndpointData) {
			w.DataRepresentation = []int16{wire.DataRepresentationXCDR2}
			r.DataRepresentation = []int16{wire.DataRepresentationXCDR1, wire.DataRepresentationXCDR2}
		}, ""},
	}
	for _, c := range cases {
		w, r := ed(true, c.w), ed(false, c.r)
		if c.mod != nil {
			c.mod(&w, &r)
		}
		if got := Incompatible(&w, &r); got != c.want {
			t.Errorf("%s: got %q want %q", c.name, got, c.want)
		}
		// The rmw rules agree on the policies they know.
		if c.mod == nil {
			if got := rmw.Incompatibility(c.w, c.r); got != c.want {
				t.Errorf("%s: rmw says %q, wire %q", c.name, got, c.want)
			}
		}
	}
}

func TestQoSRoundTrip(t *testing.T) {
	qs := []rmw.QoS{
		{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10, Liveliness: rmw.LivelinessAutomatic},
		{Reliability: rmw.BestEffort, Durability: rmw.TransientLocal, History: rmw.KeepAll, Liveliness: rmw.LivelinessAutomatic},
		{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1000, Deadline: time.Second,
			Lifespan: 10 * time.Second, Liveliness: rmw.LivelinessManualByTopic, LivelinessLeaseDuration: 3 * time.Second},
	}
	for _, q := range qs {
		e := ed(true, q)
		// through the wire encoding and back
		b, err := e.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		var d wire.EndpointData
		if err := d.Decode(b, true); err != nil {
			t.Fatal(err)
		}
		got := QoSOf(&d)
		if got != q {
			t.Errorf("round trip %+v -> %+v", q, got)
		}
	}
	// ROS defaults fill in.
	e := ed(false, rmw.QoS{})
	if e.Reliability.Kind != wire.ReliabilityReliable || e.History.Depth != 1 || !e.Deadline.IsInfinite() {
		t.Errorf("defaults %+v", e)
	}
}

// recorder is a Listener and Output for tests.
type recorder struct {
	sent      [][]wire.Locator
	msgs      [][]byte
	found     []wire.GuidPrefix
	lost      []wire.GuidPrefix
	expired   []bool
	endpoints []string
	gone      []string
}

func (r *recorder) Send(to []wire.Locator, msg []byte) {
	r.sent = append(r.sent, slices.Clone(to))
	r.msgs = append(r.msgs, slices.Clone(msg))
}
func (r *recorder) ParticipantDiscovered(p *Participant) {
	r.found = append(r.found, p.Data.GuidPrefix)
}
func (r *recorder) ParticipantLost(p *Participant, expired bool) {
	r.lost = append(r.lost, p.Data.GuidPrefix)
	r.expired = append(r.expired, expired)
}
func (r *recorder) EndpointDiscovered(e *Endpoint) {
	r.endpoints = append(r.endpoints, e.Data.TopicName)
}
func (r *recorder) EndpointLost(e *Endpoint) { r.gone = append(r.gone, e.Data.TopicName) }

var (
	ourPrefix   = wire.GuidPrefix{0x01, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	theirPrefix = wire.GuidPrefix{0x01, 0x10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	target      = wire.LoopbackUDPv4(7412)
)

func newTest(t *testing.T) (*Discovery, *recorder) {
	rec := &recorder{}
	d, err := New(Config{
		Prefix: ourPrefix, Vendor: wire.VendorID{0x01, 0xff}, DomainID: 3,
		MetaUnicast:    []wire.Locator{wire.LoopbackUDPv4(8160)},
		DefaultUnicast: []wire.Locator{wire.LoopbackUDPv4(8161)},
		Targets:        []wire.Locator{target},
		UserData:       []byte("enclave=/;"),
		LeaseDuration:  10 * time.Second,
		AnnouncePeriod: 2 * time.Second,
		Output:         rec, Listener: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, rec
}

// spdpFrom builds a decoded SPDP DATA submessage of a remote participant.
func spdpFrom(t *testing.T, pd wire.ParticipantData, sn wire.SequenceNumber) (*wire.ReceiverState, *wire.Submessage) {
	payload, err := pd.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: pd.VendorID, Prefix: pd.GuidPrefix})
	b.Data(&wire.Data{ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter, WriterSN: sn, SerializedPayload: payload})
	var r wire.Reader
	if err := r.Reset(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	sm, err := r.Next()
	if err != nil || sm == nil {
		t.Fatal(err)
	}
	return &r.State, sm
}

func remote() wire.ParticipantData {
	return wire.ParticipantData{
		ProtocolVersion: wire.ProtocolVersion21, VendorID: wire.VendorEclipse, GuidPrefix: theirPrefix,
		BuiltinEndpoints:           BuiltinEndpoints,
		LeaseDuration:              wire.Duration{Seconds: 5},
		MetatrafficUnicastLocators: []wire.Locator{wire.LoopbackUDPv4(9000)},
		DefaultUnicastLocators:     []wire.Locator{wire.LoopbackUDPv4(9001)},
		HasDomainID:                true, DomainID: 3,
	}
}

var src = netip.MustParseAddrPort("127.0.0.1:9000")

// answer feeds d what a peer that knows us sends: a HEARTBEAT of its SEDP
// publications writer (which confirms it).
func answer(t *testing.T, d *Discovery, prefix wire.GuidPrefix, now int64) {
	t.Helper()
	answerCount++
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: prefix})
	b.InfoDst(ourPrefix)
	b.Heartbeat(&wire.Heartbeat{ReaderID: wire.EntityIDSEDPPublicationsReader, WriterID: wire.EntityIDSEDPPublicationsWriter,
		FirstSN: 1, LastSN: 0, Count: answerCount})
	feedMsg(t, d, now, b.Bytes())
}

var answerCount wire.Count

// feedMsg hands every submessage of msg to d.
func feedMsg(t *testing.T, d *Discovery, now int64, msg []byte) {
	t.Helper()
	var r wire.Reader
	if err := r.Reset(msg); err != nil {
		t.Fatal(err)
	}
	for {
		sm, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if sm == nil {
			return
		}
		d.HandleSubmessage(now, &r.State, src, sm)
	}
}

func TestAnnouncements(t *testing.T) {
	d, rec := newTest(t)
	var times []int64
	now := int64(0)
	for now < int64(7*time.Second) {
		n := len(rec.msgs)
		next := d.Tick(now)
		if len(rec.msgs) > n {
			times = append(times, now)
		}
		now = max(next, now+1)
	}
	// 4 quick announcements 200 ms apart, then every 2 s.
	want := []int64{0, 200e6, 400e6, 600e6, 2600e6, 4600e6, 6600e6}
	if !slices.Equal(times, want) {
		t.Fatalf("announced at %v", times)
	}
	if !slices.Equal(rec.sent[0], []wire.Locator{target}) {
		t.Fatalf("sent to %v", rec.sent[0])
	}
	// The message is INFO_TS-less SPDP DATA with our participant data.
	var r wire.Reader
	if err := r.Reset(rec.msgs[0]); err != nil {
		t.Fatal(err)
	}
	sm, _ := r.Next()
	if sm == nil || sm.ID != wire.SubmsgData || sm.Data.WriterID != wire.EntityIDSPDPWriter {
		t.Fatalf("not SPDP: %+v", sm)
	}
	var pd wire.ParticipantData
	if err := pd.Decode(sm.Data.SerializedPayload); err != nil {
		t.Fatal(err)
	}
	if pd.GuidPrefix != ourPrefix || pd.BuiltinEndpoints != 0x3f || string(pd.UserData) != "enclave=/;" ||
		pd.LeaseDuration.Std() != 10*time.Second || !pd.HasDomainID || pd.DomainID != 3 || pd.DomainTag != "" ||
		len(pd.MetatrafficUnicastLocators) != 1 || pd.MetatrafficUnicastLocators[0].Port != 8160 {
		t.Fatalf("announced %+v", pd)
	}
	if _, ok := r.Header, true; r.Header.Vendor != (wire.VendorID{0x01, 0xff}) {
		t.Fatal(ok)
	}
}

func TestSPDPLifecycle(t *testing.T) {
	d, rec := newTest(t)
	d.Tick(0)
	// Ignored: our own prefix, another domain, a domain tag.
	own := remote()
	own.GuidPrefix = ourPrefix
	other := remote()
	other.DomainID = 4
	tagged := remote()
	tagged.DomainTag = "x"
	for _, pd := range []wire.ParticipantData{own, other, tagged} {
		rs, sm := spdpFrom(t, pd, 1)
		if !d.HandleSubmessage(0, rs, src, sm) {
			t.Fatal("SPDP not claimed")
		}
	}
	if len(rec.found) != 0 || d.Stats().SPDPIgnored != 3 {
		t.Fatalf("found %v, ignored %d", rec.found, d.Stats().SPDPIgnored)
	}
	// Announced: a unicast probe goes to its metatraffic locator, but it
	// is not reported before it answers.
	n := len(rec.sent)
	rs, sm := spdpFrom(t, remote(), 1)
	d.HandleSubmessage(1e9, rs, src, sm)
	if len(rec.found) != 0 || d.Participant(theirPrefix) == nil || d.Participant(theirPrefix).Confirmed() {
		t.Fatalf("found %v before it answered", rec.found)
	}
	replied := false
	for _, to := range rec.sent[n:] {
		if slices.Contains(to, wire.LoopbackUDPv4(9000)) {
			replied = true
		}
	}
	if !replied {
		t.Fatal("no unicast reply")
	}
	// It answers (SEDP): discovered.
	answer(t, d, theirPrefix, 1e9)
	if !slices.Equal(rec.found, []wire.GuidPrefix{theirPrefix}) {
		t.Fatalf("found %v", rec.found)
	}
	// Same SN again (periodic resend) renews the lease, no new discovery.
	d.HandleSubmessage(4e9, rs, src, sm)
	if len(rec.found) != 1 {
		t.Fatal("rediscovered on resend")
	}
	// Not expired at 8.9 s (lease 5 s from 4 s), expired at 9 s.
	d.Tick(8.9e9)
	if len(rec.lost) != 0 {
		t.Fatal("expired early")
	}
	d.Renew(theirPrefix, 8.9e9) // any traffic renews
	d.Tick(13.8e9)
	if len(rec.lost) != 0 {
		t.Fatal("Renew ignored")
	}
	d.Tick(13.9e9)
	if len(rec.lost) != 1 || !rec.expired[0] {
		t.Fatalf("lost %v expired %v", rec.lost, rec.expired)
	}
	// Comes back with the same prefix: discovered again.
	d.HandleSubmessage(14e9, rs, src, sm)
	answer(t, d, theirPrefix, 14e9)
	if len(rec.found) != 2 {
		t.Fatal("not rediscovered")
	}
	// Disposed.
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: theirPrefix})
	q := wire.InlineQos{HasKeyHash: true, KeyHash: wire.GUID{Prefix: theirPrefix, Entity: wire.EntityIDParticipant}.Bytes(),
		HasStatusInfo: true, StatusInfo: 3}
	b.Data(&wire.Data{ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter, WriterSN: 2, InlineQos: wire.ParameterList{Data: q.Append(nil)}})
	var r wire.Reader
	r.Reset(b.Bytes())
	sm2, _ := r.Next()
	d.HandleSubmessage(15e9, &r.State, src, sm2)
	if len(rec.lost) != 2 || rec.expired[1] {
		t.Fatalf("dispose: lost %v expired %v", rec.lost, rec.expired)
	}
	st := d.Stats()
	if st.ParticipantsDiscovered != 2 || st.ParticipantsExpired != 1 || st.ParticipantsDisposed != 1 || st.Participants != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestMalformedSPDP(t *testing.T) {
	d, rec := newTest(t)
	bad := [][]byte{
		nil,
		{0, 1, 0, 0},              // CDR, not PL_CDR
		{0, 3, 0, 0, 0x50, 0, 16}, // truncated parameter
		{0, 3, 0, 0, 1, 0, 0, 0},  // sentinel only: no participant GUID
	}
	for _, p := range bad {
		var b wire.Builder
		b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: theirPrefix})
		b.Data(&wire.Data{WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: p})
		var r wire.Reader
		r.Reset(b.Bytes())
		sm, err := r.Next()
		if err != nil || sm == nil {
			continue
		}
		d.HandleSubmessage(0, &r.State, src, sm)
	}
	if len(rec.found) != 0 {
		t.Fatal("malformed SPDP discovered something")
	}
	if d.Stats().SPDPMalformed < 3 {
		t.Fatalf("malformed count %d", d.Stats().SPDPMalformed)
	}
}

func TestAckCounts(t *testing.T) {
	var a AckCounts
	w := wire.EntityIDSEDPPublicationsWriter
	r := wire.GUID{Prefix: theirPrefix, Entity: wire.EntityIDSEDPPublicationsReader}
	steps := []struct {
		c    wire.Count
		want bool
	}{{1, false}, {2, false}, {2, false}, {5, false}, {1, true}, {2, false}}
	for i, s := range steps {
		if got := a.Restarted(w, r, s.c); got != s.want {
			t.Errorf("step %d: count %d restarted=%v", i, s.c, got)
		}
	}
	a.Forget(theirPrefix)
	if a.Restarted(w, r, 0) {
		t.Error("forgotten reader restarted")
	}
}

// FuzzSPDPPayload feeds arbitrary SPDP payloads: no panic, nothing
// discovered from invalid data.
func FuzzSPDPPayload(f *testing.F) {
	p, _ := (&wire.ParticipantData{GuidPrefix: theirPrefix, BuiltinEndpoints: 0x3f, LeaseDuration: wire.Duration{Seconds: 1},
		MetatrafficUnicastLocators: []wire.Locator{wire.LoopbackUDPv4(9)}}).Encode(nil)
	f.Add(p)
	f.Add([]byte{0, 3, 0, 0, 1, 0, 0, 0})
	e := wire.NewEndpointData(true)
	e.EndpointGUID = wire.GUID{Prefix: theirPrefix, Entity: wire.NewEntityID(1, 3)}
	e.TopicName, e.TypeName = "rt/x", "y"
	s, _ := e.Encode(nil)
	f.Add(s)
	f.Fuzz(func(t *testing.T, payload []byte) {
		d, _ := newTest(t)
		var b wire.Builder
		b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: theirPrefix})
		b.Data(&wire.Data{WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: payload})
		b.Data(&wire.Data{WriterID: wire.EntityIDSEDPPublicationsWriter, WriterSN: 1, SerializedPayload: payload})
		b.Heartbeat(&wire.Heartbeat{WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: 1, Count: 1})
		var r wire.Reader
		if r.Reset(b.Bytes()) != nil {
			return
		}
		for now := int64(0); ; now += 1e6 {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
			d.HandleSubmessage(now, &r.State, src, sm)
		}
		d.Tick(1e9)
		d.Tick(30e9)
	})
}

// pipe connects Discoveries in memory: every datagram sent to a locator
// is queued for the Discovery that owns its port.
type pipe struct {
	byPort map[uint32]*Discovery
	q      []pipeMsg
}

type pipeMsg struct {
	to  *Discovery
	msg []byte
}

type pipeOut struct {
	p *pipe
}

func (o pipeOut) Send(to []wire.Locator, msg []byte) {
	for _, l := range to {
		if d := o.p.byPort[l.Port]; d != nil {
			o.p.q = append(o.p.q, pipeMsg{d, slices.Clone(msg)})
		}
	}
}

func (p *pipe) pump(now int64) {
	for len(p.q) > 0 {
		m := p.q[0]
		p.q = p.q[1:]
		var r wire.Reader
		if r.Reset(m.msg) != nil {
			continue
		}
		for {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
			m.to.HandleSubmessage(now, &r.State, src, sm)
		}
	}
}

// liveSet is a Listener keeping the set of live remote endpoints.
type liveSet struct {
	recorder
	live map[wire.GUID]bool
}

func (l *liveSet) EndpointDiscovered(e *Endpoint) { l.live[e.GUID()] = true }
func (l *liveSet) EndpointLost(e *Endpoint)       { delete(l.live, e.GUID()) }

func TestSEDPLateJoinerAfterChurn(t *testing.T) {
	p := &pipe{byPort: map[uint32]*Discovery{}}
	mk := func(prefix wire.GuidPrefix, port uint16, peer uint16, l Listener) *Discovery {
		d, err := New(Config{
			Prefix: prefix, Vendor: wire.VendorID{0x01, 0xff},
			MetaUnicast: []wire.Locator{wire.LoopbackUDPv4(port)}, DefaultUnicast: []wire.Locator{wire.LoopbackUDPv4(port + 1)},
			Targets: []wire.Locator{wire.LoopbackUDPv4(peer)}, Output: pipeOut{p}, Listener: l, SEDPDepth: 32,
		})
		if err != nil {
			t.Fatal(err)
		}
		p.byPort[uint32(port)] = d
		return d
	}
	d1 := mk(ourPrefix, 100, 200, &recorder{})
	announce := func(i uint32) wire.GUID {
		e := wire.NewEndpointData(true)
		e.EndpointGUID = wire.GUID{Prefix: ourPrefix, Entity: wire.NewEntityID(i, wire.EntityKindWriterNoKey)}
		e.TopicName, e.TypeName = "rt/t", "x"
		if err := d1.Announce(0, &e); err != nil {
			t.Fatal(err)
		}
		return e.EndpointGUID
	}
	var live []wire.GUID
	for i := uint32(1); i <= 3; i++ {
		live = append(live, announce(i))
	}
	for i := uint32(10); i < 110; i++ {
		g := announce(i)
		if err := d1.Retract(0, g); err != nil {
			t.Fatal(err)
		}
	}
	if d1.Stats().SEDPRefreshes == 0 {
		t.Fatal("no refresh")
	}
	ls := &liveSet{live: map[wire.GUID]bool{}}
	mk(theirPrefix, 200, 100, ls)
	for now := int64(0); now < 3e9; now += 10e6 {
		for _, d := range p.byPort {
			d.Tick(now)
		}
		p.pump(now)
	}
	if len(ls.live) != 3 {
		t.Fatalf("late joiner sees %d endpoints, want 3", len(ls.live))
	}
	for _, g := range live {
		if !ls.live[g] {
			t.Fatalf("missing %v", g)
		}
	}
}

// TestSEDPInlineKeyHashAccepted: we no longer send the endpoint key hash as
// inline QoS, but a peer that does (the standard allows it) is still
// understood, and so is its disposal by key hash alone.
func TestSEDPInlineKeyHashAccepted(t *testing.T) {
	d, rec := newTest(t)
	rs, sm := spdpFrom(t, remote(), 1)
	d.HandleSubmessage(0, rs, src, sm)
	e := wire.NewEndpointData(true)
	e.EndpointGUID = wire.GUID{Prefix: theirPrefix, Entity: wire.NewEntityID(7, wire.EntityKindWriterNoKey)}
	e.TopicName, e.TypeName = "rt/keyhash", "std_msgs::msg::dds_::String_"
	payload, err := e.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	kh := wire.InlineQos{HasKeyHash: true, KeyHash: e.EndpointGUID.Bytes()}
	dispose := wire.InlineQos{HasKeyHash: true, KeyHash: e.EndpointGUID.Bytes(), HasStatusInfo: true, StatusInfo: 3}
	feed := func(now int64, data wire.Data, sn wire.SequenceNumber) {
		t.Helper()
		var b wire.Builder
		b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: theirPrefix})
		data.WriterID, data.ReaderID, data.WriterSN = wire.EntityIDSEDPPublicationsWriter, wire.EntityIDSEDPPublicationsReader, sn
		if err := b.Data(&data); err != nil {
			t.Fatal(err)
		}
		b.Heartbeat(&wire.Heartbeat{WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: sn, Count: wire.Count(sn)})
		var r wire.Reader
		if err := r.Reset(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		for {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
			d.HandleSubmessage(now, &r.State, src, sm)
		}
	}
	feed(1e6, wire.Data{InlineQos: wire.ParameterList{Data: kh.Append(nil)}, SerializedPayload: payload}, 1)
	if len(rec.found) != 1 {
		t.Fatal("participant not discovered by its SEDP")
	}
	if !slices.Equal(rec.endpoints, []string{"rt/keyhash"}) {
		t.Fatalf("endpoints %v", rec.endpoints)
	}
	feed(2e6, wire.Data{InlineQos: wire.ParameterList{Data: dispose.Append(nil)}}, 2)
	if !slices.Equal(rec.gone, []string{"rt/keyhash"}) {
		t.Fatalf("gone %v", rec.gone)
	}
}

// TestAnnounceNoInlineQos: live SEDP announcements carry no inline QoS
// (flags E|D, as Cyclone DDS and Fast DDS send them); the retraction
// carries KEY_HASH and STATUS_INFO and no payload, as Fast DDS does.
func TestAnnounceNoInlineQos(t *testing.T) {
	d, rec := newTest(t)
	rs, sm := spdpFrom(t, remote(), 1)
	d.HandleSubmessage(0, rs, src, sm)
	answer(t, d, theirPrefix, 0)
	e := wire.NewEndpointData(false)
	e.EndpointGUID = wire.GUID{Prefix: ourPrefix, Entity: wire.NewEntityID(3, wire.EntityKindReaderNoKey)}
	e.TopicName, e.TypeName = "rt/t", "T"
	n := len(rec.msgs)
	if err := d.Announce(1e6, &e); err != nil {
		t.Fatal(err)
	}
	if err := d.Retract(2e6, e.EndpointGUID); err != nil {
		t.Fatal(err)
	}
	var shapes []string
	for _, m := range rec.msgs[n:] {
		var r wire.Reader
		if err := r.Reset(m); err != nil {
			t.Fatal(err)
		}
		for {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
			if sm.ID != wire.SubmsgData || sm.Data.WriterID != wire.EntityIDSEDPSubscriptionsWriter {
				continue
			}
			var q wire.InlineQos
			if !sm.Data.InlineQos.Empty() {
				if q, err = wire.DecodeInlineQos(sm.Data.InlineQos); err != nil {
					t.Fatal(err)
				}
			}
			shapes = append(shapes, fmt.Sprintf("flags=%#x inline=%v/%v payload=%v", sm.Flags, q.HasKeyHash, q.HasStatusInfo, sm.Data.SerializedPayload != nil))
		}
	}
	want := []string{"flags=0x5 inline=false/false payload=true", "flags=0x3 inline=true/true payload=false"}
	if !slices.Equal(shapes, want) {
		t.Fatalf("SEDP DATA shapes\n%q\nwant\n%q", shapes, want)
	}
}

// With Config.Secure, SPDP carries the security parameters and bits, SEDP
// runs on the secure entity ids, and endpoints are exchanged only once
// both sides authorized each other.
func TestSecureSEDPWaitsForAuthorization(t *testing.T) {
	p := &pipe{byPort: map[uint32]*Discovery{}}
	authorized := map[wire.GuidPrefix]bool{}
	mk := func(prefix wire.GuidPrefix, port uint16, peer uint16, l Listener) *Discovery {
		d, err := New(Config{
			Prefix: prefix, Vendor: wire.VendorID{0x01, 0xff},
			MetaUnicast: []wire.Locator{wire.LoopbackUDPv4(port)}, DefaultUnicast: []wire.Locator{wire.LoopbackUDPv4(port + 1)},
			Targets: []wire.Locator{wire.LoopbackUDPv4(peer)}, Output: pipeOut{p}, Listener: l,
			Secure: &Secure{Builtin: 1 << 22, Parameters: []wire.Parameter{{ID: 0x1001, Value: []byte{1, 2, 3, 4}}},
				Authorized: func(g wire.GuidPrefix) bool { return authorized[g] }},
		})
		if err != nil {
			t.Fatal(err)
		}
		p.byPort[uint32(port)] = d
		return d
	}
	d1 := mk(ourPrefix, 100, 200, &recorder{})
	ls := &liveSet{live: map[wire.GUID]bool{}}
	d2 := mk(theirPrefix, 200, 100, ls)
	e := wire.NewEndpointData(true)
	e.EndpointGUID = wire.GUID{Prefix: ourPrefix, Entity: wire.NewEntityID(1, wire.EntityKindWriterNoKey)}
	e.TopicName, e.TypeName = "rt/t", "x"
	if err := d1.Announce(0, &e); err != nil {
		t.Fatal(err)
	}
	run := func(from, to int64) {
		for now := from; now < to; now += 10e6 {
			for _, d := range p.byPort {
				d.Tick(now)
			}
			p.pump(now)
		}
	}
	run(0, 2e9)
	remote := d2.Participant(ourPrefix)
	if remote == nil {
		t.Fatal("SPDP not seen")
	}
	if v, ok := wire.FindSecurity(remote.Data.Security, 0x1001); !ok || !slices.Equal(v, []byte{1, 2, 3, 4}) {
		t.Fatalf("security parameters %+v", remote.Data.Security)
	}
	want := wire.BuiltinParticipantAnnouncer | wire.BuiltinParticipantDetector | BuiltinPublicationsSecureAnnouncer |
		BuiltinPublicationsSecureDetector | BuiltinSubscriptionsSecureAnnouncer | BuiltinSubscriptionsSecureDetector | 1<<22
	if remote.Data.BuiltinEndpoints != want {
		t.Fatalf("builtin endpoints %#x, want %#x", remote.Data.BuiltinEndpoints, want)
	}
	if len(ls.live) != 0 {
		t.Fatal("endpoints exchanged before authorization")
	}
	authorized[ourPrefix], authorized[theirPrefix] = true, true
	d1.Authorize(2e9, theirPrefix)
	d2.Authorize(2e9, ourPrefix)
	run(2e9, 4e9)
	if !ls.live[e.EndpointGUID] {
		t.Fatal("endpoint not discovered after authorization")
	}
	if d1.pubW.GUID().Entity != EntityIDSEDPPublicationsSecureWriter || d2.subR.GUID().Entity != EntityIDSEDPSubscriptionsSecureReader {
		t.Fatal("SEDP not on the secure endpoints")
	}
}
