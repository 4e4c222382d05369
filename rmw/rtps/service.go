package rtps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nros-go/nros/internal/bufpool"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Services. A server is a reader on rq<name>Request and a writer on
// rr<name>Reply; a client is the opposite pair. Two request-id mappings
// exist on the wire (the wire notes, 3.4), chosen per remote peer:
//
//   - Cyclone's: a 16-byte header (client id u64, sequence number i64, in
//     the payload's byte order) between the encapsulation header and the
//     body;
//   - Fast DDS's: the plain body, with the related sample identity as
//     inline QoS (PID 0x0083 and the legacy 0x800f).
//
// A request is read with the Cyclone mapping when it comes from a Cyclone
// participant, with Fast DDS's when it carries a related sample identity
// (or comes from an eProsima or RTI participant), and with Cyclone's
// otherwise; the response goes back in the request's mapping. A client
// sends in Fast DDS's mapping when a matched server is an eProsima or RTI
// participant, in Cyclone's otherwise (Go peers and Cyclone). Its request
// sequence number is the request writer's RTPS sequence number, which is
// also a client-wide counter from 1 as Cyclone wants.
//
// Inside the transport a service sample, remote or local, travels as the
// body (in one pooled buffer, as topic samples) with its request identity
// beside it in the callback queue (callback.id), not in the payload.
//
// Service writers keep the last svcHistory samples at least (and up to
// svcHistoryBytes), whatever depth they announce (Cyclone's writer history keeps what is not
// acknowledged): with the announced keep last 10, a burst of requests
// beyond 10 over a lossy link overwrote requests or responses that a lost
// datagram had left unacknowledged, and the call was lost. They never
// block: a KEEP_ALL history would make SendRequest wait for
// acknowledgements (the reader sends them late, on HEARTBEATs). A server
// never blocks in SendResponse: a response whose client's response reader
// is not matched yet (or that finds the writer's history full) waits in
// the server (svcMaxPending responses, svcReplyTimeout at most) and goes
// out once the reader matches.

// Request-id mappings (rmw.RequestID.Mapping).
const (
	mapCyclone uint8 = 1
	mapFastDDS uint8 = 2
)

// cycloneHeader is the size of Cyclone's request header.
const cycloneHeader = 16

// svcReplyTimeout is how long a response waits for the response reader of
// its client to be matched; then it is sent to the readers that are
// matched (Stats.UnmatchedResponses), or dropped when there are none
// (Stats.DroppedResponses), and logged. Cyclone's and Fast DDS's servers
// wait up to 100 ms, blocking, then send to no one.
const svcReplyTimeout = 5 * time.Second

// svcMaxPending bounds the responses waiting in one server; beyond it the
// oldest is dropped (counted and logged).
const svcMaxPending = 1024

// svcRetry is how soon a server tries again to write waiting responses
// that found its writer's history full of unacknowledged samples.
const svcRetry = 10 * time.Millisecond

// svcHistory is the least history depth of a service writer: far more
// than the requests or responses one endpoint has in flight.
const svcHistory = endpoint.DefaultMaxSamples

// svcHistoryBytes bounds the payload bytes a service writer keeps (large
// responses: fewer of them).
const svcHistoryBytes = 8 << 20

// ErrBadRequest is counted (Stats.BadServiceSamples) for a service sample
// that does not decode in its mapping.
var ErrBadRequest = errors.New("rtps: malformed service sample")

var (
	_ rmw.ServiceTransport = (*Transport)(nil)
	_ rmw.ServiceServer    = (*ServiceServer)(nil)
	_ rmw.ServiceClient    = (*ServiceClient)(nil)
)

// ServiceServer is the rtps implementation of rmw.ServiceServer.
type ServiceServer struct {
	t     *Transport
	req   *Subscription
	resp  *Publisher
	idTag string // serviceid
	name  string // the ROS service name

	// guarded by t.mu
	pending []pendingReply // responses waiting for their reader, in order
	logged  int64          // when a drop was last logged (t.cfg.Clock)
}

// pendingReply is a response waiting for its client's response reader.
type pendingReply struct {
	id   rmw.RequestID
	data []byte
	at   int64 // when SendResponse queued it (t.cfg.Clock)
}

// ServiceClient is the rtps implementation of rmw.ServiceClient.
type ServiceClient struct {
	t     *Transport
	req   *Publisher
	resp  *Subscription
	cid   [16]byte // the client id in Cyclone's mapping (8 bytes used)
	idTag string   // clientid
}

// payloadOrder returns the byte order of a serialized payload from its
// encapsulation header (CDR_BE 00 00, CDR_LE 00 01, and the PL variants).
func payloadOrder(data []byte) binary.ByteOrder {
	if len(data) >= 2 && data[1]&1 == 0 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// cycloneID puts a 64-bit Cyclone client id into a RequestID.Writer.
func cycloneID(v uint64) [16]byte {
	var g [16]byte
	binary.LittleEndian.PutUint64(g[:8], v)
	return g
}

// DecodeCycloneSample splits a payload in Cyclone's service mapping into
// the client id, the sequence number and the body (encapsulation header
// followed by the body bytes, newly allocated).
func DecodeCycloneSample(payload []byte) (client uint64, seq int64, body []byte, err error) {
	client, seq, err = cycloneHeaderOf(payload)
	if err != nil {
		return 0, 0, nil, err
	}
	return client, seq, cutHeader(payload, cycloneHeader), nil
}

// cycloneHeaderOf reads Cyclone's header of a service payload.
func cycloneHeaderOf(payload []byte) (client uint64, seq int64, err error) {
	if len(payload) < 4+cycloneHeader {
		return 0, 0, fmt.Errorf("%w: %d bytes, want at least %d", ErrBadRequest, len(payload), 4+cycloneHeader)
	}
	if payload[0] != 0 || payload[1] > 3 {
		return 0, 0, fmt.Errorf("%w: encapsulation %02x %02x", ErrBadRequest, payload[0], payload[1])
	}
	bo := payloadOrder(payload)
	return bo.Uint64(payload[4:12]), int64(bo.Uint64(payload[12:20])), nil
}

// cutHeader returns a new slice of payload without the cut bytes that
// follow its encapsulation header.
func cutHeader(payload []byte, cut int) []byte {
	body := make([]byte, 0, len(payload)-cut)
	body = append(body, payload[:4]...)
	return append(body, payload[4+cut:]...)
}

// EncodeCycloneSample puts Cyclone's header in front of body (a serialized
// request or response with its encapsulation header).
func EncodeCycloneSample(dst []byte, client uint64, seq int64, body []byte) []byte {
	if len(body) < 4 {
		return append(dst, body...)
	}
	var h [cycloneHeader]byte
	bo := payloadOrder(body)
	bo.PutUint64(h[:8], client)
	bo.PutUint64(h[8:], uint64(seq))
	dst = append(dst, body[:4]...)
	dst = append(dst, h[:]...)
	return append(dst, body[4:]...)
}

// svcID makes a clientid/serviceid value: the GUID prefix bytes and the
// entity id, hex, joined by '.' (as rmw_cyclonedds does).
func svcID(g wire.GUID) string {
	var b strings.Builder
	for i, x := range g.Bytes() {
		if i > 0 {
			b.WriteByte('.')
		}
		fmt.Fprintf(&b, "%x", x)
	}
	return b.String()
}

// fastVendor reports whether a participant of vendor v speaks Fast DDS's
// service mapping.
func fastVendor(v wire.VendorID) bool { return v == wire.VendorEProsima || v == wire.VendorRTI }

func (t *Transport) vendorOf(p wire.GuidPrefix) wire.VendorID {
	if p == t.prefix {
		return Vendor
	}
	if pp := t.disc.Participant(p); pp != nil {
		return pp.Data.VendorID
	}
	return wire.VendorUnknown
}

// serviceNames maps a service to its DDS topics and types.
func serviceNames(service, reqType, respType string) (rq, rr, rqType, rrType string, err error) {
	rq, rr, err = rmw.ServiceTopics(service)
	if err != nil {
		return
	}
	if _, rqType, err = names(service, reqType); err != nil {
		return
	}
	_, rrType, err = names(service, respType)
	return
}

// serviceEndpointOptions splits a service's options into those of its
// request and response endpoints: each announces the hash of its own
// message type (as rmw_cyclonedds does), not the service type's.
func serviceEndpointOptions(opts rmw.EndpointOptions) (req, resp rmw.EndpointOptions, err error) {
	if err := rmw.CheckEndpointOptions(opts); err != nil {
		return req, resp, err
	}
	req, resp = opts, opts
	req.TypeHash, resp.TypeHash = opts.RequestTypeHash, opts.ResponseTypeHash
	return req, resp, nil
}

// NewServiceServer creates the request reader and the response writer of
// a service server and announces them (with serviceid USER_DATA).
func (t *Transport) NewServiceServer(node rmw.NodeInfo, service, reqType, respType string, qos rmw.QoS, handle func(rmw.Request), opts rmw.EndpointOptions) (rmw.ServiceServer, error) {
	rq, rr, rqType, rrType, err := serviceNames(service, reqType, respType)
	if err != nil {
		return nil, err
	}
	if handle == nil {
		return nil, fmt.Errorf("rtps: nil handler for service %q", service)
	}
	reqOpts, respOpts, err := serviceEndpointOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &ServiceServer{t: t, name: service}
	deliver := func(rmw.Sample) {} // service samples go to svcDeliver
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	s.idTag = svcID(wire.GUID{Prefix: t.prefix, Entity: wire.NewEntityID(t.entitySeq+1, 0)})
	t.nextUserData = []byte("serviceid=" + s.idTag + ";")
	t.nextService = true
	s.req, err = t.newSubscriptionLocked(node, rq, rqType, qos, deliver, reqOpts, false)
	if err != nil {
		t.nextUserData = nil
		t.mu.Unlock()
		return nil, err
	}
	s.req.svc = t.requestSample
	s.req.svcDeliver = func(smp rmw.Sample, id rmw.RequestID) { handle(rmw.Request{Data: smp.Data, ID: id}) }
	t.nextUserData = []byte("serviceid=" + s.idTag + ";")
	t.nextService = true
	s.resp, err = t.newPublisherLocked(node, service, rr, rrType, qos, respOpts, false)
	t.nextUserData = nil
	if err != nil {
		t.mu.Unlock()
		s.req.Close()
		return nil, err
	}
	s.resp.server = s
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	return s, nil
}

// NewServiceClient creates the request writer and the response reader of
// a service client and announces them (with clientid USER_DATA).
func (t *Transport) NewServiceClient(node rmw.NodeInfo, service, reqType, respType string, qos rmw.QoS, deliver func(rmw.Response), opts rmw.EndpointOptions) (rmw.ServiceClient, error) {
	rq, rr, rqType, rrType, err := serviceNames(service, reqType, respType)
	if err != nil {
		return nil, err
	}
	if deliver == nil {
		return nil, fmt.Errorf("rtps: nil deliver function for service %q", service)
	}
	reqOpts, respOpts, err := serviceEndpointOptions(opts)
	if err != nil {
		return nil, err
	}
	c := &ServiceClient{t: t}
	recv := func(rmw.Sample) {} // service samples go to svcDeliver
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	c.idTag = svcID(wire.GUID{Prefix: t.prefix, Entity: wire.NewEntityID(t.entitySeq+1, 0)})
	t.nextUserData = []byte("clientid=" + c.idTag + ";")
	t.nextService = true
	c.req, err = t.newPublisherLocked(node, service, rq, rqType, qos, reqOpts, false)
	if err != nil {
		t.nextUserData = nil
		t.mu.Unlock()
		return nil, err
	}
	t.nextUserData = []byte("clientid=" + c.idTag + ";")
	t.nextService = true
	c.resp, err = t.newSubscriptionLocked(node, rr, rrType, qos, recv, respOpts, false)
	t.nextUserData = nil
	if err != nil {
		t.mu.Unlock()
		c.req.Close()
		return nil, err
	}
	c.resp.svc = t.responseSample
	c.resp.svcDeliver = func(smp rmw.Sample, id rmw.RequestID) {
		if c.mine(id.Writer) {
			deliver(rmw.Response{Data: smp.Data, Seq: id.Seq})
		}
	}
	h := fnv.New64a()
	g := c.req.guid.Bytes()
	h.Write(g[:])
	c.cid = cycloneID(h.Sum64())
	t.graphDirty = true
	t.kickNeeded = true
	t.finishLocked()
	return c, nil
}

// mine reports whether a response addressed to id is this client's: its
// Cyclone client id, its response reader or its request writer.
func (c *ServiceClient) mine(id [16]byte) bool {
	return id == c.cid || id == c.resp.guid.Bytes() || id == c.req.guid.Bytes()
}

// queueService queues a remote service sample for s (t.mu held): one
// pooled copy of the payload without the cut bytes of Cyclone's header,
// the identity beside it.
func (t *Transport) queueService(s *Subscription, ts int64, writer wire.GUID, payload []byte, cut int, id rmw.RequestID) {
	if len(t.callbacks) >= maxQueuedCallbacks {
		t.st.DroppedSamples++
		return
	}
	t.st.Delivered++
	buf := bufpool.Copy(payload)
	if cut > 0 {
		b := *buf
		n := copy(b[4:], b[4+cut:])
		*buf = b[:4+n]
	}
	t.callbacks = append(t.callbacks, callback{gate: &s.closed, sub: s, buf: buf, id: id,
		smp: rmw.Sample{Data: *buf, SourceTimestamp: ts, PublisherGID: writer.Bytes()}})
}

// queueLocalService queues a copy of data, a service sample written by
// this participant, for the local subscription s (t.mu held).
func (t *Transport) queueLocalService(s *Subscription, ts int64, writer wire.GUID, data []byte, id rmw.RequestID) {
	t.st.Delivered++
	buf := bufpool.Copy(data)
	t.callbacks = append(t.callbacks, callback{gate: &s.closed, sub: s, buf: buf, id: id,
		smp: rmw.Sample{Data: *buf, SourceTimestamp: ts, PublisherGID: writer.Bytes()}})
}

// decodeInline decodes an inline QoS list; an absent one is empty.
func decodeInline(inline wire.ParameterList) (wire.InlineQos, error) {
	if len(inline.Data) == 0 {
		return wire.InlineQos{}, nil
	}
	q, err := wire.DecodeInlineQos(inline)
	if err != nil {
		return q, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return q, nil
}

// DecodeRequest reads a remote request in the mapping its sender uses
// (see the file comment): vendor is the sender participant's vendor. body
// aliases payload for the Fast DDS mapping and is new for Cyclone's.
func DecodeRequest(vendor wire.VendorID, writer wire.GUID, sn wire.SequenceNumber, payload []byte, inline wire.ParameterList) (body []byte, id rmw.RequestID, err error) {
	id, cut, err := requestIdentity(vendor, writer, sn, payload, inline)
	if err != nil || cut == 0 {
		return payload, id, err
	}
	return cutHeader(payload, cut), id, nil
}

// requestIdentity reads the identity of a remote request; cut is the
// number of bytes of Cyclone's header after the encapsulation header (0
// in Fast DDS's mapping).
func requestIdentity(vendor wire.VendorID, writer wire.GUID, sn wire.SequenceNumber, payload []byte, inline wire.ParameterList) (id rmw.RequestID, cut int, err error) {
	q, err := decodeInline(inline)
	if err != nil {
		return id, 0, err
	}
	id.Origin = writer.Bytes()
	if vendor == wire.VendorEclipse || (!q.HasRelatedSampleIdentity && !fastVendor(vendor)) {
		client, seq, err := cycloneHeaderOf(payload)
		if err != nil {
			return id, 0, err
		}
		id.Writer, id.Seq, id.Mapping = cycloneID(client), seq, mapCyclone
		return id, cycloneHeader, nil
	}
	if len(payload) < 4 {
		return id, 0, fmt.Errorf("%w: %d bytes", ErrBadRequest, len(payload))
	}
	id.Writer, id.Seq, id.Mapping = writer.Bytes(), int64(sn), mapFastDDS
	if q.HasRelatedSampleIdentity && q.RelatedSampleIdentity.Writer != (wire.GUID{}) {
		id.Writer = q.RelatedSampleIdentity.Writer.Bytes()
	}
	return id, 0, nil
}

// DecodeResponse reads a remote response: with a related sample identity
// it is Fast DDS's mapping, otherwise Cyclone's. The returned id names the
// client the response is for (Writer) and the request (Seq).
func DecodeResponse(payload []byte, inline wire.ParameterList) (body []byte, id rmw.RequestID, err error) {
	id, cut, err := responseIdentity(payload, inline)
	if err != nil || cut == 0 {
		return payload, id, err
	}
	return cutHeader(payload, cut), id, nil
}

// responseIdentity is requestIdentity for a remote response.
func responseIdentity(payload []byte, inline wire.ParameterList) (id rmw.RequestID, cut int, err error) {
	q, err := decodeInline(inline)
	if err != nil {
		return id, 0, err
	}
	if q.HasRelatedSampleIdentity {
		if len(payload) < 4 {
			return id, 0, fmt.Errorf("%w: %d bytes", ErrBadRequest, len(payload))
		}
		id.Writer, id.Seq, id.Mapping = q.RelatedSampleIdentity.Writer.Bytes(), int64(q.RelatedSampleIdentity.SN), mapFastDDS
		return id, 0, nil
	}
	client, seq, err := cycloneHeaderOf(payload)
	if err != nil {
		return id, 0, err
	}
	id.Writer, id.Seq, id.Mapping = cycloneID(client), seq, mapCyclone
	return id, cycloneHeader, nil
}

// requestSample is the reader hook of a server's request reader (t.mu
// held).
func (t *Transport) requestSample(s *Subscription, smp endpoint.Sample) {
	id, cut, err := requestIdentity(t.vendorOf(smp.Writer.Prefix), smp.Writer, smp.SN, smp.Payload, smp.InlineQos)
	if err != nil {
		t.st.BadServiceSamples++
		return
	}
	t.queueService(s, smp.SourceTimestamp, smp.Writer, smp.Payload, cut, id)
}

// responseSample is the reader hook of a client's response reader (t.mu
// held).
func (t *Transport) responseSample(s *Subscription, smp endpoint.Sample) {
	id, cut, err := responseIdentity(smp.Payload, smp.InlineQos)
	if err != nil {
		t.st.BadServiceSamples++
		return
	}
	t.queueService(s, smp.SourceTimestamp, smp.Writer, smp.Payload, cut, id)
}

// maxScratch bounds the encoding buffer a Transport keeps between service
// writes.
const maxScratch = 1 << 20

// cycloneScratch encodes a sample in Cyclone's mapping into the
// Transport's scratch buffer (t.mu held): the writer copies it into its
// history, so the buffer serves the next write.
func (t *Transport) cycloneScratch(client uint64, seq int64, body []byte) []byte {
	b := EncodeCycloneSample(t.scratch[:0], client, seq, body)
	if cap(b) <= maxScratch {
		t.scratch = b[:0]
	}
	return b
}

// svcSample is one service sample to write: remote (with inline QoS qos)
// for remote readers; body, with id beside it, for local subscriptions.
type svcSample struct {
	remote, qos, body []byte
	id                rmw.RequestID
}

// writeServiceLocked writes one service sample without blocking (t.mu
// held): it fails with endpoint.ErrWouldBlock when the writer's history is
// full of unacknowledged samples. build makes the sample for the sequence
// number it will get.
func (t *Transport) writeServiceLocked(p *Publisher, build func(sn wire.SequenceNumber) svcSample) (wire.SequenceNumber, error) {
	ts := t.cfg.WallNow()
	smp := build(p.w.LastSN() + 1)
	remote, err := t.wirePayload(p, smp.remote) // SEC_BODY-encoded when the topic is protected
	if err != nil {
		return 0, err
	}
	sn, err := p.w.WriteChange(t.cfg.Clock.Now(), &endpoint.Change{Payload: remote, SourceTimestamp: ts, InlineQos: smp.qos})
	if err != nil {
		return 0, err
	}
	t.st.Published++
	for _, s := range p.local {
		t.queueLocalService(s, ts, p.guid, smp.body, smp.id)
	}
	if p.w.NextDeadline() < t.sleepUntil {
		t.kickNeeded = true
	}
	return sn, nil
}

// writeService is writeServiceLocked for a caller that may wait: up to
// maxBlocking for room in the writer's history.
func (t *Transport) writeService(p *Publisher, build func(sn wire.SequenceNumber) svcSample) (wire.SequenceNumber, error) {
	t.mu.Lock()
	deadline := t.cfg.Clock.Now() + int64(maxBlocking)
	for {
		if p.closed {
			t.mu.Unlock()
			return 0, ErrClosed
		}
		sn, err := t.writeServiceLocked(p, build)
		if err == nil {
			t.finishLocked()
			return sn, nil
		}
		if err != endpoint.ErrWouldBlock || t.cfg.Clock.Now() > deadline {
			t.mu.Unlock()
			return 0, fmt.Errorf("rtps: write on %s: %w", p.ed.TopicName, err)
		}
		waitCond(t, deadline)
	}
}

// SendRequest writes a request and returns its sequence number (the
// request writer's RTPS sequence number). It waits up to 100 ms when the
// request writer's history is full of unacknowledged requests, then fails.
func (c *ServiceClient) SendRequest(data []byte) (int64, error) {
	if len(data) < 4 {
		return 0, fmt.Errorf("rtps: request of %d bytes has no encapsulation header", len(data))
	}
	t := c.t
	sn, err := t.writeService(c.req, func(sn wire.SequenceNumber) svcSample {
		fast := false
		for g := range c.req.remote {
			if fastVendor(t.vendorOf(g.Prefix)) {
				fast = true
				break
			}
		}
		smp := svcSample{body: data, id: rmw.RequestID{Writer: c.cid, Seq: int64(sn), Mapping: mapCyclone, Origin: c.req.guid.Bytes()}}
		if fast {
			q := wire.InlineQos{HasRelatedSampleIdentity: true,
				RelatedSampleIdentity: wire.SampleIdentity{Writer: c.resp.guid, SN: wire.SequenceNumberUnknown}}
			smp.remote, smp.qos = data, q.Append(nil)
			return smp
		}
		smp.remote = t.cycloneScratch(binary.LittleEndian.Uint64(c.cid[:8]), int64(sn), data)
		return smp
	})
	return int64(sn), err
}

// ServiceAvailable reports whether a server's request reader and response
// writer are both matched, and a remote request reader has also matched
// the request writer (it has acknowledged it): a volatile reader that
// matches a writer late skips what was written before, so a request sent
// earlier would be lost.
func (c *ServiceClient) ServiceAvailable() bool {
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.req.closed || c.resp.closed.Load() {
		return false
	}
	if len(c.resp.remote)+len(c.resp.local) == 0 {
		return false
	}
	if len(c.req.local) > 0 {
		return true
	}
	for g := range c.req.remote {
		if c.req.w.HeardFrom(g) {
			return true
		}
	}
	return false
}

// Close retracts both endpoints of the client.
func (c *ServiceClient) Close() error {
	return errors.Join(c.req.Close(), c.resp.Close())
}

// GID returns the GUID of the client's request writer.
func (c *ServiceClient) GID() [16]byte { return c.req.guid.Bytes() }

// GID returns the GUID of the server's request reader.
func (s *ServiceServer) GID() [16]byte { return s.req.guid.Bytes() }

// Close retracts both endpoints of the server; responses still waiting
// are discarded.
func (s *ServiceServer) Close() error {
	s.t.mu.Lock()
	s.pending = nil
	s.t.mu.Unlock()
	return errors.Join(s.req.Close(), s.resp.Close())
}

// readyForLocked reports whether the response reader of the client that
// sent id is matched with the response writer (t.mu held).
func (s *ServiceServer) readyForLocked(id rmw.RequestID) bool {
	t, p := s.t, s.resp
	origin := wire.GUIDFromBytes(id.Origin)
	if id.Mapping == mapFastDDS {
		target := wire.GUIDFromBytes(id.Writer)
		if target.Entity[3]&0x04 != 0 {
			if p.remote[target] {
				return true
			}
			for _, l := range p.local {
				if l.guid == target {
					return true
				}
			}
			return false
		}
	}
	// By clientid when the request writer has one, else by participant.
	var cid string
	if w := t.remW[origin]; w != nil {
		cid, _ = wire.UserDataValue(w.Data.UserData, "clientid")
	}
	for g := range p.remote {
		if cid != "" {
			if r := t.remR[g]; r != nil {
				if v, _ := wire.UserDataValue(r.Data.UserData, "clientid"); v == cid {
					return true
				}
			}
			continue
		}
		if g.Prefix == origin.Prefix {
			return true
		}
	}
	if origin.Prefix == t.prefix {
		return len(p.local) > 0
	}
	return false
}

// SendResponse sends the response to request id in the request's mapping.
// It never blocks: when the client's response reader is not matched yet
// (a request can arrive before the server has discovered it), or the
// writer's history is full of unacknowledged responses, the response
// waits in the server and goes out as soon as it can; after
// svcReplyTimeout it goes to the response readers that are matched
// (Stats.UnmatchedResponses), or is dropped when there are none
// (Stats.DroppedResponses), and logged.
func (s *ServiceServer) SendResponse(id rmw.RequestID, data []byte) error {
	if len(data) < 4 {
		return fmt.Errorf("rtps: response of %d bytes has no encapsulation header", len(data))
	}
	t := s.t
	t.mu.Lock()
	if s.resp.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	if len(s.pending) == 0 && s.readyForLocked(id) {
		_, err := s.sendLocked(id, data)
		if err == nil {
			t.finishLocked()
			return nil
		}
		if err != endpoint.ErrWouldBlock {
			t.mu.Unlock()
			return fmt.Errorf("rtps: write on %s: %w", s.resp.ed.TopicName, err)
		}
	}
	now := t.cfg.Clock.Now()
	if len(s.pending) >= svcMaxPending {
		s.dropLocked(now, s.pending[0], "too many responses waiting")
		s.pending[0] = pendingReply{}
		s.pending = s.pending[1:]
	}
	s.pending = append(s.pending, pendingReply{id: id, data: slices.Clone(data), at: now})
	s.flushLocked(now)
	t.kickNeeded = true // the timer loop takes the new deadline
	t.finishLocked()
	return nil
}

// sendLocked writes one response (t.mu held), without blocking.
func (s *ServiceServer) sendLocked(id rmw.RequestID, data []byte) (wire.SequenceNumber, error) {
	return s.t.writeServiceLocked(s.resp, func(wire.SequenceNumber) svcSample {
		smp := svcSample{body: data, id: id}
		if id.Mapping == mapFastDDS {
			q := wire.InlineQos{HasRelatedSampleIdentity: true,
				RelatedSampleIdentity: wire.SampleIdentity{Writer: wire.GUIDFromBytes(id.Writer), SN: wire.SequenceNumber(id.Seq)}}
			smp.remote, smp.qos = data, q.Append(nil)
			return smp
		}
		smp.remote = s.t.cycloneScratch(binary.LittleEndian.Uint64(id.Writer[:8]), id.Seq, data)
		return smp
	})
}

// flushLocked sends the waiting responses whose reader is matched, in
// order, and drops those that waited svcReplyTimeout (t.mu held). It
// returns when to look again: now when it wrote (the writer has new
// deadlines), endpoint.Never when nothing waits.
func (s *ServiceServer) flushLocked(now int64) int64 {
	next := endpoint.Never
	blocked, wrote := false, false
	kept := s.pending[:0]
	for _, r := range s.pending {
		if !blocked && !s.resp.closed && s.readyForLocked(r.id) {
			_, err := s.sendLocked(r.id, r.data)
			if err == nil {
				wrote = true
				continue
			}
			if err != endpoint.ErrWouldBlock {
				s.dropLocked(now, r, err.Error())
				continue
			}
			blocked = true
		}
		if now-r.at >= int64(svcReplyTimeout) {
			// Send to whatever is matched, as Cyclone and Fast DDS do
			// after their wait: the reader of a peer that names its
			// endpoints otherwise still gets it on its participant.
			if !blocked && !s.resp.closed && len(s.resp.remote)+len(s.resp.local) > 0 {
				if _, err := s.sendLocked(r.id, r.data); err == nil {
					wrote = true
					s.t.st.UnmatchedResponses++
					s.logLocked(now, r, "sent without its client's response reader matched")
					continue
				}
			}
			s.dropLocked(now, r, "the client's response reader is not matched")
			continue
		}
		kept = append(kept, r)
		next = min(next, r.at+int64(svcReplyTimeout))
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	if blocked {
		next = min(next, now+int64(svcRetry))
	}
	if wrote {
		next = now
	}
	return next
}

// dropLocked counts a response given up and logs it (t.mu held).
func (s *ServiceServer) dropLocked(now int64, r pendingReply, why string) {
	s.t.st.DroppedResponses++
	s.logLocked(now, r, "dropped: "+why)
}

// logLocked logs what became of a waiting response, at most once a second
// per server (t.mu held).
func (s *ServiceServer) logLocked(now int64, r pendingReply, what string) {
	if s.logged != 0 && now-s.logged < int64(time.Second) {
		return
	}
	s.logged = now
	t := s.t
	t.cfg.Logf("rtps: service %s: response to request %d of client %x after %v: %s (responses of this participant dropped %d, sent unmatched %d)",
		s.name, r.id.Seq, r.id.Writer[:8], time.Duration(now-r.at), what, t.st.DroppedResponses, t.st.UnmatchedResponses)
}

// Services lists the services of the graph, local and discovered, from
// their request topics (rq/...Request): a request reader is a server, a
// request writer a client. Remote endpoints carry their node when their
// participant published it on ros_discovery_info.
func (t *Transport) Services() []rmw.ServiceInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []rmw.ServiceInfo
	add := func(ed *wire.EndpointData, node rmw.NodeInfo, server bool) {
		name, ok := strings.CutPrefix(ed.TopicName, "rq/")
		if !ok {
			return
		}
		if name, ok = strings.CutSuffix(name, "Request"); !ok || name == "" {
			return
		}
		typ, err := msg.ROSTypeName(ed.TypeName)
		if err != nil {
			typ = ed.TypeName
		}
		out = rmw.AddServiceEndpoint(out, "/"+name, rmw.ServiceTypeName(typ), node, server)
	}
	for _, p := range t.pubs {
		if !p.internal {
			add(&p.ed, p.node, false)
		}
	}
	for _, s := range t.subs {
		if !s.internal {
			add(&s.ed, s.node, true)
		}
	}
	for _, e := range t.remW {
		add(&e.Data, t.remoteNodeLocked(e.GUID()), false)
	}
	for _, e := range t.remR {
		add(&e.Data, t.remoteNodeLocked(e.GUID()), true)
	}
	rmw.SortServices(out)
	return out
}

// flushResponsesLocked sends the responses waiting in the server whose
// response writer p is, when a reader has just matched it (t.mu held).
func (t *Transport) flushResponsesLocked(now int64, p *Publisher) {
	if p.server != nil && len(p.server.pending) > 0 {
		p.server.flushLocked(now)
		t.kickNeeded = true
	}
}
