package auth

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/security/token"
)

// pdata builds a c.pdata: a big-endian parameter list with
// PID_PARTICIPANT_GUID and the sentinel.
func pdata(p GUIDPrefix) []byte {
	b := []byte{0x00, 0x50, 0x00, 0x10}
	b = append(b, p[:]...)
	b = binary.BigEndian.AppendUint32(b, EntityParticipant)
	return append(b, 0x00, 0x01, 0x00, 0x00)
}

type side struct {
	id   *Identity
	perm []byte
}

func loadSide(t testing.TB, ks, enclave string, candidate byte, now time.Time) side {
	t.Helper()
	a, err := keystore.Load(keystore.EnclaveDir(ks, enclave), now)
	if err != nil {
		t.Fatal(err)
	}
	id, err := NewIdentity(a.Cert, a.IdentityCA, a.Key, GUIDPrefix{candidate, 1, 2, 3}, now)
	if err != nil {
		t.Fatal(err)
	}
	return side{id: id, perm: a.Permissions}
}

func (s side) config() Config {
	return Config{Local: s.id, Permissions: s.perm, PData: pdata(s.id.GUIDPrefix)}
}

var testKS = map[string]string{}

func keystoreWith(t testing.TB, name string, enclaves ...string) string {
	t.Helper()
	if d, ok := testKS[name]; ok {
		return d
	}
	dir, err := os.MkdirTemp("", "nros-auth-ks-")
	if err != nil {
		t.Fatal(err)
	}
	if err := keystore.CreateKeystore(dir, keystore.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range enclaves {
		if err := keystore.CreateEnclave(dir, e, keystore.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	testKS[name] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range testKS {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// pair makes the two handshakes, a (initiator) and b (replier).
func pair(t *testing.T, x, y side, cfg func(*Config), now time.Time) (a, b *Handshake) {
	t.Helper()
	cx, cy := x.config(), y.config()
	if cfg != nil {
		cfg(&cx)
		cfg(&cy)
	}
	tx, ty := x.id.IdentityToken(), y.id.IdentityToken()
	hx, err := New(cx, y.id.GUIDPrefix, &ty, now)
	if err != nil {
		t.Fatal(err)
	}
	hy, err := New(cy, x.id.GUIDPrefix, &tx, now)
	if err != nil {
		t.Fatal(err)
	}
	if hx.Role() == hy.Role() {
		t.Fatalf("both sides are %s", hx.Role())
	}
	if hx.Role() == Initiator {
		return hx, hy
	}
	return hy, hx
}

// run drives a full handshake through the wire codec, with an optional
// edit of each message on the way.
func run(t *testing.T, a, b *Handshake, now time.Time, edit func(step int, tok *token.DataHolder)) error {
	t.Helper()
	req, err := a.Begin(now)
	if err != nil {
		return err
	}
	wire := func(step int, tok *token.DataHolder) *token.DataHolder {
		m := GenericMessage{ClassID: GMClassAuth, Data: []token.DataHolder{*tok}}
		got, err := UnmarshalGenericMessage(m.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		out := got.Data[0]
		if edit != nil {
			edit(step, &out)
		}
		return &out
	}
	reply, err := b.HandleMessage(wire(1, req), now)
	if err != nil {
		return err
	}
	final, err := a.HandleMessage(wire(2, reply), now)
	if err != nil {
		return err
	}
	if out, err := b.HandleMessage(wire(3, final), now); err != nil || out != nil {
		return fmt.Errorf("final: %v %w", out, err)
	}
	return nil
}

func TestHandshakeGoGo(t *testing.T) {
	now := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	x, y := loadSide(t, ks, "/talker", 1, now), loadSide(t, ks, "/listener", 2, now)
	for _, c := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"ECDH", nil},
		{"DH raw (Fast DDS form)", func(c *Config) { c.KeyAgreement = KAgreeDH }},
		{"DH DER (Cyclone form)", func(c *Config) { c.KeyAgreement = KAgreeDH; c.DHAsDER = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := pair(t, x, y, c.cfg, now)
			if err := run(t, a, b, now, nil); err != nil {
				t.Fatal(err)
			}
			ra, rb := a.Result(), b.Result()
			if ra == nil || rb == nil {
				t.Fatal("no result")
			}
			if !bytes.Equal(ra.SharedSecret.Secret, rb.SharedSecret.Secret) || len(ra.SharedSecret.Secret) != 32 {
				t.Fatal("shared secrets differ")
			}
			if ra.SharedSecret.Challenge1 != rb.SharedSecret.Challenge1 || ra.SharedSecret.Challenge2 != rb.SharedSecret.Challenge2 ||
				ra.SharedSecret.Challenge1 == ra.SharedSecret.Challenge2 {
				t.Fatal("challenges differ between the sides")
			}
			if ra.RemoteCert.Subject.CommonName == rb.RemoteCert.Subject.CommonName {
				t.Fatal("remote certificates")
			}
			if !bytes.HasPrefix(ra.RemotePermissions, []byte("MIME-Version")) {
				t.Fatal("c.perm is not the peer's permissions.p7s")
			}
			// no secret reaches a formatted string
			s := fmt.Sprintf("%v %+v %x %s %#v %v %+v", ra, *ra, ra.SharedSecret.Secret, ra.SharedSecret, ra.SharedSecret, a, *b)
			if strings.Contains(s, hex.EncodeToString(ra.SharedSecret.Secret)) || strings.Contains(s, string(ra.SharedSecret.Secret)) {
				t.Fatal("the shared secret is printed")
			}
		})
	}
}

func TestHandshakeRSA(t *testing.T) {
	now := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	x := loadSide(t, ks, "/talker", 1, now)
	// an RSA-2048 identity signed by the same CA
	ca, _ := keystore.ReadCert(filepath.Join(ks, "public", "ca.cert.pem"))
	caKey, _ := keystore.ReadKey(filepath.Join(ks, "private", "ca.key.pem"))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "/rsa"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	id, err := NewIdentity(cert, ca, key, GUIDPrefix{9}, now)
	if err != nil {
		t.Fatal(err)
	}
	y := side{id: id, perm: x.perm}
	it := y.id.IdentityToken()
	if v, _ := it.Prop(PropCertAlg); v != "RSA-2048" {
		t.Fatalf("dds.cert.algo %q", v)
	}
	a, b := pair(t, x, y, nil, now)
	if err := run(t, a, b, now, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Result().SharedSecret.Secret, b.Result().SharedSecret.Secret) {
		t.Fatal("secrets differ")
	}
	// Fast DDS labels c.dsign_algo after the CA's signature algorithm: an
	// RSA identity under this ECDSA CA says "ECDSA-SHA256" and signs with
	// RSASSA-PSS (seen live); the key decides, not the label.
	id.dsignLabel = DSignECDSA
	a, b = pair(t, x, y, nil, now)
	if err := run(t, a, b, now, nil); err != nil {
		t.Fatalf("RSA identity labelled ECDSA-SHA256: %v", err)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	now := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	other := keystoreWith(t, "other", "/intruder")
	x, y := loadSide(t, ks, "/talker", 1, now), loadSide(t, ks, "/listener", 2, now)
	z := loadSide(t, other, "/intruder", 3, now)

	// foreign CA: a certificate from another keystore
	a, b := pair(t, x, z, nil, now)
	if err := run(t, a, b, now, nil); !errors.Is(err, ErrUntrustedCA) {
		t.Fatalf("foreign CA: %v", err)
	}
	// expired: the peer checks at a time after the certificate's end
	later := x.id.Cert.NotAfter.Add(time.Hour)
	a, b = pair(t, x, y, nil, now)
	req, _ := a.Begin(now)
	if _, err := b.HandleMessage(req, later); !errors.Is(err, ErrCertExpired) || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("expired: %v", err)
	}
	edits := []struct {
		name string
		step int
		prop string
		want error
	}{
		{"bad signature in the reply", 2, "signature", ErrBadSignature},
		{"bad signature in the final", 3, "signature", ErrBadSignature},
		{"wrong challenge1 in the reply", 2, "challenge1", ErrChallenge},
		{"wrong challenge2 in the final", 3, "challenge2", ErrChallenge},
		{"changed hash_c1 in the request", 1, "hash_c1", ErrHash},
		{"changed c.pdata (GUID)", 1, "c.pdata", ErrGUID},
		{"changed dh2 (signature covers it)", 2, "dh2", ErrBadToken},
	}
	for _, e := range edits {
		a, b := pair(t, x, y, nil, now)
		err := run(t, a, b, now, func(step int, tok *token.DataHolder) {
			if step != e.step {
				return
			}
			for i := range tok.BinaryProperties {
				if tok.BinaryProperties[i].Name == e.prop {
					v := append([]byte(nil), tok.BinaryProperties[i].Value...)
					v[len(v)/2+1] ^= 0x40
					tok.BinaryProperties[i].Value = v
				}
			}
		})
		if e.want == ErrBadToken {
			if !errors.Is(err, ErrBadToken) && !errors.Is(err, ErrBadSignature) {
				t.Errorf("%s: %v", e.name, err)
			}
			continue
		}
		if !errors.Is(err, e.want) {
			t.Errorf("%s: %v, want %v", e.name, err, e.want)
		}
		if err != nil && (a.Err() == nil && b.Err() == nil) {
			t.Errorf("%s: the failing side keeps no error", e.name)
		}
	}
}

func TestHandshakeResendAndTimeout(t *testing.T) {
	t0 := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	x, y := loadSide(t, ks, "/talker", 1, t0), loadSide(t, ks, "/listener", 2, t0)
	a, b := pair(t, x, y, func(c *Config) { c.ResendPeriod = time.Second; c.Timeout = 10 * time.Second }, t0)
	req, _ := a.Begin(t0)
	if r, _ := a.Tick(t0.Add(500 * time.Millisecond)); r != nil {
		t.Fatal("resent before the period")
	}
	r, err := a.Tick(t0.Add(time.Second))
	if err != nil || r == nil || !r.Equal(req) {
		t.Fatalf("resend: %v %v", r, err)
	}
	reply, err := b.HandleMessage(req, t0)
	if err != nil {
		t.Fatal(err)
	}
	// the request arrives twice: the same reply again, no failure
	reply2, err := b.HandleMessage(r, t0)
	if err != nil || !reply2.Equal(reply) {
		t.Fatalf("duplicate request: %v", err)
	}
	// the reply is lost; b times out
	if _, err := b.Tick(t0.Add(10 * time.Second)); !errors.Is(err, ErrTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	if _, err := b.HandleMessage(reply, t0); err == nil {
		t.Fatal("a failed handshake went on")
	}
}

func TestAdjustedGUIDPrefix(t *testing.T) {
	subj := []byte("some DER subject")
	h := sha256.Sum256(subj)
	p := AdjustedGUIDPrefix(subj, GUIDPrefix{1, 2, 3})
	if p[0]&0x80 == 0 {
		t.Fatal("flag bit not set")
	}
	// bits 1..47 are the first 47 bits of the hash
	var want [6]byte
	want[0] = 0x80 | h[0]>>1
	for i := 1; i < 6; i++ {
		want[i] = h[i-1]<<7 | h[i]>>1
	}
	if !bytes.Equal(p[:6], want[:]) || !PrefixMatchesCert(p, subj) || PrefixMatchesCert(p, []byte("x")) {
		t.Fatalf("%x", p)
	}
	c := sha256.Sum256([]byte{1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	if !bytes.Equal(p[6:], c[:6]) {
		t.Fatal("low half")
	}
}

func TestGenericMessageLayout(t *testing.T) {
	m := GenericMessage{
		MessageIdentity:        MessageIdentity{Source: MakeGUID(GUIDPrefix{1}, EntityStatelessMessageWriter), Seq: 3},
		DestinationParticipant: MakeGUID(GUIDPrefix{2}, EntityParticipant),
		ClassID:                GMClassAuth,
		Data:                   []token.DataHolder{{ClassID: ClassRequest, BinaryProperties: []token.BinaryProperty{{Name: "x", Value: []byte{1}, Propagate: true}}}},
	}
	b := m.Marshal()
	if !bytes.Equal(b[:4], []byte{0, 1, 0, 0}) || binary.LittleEndian.Uint64(b[4+16:]) != 3 {
		t.Fatalf("header or sequence number layout: % x", b[:32])
	}
	// class id right after the five GUIDs and two sequence numbers
	if got := binary.LittleEndian.Uint32(b[4+96:]); got != uint32(len(GMClassAuth)+1) {
		t.Fatalf("class id length %d", got)
	}
	got, err := UnmarshalGenericMessage(b)
	if err != nil || got.ClassID != GMClassAuth || got.MessageIdentity != m.MessageIdentity || len(got.Data) != 1 || !got.Data[0].Equal(&m.Data[0]) {
		t.Fatalf("%+v %v", got, err)
	}
}

func FuzzUnmarshalGenericMessage(f *testing.F) {
	m := GenericMessage{ClassID: GMClassAuth, Data: []token.DataHolder{{ClassID: ClassFinal}}}
	f.Add(m.Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := UnmarshalGenericMessage(b)
		if err != nil {
			return
		}
		if _, err := UnmarshalGenericMessage(got.Marshal()); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParticipantGUIDFromPData(f *testing.F) {
	f.Add(pdata(GUIDPrefix{1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParticipantGUIDFromPData(b) })
}

func FuzzDecodeDHPublic(f *testing.F) {
	f.Add(dhG.Bytes())
	f.Add([]byte{2, 1, 5})
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = decodeDHPublic(b) })
}

// FuzzHandshakeMessage feeds mutated handshake tokens to both roles: an
// error or an answer, never a panic.
func FuzzHandshakeMessage(f *testing.F) {
	now := time.Now()
	ks := keystoreWith(f, "main", "/talker", "/listener")
	x, y := loadSide(f, ks, "/talker", 1, now), loadSide(f, ks, "/listener", 2, now)
	tx, ty := x.id.IdentityToken(), y.id.IdentityToken()
	mk := func() (a, b *Handshake) {
		hx, _ := New(x.config(), y.id.GUIDPrefix, &ty, now)
		hy, _ := New(y.config(), x.id.GUIDPrefix, &tx, now)
		if hx.Role() == Initiator {
			return hx, hy
		}
		return hy, hx
	}
	a, b := mk()
	req, _ := a.Begin(now)
	reply, _ := b.HandleMessage(req, now)
	f.Add(req.Marshal(true), uint8(0))
	f.Add(reply.Marshal(true), uint8(1))
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		tok, err := token.Unmarshal(raw, true)
		if err != nil {
			return
		}
		a, b := mk()
		if which%2 == 0 {
			_, _ = b.HandleMessage(&tok, now)
			return
		}
		if _, err := a.Begin(now); err != nil {
			t.Fatal(err)
		}
		_, _ = a.HandleMessage(&tok, now)
	})
}

var _ crypto.Signer = (*rsa.PrivateKey)(nil)

// TestAnnouncedTokensCarryNoProperties: like Cyclone DDS 0.10, the SPDP
// tokens go out with their class id alone (Fast DDS 2.9 refuses a
// participant whose dds.perm_ca.algo is the spec's "EC-prime256v1"); the
// properties stay readable locally.
func TestAnnouncedTokensCarryNoProperties(t *testing.T) {
	now := time.Now()
	x := loadSide(t, keystoreWith(t, "main", "/talker", "/listener"), "/talker", 1, now)
	tok := x.id.IdentityToken()
	wire, err := token.Unmarshal(tok.Marshal(true), true)
	if err != nil || wire.ClassID != ClassIdentity || len(wire.Properties) != 0 {
		t.Fatalf("announced identity token %+v %v", wire, err)
	}
	if sn, ok := tok.Prop(PropCertSN); !ok || sn != `/CN=\/talker` {
		t.Fatalf("local dds.cert.sn %q", sn)
	}
}

// TestAuthRequestFutureChallenge: with AuthRequest tokens exchanged first
// (as Cyclone DDS does), each side's challenge is the future_challenge it
// announced, and a message with another challenge is refused.
func TestAuthRequestFutureChallenge(t *testing.T) {
	now := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	x, y := loadSide(t, ks, "/talker", 1, now), loadSide(t, ks, "/listener", 2, now)
	a, b := pair(t, x, y, nil, now)
	ara, arb := a.AuthRequest(), b.AuthRequest()
	if err := b.HandleAuthRequest(&ara); err != nil {
		t.Fatal(err)
	}
	if err := a.HandleAuthRequest(&arb); err != nil {
		t.Fatal(err)
	}
	if err := run(t, a, b, now, nil); err != nil {
		t.Fatal(err)
	}
	fa, _ := ara.BinProp("future_challenge")
	if !bytes.Equal(a.Result().SharedSecret.Challenge1[:], fa) {
		t.Fatal("challenge1 is not the initiator's future_challenge")
	}
	// the replier learnt a future challenge the request does not carry
	a, b = pair(t, x, y, nil, now)
	other := token.DataHolder{ClassID: ClassAuthRequest, BinaryProperties: []token.BinaryProperty{bp("future_challenge", make([]byte, 32))}}
	if err := b.HandleAuthRequest(&other); err != nil {
		t.Fatal(err)
	}
	if err := run(t, a, b, now, nil); !errors.Is(err, ErrChallenge) {
		t.Fatalf("request with another challenge than announced: %v", err)
	}
	if err := b.HandleAuthRequest(&token.DataHolder{ClassID: ClassAuthRequest}); !errors.Is(err, ErrBadToken) {
		t.Fatalf("auth request without future_challenge: %v", err)
	}
}

func TestHandshakeCRL(t *testing.T) {
	now := time.Now()
	ks := keystoreWith(t, "main", "/talker", "/listener")
	x, y := loadSide(t, ks, "/talker", 1, now), loadSide(t, ks, "/listener", 2, now)
	caKey, err := keystore.ReadKey(filepath.Join(ks, "private", "ca.key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	mkCRL := func(serials ...*big.Int) []byte {
		var entries []x509.RevocationListEntry
		for _, s := range serials {
			entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: now})
		}
		issuer := *x.id.CA // sros2's CA has no key usage; Go's CRL writer wants cRLSign
		issuer.KeyUsage |= x509.KeyUsageCRLSign
		der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: now,
			NextUpdate: now.Add(time.Hour), RevokedCertificateEntries: entries}, &issuer, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	// the listener's certificate is revoked: the talker refuses it
	if err := x.id.SetCRL(mkCRL(y.id.Cert.SerialNumber)); err != nil {
		t.Fatal(err)
	}
	defer func() { x.id.CRL = nil }()
	a, b := pair(t, x, y, nil, now)
	if err := run(t, a, b, now, nil); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked peer: %v", err)
	}
	// a CRL listing ourselves is refused at once
	if err := y.id.SetCRL(mkCRL(y.id.Cert.SerialNumber)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("own certificate revoked: %v", err)
	}
	y.id.CRL = nil
	if err := y.id.SetCRL([]byte("not a CRL")); err == nil {
		t.Fatal("garbage CRL accepted")
	}
}
