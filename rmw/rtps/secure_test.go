package rtps

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/crypto"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/security/smime"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// testKeystore makes a keystore (as `nros security` does) with the given
// enclaves, once per test binary run.
func testKeystore(t *testing.T, enclaves ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ks")
	o := keystore.Options{DomainID: "0"}
	if err := keystore.CreateKeystore(dir, o); err != nil {
		t.Fatal(err)
	}
	for _, e := range enclaves {
		if err := keystore.CreateEnclave(dir, e, o); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loadEnclave(t *testing.T, ks, enclave string) *keystore.Artifacts {
	t.Helper()
	a, err := keystore.Load(keystore.EnclaveDir(ks, enclave), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// realWall gives a synctest bubble a wall clock that starts at the real
// time (certificates are valid from now), advancing with the bubble's.
func realWall(real time.Time) func() int64 {
	start := time.Now()
	return func() int64 { return real.Add(time.Since(start)).UnixNano() }
}

// tapNetwork records every datagram written through it.
type tapNetwork struct {
	*udp.MemNetwork
	mu  sync.Mutex
	log []tapped
}

type tapped struct {
	b   []byte
	dst netip.AddrPort
}

type tapConn struct {
	udp.Conn
	n *tapNetwork
}

func (c tapConn) WriteTo(b []byte, dst netip.AddrPort) error {
	c.n.mu.Lock()
	c.n.log = append(c.n.log, tapped{slices.Clone(b), dst})
	c.n.mu.Unlock()
	return c.Conn.WriteTo(b, dst)
}

func (n *tapNetwork) ListenUnicast(port uint16) (udp.Conn, error) {
	c, err := n.MemNetwork.ListenUnicast(port)
	if err != nil {
		return nil, err
	}
	return tapConn{c, n}, nil
}

func (n *tapNetwork) ListenMulticast(g netip.Addr, port uint16, ifaces []string) (udp.Conn, error) {
	c, err := n.MemNetwork.ListenMulticast(g, port, ifaces)
	if err != nil {
		return nil, err
	}
	return tapConn{c, n}, nil
}

func (n *tapNetwork) datagrams() []tapped {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.log)
}

func secureMem(t *testing.T, nw udp.Network, a *keystore.Artifacts, wall func() int64) *Transport {
	t.Helper()
	cfg := Config{Network: nw, ProbeParticipants: 4, MaxParticipantID: 4, Security: a, WallNow: wall, Warnf: t.Logf}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Two secure participants authenticate each other, exchange keys and
// deliver samples; the user payload never crosses the network in clear.
func TestSecureGoToGo(t *testing.T) {
	ks := testKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		nw := &tapNetwork{MemNetwork: udp.NewMemNetwork()}
		wall := realWall(real)
		a := secureMem(t, nw, ta, wall)
		defer a.Close()
		b := secureMem(t, nw, tl, wall)
		defer b.Close()
		in := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, nil)
		sub := mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if pub.MatchedSubscriptions() != 1 || sub.MatchedPublishers() != 1 {
			t.Fatalf("matched %d %d; stats a %+v b %+v", pub.MatchedSubscriptions(), sub.MatchedPublishers(), a.Stats().Security, b.Stats().Security)
		}
		for _, s := range seq("secret ", 5) {
			if err := pub.Publish(str(s)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, seq("secret ", 5)) {
			t.Fatalf("got %q; stats b %+v", got, b.Stats().Security)
		}
		for _, tr := range []*Transport{a, b} {
			if st := tr.Stats().Security; st.Authenticated != 1 || st.HandshakeFailures != 0 {
				t.Fatalf("security stats %+v", st)
			}
		}
		for _, d := range nw.datagrams() {
			if strings.Contains(string(d.b), "secret") || strings.Contains(string(d.b), "rt/chatter") {
				t.Fatalf("clear text on the wire: %q", d.b)
			}
		}
	})
}

// A participant without credentials gets nothing from a secure one, and
// the secure one admits it to nothing (counted).
func TestSecureIgnoresUnauthenticated(t *testing.T) {
	ks := testKeystore(t, "/talker")
	ta := loadEnclave(t, ks, "/talker")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		a := secureMem(t, nw, ta, realWall(real))
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		inB, inA := &inbox{t: t}, &inbox{t: t}
		pa := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, inB)
		pb := mustPub(t, b, "/other", reliable, nil)
		mustSub(t, a, "/other", reliable, inA)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		_ = pa.Publish(str("x"))
		_ = pb.Publish(str("y"))
		time.Sleep(time.Second)
		synctest.Wait()
		if len(inB.got()) != 0 || len(inA.got()) != 0 {
			t.Fatalf("delivered across: %q %q", inB.got(), inA.got())
		}
		if pa.MatchedSubscriptions() != 0 || pb.MatchedSubscriptions() != 0 {
			t.Fatal("matched an unauthenticated participant")
		}
		if st := a.Stats().Security; st.Unauthenticated != 1 {
			t.Fatalf("security stats %+v", st)
		}
	})
}

// A permissions document that denies subscribing to /clock makes the
// subscription fail with an error naming the topic and the rule.
func TestSecureDenyClock(t *testing.T) {
	ks := testKeystore(t)
	pol := filepath.Join(t.TempDir(), "policy.xml")
	if err := os.WriteFile(pol, []byte(`<policy version="0.2.0"><enclaves><enclave path="/simtimer"><profiles>
<profile ns="/" node="simtimer"><topics subscribe="DENY"><topic>clock</topic></topics>
<topics publish="ALLOW" subscribe="ALLOW"><topic>chatter</topic></topics></profile>
</profiles></enclave></enclaves></policy>`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := keystore.Options{DomainID: "0"}
	if err := keystore.CreateEnclave(ks, "/simtimer", o); err != nil {
		t.Fatal(err)
	}
	if err := keystore.CreatePermission(ks, "/simtimer", pol, o); err != nil {
		t.Fatal(err)
	}
	art := loadEnclave(t, ks, "/simtimer")
	tr := secureMem(t, udp.NewMemNetwork(), art, nil)
	defer tr.Close()
	_, err := tr.NewSubscription(node, "/clock", "rosgraph_msgs/msg/Clock", reliable, func(rmw.Sample) {}, rmw.EndpointOptions{})
	t.Logf("the error: %v", err)
	var de *access.DeniedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "rt/clock") || !strings.Contains(err.Error(), "deny") {
		t.Fatalf("err = %v", err)
	}
	if _, err := tr.NewSubscription(node, "/chatter", strType, reliable, func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
		t.Fatalf("allowed topic: %v", err)
	}
}

// pairUp runs two secure participants on one network for a while and
// returns their transports (closed at the end of the test).
func pairUp(t *testing.T, nw udp.Network, a, b *keystore.Artifacts, wallA, wallB func() int64) (*Transport, *Transport) {
	t.Helper()
	ta := secureMem(t, nw, a, wallA)
	t.Cleanup(func() { ta.Close() })
	tb := secureMem(t, nw, b, wallB)
	t.Cleanup(func() { tb.Close() })
	return ta, tb
}

// An identity certificate from another identity CA fails the handshake with
// an error that says so, and nothing matches.
func TestSecureForeignCAFails(t *testing.T) {
	ks1, ks2 := testKeystore(t, "/talker"), testKeystore(t, "/listener")
	a1, a2 := loadEnclave(t, ks1, "/talker"), loadEnclave(t, ks2, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		wall := realWall(real)
		a, b := pairUp(t, udp.NewMemNetwork(), a1, a2, wall, wall)
		pub := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, &inbox{t: t})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if pub.MatchedSubscriptions() != 0 {
			t.Fatal("matched across identity CAs")
		}
		for _, tr := range []*Transport{a, b} {
			st := tr.Stats().Security
			if st.Authenticated != 0 {
				t.Fatalf("authenticated: %+v", st)
			}
			if st.HandshakeFailures > 0 && !strings.Contains(st.LastHandshakeError, "not signed by the identity CA") {
				t.Fatalf("error %q", st.LastHandshakeError)
			}
		}
		if a.Stats().Security.HandshakeFailures+b.Stats().Security.HandshakeFailures == 0 {
			t.Fatal("no handshake failure counted")
		}
	})
}

// A peer whose identity certificate has expired (by our clock) fails the
// handshake with an error that says so.
func TestSecureExpiredCertFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ks")
	t0 := time.Now()
	if err := keystore.CreateKeystore(dir, keystore.Options{DomainID: "0", Now: t0}); err != nil {
		t.Fatal(err)
	}
	// /old's certificate ends 10 days before the CA's and the others'.
	if err := keystore.CreateEnclave(dir, "/old", keystore.Options{DomainID: "0", Now: t0.Add(-10 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := keystore.CreateEnclave(dir, "/new", keystore.Options{DomainID: "0", Now: t0}); err != nil {
		t.Fatal(err)
	}
	old, nw := loadEnclave(t, dir, "/old"), loadEnclave(t, dir, "/new")
	later := t0.Add(3645 * 24 * time.Hour) // /old has expired, /new has not
	synctest.Test(t, func(t *testing.T) {
		a, b := pairUp(t, udp.NewMemNetwork(), old, nw, realWall(t0), realWall(later))
		pub := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, &inbox{t: t})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if pub.MatchedSubscriptions() != 0 {
			t.Fatal("matched an expired identity")
		}
		st := b.Stats().Security
		if st.HandshakeFailures == 0 || !strings.Contains(st.LastHandshakeError, "expired") {
			t.Fatalf("security stats of the participant with the later clock: %+v", st)
		}
	})
}

// A DATA that claims to come from a live secure writer but is not
// protected (the GUID spoof), and a protected datagram sent again (a
// replay), are dropped and counted.
func TestSecureSpoofAndReplayDropped(t *testing.T) {
	ks := testKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		nw := &tapNetwork{MemNetwork: udp.NewMemNetwork()}
		wall := realWall(real)
		a, b := pairUp(t, nw, ta, tl, wall, wall)
		in := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if err := pub.Publish(str("one")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, []string{"one"}) {
			t.Fatalf("got %q", got)
		}
		evil, err := nw.MemNetwork.ListenUnicast(0)
		if err != nil {
			t.Fatal(err)
		}
		defer evil.Close()
		// Replay everything a sent to b's user port.
		replayed := 0
		for _, d := range nw.datagrams() {
			if d.dst == b.UserAddr() {
				_ = evil.WriteTo(d.b, d.dst)
				replayed++
			}
		}
		// Spoof: a plain DATA with the publisher's GUID and a later SN.
		var bld wire.Builder
		bld.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: Vendor, Prefix: a.GuidPrefix()})
		g := pub.(*Publisher).guid
		if err := bld.Data(&wire.Data{WriterID: g.Entity, WriterSN: 1000, SerializedPayload: str("spoofed")}); err != nil {
			t.Fatal(err)
		}
		_ = evil.WriteTo(bld.Bytes(), b.UserAddr())
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, []string{"one"}) {
			t.Fatalf("got %q after replay and spoof", got)
		}
		st := b.Stats().Security
		if replayed == 0 || st.Replayed == 0 {
			t.Fatalf("%d datagrams replayed; security %+v", replayed, st)
		}
		if st.Unprotected == 0 {
			t.Fatalf("spoof not counted: %+v", st)
		}
	})
}

// A service between two secure participants: requests and responses take
// the protected path (payloads encrypted) both ways.
func TestSecureService(t *testing.T) {
	ks := testKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		nw := &tapNetwork{MemNetwork: udp.NewMemNetwork()}
		wall := realWall(real)
		a, b := pairUp(t, nw, ta, tl, wall, wall)
		echoServer(t, a, "/set_bool")
		c, r := newClient(t, b, "/set_bool")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		seqs := callN(t, c, 4)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		checkResponses(t, r, seqs)
		for _, d := range nw.datagrams() {
			if bytes.Contains(d.b, []byte("set_bool")) {
				t.Fatalf("service name in clear on the wire: %q", d.b)
			}
		}
	})
}

// originKeystore is testKeystore under a governance with origin
// authentication: metadata and discovery ENCRYPT_WITH_ORIGIN_AUTHENTICATION,
// RTPS SIGN_WITH_ORIGIN_AUTHENTICATION.
func originKeystore(t *testing.T, enclaves ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ks")
	if err := os.MkdirAll(filepath.Join(dir, "enclaves"), 0o755); err != nil {
		t.Fatal(err)
	}
	gov := keystore.GovernanceXML("0")
	gov = strings.Replace(gov, ">ENCRYPT</metadata_protection_kind>", ">ENCRYPT_WITH_ORIGIN_AUTHENTICATION</metadata_protection_kind>", 1)
	gov = strings.Replace(gov, ">SIGN</rtps_protection_kind>", ">SIGN_WITH_ORIGIN_AUTHENTICATION</rtps_protection_kind>", 1)
	gov = strings.Replace(gov, ">ENCRYPT</discovery_protection_kind>", ">ENCRYPT_WITH_ORIGIN_AUTHENTICATION</discovery_protection_kind>", 1)
	if err := os.WriteFile(filepath.Join(dir, "enclaves", "governance.xml"), []byte(gov), 0o644); err != nil {
		t.Fatal(err)
	}
	o := keystore.Options{DomainID: "0"}
	if err := keystore.CreateKeystore(dir, o); err != nil {
		t.Fatal(err)
	}
	for _, e := range enclaves {
		if err := keystore.CreateEnclave(dir, e, o); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Under origin authentication every protected submessage and message
// carries a MAC for each receiver: a receiver whose MAC is wrong or
// missing drops it (counted as BadMAC) and takes the sample once the
// sender MACs for it again (the reliable writer resends).
func TestSecureOriginAuthentication(t *testing.T) {
	ks := originKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		nw := &tapNetwork{MemNetwork: udp.NewMemNetwork()}
		wall := realWall(real)
		a, b := pairUp(t, nw, ta, tl, wall, wall)
		in := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if err := pub.Publish(str("one")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, []string{"one"}) {
			t.Fatalf("got %q; security b %+v", got, b.Stats().Security)
		}
		if st := b.Stats().Security; st.BadMAC != 0 {
			t.Fatalf("security b %+v", st)
		}
		// The writer's key for b's reader: one receiver, given its own key.
		a.mu.Lock()
		l := a.sec.(*secState).local[pub.(*Publisher).guid.Entity]
		if len(l.receivers) != 1 || len(a.sec.(*secState).partRx) != 1 {
			a.mu.Unlock()
			t.Fatalf("%d endpoint receiver keys, %d participant receiver keys; want 1 and 1", len(l.receivers), len(a.sec.(*secState).partRx))
		}
		if sedp := a.sec.(*secState).local[discovery.EntityIDSEDPPublicationsSecureWriter]; sedp == nil || len(sedp.receivers) != 1 {
			a.mu.Unlock()
			t.Fatal("the secure SEDP writer has no receiver key for b under discovery origin authentication")
		}
		var rg wire.GUID
		var good *crypto.ReceiverKey
		for g, k := range l.receivers {
			rg, good = g, k
		}
		// Wrong: the same receiver key id with another key.
		wrongKM, err := l.km.WithReceiverSpecificKey(good.ID(), nil)
		if err != nil {
			a.mu.Unlock()
			t.Fatal(err)
		}
		wrong, err := crypto.NewReceiverKey(wrongKM)
		if err != nil {
			a.mu.Unlock()
			t.Fatal(err)
		}
		l.setReceiver(rg, wrong)
		a.mu.Unlock()

		step := func(what, text string, restore func()) {
			t.Helper()
			before := b.Stats().Security.BadMAC
			if err := pub.Publish(str(text)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if got := in.got(); slices.Contains(got, text) {
				t.Fatalf("%s: %q taken: %q", what, text, got)
			}
			if st := b.Stats().Security; st.BadMAC <= before {
				t.Fatalf("%s: not counted: %+v", what, st)
			}
			a.mu.Lock()
			restore()
			a.mu.Unlock()
			time.Sleep(2 * time.Second)
			synctest.Wait()
			if got := in.got(); !slices.Contains(got, text) {
				t.Fatalf("%s: %q not taken once the MAC is right again: %q", what, text, got)
			}
		}
		step("wrong endpoint MAC", "two", func() { l.setReceiver(rg, good) })
		// Missing: the message carries no MAC for b's participant.
		a.mu.Lock()
		partRx := a.sec.(*secState).partRx
		a.sec.(*secState).partRx = nil
		a.mu.Unlock()
		step("missing participant MAC", "three", func() { a.sec.(*secState).partRx = partRx })
		if got := in.got(); !slices.Equal(got, []string{"one", "two", "three"}) {
			t.Fatalf("got %q", got)
		}
	})
}

// resignPermissions makes the grant of enclave end at notAfter and signs
// the document again with the keystore's permissions CA.
func resignPermissions(t *testing.T, ks, enclave string, notAfter, now time.Time) {
	t.Helper()
	dir := keystore.EnclaveDir(ks, enclave)
	doc, err := os.ReadFile(filepath.Join(dir, "permissions.xml"))
	if err != nil {
		t.Fatal(err)
	}
	doc = regexp.MustCompile(`<not_after>[^<]*</not_after>`).ReplaceAll(doc,
		[]byte("<not_after>"+notAfter.UTC().Format("2006-01-02T15:04:05")+"</not_after>"))
	cb, err := os.ReadFile(filepath.Join(ks, "public", "permissions_ca.cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(cb)
	if blk == nil {
		t.Fatal("no CA certificate")
	}
	ca, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := os.ReadFile(filepath.Join(ks, "private", "permissions_ca.key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := keystore.ParseKeyPEM(kb)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := smime.SignAt(doc, ca, key, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, keystore.FilePermissions), signed, 0o644); err != nil {
		t.Fatal(err)
	}
}

// warnings collects a transport's warnings.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) warnf(f string, a ...any) {
	w.mu.Lock()
	w.lines = append(w.lines, fmt.Sprintf(f, a...))
	w.mu.Unlock()
}

func (w *warnings) find(subs ...string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return l
		}
	}
	return ""
}

// A remote participant whose certificate or permissions grant ends while
// it is connected is dropped at that moment: its endpoints are unmatched,
// the drop is counted and logged with the participant and the reason, and
// what it sends afterwards is not delivered. The transports run on the
// synctest bubble's clock (the wall clock injected from it).
func TestSecureExpiryDropsParticipant(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	dir := filepath.Join(t.TempDir(), "ks")
	o := keystore.Options{DomainID: "0", Now: t0}
	if err := keystore.CreateKeystore(dir, o); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"/new", "/short"} {
		if err := keystore.CreateEnclave(dir, e, o); err != nil {
			t.Fatal(err)
		}
	}
	// /old's certificate ends 10 days before the others'; its grant as
	// theirs. /short's grant ends 40 s after t0, its certificate as theirs.
	if err := keystore.CreateEnclave(dir, "/old", keystore.Options{DomainID: "0", Now: t0.Add(-10 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	resignPermissions(t, dir, "/old", t0.Add(3650*24*time.Hour), t0)
	resignPermissions(t, dir, "/short", t0.Add(40*time.Second), t0)
	old, short, nw := loadEnclave(t, dir, "/old"), loadEnclave(t, dir, "/short"), loadEnclave(t, dir, "/new")
	for _, c := range []struct {
		name   string
		remote *keystore.Artifacts
		start  time.Time // wall clock at the start
		end    time.Time // the remote's credentials end
		why    string
	}{
		{"certificate", old, old.Cert.NotAfter.Add(-30 * time.Second), old.Cert.NotAfter, "certificate"},
		{"grant", short, t0, t0.Add(40 * time.Second), "permissions grant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := udp.NewMemNetwork()
				wall := realWall(c.start)
				var wa, wb warnings
				mk := func(art *keystore.Artifacts, w *warnings) *Transport {
					tr, err := New(Config{Network: mem, ProbeParticipants: 4, MaxParticipantID: 4, Security: art, WallNow: wall, Warnf: w.warnf})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { tr.Close() })
					return tr
				}
				a, b := mk(c.remote, &wa), mk(nw, &wb)
				in := &inbox{t: t}
				pub := mustPub(t, a, "/chatter", reliable, nil)
				sub := mustSub(t, b, "/chatter", reliable, in)
				time.Sleep(5 * time.Second)
				synctest.Wait()
				if err := pub.Publish(str("one")); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if got := in.got(); !slices.Equal(got, []string{"one"}) || sub.MatchedPublishers() != 1 {
					t.Fatalf("before the end: got %q, matched %d; security b %+v", got, sub.MatchedPublishers(), b.Stats().Security)
				}
				if st := b.Stats().Security; st.Expired != 0 {
					t.Fatalf("dropped early: %+v", st)
				}
				// Just before the end nothing happens; just after, the drop.
				time.Sleep(time.Duration(c.end.UnixNano()-wall()) - 100*time.Millisecond)
				synctest.Wait()
				if st := b.Stats().Security; st.Expired != 0 || sub.MatchedPublishers() != 1 {
					t.Fatalf("dropped before the end: %+v, matched %d", st, sub.MatchedPublishers())
				}
				time.Sleep(time.Second + 100*time.Millisecond)
				synctest.Wait()
				if st := b.Stats().Security; st.Expired != 1 || sub.MatchedPublishers() != 0 {
					t.Fatalf("after the end: security b %+v, matched %d", st, sub.MatchedPublishers())
				}
				line := wb.find(a.GuidPrefix().String(), "dropped", c.why, "expired")
				if line == "" {
					t.Fatalf("no warning naming %v and the %s: %q", a.GuidPrefix(), c.why, wb.lines)
				}
				if strings.Contains(line, "PRIVATE") || strings.Contains(line, "BEGIN") {
					t.Fatalf("warning with key material: %q", line)
				}
				_ = pub.Publish(str("two"))
				time.Sleep(5 * time.Second)
				synctest.Wait()
				time.Sleep(60 * time.Second)
				synctest.Wait()
				if got := in.got(); !slices.Equal(got, []string{"one"}) || sub.MatchedPublishers() != 0 {
					t.Fatalf("after the drop: got %q, matched %d; security b %+v", got, sub.MatchedPublishers(), b.Stats().Security)
				}
			})
		})
	}
}

// Key revisions: with Config.SecurityKeyRevision a writer sends new key
// material (on the volatile channel) after that many protected messages,
// and Transport.ReviseKeys does it on request; the receiver takes both the
// old and the new key id for a while, so no sample is lost or refused, and
// then forgets the old one.
func TestSecureKeyRevision(t *testing.T) {
	ks := testKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		mem := udp.NewMemNetwork()
		wall := realWall(real)
		a, err := New(Config{Network: mem, ProbeParticipants: 4, MaxParticipantID: 4, Security: ta, WallNow: wall, Warnf: t.Logf,
			SecurityKeyRevision: 8})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b := secureMem(t, mem, tl, wall)
		defer b.Close()
		in := &inbox{t: t}
		pub := mustPub(t, a, "/chatter", reliable, nil)
		mustSub(t, b, "/chatter", reliable, in)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		keyID := func() crypto.KeyID {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.sec.(*secState).local[pub.(*Publisher).guid.Entity].km.SenderKeyID
		}
		first := keyID()
		before := b.Stats().Security
		var want []string
		for i := range 30 {
			s := fmt.Sprintf("msg %d", i)
			want = append(want, s)
			if err := pub.Publish(str(s)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, want) {
			t.Fatalf("got %q", got)
		}
		st := b.Stats().Security
		if st.Refused != before.Refused || st.Unprotected != before.Unprotected {
			t.Fatalf("refused across revisions: before %+v after %+v", before, st)
		}
		if n := a.Stats().Security.KeyRevisions; n < 2 {
			t.Fatalf("%d key revisions after 30 samples at 8 per key", n)
		}
		if keyID() == first {
			t.Fatal("the writer still sends under its first key")
		}
		// On request.
		n := a.Stats().Security.KeyRevisions
		cur := keyID()
		a.ReviseKeys()
		time.Sleep(time.Second)
		synctest.Wait()
		if a.Stats().Security.KeyRevisions <= n || keyID() == cur {
			t.Fatalf("ReviseKeys did not revise: %d revisions", a.Stats().Security.KeyRevisions)
		}
		if err := pub.Publish(str("last")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := in.got(); !slices.Equal(got, append(want, "last")) {
			t.Fatalf("got %q after ReviseKeys", got)
		}
		// The old keys are forgotten after the grace period: b keeps the
		// key-exchange key and the current key of each of a's senders.
		time.Sleep(time.Minute)
		synctest.Wait()
		b.mu.Lock()
		r := b.sec.(*secState).remotes[a.GuidPrefix()]
		nOpen, nCur, nRetiring := len(r.openers), len(r.current), len(r.retiring)
		b.mu.Unlock()
		if nRetiring != 0 || nOpen != nCur+1 {
			t.Fatalf("b holds %d openers for a's %d senders, %d retiring", nOpen, nCur, nRetiring)
		}
	})
}

// Under origin authentication a writer stops MACing for a remote reader
// that is gone: its receiver key (and the record of its tokens) leaves
// with it, so messages do not grow with every reader that came and went.
func TestSecureOriginForgetsLostReader(t *testing.T) {
	ks := originKeystore(t, "/talker", "/listener")
	ta, tl := loadEnclave(t, ks, "/talker"), loadEnclave(t, ks, "/listener")
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		wall := realWall(real)
		a, b := pairUp(t, udp.NewMemNetwork(), ta, tl, wall, wall)
		pub := mustPub(t, a, "/chatter", reliable, nil)
		receivers := func() int {
			a.mu.Lock()
			defer a.mu.Unlock()
			return len(a.sec.(*secState).local[pub.(*Publisher).guid.Entity].receivers)
		}
		for i := range 3 {
			sub := mustSub(t, b, "/chatter", reliable, &inbox{t: t})
			time.Sleep(5 * time.Second)
			synctest.Wait()
			if n := receivers(); n != 1 {
				t.Fatalf("round %d: %d receiver keys with one reader", i, n)
			}
			if err := sub.Close(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Second)
			synctest.Wait()
			if n := receivers(); n != 0 {
				t.Fatalf("round %d: %d receiver keys after the reader left", i, n)
			}
		}
	})
}
