package auth

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/security/smime"
	"github.com/nros-go/nros/rmw/rtps/security/token"
)

type capturedMsg struct {
	from GUIDPrefix
	raw  []byte
	msg  *GenericMessage
}

func loadVectors(t *testing.T, name string) []capturedMsg {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []capturedMsg
	for sc.Scan() {
		from, data, _ := strings.Cut(sc.Text(), " ")
		p, err1 := hex.DecodeString(from)
		b, err2 := hex.DecodeString(data)
		if err1 != nil || err2 != nil || len(p) != 12 {
			t.Fatalf("bad vector line in %s", name)
		}
		m, err := UnmarshalGenericMessage(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var c capturedMsg
		copy(c.from[:], p)
		c.raw, c.msg = b, m
		out = append(out, c)
	}
	return out
}

func findClass(msgs []capturedMsg, class string) *capturedMsg {
	for i := range msgs {
		if len(msgs[i].msg.Data) == 1 && msgs[i].msg.Data[0].ClassID == class {
			return &msgs[i]
		}
	}
	return nil
}

func cProps(t *testing.T, tok *token.DataHolder) []token.BinaryProperty {
	var cs []token.BinaryProperty
	for _, n := range []string{"c.id", "c.perm", "c.pdata", "c.dsign_algo", "c.kagree_algo"} {
		v, ok := tok.BinProp(n)
		if !ok {
			t.Fatalf("%s has no %s", tok.ClassID, n)
		}
		cs = append(cs, bp(n, v))
	}
	return cs
}

func prop(t *testing.T, tok *token.DataHolder, name string) []byte {
	v, ok := tok.BinProp(name)
	if !ok {
		t.Fatalf("%s has no %s", tok.ClassID, name)
	}
	return v
}

// TestVendorHandshakeVectors checks our wire knowledge against real
// handshakes between two Cyclone DDS and between two Fast DDS participants:
// the ParticipantGenericMessage codec (byte-exact re-encoding), the c.*
// hash (equal to the peer's hash_c1/hash_c2 where sent, and the input of
// signatures that verify), the Reply and Final signature layouts, the
// adjusted GUID in c.pdata, the permissions document in c.perm; then our
// replier answers the captured Request.
func TestVendorHandshakeVectors(t *testing.T) {
	ca, err := keystore.ReadCert(filepath.Join("testdata", "vectors", "ca.cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	now := ca.NotBefore.Add(48 * time.Hour) // the capture's time, within every validity
	for _, v := range []struct {
		file, kagree string
		nulStrings   bool
	}{
		{"cyclone-0.10.2.msgs", KAgreeECDH, true},
		{"fastdds-2.9.1.msgs", KAgreeDH, false},
	} {
		t.Run(v.file, func(t *testing.T) {
			msgs := loadVectors(t, v.file)
			for _, m := range msgs {
				// byte-exact, up to the DATA submessage's padding to 4
				ours := m.msg.Marshal()
				if len(ours) > len(m.raw) || len(m.raw)-len(ours) > 3 || !bytes.Equal(ours, m.raw[:len(ours)]) ||
					len(bytes.Trim(m.raw[len(ours):], "\x00")) != 0 {
					t.Errorf("re-encoding a %s differs from the vendor's bytes", m.msg.ClassID)
				}
				if m.msg.MessageIdentity.Source.Prefix() != m.from || m.msg.ClassID != GMClassAuth && m.msg.ClassID != GMClassAuthRequest {
					t.Errorf("message identity %x / class %q", m.msg.MessageIdentity.Source, m.msg.ClassID)
				}
			}
			req, rep, fin := findClass(msgs, ClassRequest), findClass(msgs, ClassReply), findClass(msgs, ClassFinal)
			if req == nil || rep == nil || fin == nil {
				t.Fatal("capture lacks a Request, Reply or Final")
			}
			if rep.msg.RelatedMessageIdentity != req.msg.MessageIdentity || fin.msg.RelatedMessageIdentity != rep.msg.MessageIdentity {
				t.Error("related_message_identity does not chain Request -> Reply -> Final")
			}
			rq, rp, fn := &req.msg.Data[0], &rep.msg.Data[0], &fin.msg.Data[0]
			if alg := prop(t, rq, "c.dsign_algo"); bytes.HasSuffix(alg, []byte{0}) != v.nulStrings {
				t.Errorf("c.dsign_algo %q: NUL-terminated strings expected %v", alg, v.nulStrings)
			}
			if got := strProp(prop(t, rq, "c.kagree_algo")); got != v.kagree {
				t.Errorf("c.kagree_algo %q, want %q", got, v.kagree)
			}
			hc1, hc2 := hashC(cProps(t, rq)), hashC(cProps(t, rp))
			if x, ok := rq.BinProp("hash_c1"); ok && !bytes.Equal(x, hc1[:]) {
				t.Error("our hash_c1 differs from the initiator's")
			}
			if x, ok := rp.BinProp("hash_c2"); ok && !bytes.Equal(x, hc2[:]) {
				t.Error("our hash_c2 differs from the replier's")
			}
			icert, err := parseCertProp(prop(t, rq, "c.id"))
			if err != nil {
				t.Fatal(err)
			}
			rcert, err := parseCertProp(prop(t, rp, "c.id"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				m    *capturedMsg
				tok  *token.DataHolder
				cert []byte
			}{{req, rq, icert.RawSubject}, {rep, rp, rcert.RawSubject}} {
				g, err := ParticipantGUIDFromPData(prop(t, c.tok, "c.pdata"))
				if err != nil || g.Prefix() != c.m.from || !PrefixMatchesCert(g.Prefix(), c.cert) {
					t.Errorf("c.pdata GUID %x from %x: %v", g, c.m.from, err)
				}
			}
			for _, c := range []*token.DataHolder{rq, rp} {
				cert, _ := parseCertProp(prop(t, c, "c.id"))
				if err := CheckCertificate(cert, ca, now); err != nil {
					t.Error(err)
				}
				doc, err := smime.Verify(prop(t, c, "c.perm"), ca, now)
				if err != nil {
					t.Fatalf("c.perm: %v", err)
				}
				perms, err := access.ParsePermissions(doc)
				if err == nil {
					_, err = perms.FindGrant(cert.Subject.String())
				}
				if err != nil {
					t.Errorf("c.perm of %q: %v", cert.Subject, err)
				}
			}
			dh1, dh2 := prop(t, rq, "dh1"), prop(t, rp, "dh2")
			c1, c2 := prop(t, rp, "challenge1"), prop(t, rp, "challenge2")
			if !bytes.Equal(c1, prop(t, rq, "challenge1")) {
				t.Error("reply challenge1 is not the request's")
			}
			if err := verify(rcert, sigInput(bp("hash_c2", hc2[:]), bp("challenge2", c2), bp("dh2", dh2),
				bp("challenge1", c1), bp("dh1", dh1), bp("hash_c1", hc1[:])), prop(t, rp, "signature")); err != nil {
				t.Errorf("reply signature: %v", err)
			}
			if err := verify(icert, sigInput(bp("hash_c1", hc1[:]), bp("challenge1", c1), bp("dh1", dh1),
				bp("challenge2", c2), bp("dh2", dh2), bp("hash_c2", hc2[:])), prop(t, fn, "signature")); err != nil {
				t.Errorf("final signature: %v", err)
			}
			if v.kagree == KAgreeDH {
				for _, d := range [][]byte{dh1, dh2} {
					if _, der, err := decodeDHPublic(d); err != nil || der {
						t.Errorf("DH public value: der=%v %v", der, err)
					}
				}
			}

			// our replier (the /listener identity) answers the captured request
			key, err := keystore.ReadKey(filepath.Join("testdata", "vectors", "listener.key.pem"))
			if err != nil {
				t.Fatal(err)
			}
			cert, _ := keystore.ReadCert(filepath.Join("testdata", "vectors", "listener.cert.pem"))
			id, err := NewIdentity(cert, ca, key, GUIDPrefix{1}, now)
			if err != nil {
				t.Fatal(err)
			}
			remoteTok := token.DataHolder{ClassID: ClassIdentity}
			h, err := New(Config{Local: id, Permissions: []byte("perm"), PData: pdata(id.GUIDPrefix)}, req.from, &remoteTok, now)
			if err != nil || h.Role() != Replier {
				t.Fatalf("role %v: %v", h.Role(), err)
			}
			if ar := findClass(msgs, ClassAuthRequest); ar != nil && ar.from == req.from {
				if err := h.HandleAuthRequest(&ar.msg.Data[0]); err != nil {
					t.Fatal(err)
				}
			}
			reply, err := h.HandleMessage(rq, now)
			if err != nil {
				t.Fatalf("our replier refuses the vendor's request: %v", err)
			}
			ourDH2 := prop(t, reply, "dh2")
			if v.kagree == KAgreeECDH && len(ourDH2) != 65 {
				t.Errorf("ECDH dh2 of %d bytes", len(ourDH2))
			}
			if v.kagree == KAgreeDH {
				if _, der, _ := decodeDHPublic(ourDH2); der {
					t.Error("answered a raw DH value with a DER one")
				}
			}
			// the vendor's own Final does not fit our Reply: refused, not accepted
			if _, err := h.HandleMessage(fn, now); !errors.Is(err, ErrChallenge) && !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrBadToken) {
				t.Errorf("a final message for another reply: %v", err)
			}
		})
	}
}

// TestNewStatelessMessageMatchesVendors rebuilds each captured message from
// its parts with NewStatelessMessage: the bytes are the vendor's.
func TestNewStatelessMessageMatchesVendors(t *testing.T) {
	for _, f := range []string{"cyclone-0.10.2.msgs", "fastdds-2.9.1.msgs"} {
		for _, m := range loadVectors(t, f) {
			g := m.msg
			b := NewStatelessMessage(m.from, g.DestinationParticipant.Prefix(), g.MessageIdentity.Seq, g.RelatedMessageIdentity, g.ClassID, g.Data[0]).Marshal()
			if !bytes.Equal(b, m.raw[:len(b)]) {
				t.Errorf("%s: %s rebuilt differs", f, g.Data[0].ClassID)
			}
			if _, err := g.Token(g.DestinationParticipant.Prefix()); err != nil {
				t.Error(err)
			}
			if _, err := g.Token(GUIDPrefix{9}); err == nil {
				t.Error("a message for another participant accepted")
			}
		}
	}
}

// TestVendorSPDPSecurityContents reads the SPDP parameters the vendors put
// in c.pdata: their IdentityToken and PermissionsToken decode with our codec
// (big endian) and hold what our Identity and access.Local write for the
// same certificates (OpenSSL oneline names, "EC-prime256v1"), and their
// PID_PARTICIPANT_SECURITY_INFO is what our governance mapping derives from
// sros2's default governance.
func TestVendorSPDPSecurityContents(t *testing.T) {
	ca, _ := keystore.ReadCert(filepath.Join("testdata", "vectors", "ca.cert.pem"))
	gov, err := access.ParseGovernance([]byte(keystore.GovernanceXML("0")))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := gov.DomainRule(0)
	wantInfo := rule.ParticipantSecurityInfo()
	for _, f := range []string{"cyclone-0.10.2.msgs", "fastdds-2.9.1.msgs"} {
		req := findClass(loadVectors(t, f), ClassRequest)
		rq := &req.msg.Data[0]
		cert, _ := parseCertProp(prop(t, rq, "c.id"))
		seen := map[uint16]bool{}
		err := PDataParams(prop(t, rq, "c.pdata"), func(pid uint16, v []byte) bool {
			seen[pid] = true
			switch pid {
			case 0x1001: // PID_IDENTITY_TOKEN
				tok, err := token.Unmarshal(v, false)
				if err != nil {
					t.Fatalf("%s identity token: %v", f, err)
				}
				if err := CheckIdentityToken(&tok); err != nil {
					t.Error(err)
				}
				// Cyclone DDS 0.10 announces the token without properties;
				// Fast DDS with OpenSSL oneline names
				sn, ok1 := tok.Prop(PropCertSN)
				casn, ok2 := tok.Prop(PropCASN)
				if (ok1 || ok2) && (sn != token.OnelineName(cert.RawSubject) || casn != token.OnelineName(ca.RawSubject)) {
					t.Errorf("%s: dds.cert.sn %q dds.ca.sn %q, ours %q %q", f, sn, casn, token.OnelineName(cert.RawSubject), token.OnelineName(ca.RawSubject))
				}
				alg, _ := tok.Prop(PropCertAlg)
				t.Logf("%s identity token: %s, dds.cert.algo %q", f, tok.ClassID, alg)
			case 0x1002: // PID_PERMISSIONS_TOKEN
				tok, err := token.Unmarshal(v, false)
				if err != nil {
					t.Fatalf("%s permissions token: %v", f, err)
				}
				if err := access.CheckPermissionsToken(&tok); err != nil {
					t.Error(err)
				}
				sn, _ := tok.Prop(access.PropPermCASN)
				alg, _ := tok.Prop(access.PropPermCAAlgo)
				t.Logf("%s permissions token: %s sn %q algo %q", f, tok.ClassID, sn, alg)
				if sn != "" && sn != token.OnelineName(ca.RawSubject) {
					t.Errorf("%s: dds.perm_ca.sn %q", f, sn)
				}
			case access.PIDParticipantSecurityInfo:
				info, err := access.UnmarshalParticipantSecurityInfo(v, false)
				if err != nil || !wantInfo.Compatible(info) || info != wantInfo {
					t.Errorf("%s: participant security info %#x/%#x, ours %#x/%#x", f, info.Attributes, info.PluginAttributes, wantInfo.Attributes, wantInfo.PluginAttributes)
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range []uint16{0x1001, 0x1002, access.PIDParticipantSecurityInfo} {
			if !seen[pid] {
				t.Errorf("%s: c.pdata lacks PID %#x", f, pid)
			}
		}
	}
}
