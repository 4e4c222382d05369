package rtps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
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
// Inside the transport every service sample, remote or local, is handed
// to the service code as body followed by a trailer of svcTrailer bytes
// (see appendTrailer), which carries the request identity.

// Request-id mappings (rmw.RequestID.Mapping).
const (
	mapCyclone uint8 = 1
	mapFastDDS uint8 = 2
)

// svcTrailer is the size of the identity trailer of service samples.
const svcTrailer = 48

// cycloneHeader is the size of Cyclone's request header.
const cycloneHeader = 16

// svcWait is how long a server waits for the response reader of the
// client that sent a request to be matched before it replies anyway (as
// Fast DDS's max_blocking_time and Cyclone's check_for_response_reader).
const svcWait = 100 * time.Millisecond

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
}

// ServiceClient is the rtps implementation of rmw.ServiceClient.
type ServiceClient struct {
	t     *Transport
	req   *Publisher
	resp  *Subscription
	cid   [16]byte // the client id in Cyclone's mapping (8 bytes used)
	idTag string   // clientid
}

// appendTrailer appends the identity trailer: id (16), origin (16), seq
// (8, little endian), mapping (1), 7 zero bytes.
func appendTrailer(dst []byte, id rmw.RequestID) []byte {
	dst = append(dst, id.Writer[:]...)
	dst = append(dst, id.Origin[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(id.Seq))
	dst = append(dst, id.Mapping, 0, 0, 0, 0, 0, 0, 0)
	return dst
}

// splitTrailer undoes appendTrailer.
func splitTrailer(b []byte) ([]byte, rmw.RequestID, bool) {
	if len(b) < svcTrailer {
		return nil, rmw.RequestID{}, false
	}
	n := len(b) - svcTrailer
	tr := b[n:]
	var id rmw.RequestID
	copy(id.Writer[:], tr[:16])
	copy(id.Origin[:], tr[16:32])
	id.Seq = int64(binary.LittleEndian.Uint64(tr[32:40]))
	id.Mapping = tr[40]
	return b[:n], id, true
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
	if len(payload) < 4+cycloneHeader {
		return 0, 0, nil, fmt.Errorf("%w: %d bytes, want at least %d", ErrBadRequest, len(payload), 4+cycloneHeader)
	}
	if payload[0] != 0 || payload[1] > 3 {
		return 0, 0, nil, fmt.Errorf("%w: encapsulation %02x %02x", ErrBadRequest, payload[0], payload[1])
	}
	bo := payloadOrder(payload)
	client = bo.Uint64(payload[4:12])
	seq = int64(bo.Uint64(payload[12:20]))
	body = make([]byte, 0, len(payload)-cycloneHeader)
	body = append(body, payload[:4]...)
	body = append(body, payload[4+cycloneHeader:]...)
	return client, seq, body, nil
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
	s := &ServiceServer{t: t}
	deliver := func(smp rmw.Sample) {
		body, id, ok := splitTrailer(smp.Data)
		if ok {
			handle(rmw.Request{Data: body, ID: id})
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	s.idTag = svcID(wire.GUID{Prefix: t.prefix, Entity: wire.NewEntityID(t.entitySeq+1, 0)})
	t.nextUserData = []byte("serviceid=" + s.idTag + ";")
	s.req, err = t.newSubscriptionLocked(node, rq, rqType, qos, deliver, reqOpts, false)
	if err != nil {
		t.nextUserData = nil
		t.mu.Unlock()
		return nil, err
	}
	s.req.svc = t.requestSample
	t.nextUserData = []byte("serviceid=" + s.idTag + ";")
	s.resp, err = t.newPublisherLocked(node, service, rr, rrType, qos, respOpts, false)
	t.nextUserData = nil
	if err != nil {
		t.mu.Unlock()
		s.req.Close()
		return nil, err
	}
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
	recv := func(smp rmw.Sample) {
		body, id, ok := splitTrailer(smp.Data)
		if ok && c.mine(id.Writer) {
			deliver(rmw.Response{Data: body, Seq: id.Seq})
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	c.idTag = svcID(wire.GUID{Prefix: t.prefix, Entity: wire.NewEntityID(t.entitySeq+1, 0)})
	t.nextUserData = []byte("clientid=" + c.idTag + ";")
	c.req, err = t.newPublisherLocked(node, service, rq, rqType, qos, reqOpts, false)
	if err != nil {
		t.nextUserData = nil
		t.mu.Unlock()
		return nil, err
	}
	t.nextUserData = []byte("clientid=" + c.idTag + ";")
	c.resp, err = t.newSubscriptionLocked(node, rr, rrType, qos, recv, respOpts, false)
	t.nextUserData = nil
	if err != nil {
		t.mu.Unlock()
		c.req.Close()
		return nil, err
	}
	c.resp.svc = t.responseSample
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

// queueService queues a service sample (body plus trailer) for s (t.mu held).
func (t *Transport) queueService(s *Subscription, ts int64, writer wire.GUID, body []byte, id rmw.RequestID) {
	if len(t.callbacks) >= maxQueuedCallbacks {
		t.st.DroppedSamples++
		return
	}
	t.st.Delivered++
	data := appendTrailer(append(make([]byte, 0, len(body)+svcTrailer), body...), id)
	t.callbacks = append(t.callbacks, callback{gate: &s.closed, sub: s,
		smp: rmw.Sample{Data: data, SourceTimestamp: ts, PublisherGID: writer.Bytes()}})
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
	q, err := decodeInline(inline)
	if err != nil {
		return nil, id, err
	}
	id.Origin = writer.Bytes()
	if vendor == wire.VendorEclipse || (!q.HasRelatedSampleIdentity && !fastVendor(vendor)) {
		client, seq, body, err := DecodeCycloneSample(payload)
		if err != nil {
			return nil, id, err
		}
		id.Writer, id.Seq, id.Mapping = cycloneID(client), seq, mapCyclone
		return body, id, nil
	}
	if len(payload) < 4 {
		return nil, id, fmt.Errorf("%w: %d bytes", ErrBadRequest, len(payload))
	}
	id.Writer, id.Seq, id.Mapping = writer.Bytes(), int64(sn), mapFastDDS
	if q.HasRelatedSampleIdentity && q.RelatedSampleIdentity.Writer != (wire.GUID{}) {
		id.Writer = q.RelatedSampleIdentity.Writer.Bytes()
	}
	return payload, id, nil
}

// DecodeResponse reads a remote response: with a related sample identity
// it is Fast DDS's mapping, otherwise Cyclone's. The returned id names the
// client the response is for (Writer) and the request (Seq).
func DecodeResponse(payload []byte, inline wire.ParameterList) (body []byte, id rmw.RequestID, err error) {
	q, err := decodeInline(inline)
	if err != nil {
		return nil, id, err
	}
	if q.HasRelatedSampleIdentity {
		if len(payload) < 4 {
			return nil, id, fmt.Errorf("%w: %d bytes", ErrBadRequest, len(payload))
		}
		id.Writer, id.Seq, id.Mapping = q.RelatedSampleIdentity.Writer.Bytes(), int64(q.RelatedSampleIdentity.SN), mapFastDDS
		return payload, id, nil
	}
	client, seq, body, err := DecodeCycloneSample(payload)
	if err != nil {
		return nil, id, err
	}
	id.Writer, id.Seq, id.Mapping = cycloneID(client), seq, mapCyclone
	return body, id, nil
}

// requestSample is the reader hook of a server's request reader (t.mu
// held).
func (t *Transport) requestSample(s *Subscription, smp endpoint.Sample) {
	body, id, err := DecodeRequest(t.vendorOf(smp.Writer.Prefix), smp.Writer, smp.SN, smp.Payload, smp.InlineQos)
	if err != nil {
		t.st.BadServiceSamples++
		return
	}
	t.queueService(s, smp.SourceTimestamp, smp.Writer, body, id)
}

// responseSample is the reader hook of a client's response reader (t.mu
// held).
func (t *Transport) responseSample(s *Subscription, smp endpoint.Sample) {
	body, id, err := DecodeResponse(smp.Payload, smp.InlineQos)
	if err != nil {
		t.st.BadServiceSamples++
		return
	}
	t.queueService(s, smp.SourceTimestamp, smp.Writer, body, id)
}

// writeService writes one service sample: remote readers get remote (with
// inline QoS qos), local subscriptions local. build makes them for the
// sequence number the sample will get (t.mu held while it runs).
func (t *Transport) writeService(p *Publisher, build func(sn wire.SequenceNumber) (remote, qos, local []byte)) (wire.SequenceNumber, error) {
	t.mu.Lock()
	if p.closed {
		t.mu.Unlock()
		return 0, ErrClosed
	}
	ts := t.cfg.WallNow()
	deadline := time.Now().Add(maxBlocking)
	var sn wire.SequenceNumber
	var local []byte
	for {
		var remote, qos []byte
		sn0 := p.w.LastSN() + 1
		remote, qos, local = build(sn0)
		remote, err := t.wirePayload(p, remote)
		if err != nil {
			t.mu.Unlock()
			return 0, err
		}
		sn, err = p.w.WriteChange(t.cfg.Clock.Now(), &endpoint.Change{Payload: remote, SourceTimestamp: ts, InlineQos: qos})
		if err == nil {
			break
		}
		if err != endpoint.ErrWouldBlock || time.Now().After(deadline) || p.closed {
			t.mu.Unlock()
			return 0, fmt.Errorf("rtps: write on %s: %w", p.ed.TopicName, err)
		}
		waitCond(t, deadline)
	}
	t.st.Published++
	for _, s := range p.local {
		t.st.Delivered++
		s.queueLocked(rmw.Sample{Data: local, SourceTimestamp: ts, PublisherGID: p.guid.Bytes()})
	}
	kick := p.w.NextDeadline() < t.sleepUntil
	t.mu.Unlock()
	if kick {
		t.kick()
	}
	t.dispatch()
	return sn, nil
}

// SendRequest writes a request and returns its sequence number (the
// request writer's RTPS sequence number).
func (c *ServiceClient) SendRequest(data []byte) (int64, error) {
	if len(data) < 4 {
		return 0, fmt.Errorf("rtps: request of %d bytes has no encapsulation header", len(data))
	}
	t := c.t
	sn, err := t.writeService(c.req, func(sn wire.SequenceNumber) (remote, qos, local []byte) {
		fast := false
		for g := range c.req.remote {
			if fastVendor(t.vendorOf(g.Prefix)) {
				fast = true
				break
			}
		}
		id := rmw.RequestID{Writer: c.cid, Seq: int64(sn), Mapping: mapCyclone, Origin: c.req.guid.Bytes()}
		if len(c.req.local) > 0 {
			local = appendTrailer(append(make([]byte, 0, len(data)+svcTrailer), data...), id)
		}
		if fast {
			q := wire.InlineQos{HasRelatedSampleIdentity: true,
				RelatedSampleIdentity: wire.SampleIdentity{Writer: c.resp.guid, SN: wire.SequenceNumberUnknown}}
			return data, q.Append(nil), local
		}
		return EncodeCycloneSample(nil, binary.LittleEndian.Uint64(c.cid[:8]), int64(sn), data), nil, local
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

// Close retracts both endpoints of the server.
func (s *ServiceServer) Close() error {
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

// SendResponse writes the response to request id in the request's
// mapping. It first waits up to 100 ms for the client's response reader to
// be matched (a request can arrive before the server has discovered the
// client's reader); then it sends anyway.
func (s *ServiceServer) SendResponse(id rmw.RequestID, data []byte) error {
	if len(data) < 4 {
		return fmt.Errorf("rtps: response of %d bytes has no encapsulation header", len(data))
	}
	t := s.t
	t.mu.Lock()
	deadline := time.Now().Add(svcWait)
	for !s.resp.closed && !s.readyForLocked(id) && time.Now().Before(deadline) {
		waitCond(t, deadline)
	}
	t.mu.Unlock()
	_, err := t.writeService(s.resp, func(wire.SequenceNumber) (remote, qos, local []byte) {
		if len(s.resp.local) > 0 {
			local = appendTrailer(append(make([]byte, 0, len(data)+svcTrailer), data...), id)
		}
		if id.Mapping == mapFastDDS {
			q := wire.InlineQos{HasRelatedSampleIdentity: true,
				RelatedSampleIdentity: wire.SampleIdentity{Writer: wire.GUIDFromBytes(id.Writer), SN: wire.SequenceNumber(id.Seq)}}
			return data, q.Append(nil), local
		}
		return EncodeCycloneSample(nil, binary.LittleEndian.Uint64(id.Writer[:8]), id.Seq, data), nil, local
	})
	return err
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
