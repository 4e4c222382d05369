// Package auth is the DDS Security builtin authentication plugin
// (DDS:Auth:PKI-DH 1.0) as a sans-IO library: local identity validation,
// the IdentityToken, the participant GUID adjusted from the identity
// certificate, the Request/Reply/Final handshake as a state machine per
// remote participant (time and randomness injected), the shared secret
// handed to the crypto plugin, and the ParticipantGenericMessage codec of
// DCPSParticipantStatelessMessage that carries the handshake.
//
// Wire facts it follows, from Cyclone DDS 0.10 and Fast DDS 2.9 (both on
// OpenSSL):
//
//   - Hashes (hash_c1, hash_c2) are SHA-256 over the big-endian CDR of the
//     sequence c.id, c.perm, c.pdata, c.dsign_algo, c.kagree_algo; the
//     signatures cover the big-endian CDR of the sequence
//     {hash_c2, challenge2, dh2, challenge1, dh1, hash_c1} (Reply) or
//     {hash_c1, challenge1, dh1, challenge2, dh2, hash_c2} (Final).
//   - ECDSA signatures are DER; RSA signatures are RSASSA-PSS with SHA-256
//     and MGF1-SHA-256 (we sign with a 32-byte salt as Fast DDS does and
//     verify any salt length).
//   - ECDH public keys are uncompressed points (65 bytes). DH+MODP-2048-256
//     public keys are a DER INTEGER from Cyclone DDS and raw big-endian
//     octets from Fast DDS: both are read, and a replier answers in the
//     encoding the initiator used.
//   - The shared secret is SHA-256 of the raw key-agreement output.
//   - Cyclone DDS sends string properties (c.perm, c.dsign_algo,
//     c.kagree_algo) with a trailing NUL and Fast DDS without; Fast DDS
//     compares algorithm names including the NUL, so we send none and accept
//     both.
//   - Fast DDS requires the optional hash_c1, hash_c2, dh1 and challenge1 in
//     a Reply; Cyclone checks them when present: we always send them.
//   - c.pdata is the participant's SPDP parameter list, big endian, without
//     encapsulation header; its PID_PARTICIPANT_GUID must be the adjusted
//     GUID derived from the certificate's subject.
//
// No secret (private key, key-agreement private value, shared secret) is
// ever part of an error or a String result.
package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/token"
)

// Token class ids, property names and algorithm names of PKI-DH.
const (
	ClassIdentity    = "DDS:Auth:PKI-DH:1.0"
	ClassAuthRequest = "DDS:Auth:PKI-DH:1.0+AuthReq"
	ClassRequest     = "DDS:Auth:PKI-DH:1.0+Req"
	ClassReply       = "DDS:Auth:PKI-DH:1.0+Reply"
	ClassFinal       = "DDS:Auth:PKI-DH:1.0+Final"

	PropCertSN  = "dds.cert.sn"
	PropCertAlg = "dds.cert.algo"
	PropCASN    = "dds.ca.sn"
	PropCAAlg   = "dds.ca.algo"

	DSignRSA   = "RSASSA-PSS-SHA256"
	DSignECDSA = "ECDSA-SHA256"
	KAgreeDH   = "DH+MODP-2048-256"
	KAgreeECDH = "ECDH+prime256v1-CEUM"
)

// Sentinel errors wrapped by handshake and identity errors, for callers
// and tests to tell failures apart.
var (
	ErrCertExpired     = errors.New("certificate expired")
	ErrCertNotYetValid = errors.New("certificate not yet valid")
	ErrUntrustedCA     = errors.New("certificate not signed by the identity CA")
	ErrKeyType         = errors.New("unsupported key (want RSA-2048 or EC prime256v1)")
	ErrBadSignature    = errors.New("handshake signature does not verify")
	ErrChallenge       = errors.New("challenge does not match")
	ErrBadToken        = errors.New("malformed handshake token")
	ErrGUID            = errors.New("participant GUID does not derive from the certificate")
	ErrHash            = errors.New("hash does not match")
	ErrTimeout         = errors.New("handshake timed out")
	ErrState           = errors.New("handshake message out of order")
	ErrRevoked         = errors.New("certificate revoked by the CRL")
)

// CheckCertificate checks an identity certificate against the identity CA
// at now: validity dates, the CA's signature and the key type.
func CheckCertificate(cert, ca *x509.Certificate, now time.Time) error {
	if now.Before(cert.NotBefore) {
		return fmt.Errorf("%w: %q is valid from %s", ErrCertNotYetValid, cert.Subject, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(cert.NotAfter) {
		return fmt.Errorf("%w: %q expired at %s", ErrCertExpired, cert.Subject, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if !cert.Equal(ca) {
		if err := ca.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil ||
			!bytes.Equal(cert.RawIssuer, ca.RawSubject) {
			return fmt.Errorf("%w: %q (issuer %q) against CA %q", ErrUntrustedCA, cert.Subject, cert.Issuer, ca.Subject)
		}
	}
	if token.CertAlgo(cert) == "" {
		return fmt.Errorf("%w: %q has a %T key", ErrKeyType, cert.Subject, cert.PublicKey)
	}
	return nil
}

// GUIDPrefix is an RTPS GUID prefix.
type GUIDPrefix [12]byte

// AdjustedGUIDPrefix derives the participant GUID prefix DDS Security
// requires from the identity certificate: bit 0 set, the next 47 bits the
// first bits of SHA-256 of the DER subject name, the last 6 bytes the first
// bytes of SHA-256 of the candidate prefix (as Cyclone DDS; Fast DDS hashes
// the candidate GUID: only the first 48 bits are checked by anyone).
func AdjustedGUIDPrefix(rawSubject []byte, candidate GUIDPrefix) GUIDPrefix {
	high := sha256.Sum256(rawSubject)
	low := sha256.Sum256(candidate[:])
	var p GUIDPrefix
	hb := byte(0x80)
	for i := 0; i < 6; i++ {
		p[i] = hb | high[i]>>1
		hb = high[i] << 7
	}
	copy(p[6:], low[:6])
	return p
}

// PrefixMatchesCert reports whether a GUID prefix carries the 47 bits
// derived from the certificate's subject (the check Fast DDS makes on
// c.pdata; Cyclone checks the same 6 bytes).
func PrefixMatchesCert(p GUIDPrefix, rawSubject []byte) bool {
	want := AdjustedGUIDPrefix(rawSubject, GUIDPrefix{})
	return bytes.Equal(p[:6], want[:6])
}

// Identity is a validated local identity.
type Identity struct {
	Cert *x509.Certificate
	CA   *x509.Certificate
	key  crypto.Signer
	// GUIDPrefix is the adjusted GUID prefix the participant must use.
	GUIDPrefix GUIDPrefix
	certPEM    []byte
	// CRL, when set, is the identity CA's revocation list (the enclave's
	// crl.pem): remote certificates it lists are refused.
	CRL *x509.RevocationList
	// dsignLabel overrides c.dsign_algo (tests emulate Fast DDS with it).
	dsignLabel string
}

// SetCRL installs the identity CA's revocation list (DER or PEM), checked
// against the CA's signature; the local certificate must not be listed.
func (id *Identity) SetCRL(b []byte) error {
	if blk, _ := pem.Decode(b); blk != nil {
		b = blk.Bytes
	}
	crl, err := x509.ParseRevocationList(b)
	if err != nil {
		return fmt.Errorf("auth: CRL: %v", err)
	}
	if err := crl.CheckSignatureFrom(id.CA); err != nil {
		return fmt.Errorf("auth: CRL is not signed by the identity CA %q: %v", id.CA.Subject, err)
	}
	id.CRL = crl
	return id.checkRevoked(id.Cert)
}

func (id *Identity) checkRevoked(c *x509.Certificate) error {
	if id.CRL == nil {
		return nil
	}
	for _, r := range id.CRL.RevokedCertificateEntries {
		if r.SerialNumber != nil && r.SerialNumber.Cmp(c.SerialNumber) == 0 {
			return fmt.Errorf("%w: %q (serial %s)", ErrRevoked, c.Subject, c.SerialNumber)
		}
	}
	return nil
}

// NewIdentity validates a local identity (validate_local_identity): the
// certificate against the CA at now, the key against the certificate, and
// derives the adjusted GUID prefix from the candidate one.
func NewIdentity(cert, ca *x509.Certificate, key crypto.Signer, candidate GUIDPrefix, now time.Time) (*Identity, error) {
	if err := CheckCertificate(cert, ca, now); err != nil {
		return nil, err
	}
	type eq interface{ Equal(crypto.PublicKey) bool }
	if k, ok := key.Public().(eq); !ok || !k.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("auth: the private key does not belong to certificate %q", cert.Subject)
	}
	return &Identity{Cert: cert, CA: ca, key: key,
		GUIDPrefix: AdjustedGUIDPrefix(cert.RawSubject, candidate),
		certPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})}, nil
}

// String describes the identity without key material.
func (id *Identity) String() string {
	return fmt.Sprintf("identity %q (CA %q, GUID prefix %x)", id.Cert.Subject, id.CA.Subject, id.GUIDPrefix[:])
}

// IdentityToken is the token announced in SPDP (PID_IDENTITY_TOKEN). As
// Cyclone DDS 0.10 does, its properties (dds.cert.sn, dds.cert.algo,
// dds.ca.sn, dds.ca.algo) stay local (not propagated): the vendors disagree
// on the algorithm names and neither needs them.
func (id *Identity) IdentityToken() token.DataHolder {
	return token.DataHolder{ClassID: ClassIdentity, Properties: []token.Property{
		{Name: PropCertSN, Value: token.OnelineName(id.Cert.RawSubject), Propagate: false},
		{Name: PropCertAlg, Value: token.CertAlgo(id.Cert), Propagate: false},
		{Name: PropCASN, Value: token.OnelineName(id.CA.RawSubject), Propagate: false},
		{Name: PropCAAlg, Value: token.CertAlgo(id.CA), Propagate: false},
	}}
}

// IdentityStatusToken is the token of PID_IDENTITY_STATUS_TOKEN. Like Cyclone
// DDS (no OCSP) we announce none: it is the nil token.
func (id *Identity) IdentityStatusToken() token.DataHolder { return token.DataHolder{} }

// CheckIdentityToken checks that a remote IdentityToken is of PKI-DH major
// version 1 (a higher minor and a "+..." suffix are accepted, as Cyclone does).
func CheckIdentityToken(t *token.DataHolder) error {
	const base = "DDS:Auth:PKI-DH:"
	if !strings.HasPrefix(t.ClassID, base) {
		return fmt.Errorf("%w: identity token class %q is not PKI-DH", ErrBadToken, t.ClassID)
	}
	v := strings.SplitN(strings.TrimPrefix(t.ClassID, base), "+", 2)[0]
	major, _, ok := strings.Cut(v, ".")
	if !ok || major != "1" {
		return fmt.Errorf("%w: identity token version %q is not 1.x", ErrBadToken, v)
	}
	return nil
}

func dsignAlgo(pub any) string {
	if _, ok := pub.(*rsa.PublicKey); ok {
		return DSignRSA
	}
	return DSignECDSA
}

func (id *Identity) sign(rnd interface{ Read([]byte) (int, error) }, data []byte) ([]byte, error) {
	h := sha256.Sum256(data)
	switch k := id.key.(type) {
	case *ecdsa.PrivateKey:
		return ecdsa.SignASN1(rnd, k, h[:])
	case *rsa.PrivateKey:
		return rsa.SignPSS(rnd, k, crypto.SHA256, h[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	}
	return nil, ErrKeyType
}

func verify(cert *x509.Certificate, data, sig []byte) error {
	h := sha256.Sum256(data)
	switch k := cert.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if ecdsa.VerifyASN1(k, h[:], sig) {
			return nil
		}
	case *rsa.PublicKey:
		if rsa.VerifyPSS(k, crypto.SHA256, h[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) == nil {
			return nil
		}
	default:
		return ErrKeyType
	}
	return ErrBadSignature
}

// parseCertProp reads c.id: a PEM certificate (DER is accepted too).
func parseCertProp(b []byte) (*x509.Certificate, error) {
	b = bytes.TrimRight(b, "\x00")
	if blk, _ := pem.Decode(b); blk != nil {
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%w: c.id holds a %s, not a certificate", ErrBadToken, blk.Type)
		}
		b = blk.Bytes
	}
	c, err := x509.ParseCertificate(b)
	if err != nil {
		return nil, fmt.Errorf("%w: c.id: %v", ErrBadToken, err)
	}
	return c, nil
}
