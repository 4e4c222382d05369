package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"strings"
)

var shortNames = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
	"2.5.4.5": "serialNumber", "1.2.840.113549.1.9.1": "emailAddress", "0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1": "UID", "2.5.4.4": "SN", "2.5.4.42": "GN", "2.5.4.12": "title",
}

// OnelineName renders a certificate name the way OpenSSL's
// X509_NAME_oneline does ("/C=ES/O=eProsima/CN=\/talker": a '/' inside a
// value is escaped, as Fast DDS's dds.cert.sn shows), the format
// Cyclone DDS and Fast DDS put in dds.cert.sn, dds.ca.sn and dds.perm_ca.sn.
// rawName is the DER of the Name (cert.RawSubject or cert.RawIssuer).
func OnelineName(rawName []byte) string {
	var rdns pkix.RDNSequence
	if _, err := asn1.Unmarshal(rawName, &rdns); err != nil {
		return ""
	}
	var b strings.Builder
	for _, rdn := range rdns {
		for _, atv := range rdn {
			name, ok := shortNames[atv.Type.String()]
			if !ok {
				name = atv.Type.String()
			}
			b.WriteByte('/')
			b.WriteString(name)
			b.WriteByte('=')
			switch v := atv.Value.(type) {
			case string:
				writeOnelineValue(&b, v)
			default:
				b.WriteString("<binary>")
			}
		}
	}
	return b.String()
}

// AlgoName is the dds.cert.algo / dds.ca.algo / dds.perm_ca.algo value for a
// public key, as the spec and Cyclone DDS write it: "RSA-2048" or
// "EC-prime256v1" ("" for any other key).
func AlgoName(pub any) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() == 2048 {
			return "RSA-2048"
		}
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return "EC-prime256v1"
		}
	}
	return ""
}

// CertAlgo is AlgoName of a certificate's key.
func CertAlgo(c *x509.Certificate) string { return AlgoName(c.PublicKey) }

// writeOnelineValue escapes as X509_NAME_oneline: '/' as "\/", bytes
// outside printable ASCII as "\xHH".
func writeOnelineValue(b *strings.Builder, v string) {
	const hexdig = "0123456789ABCDEF"
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '/':
			b.WriteString("\\/")
		case c < ' ' || c > '~':
			b.WriteString("\\x")
			b.WriteByte(hexdig[c>>4])
			b.WriteByte(hexdig[c&15])
		default:
			b.WriteByte(c)
		}
	}
}
