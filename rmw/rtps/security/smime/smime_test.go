package smime

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testCA(t testing.TB, rsaKey bool) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	var key crypto.Signer
	var err error
	if rsaKey {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "sros2testCA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

const gov = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<dds>\n  <x>1</x>\n</dds>\n"

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, rsaKey := range []bool{false, true} {
		ca, key := testCA(t, rsaKey)
		doc, err := Sign([]byte(gov), ca, key)
		if err != nil {
			t.Fatal(err)
		}
		body, err := Verify(doc, ca, time.Now())
		if err != nil {
			t.Fatalf("rsa=%v: %v", rsaKey, err)
		}
		want := strings.ReplaceAll(gov, "\n", "\r\n")
		if string(body) != want {
			t.Fatalf("body %q, want %q", body, want)
		}
	}
}

func TestVerifyRefusesTampering(t *testing.T) {
	ca, key := testCA(t, false)
	doc, err := Sign([]byte(gov), ca, key)
	if err != nil {
		t.Fatal(err)
	}
	// change one character of the signed content
	bad := bytes.Replace(doc, []byte("<x>1</x>"), []byte("<x>2</x>"), 1)
	if _, err := Verify(bad, ca, time.Now()); !errors.Is(err, ErrSignature) {
		t.Fatalf("tampered content: err %v, want ErrSignature", err)
	}
	// a foreign CA
	other, _ := testCA(t, false)
	if _, err := Verify(doc, other, time.Now()); err == nil || !strings.Contains(err.Error(), "not certified by the permissions CA") {
		t.Fatalf("foreign CA: err %v", err)
	}
	// expired signer
	if _, err := Verify(doc, ca, time.Now().Add(48*time.Hour)); err == nil || !strings.Contains(err.Error(), "not valid at") {
		t.Fatalf("expired: err %v", err)
	}
	// a signature byte flipped inside the base64 body: decode, flip, encode
	_, der, err := parseMIME(doc)
	if err != nil {
		t.Fatal(err)
	}
	der[len(der)-3] ^= 0x01
	entity := textEntity([]byte(gov))
	if _, err := verifyPKCS7(der, entity, ca, time.Now()); err == nil {
		t.Fatal("flipped signature byte accepted")
	}
}

func TestVerifyGarbage(t *testing.T) {
	ca, _ := testCA(t, false)
	for _, in := range []string{"", "hello", "Content-Type: text/plain\n\nx", "Content-Type: multipart/signed; boundary=\"b\"\n\n--b\nx\n--b--\n"} {
		if _, err := Verify([]byte(in), ca, time.Now()); err == nil {
			t.Fatalf("%q accepted", in)
		}
	}
}

func haveOpenSSL(t *testing.T) string {
	p, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenSSLVerifiesOurs: `openssl smime -verify` accepts what Sign writes.
func TestOpenSSLVerifiesOurs(t *testing.T) {
	openssl := haveOpenSSL(t)
	for _, rsaKey := range []bool{false, true} {
		dir := t.TempDir()
		ca, key := testCA(t, rsaKey)
		writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Raw)
		doc, err := Sign([]byte(gov), ca, key)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "gov.p7s"), doc, 0o600)
		out, err := exec.Command(openssl, "smime", "-verify", "-text", "-in", filepath.Join(dir, "gov.p7s"),
			"-CAfile", filepath.Join(dir, "ca.pem")).CombinedOutput()
		if err != nil {
			t.Fatalf("rsa=%v: openssl smime -verify: %v\n%s", rsaKey, err, out)
		}
		if !strings.Contains(string(out), "<x>1</x>") {
			t.Fatalf("openssl output %q", out)
		}
	}
}

// TestWeVerifyOpenSSL: Verify accepts `openssl smime -sign -text`, detached
// (sros2's shape) and opaque (-nodetach), with EC and RSA keys, and refuses
// a document signed without -text (Cyclone DDS and Fast DDS verify with
// PKCS7_TEXT and refuse it too).
func TestWeVerifyOpenSSL(t *testing.T) {
	openssl := haveOpenSSL(t)
	for _, rsaKey := range []bool{false, true} {
		dir := t.TempDir()
		ca, key := testCA(t, rsaKey)
		writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Raw)
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, filepath.Join(dir, "ca.key"), "PRIVATE KEY", kder)
		os.WriteFile(filepath.Join(dir, "gov.xml"), []byte(gov), 0o600)
		for _, extra := range [][]string{{"-text"}, {"-text", "-nodetach"}, nil} {
			args := append([]string{"smime", "-sign", "-in", filepath.Join(dir, "gov.xml"), "-out", filepath.Join(dir, "gov.p7s"),
				"-signer", filepath.Join(dir, "ca.pem"), "-inkey", filepath.Join(dir, "ca.key")}, extra...)
			if out, err := exec.Command(openssl, args...).CombinedOutput(); err != nil {
				t.Fatalf("openssl %v: %v\n%s", args, err, out)
			}
			doc, _ := os.ReadFile(filepath.Join(dir, "gov.p7s"))
			body, err := Verify(doc, ca, time.Now())
			if extra == nil {
				if err == nil || !strings.Contains(err.Error(), "-text") && !strings.Contains(err.Error(), "text/plain") {
					t.Fatalf("signed without -text: err %v, want a text/plain refusal", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("rsa=%v %v: %v", rsaKey, extra, err)
			}
			if string(body) != strings.ReplaceAll(gov, "\n", "\r\n") {
				t.Fatalf("body %q", body)
			}
			// and with LF line ends (a file rewritten by an editor or git)
			if len(extra) == 1 {
				lf := bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
				if _, err := Verify(lf, ca, time.Now()); err != nil {
					t.Fatalf("LF-only copy: %v", err)
				}
			}
		}
	}
}

func FuzzVerify(f *testing.F) {
	ca, key := testCA(f, false)
	doc, err := Sign([]byte(gov), ca, key)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte("MIME-Version: 1.0\nContent-Type: application/pkcs7-mime\n\nMIIB"))
	now := time.Now()
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := Verify(b, ca, now)
		if err == nil && !bytes.Contains(b, []byte("x>")) {
			t.Fatalf("verified a document without the signed content: %q", body)
		}
	})
}
