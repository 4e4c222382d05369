package rtps

import (
	"bytes"
	"encoding/binary"
	"github.com/nros-go/nros/internal/bufpool"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

const (
	boolReq  = "std_srvs/srv/SetBool_Request"
	boolResp = "std_srvs/srv/SetBool_Response"
)

// echoServer answers SetBool with Success = Data and Message = the
// request's sequence number seen by the server.
func echoServer(t *testing.T, tr *Transport, name string) rmw.ServiceServer {
	t.Helper()
	var srv rmw.ServiceServer
	var mu sync.Mutex
	srv, err := tr.NewServiceServer(node, name, boolReq, boolResp, rmw.ServicesDefaultQoS, func(r rmw.Request) {
		var req std_srvs.SetBool_Request
		if err := msg.Unmarshal(r.Data, &req); err != nil {
			t.Errorf("server: %v (% x)", err, r.Data)
			return
		}
		id := r.ID
		data := msg.Marshal(&std_srvs.SetBool_Response{Success: req.Data, Message: "ok"}, true, nil)
		go func() { // reply from another goroutine, as a deferred response
			mu.Lock()
			defer mu.Unlock()
			if err := srv.SendResponse(id, data); err != nil {
				t.Error(err)
			}
		}()
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

type responses struct {
	mu  sync.Mutex
	got map[int64]std_srvs.SetBool_Response
	t   *testing.T
}

func (r *responses) deliver(resp rmw.Response) {
	var m std_srvs.SetBool_Response
	if err := msg.Unmarshal(resp.Data, &m); err != nil {
		r.t.Errorf("client: %v (% x)", err, resp.Data)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.got[resp.Seq]; dup {
		r.t.Errorf("response %d twice", resp.Seq)
	}
	r.got[resp.Seq] = m
}

func newClient(t *testing.T, tr *Transport, name string) (rmw.ServiceClient, *responses) {
	t.Helper()
	r := &responses{got: map[int64]std_srvs.SetBool_Response{}, t: t}
	c, err := tr.NewServiceClient(node, name, boolReq, boolResp, rmw.ServicesDefaultQoS, r.deliver, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

func callN(t *testing.T, c rmw.ServiceClient, n int) []int64 {
	t.Helper()
	var seqs []int64
	for i := range n {
		seq, err := c.SendRequest(msg.Marshal(&std_srvs.SetBool_Request{Data: i%2 == 0}, true, nil))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

func checkResponses(t *testing.T, r *responses, seqs []int64) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != len(seqs) {
		t.Fatalf("%d responses, want %d: %v", len(r.got), len(seqs), r.got)
	}
	for i, s := range seqs {
		m, ok := r.got[s]
		if !ok || m.Success != (i%2 == 0) || m.Message != "ok" {
			t.Fatalf("response to %d: %+v %v", s, m, ok)
		}
	}
}

// withVendor creates a transport that announces vendor v (as a Cyclone or
// Fast DDS participant would).
func withVendor(t *testing.T, nw *udp.MemNetwork, v wire.VendorID) *Transport {
	old := Vendor
	Vendor = v
	defer func() { Vendor = old }()
	return newMem(t, nw, nil)
}

func TestServiceRemoteAndLocal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vendor wire.VendorID // of the server's participant
		inline bool          // requests carry a related sample identity
	}{
		{"nros", Vendor, false},
		{"cyclone", wire.VendorEclipse, false},
		{"fastdds", wire.VendorEProsima, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				nw := udp.NewMemNetwork()
				var mu sync.Mutex
				sawInline := false
				nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
					if bytes.Contains(b, []byte{0x83, 0x00, 0x18, 0x00}) && bytes.Contains(b, []byte{0x0f, 0x80, 0x18, 0x00}) {
						mu.Lock()
						sawInline = true
						mu.Unlock()
					}
					return false
				}
				a := newMem(t, nw, nil)
				defer a.Close()
				b := withVendor(t, nw, tc.vendor)
				defer b.Close()
				echoServer(t, b, "/set")
				c, r := newClient(t, a, "/set")
				if c.ServiceAvailable() {
					t.Fatal("available before discovery")
				}
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if !c.ServiceAvailable() {
					t.Fatal("not available")
				}
				seqs := callN(t, c, 5)
				if seqs[0] != 1 || seqs[4] != 5 {
					t.Fatalf("seqs %v", seqs)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				checkResponses(t, r, seqs)
				mu.Lock()
				if sawInline != tc.inline {
					t.Errorf("related sample identity on the wire: %v, want %v", sawInline, tc.inline)
				}
				mu.Unlock()

				// A second client on the server's own participant
				// (local) and one on the client's: each gets only its own
				// responses.
				c2, r2 := newClient(t, b, "/set")
				c3, r3 := newClient(t, a, "/set")
				time.Sleep(2 * time.Second)
				synctest.Wait()
				s2 := callN(t, c2, 3)
				s3 := callN(t, c3, 2)
				time.Sleep(time.Second)
				synctest.Wait()
				checkResponses(t, r2, s2)
				checkResponses(t, r3, s3)
				checkResponses(t, r, seqs)
				if st := a.Stats(); st.BadServiceSamples != 0 {
					t.Fatalf("bad service samples %d", st.BadServiceSamples)
				}
				c.Close()
				c2.Close()
				c3.Close()
			})
		})
	}
}

func TestServiceServerGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		srv := echoServer(t, b, "/set")
		c, _ := newClient(t, a, "/set")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !c.ServiceAvailable() {
			t.Fatal("not available")
		}
		srv.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		if c.ServiceAvailable() {
			t.Fatal("available after server Close")
		}
		b.Close()
		c.Close()
		if _, err := c.SendRequest(msg.Marshal(&std_srvs.SetBool_Request{}, true, nil)); err == nil {
			t.Fatal("SendRequest after Close")
		}
	})
}

func TestServiceEndpointsUserData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		echoServer(t, a, "/set")
		newClient(t, a, "/set")
		var topics []string
		a.mu.Lock()
		for _, s := range a.subs {
			if s.internal {
				continue
			}
			k := "serviceid"
			if s.ed.TopicName == "rr/setReply" {
				k = "clientid"
			}
			if v, ok := wire.UserDataValue(s.ed.UserData, k); !ok || v == "" {
				t.Errorf("%s: USER_DATA %q", s.ed.TopicName, s.ed.UserData)
			}
			topics = append(topics, s.ed.TopicName+" "+s.ed.TypeName)
		}
		for _, p := range a.pubs {
			if !p.internal {
				topics = append(topics, p.ed.TopicName+" "+p.ed.TypeName)
			}
		}
		a.mu.Unlock()
		want := map[string]bool{
			"rq/setRequest std_srvs::srv::dds_::SetBool_Request_": true,
			"rr/setReply std_srvs::srv::dds_::SetBool_Response_":  true,
		}
		if len(topics) != 4 {
			t.Fatalf("endpoints %q", topics)
		}
		for _, x := range topics {
			if !want[x] {
				t.Fatalf("endpoint %q", x)
			}
		}
	})
}

// The example of the wire notes (3.4): SetParameters {use_sim_time: true}
// in the Cyclone mapping.
func TestCycloneSampleCodec(t *testing.T) {
	body := []byte{0, 1, 0, 0, 1, 0, 0, 0, 0x0d, 0, 0, 0}
	enc := EncodeCycloneSample(nil, 0x1122334455667788, 1, body)
	want := []byte{0, 1, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x0d, 0, 0, 0}
	if !bytes.Equal(enc, want) {
		t.Fatalf("% x", enc)
	}
	client, seq, got, err := DecodeCycloneSample(enc)
	if err != nil || client != 0x1122334455667788 || seq != 1 || !bytes.Equal(got, body) {
		t.Fatalf("%x %d % x %v", client, seq, got, err)
	}
	// Big endian payloads carry a big endian header.
	be := EncodeCycloneSample(nil, 7, 2, []byte{0, 0, 0, 0})
	if binary.BigEndian.Uint64(be[4:]) != 7 || binary.BigEndian.Uint64(be[12:]) != 2 {
		t.Fatalf("% x", be)
	}
	for _, bad := range [][]byte{nil, {0, 1, 0, 0}, make([]byte, 19), append([]byte{9, 9, 0, 0}, make([]byte, 16)...)} {
		if _, _, _, err := DecodeCycloneSample(bad); err == nil {
			t.Errorf("% x decoded", bad)
		}
	}
}

func TestDecodeRequestMappings(t *testing.T) {
	writer := wire.GUID{Prefix: wire.GuidPrefix{1, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Entity: wire.EntityID{0, 0, 1, 3}}
	reader := writer
	reader.Entity = wire.EntityID{0, 0, 2, 4}
	body := []byte{0, 1, 0, 0, 1, 0, 0, 0}
	q := wire.InlineQos{HasRelatedSampleIdentity: true, RelatedSampleIdentity: wire.SampleIdentity{Writer: reader, SN: wire.SequenceNumberUnknown}}
	inline := wire.ParameterList{Data: q.Append(nil)}
	// Fast DDS: the body as is, the related reader as the client, the
	// writer SN as the sequence number.
	got, id, err := DecodeRequest(wire.VendorEProsima, writer, 9, body, inline)
	if err != nil || !bytes.Equal(got, body) || id.Writer != reader.Bytes() || id.Seq != 9 || id.Mapping != mapFastDDS || id.Origin != writer.Bytes() {
		t.Fatalf("fast: % x %+v %v", got, id, err)
	}
	// Fast DDS without the identity: the writer is the client.
	_, id, err = DecodeRequest(wire.VendorEProsima, writer, 9, body, wire.ParameterList{})
	if err != nil || id.Writer != writer.Bytes() || id.Seq != 9 {
		t.Fatalf("fast, no identity: %+v %v", id, err)
	}
	// Cyclone: the header wins even with a stray identity.
	enc := EncodeCycloneSample(nil, 42, 3, body)
	got, id, err = DecodeRequest(wire.VendorEclipse, writer, 9, enc, inline)
	if err != nil || !bytes.Equal(got, body) || id.Writer != cycloneID(42) || id.Seq != 3 || id.Mapping != mapCyclone {
		t.Fatalf("cyclone: % x %+v %v", got, id, err)
	}
	// Responses.
	rq := wire.InlineQos{HasRelatedSampleIdentity: true, RelatedSampleIdentity: wire.SampleIdentity{Writer: reader, SN: 9}}
	got, id, err = DecodeResponse(body, wire.ParameterList{Data: rq.Append(nil)})
	if err != nil || !bytes.Equal(got, body) || id.Writer != reader.Bytes() || id.Seq != 9 {
		t.Fatalf("fast response: %+v %v", id, err)
	}
	got, id, err = DecodeResponse(enc, wire.ParameterList{})
	if err != nil || !bytes.Equal(got, body) || id.Writer != cycloneID(42) || id.Seq != 3 {
		t.Fatalf("cyclone response: %+v %v", id, err)
	}
	if _, _, err := DecodeResponse(body[:2], wire.ParameterList{Data: rq.Append(nil)}); err == nil {
		t.Fatal("short response decoded")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	q := wire.InlineQos{HasRelatedSampleIdentity: true, RelatedSampleIdentity: wire.SampleIdentity{SN: wire.SequenceNumberUnknown}}
	f.Add(uint8(0), EncodeCycloneSample(nil, 1, 1, []byte{0, 1, 0, 0, 1}), []byte(nil))
	f.Add(uint8(1), []byte{0, 1, 0, 0, 1, 0, 0, 0}, q.Append(nil))
	f.Add(uint8(2), []byte{0, 1, 0, 0}, []byte{0x83, 0, 4, 0, 1, 2, 3, 4, 1, 0, 0, 0})
	vendors := []wire.VendorID{wire.VendorEclipse, wire.VendorEProsima, Vendor, wire.VendorRTI}
	f.Fuzz(func(t *testing.T, v uint8, payload, inline []byte) {
		pl := wire.ParameterList{Data: inline}
		body, id, err := DecodeRequest(vendors[int(v)%len(vendors)], wire.GUID{}, 1, payload, pl)
		if err == nil && (len(body) < 4 || id.Mapping == 0) {
			t.Fatalf("accepted %d-byte body, mapping %d", len(body), id.Mapping)
		}
		body, id, err = DecodeResponse(payload, pl)
		if err == nil && (len(body) < 4 || id.Mapping == 0) {
			t.Fatalf("accepted response %d-byte body, mapping %d", len(body), id.Mapping)
		}
		// The receive path cuts Cyclone's header out of a pooled copy in
		// place: the same body as DecodeResponse's.
		if id2, cut, err2 := responseIdentity(payload, pl); err == nil {
			buf := bufpool.Copy(payload)
			b := *buf
			n := copy(b[4:], b[4+cut:])
			if err2 != nil || id2 != id || !bytes.Equal(b[:4+n], body) {
				t.Fatalf("in place: % x, want % x", b[:4+n], body)
			}
		}
	})
}

func TestServicesGraph(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		echoServer(t, a, "/set")
		newClient(t, b, "/set")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		for _, tr := range []*Transport{a, b} {
			got := tr.Services()
			if len(got) != 1 || got[0].Name != "/set" || got[0].Type != "std_srvs/srv/SetBool" ||
				len(got[0].ServerNodes) != 1 || len(got[0].ClientNodes) != 1 {
				t.Fatalf("%+v", got)
			}
		}
		if got := a.Services()[0].ServerNodes[0]; got.Name != node.Name {
			t.Fatalf("local server node %+v", got)
		}
		if got := b.Services()[0].ServerNodes[0]; got.Name != node.Name {
			t.Fatalf("remote server node %+v (from ros_discovery_info)", got)
		}
	})
}
