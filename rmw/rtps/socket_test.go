package rtps

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Socket tests bind 127.0.0.1 only and send only to 127.0.0.1 (LOCALHOST
// range, no multicast unless lo has the flag). They use domain 197 to stay
// clear of real DDS applications on the host.
// testDomain is this test process's own DDS domain (see TestMain), so that
// packages tested in parallel in one namespace never share a domain.
var testDomain = 197

func newLoopback(t *testing.T) *Transport {
	t.Helper()
	tr, err := New(Config{DomainID: testDomain, Range: udp.RangeLocalhost, ProbeParticipants: 8, MaxParticipantID: 8})
	if err != nil {
		t.Fatal(err)
	}
	if tr.MetaAddr().Addr() != udp.Loopback {
		t.Fatalf("bound %v", tr.MetaAddr())
	}
	return tr
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoopbackSockets(t *testing.T) {
	before := runtime.NumGoroutine()
	a := newLoopback(t)
	b := newLoopback(t)
	in := &inbox{t: t}
	pub := mustPub(t, a, "/chatter", reliable, nil)
	sub := mustSub(t, b, "/chatter", reliable, in)
	waitUntil(t, "match", 10*time.Second, func() bool {
		return pub.MatchedSubscriptions() == 1 && sub.MatchedPublishers() == 1
	})
	want := seq("udp ", 30)
	for _, s := range want {
		if err := pub.Publish(str(s)); err != nil {
			t.Fatal(err)
		}
	}
	// a 200 kB sample (fragmented by the writer)
	big := string(make([]byte, 200000))
	pub.Publish(str(big))
	waitUntil(t, "data", 10*time.Second, func() bool { return len(in.got()) == 31 })
	got := in.got()
	if !slices.Equal(got[:30], want) || len(got[30]) != len(big) {
		t.Fatalf("got %d samples", len(got))
	}
	a.Close()
	b.Close()
	checkGoroutines(t, before)
}

func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines: %d before, %d after Close\n%s", before, runtime.NumGoroutine(), buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// validMessages returns well-formed RTPS datagrams of many kinds, for
// truncation and mutation.
func validMessages(prefix wire.GuidPrefix) [][]byte {
	var out [][]byte
	hdr := wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: prefix}
	pd := wire.ParticipantData{
		GuidPrefix: prefix, VendorID: wire.VendorEclipse, ProtocolVersion: wire.ProtocolVersion21,
		BuiltinEndpoints: discovery.BuiltinEndpoints, LeaseDuration: wire.Duration{Seconds: 10},
		MetatrafficUnicastLocators: []wire.Locator{wire.LoopbackUDPv4(9)},
		DefaultUnicastLocators:     []wire.Locator{wire.LoopbackUDPv4(9)},
		HasDomainID:                true, DomainID: uint32(testDomain), UserData: []byte("enclave=/;"),
	}
	spdp, _ := pd.Encode(nil)
	ed := wire.NewEndpointData(true)
	ed.EndpointGUID = wire.GUID{Prefix: prefix, Entity: wire.NewEntityID(7, wire.EntityKindWriterNoKey)}
	ed.TopicName, ed.TypeName = "rt/chatter", "std_msgs::msg::dds_::String_"
	sedp, _ := ed.Encode(nil)
	var b wire.Builder
	add := func(f func()) {
		b.Reset(nil, hdr)
		f()
		out = append(out, slices.Clone(b.Bytes()))
	}
	add(func() {
		b.InfoTS(wire.TimeFromNanos(1))
		b.Data(&wire.Data{ReaderID: wire.EntityIDSPDPReader, WriterID: wire.EntityIDSPDPWriter, WriterSN: 1, SerializedPayload: spdp})
	})
	add(func() {
		b.InfoDst(wire.GuidPrefix{})
		b.Data(&wire.Data{WriterID: wire.EntityIDSEDPPublicationsWriter, WriterSN: 1, SerializedPayload: sedp})
		b.Heartbeat(&wire.Heartbeat{WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: 1, Count: 1})
	})
	add(func() {
		set := wire.SequenceNumberSet{Base: 1}
		set.Add(3)
		b.AckNack(&wire.AckNack{ReaderID: wire.EntityIDSEDPSubscriptionsReader, WriterID: wire.EntityIDSEDPSubscriptionsWriter, ReaderSNState: set, Count: 2})
		b.Gap(&wire.Gap{WriterID: ed.EndpointGUID.Entity, GapStart: 1, GapList: wire.SequenceNumberSet{Base: 5}})
	})
	add(func() {
		b.DataFrag(&wire.DataFrag{WriterID: ed.EndpointGUID.Entity, WriterSN: 2, FragmentStartingNum: 1,
			FragmentsInSubmessage: 1, FragmentSize: 8, SampleSize: 20, Fragments: []byte{0, 1, 0, 0, 5, 0, 0, 0}})
		b.HeartbeatFrag(&wire.HeartbeatFrag{WriterID: ed.EndpointGUID.Entity, WriterSN: 2, LastFragmentNum: 3, Count: 1})
	})
	return out
}

// TestGarbageDatagrams sends random, truncated and mutated datagrams to a
// running Transport's ports on 127.0.0.1 and checks that it keeps
// working, never panics and leaves no goroutine behind.
func TestGarbageDatagrams(t *testing.T) {
	before := runtime.NumGoroutine()
	a := newLoopback(t)
	b := newLoopback(t)
	in := &inbox{t: t}
	pub := mustPub(t, a, "/chatter", reliable, nil)
	mustSub(t, b, "/chatter", reliable, in)
	waitUntil(t, "match", 10*time.Second, func() bool { return pub.MatchedSubscriptions() == 1 })

	src, err := udp.System{Bind: udp.Loopback}.ListenUnicast(0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	targets := []netip.AddrPort{a.MetaAddr(), a.UserAddr(), b.MetaAddr(), b.UserAddr()}
	rng := rand.New(rand.NewPCG(7, 9))
	var fake wire.GuidPrefix
	copy(fake[:], "\x01\x10garbagegarb")
	valid := validMessages(fake)
	const n = 4000
	for i := 0; i < n; i++ {
		var d []byte
		switch i % 4 {
		case 0: // random bytes
			d = make([]byte, rng.IntN(300))
			for j := range d {
				d[j] = byte(rng.Uint32())
			}
		case 1: // RTPS header + random tail
			d = append([]byte("RTPS\x02\x01\x01\x10"), fake[:]...)
			for j := rng.IntN(200); j > 0; j-- {
				d = append(d, byte(rng.Uint32()))
			}
		case 2: // truncated valid message
			m := valid[rng.IntN(len(valid))]
			d = m[:rng.IntN(len(m)+1)]
		case 3: // valid message with flipped bytes
			d = slices.Clone(valid[rng.IntN(len(valid))])
			for k := 0; k < 1+rng.IntN(4); k++ {
				d[20+rng.IntN(len(d)-20)] ^= byte(1 + rng.IntN(255))
			}
		}
		if err := src.WriteTo(d, targets[i%len(targets)]); err != nil {
			t.Fatal(err)
		}
		if i%200 == 0 {
			time.Sleep(time.Millisecond) // do not overflow socket buffers
		}
	}
	waitUntil(t, "garbage processed", 10*time.Second, func() bool {
		return a.Stats().Datagrams+b.Stats().Datagrams >= n/2
	})
	st := a.Stats()
	t.Logf("A: %d datagrams, %d bad, %d bad submessages; discovery %d malformed SPDP",
		st.Datagrams, st.BadDatagrams, st.BadSubmessages, st.Discovery.SPDPMalformed)
	if st.BadDatagrams == 0 {
		t.Error("no bad datagram counted")
	}
	// Still working.
	for _, s := range seq("after ", 10) {
		pub.Publish(str(s))
	}
	waitUntil(t, "data after garbage", 10*time.Second, func() bool { return len(in.got()) == 10 })
	if got := in.got(); !slices.Equal(got, seq("after ", 10)) {
		t.Fatalf("got %q", got)
	}
	src.Close()
	a.Close()
	b.Close()
	checkGoroutines(t, before)
}

// TestCloseNoLeak opens and closes transports with endpoints in several
// states and checks that every goroutine ends.
func TestCloseNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		a := newLoopback(t)
		mustPub(t, a, "/x", latched, nil).Publish(str("x"))
		mustSub(t, a, "/x", latched, &inbox{t: t})
		a.Close()
		a.Close()
	}
	checkGoroutines(t, before)
}

// FuzzHandleDatagram feeds arbitrary datagrams to a Transport (in-memory
// network): no panic, and the transport stays usable.
func FuzzHandleDatagram(f *testing.F) {
	var fake wire.GuidPrefix
	copy(fake[:], "\x01\x0ffuzzfuzzfu")
	for _, m := range validMessages(fake) {
		f.Add(m)
	}
	f.Add([]byte("RTPS\x02\x01"))
	tr, err := New(Config{Network: udp.NewMemNetwork(), DomainID: testDomain, ProbeParticipants: 1})
	if err != nil {
		f.Fatal(err)
	}
	defer tr.Close()
	in := &inbox{}
	tr.NewSubscription(node, "/chatter", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{OnEvent: in.onEvent})
	src := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		tr.handleDatagram(b, src)
	})
}
