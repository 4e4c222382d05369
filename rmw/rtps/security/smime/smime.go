// Package smime signs and verifies S/MIME documents as the DDS Security
// builtin access-control plugin uses them: governance.p7s and
// permissions.p7s, a text/plain document signed by the permissions CA with a
// PKCS#7 SignedData (one signer, SHA-256, ECDSA or RSA, signed attributes
// content-type, signing-time and message-digest, the signer's certificate
// embedded).
//
// Sign writes what `openssl smime -sign -text` writes (and what sros2
// writes): a multipart/signed message whose first part is the text/plain
// entity and whose second part is the detached signature. Verify accepts that
// shape and the opaque one (`openssl smime -sign -text -nodetach`,
// application/pkcs7-mime), which is what OpenSSL's SMIME_read_PKCS7 reads for
// Cyclone DDS and Fast DDS; like their PKCS7_verify(..., PKCS7_TEXT) it
// requires the signed entity to be text/plain and returns its body.
//
// Only the subset of PKCS#7 that these files use is implemented, on
// encoding/asn1: the standard library has no PKCS#7.
package smime

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"
)

// MaxDocumentSize bounds the S/MIME documents Verify accepts (governance and
// permissions documents are a few kilobytes).
const MaxDocumentSize = 4 << 20

var (
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSHA256        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidRSA           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidRSASHA256     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidECPublicKey   = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidECDSASHA256   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
)

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"optional"` // [0] EXPLICIT, handled by hand
}

type signedData struct {
	Version          int
	DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
	ContentInfo      contentInfo
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type signerInfo struct {
	Version            int
	IssuerAndSerial    issuerAndSerial
	DigestAlgorithm    pkix.AlgorithmIdentifier
	AuthAttributes     asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnauthAttributes   asn1.RawValue `asn1:"optional,tag:1"`
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

// Error is a document that failed verification. Reason says why, in words
// that name the check (never key material).
type Error struct {
	Reason string
	Err    error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return "S/MIME: " + e.Reason + ": " + e.Err.Error()
	}
	return "S/MIME: " + e.Reason
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// ErrSignature is wrapped by the error of a document whose signature or
// content digest does not verify (the content or the signature was changed).
var ErrSignature = errors.New("signature does not verify")

func fail(reason string, err error) error { return &Error{Reason: reason, Err: err} }

// Sign signs content (a text document such as governance.xml) with key,
// whose certificate is cert, and returns the S/MIME multipart/signed
// document `openssl smime -sign -text` writes. The signing time is now.
func Sign(content []byte, cert *x509.Certificate, key crypto.Signer) ([]byte, error) {
	return SignAt(content, cert, key, time.Now())
}

// SignAt is Sign with the signing time given.
func SignAt(content []byte, cert *x509.Certificate, key crypto.Signer, now time.Time) ([]byte, error) {
	entity := textEntity(content)
	der, err := signDetached(entity, cert, key, now)
	if err != nil {
		return nil, err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	boundary := "----" + strings.ToUpper(hex.EncodeToString(rnd[:]))
	var b bytes.Buffer
	b.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&b, "Content-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"; micalg=\"sha-256\"; boundary=\"%s\"\n\n", boundary)
	b.WriteString("This is an S/MIME signed message\n\n")
	fmt.Fprintf(&b, "--%s\n", boundary)
	b.Write(entity)
	fmt.Fprintf(&b, "\n--%s\n", boundary)
	b.WriteString("Content-Type: application/x-pkcs7-signature; name=\"smime.p7s\"\n")
	b.WriteString("Content-Transfer-Encoding: base64\n")
	b.WriteString("Content-Disposition: attachment; filename=\"smime.p7s\"\n\n")
	enc := base64.StdEncoding.EncodeToString(der)
	for len(enc) > 64 {
		b.WriteString(enc[:64])
		b.WriteByte('\n')
		enc = enc[64:]
	}
	b.WriteString(enc)
	fmt.Fprintf(&b, "\n\n--%s--\n\n", boundary)
	return b.Bytes(), nil
}

// textEntity is the MIME entity that is signed: a text/plain header and the
// content with canonical CRLF line ends.
func textEntity(content []byte) []byte {
	return append([]byte("Content-Type: text/plain\r\n\r\n"), canonicalCRLF(content)...)
}

// canonicalCRLF rewrites every line end (LF or CRLF, or runs of CR before
// LF) to CRLF, as OpenSSL does before digesting a text entity. A last line
// without a line end keeps none.
func canonicalCRLF(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/32+2)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b...)
			break
		}
		line := bytes.TrimRight(b[:i], "\r")
		out = append(out, line...)
		out = append(out, '\r', '\n')
		b = b[i+1:]
	}
	return out
}

func signDetached(entity []byte, cert *x509.Certificate, key crypto.Signer, now time.Time) ([]byte, error) {
	digest := sha256.Sum256(entity)
	var sigAlg pkix.AlgorithmIdentifier
	switch key.Public().(type) {
	case *ecdsa.PublicKey:
		sigAlg = pkix.AlgorithmIdentifier{Algorithm: oidECDSASHA256}
	case *rsa.PublicKey:
		sigAlg = pkix.AlgorithmIdentifier{Algorithm: oidRSA, Parameters: asn1.NullRawValue}
	default:
		return nil, fmt.Errorf("S/MIME: unsupported signing key type %T", key.Public())
	}
	attrs, err := encodeAttributes(digest[:], now)
	if err != nil {
		return nil, err
	}
	// The signature covers the DER of the attributes as a SET OF.
	toSign := append([]byte{0x31}, attrs[1:]...)
	h := sha256.Sum256(toSign)
	sig, err := key.Sign(rand.Reader, h[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("S/MIME: signing: %w", err)
	}
	sha := pkix.AlgorithmIdentifier{Algorithm: oidSHA256, Parameters: asn1.NullRawValue}
	si := signerInfo{
		Version:            1,
		IssuerAndSerial:    issuerAndSerial{Issuer: asn1.RawValue{FullBytes: cert.RawIssuer}, Serial: cert.SerialNumber},
		DigestAlgorithm:    sha,
		AuthAttributes:     asn1.RawValue{FullBytes: attrs},
		SignatureAlgorithm: sigAlg,
		Signature:          sig,
	}
	certs := append([]byte{0xa0}, derLength(len(cert.Raw))...)
	certs = append(certs, cert.Raw...)
	sd := signedData{
		Version:          1,
		DigestAlgorithms: []pkix.AlgorithmIdentifier{sha},
		ContentInfo:      contentInfo{ContentType: oidData},
		Certificates:     asn1.RawValue{FullBytes: certs},
		SignerInfos:      []signerInfo{si},
	}
	sdDER, err := asn1.Marshal(sd)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(contentInfo{ContentType: oidSignedData,
		Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sdDER}})
}

// encodeAttributes returns the [0] IMPLICIT SET OF Attribute with
// content-type, signing-time and message-digest in DER order.
func encodeAttributes(digest []byte, now time.Time) ([]byte, error) {
	one := func(oid asn1.ObjectIdentifier, v any) ([]byte, error) {
		inner, err := asn1.Marshal(v)
		if err != nil {
			return nil, err
		}
		set := append([]byte{0x31}, derLength(len(inner))...)
		set = append(set, inner...)
		return asn1.Marshal(attribute{Type: oid, Values: asn1.RawValue{FullBytes: set}})
	}
	ct, err := one(oidContentType, oidData)
	if err != nil {
		return nil, err
	}
	st, err := one(oidSigningTime, now.UTC().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	md, err := one(oidMessageDigest, digest)
	if err != nil {
		return nil, err
	}
	all := [][]byte{ct, st, md}
	sort.Slice(all, func(i, j int) bool { return bytes.Compare(all[i], all[j]) < 0 })
	body := bytes.Join(all, nil)
	out := append([]byte{0xa0}, derLength(len(body))...)
	return append(out, body...), nil
}

func derLength(n int) []byte {
	switch {
	case n < 0x80:
		return []byte{byte(n)}
	case n < 0x100:
		return []byte{0x81, byte(n)}
	case n < 0x10000:
		return []byte{0x82, byte(n >> 8), byte(n)}
	default:
		return []byte{0x83, byte(n >> 16), byte(n >> 8), byte(n)}
	}
}

// Verify checks an S/MIME document against the trusted CA certificate ca:
// the signer certificate embedded in the signature must chain to ca (or be
// ca) and be within its validity at now, the signature must verify over the
// signed attributes and the message digest must match the signed entity,
// which must be text/plain. It returns the body of that entity (the XML
// document, with the line ends it was signed with).
func Verify(doc []byte, ca *x509.Certificate, now time.Time) ([]byte, error) {
	if len(doc) > MaxDocumentSize {
		return nil, fail(fmt.Sprintf("document of %d bytes is larger than %d", len(doc), MaxDocumentSize), nil)
	}
	doc = bytes.TrimRight(doc, "\x00") // Cyclone DDS sends c.perm with its NUL
	entity, der, err := parseMIME(doc)
	if err != nil {
		return nil, err
	}
	signed, err := verifyPKCS7(der, entity, ca, now)
	if err != nil {
		return nil, err
	}
	return textBody(signed)
}

// textBody strips the MIME header block of a text/plain entity.
func textBody(entity []byte) ([]byte, error) {
	hdr, body, ok := splitHeaders(entity)
	if !ok {
		return nil, fail("signed content has no MIME header (not signed with -text)", nil)
	}
	ct := headerValue(hdr, "content-type")
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/plain") {
		return nil, fail(fmt.Sprintf("signed content is %q, want text/plain", ct), nil)
	}
	return body, nil
}

// splitHeaders splits a MIME entity at its first empty line (CRLF or LF).
func splitHeaders(b []byte) (hdr string, body []byte, ok bool) {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return "", nil, false
		}
		line := bytes.TrimRight(b[i:i+j], "\r")
		if len(line) == 0 {
			return string(b[:i]), b[i+j+1:], true
		}
		i += j + 1
	}
	return "", nil, false
}

// headerValue returns the (unfolded) value of the named header.
func headerValue(hdr, name string) string {
	lines := strings.Split(strings.ReplaceAll(hdr, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		k, v, ok := strings.Cut(lines[i], ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), name) {
			continue
		}
		for i+1 < len(lines) && len(lines[i+1]) > 0 && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
			i++
			v += " " + strings.TrimSpace(lines[i])
		}
		return strings.TrimSpace(v)
	}
	return ""
}

// headerParam returns a parameter of a header value (boundary="...").
func headerParam(v, name string) string {
	for _, p := range strings.Split(v, ";")[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return ""
}

// parseMIME returns the signed entity (canonical CRLF; nil when the
// signature is opaque and carries the content) and the PKCS#7 DER.
func parseMIME(doc []byte) (entity, der []byte, err error) {
	hdr, body, ok := splitHeaders(doc)
	if !ok {
		return nil, nil, fail("not an S/MIME document: no MIME header", nil)
	}
	ct := headerValue(hdr, "content-type")
	mt := strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	switch mt {
	case "multipart/signed":
		boundary := headerParam(ct, "boundary")
		if boundary == "" {
			return nil, nil, fail("multipart/signed without a boundary", nil)
		}
		parts, err := splitMultipart(body, boundary)
		if err != nil {
			return nil, nil, err
		}
		if len(parts) != 2 {
			return nil, nil, fail(fmt.Sprintf("multipart/signed has %d parts, want 2", len(parts)), nil)
		}
		der, err := decodeSignaturePart(parts[1])
		if err != nil {
			return nil, nil, err
		}
		return canonicalCRLF(parts[0]), der, nil
	case "application/pkcs7-mime", "application/x-pkcs7-mime":
		der, err := decodeBase64(body)
		if err != nil {
			return nil, nil, fail("opaque signature: bad base64", err)
		}
		return nil, der, nil
	}
	return nil, nil, fail(fmt.Sprintf("not an S/MIME signed document (Content-Type %q)", ct), nil)
}

func decodeSignaturePart(part []byte) ([]byte, error) {
	hdr, body, ok := splitHeaders(part)
	if !ok {
		return nil, fail("signature part has no header", nil)
	}
	ct := strings.ToLower(headerValue(hdr, "content-type"))
	if !strings.HasPrefix(ct, "application/pkcs7-signature") && !strings.HasPrefix(ct, "application/x-pkcs7-signature") {
		return nil, fail(fmt.Sprintf("second part is %q, want a PKCS#7 signature", ct), nil)
	}
	der, err := decodeBase64(body)
	if err != nil {
		return nil, fail("signature part: bad base64", err)
	}
	return der, nil
}

func decodeBase64(b []byte) ([]byte, error) {
	clean := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			clean = append(clean, c)
		}
	}
	return base64.StdEncoding.DecodeString(string(clean))
}

// splitMultipart returns the parts between "--boundary" delimiter lines; the
// line end before a delimiter belongs to the delimiter (RFC 2046).
func splitMultipart(body []byte, boundary string) ([][]byte, error) {
	delim := []byte("--" + boundary)
	var parts [][]byte
	// find the first delimiter at the start of a line
	pos := -1
	if bytes.HasPrefix(body, delim) {
		pos = 0
	} else if i := bytes.Index(body, append([]byte("\n"), delim...)); i >= 0 {
		pos = i + 1
	}
	if pos < 0 {
		return nil, fail("multipart boundary not found", nil)
	}
	for {
		rest := body[pos+len(delim):]
		if bytes.HasPrefix(rest, []byte("--")) {
			return parts, nil // close delimiter
		}
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, fail("multipart: truncated after a boundary", nil)
		}
		start := rest[nl+1:]
		end := bytes.Index(start, append([]byte("\n"), delim...))
		if end < 0 {
			return nil, fail("multipart: missing closing boundary", nil)
		}
		part := start[:end]
		part = bytes.TrimSuffix(part, []byte("\r"))
		parts = append(parts, part)
		if len(parts) > 8 {
			return nil, fail("multipart: too many parts", nil)
		}
		pos = len(body) - len(start) + end + 1
	}
}

func verifyPKCS7(der, entity []byte, ca *x509.Certificate, now time.Time) ([]byte, error) {
	var ci contentInfo
	rest, err := asn1.Unmarshal(der, &ci)
	if err != nil {
		return nil, fail("PKCS#7: bad ContentInfo", err)
	}
	if len(rest) != 0 {
		return nil, fail("PKCS#7: trailing bytes", nil)
	}
	if !ci.ContentType.Equal(oidSignedData) || ci.Content.Class != asn1.ClassContextSpecific || ci.Content.Tag != 0 {
		return nil, fail("PKCS#7: not SignedData", nil)
	}
	var sd signedData
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return nil, fail("PKCS#7: bad SignedData", err)
	}
	if !sd.ContentInfo.ContentType.Equal(oidData) {
		return nil, fail("PKCS#7: content is not id-data", nil)
	}
	if len(sd.ContentInfo.Content.Bytes) > 0 {
		if sd.ContentInfo.Content.Class != asn1.ClassContextSpecific || sd.ContentInfo.Content.Tag != 0 {
			return nil, fail("PKCS#7: bad embedded content tag", nil)
		}
		var octets []byte
		if _, err := asn1.Unmarshal(sd.ContentInfo.Content.Bytes, &octets); err != nil {
			return nil, fail("PKCS#7: bad embedded content", err)
		}
		if entity != nil && !bytes.Equal(canonicalCRLF(octets), entity) {
			return nil, fail("PKCS#7: embedded and detached content differ", ErrSignature)
		}
		entity = octets
	}
	if entity == nil {
		return nil, fail("PKCS#7: no content", nil)
	}
	if len(sd.SignerInfos) != 1 {
		return nil, fail(fmt.Sprintf("PKCS#7: %d signers, want 1", len(sd.SignerInfos)), nil)
	}
	si := sd.SignerInfos[0]
	certs, err := parseCertSet(sd.Certificates)
	if err != nil {
		return nil, err
	}
	signer := findSigner(certs, si.IssuerAndSerial)
	if signer == nil && bytes.Equal(ca.RawIssuer, si.IssuerAndSerial.Issuer.FullBytes) && ca.SerialNumber.Cmp(si.IssuerAndSerial.Serial) == 0 {
		signer = ca
	}
	if signer == nil {
		return nil, fail("PKCS#7: signer certificate not in the document", nil)
	}
	if err := checkChain(signer, certs, ca, now); err != nil {
		return nil, err
	}
	if !si.DigestAlgorithm.Algorithm.Equal(oidSHA256) {
		return nil, fail(fmt.Sprintf("PKCS#7: digest algorithm %v is not SHA-256", si.DigestAlgorithm.Algorithm), nil)
	}
	digest := sha256.Sum256(entity)
	signedBytes := entity
	if len(si.AuthAttributes.FullBytes) > 0 {
		md, ct, err := parseAttributes(si.AuthAttributes.Bytes)
		if err != nil {
			return nil, err
		}
		if ct != nil && !ct.Equal(oidData) {
			return nil, fail("PKCS#7: content-type attribute is not id-data", nil)
		}
		if md == nil {
			return nil, fail("PKCS#7: no message-digest attribute", nil)
		}
		if !bytes.Equal(md, digest[:]) {
			return nil, fail("content digest does not match (the document was changed)", ErrSignature)
		}
		signedBytes = append([]byte{0x31}, si.AuthAttributes.FullBytes[1:]...)
	}
	if err := checkSignature(signer, si, signedBytes); err != nil {
		return nil, err
	}
	return entity, nil
}

func parseCertSet(raw asn1.RawValue) ([]*x509.Certificate, error) {
	if len(raw.Bytes) == 0 {
		return nil, nil
	}
	var out []*x509.Certificate
	b := raw.Bytes
	for len(b) > 0 && len(out) < 16 {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(b, &v)
		if err != nil {
			return nil, fail("PKCS#7: bad certificate set", err)
		}
		if c, err := x509.ParseCertificate(v.FullBytes); err == nil {
			out = append(out, c)
		}
		b = rest
	}
	return out, nil
}

func findSigner(certs []*x509.Certificate, ias issuerAndSerial) *x509.Certificate {
	for _, c := range certs {
		if bytes.Equal(c.RawIssuer, ias.Issuer.FullBytes) && ias.Serial != nil && c.SerialNumber.Cmp(ias.Serial) == 0 {
			return c
		}
	}
	return nil
}

// checkChain accepts a signer that is the CA itself or chains to it through
// the certificates in the document.
func checkChain(signer *x509.Certificate, certs []*x509.Certificate, ca *x509.Certificate, now time.Time) error {
	if now.Before(signer.NotBefore) || now.After(signer.NotAfter) {
		return fail(fmt.Sprintf("signer certificate %q is not valid at %s (valid %s to %s)", signer.Subject, now.UTC().Format(time.RFC3339),
			signer.NotBefore.UTC().Format(time.RFC3339), signer.NotAfter.UTC().Format(time.RFC3339)), nil)
	}
	if signer.Equal(ca) {
		return nil
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	inter := x509.NewCertPool()
	for _, c := range certs {
		if !c.Equal(signer) {
			inter.AddCert(c)
		}
	}
	_, err := signer.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fail(fmt.Sprintf("signer %q is not certified by the permissions CA %q", signer.Subject, ca.Subject), err)
	}
	return nil
}

func parseAttributes(b []byte) (digest []byte, ct asn1.ObjectIdentifier, err error) {
	for len(b) > 0 {
		var a attribute
		rest, err := asn1.Unmarshal(b, &a)
		if err != nil {
			return nil, nil, fail("PKCS#7: bad signed attribute", err)
		}
		b = rest
		switch {
		case a.Type.Equal(oidMessageDigest):
			if _, err := asn1.Unmarshal(a.Values.Bytes, &digest); err != nil {
				return nil, nil, fail("PKCS#7: bad message-digest attribute", err)
			}
		case a.Type.Equal(oidContentType):
			if _, err := asn1.Unmarshal(a.Values.Bytes, &ct); err != nil {
				return nil, nil, fail("PKCS#7: bad content-type attribute", err)
			}
		}
	}
	return digest, ct, nil
}

func checkSignature(signer *x509.Certificate, si signerInfo, signed []byte) error {
	h := sha256.Sum256(signed)
	alg := si.SignatureAlgorithm.Algorithm
	switch pub := signer.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if !alg.Equal(oidECDSASHA256) && !alg.Equal(oidECPublicKey) {
			return fail(fmt.Sprintf("PKCS#7: signature algorithm %v does not fit an ECDSA key", alg), nil)
		}
		if !ecdsa.VerifyASN1(pub, h[:], si.Signature) {
			return fail("signature does not verify with the signer's key", ErrSignature)
		}
	case *rsa.PublicKey:
		if !alg.Equal(oidRSA) && !alg.Equal(oidRSASHA256) {
			return fail(fmt.Sprintf("PKCS#7: signature algorithm %v does not fit an RSA key", alg), nil)
		}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], si.Signature); err != nil {
			return fail("signature does not verify with the signer's key", ErrSignature)
		}
	default:
		return fail(fmt.Sprintf("PKCS#7: unsupported signer key %T", signer.PublicKey), nil)
	}
	return nil
}
