package keystore

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nros-go/nros/internal/rosargs"
	"github.com/nros-go/nros/rmw/rtps/security/smime"
)

// DefaultCAName is the common name of the CA create_keystore makes.
const DefaultCAName = "sros2CA"

// Options are the inputs of the writers that sros2 takes from its
// environment.
type Options struct {
	// DomainID is written in the governance and permissions domain ids
	// (sros2 uses ROS_DOMAIN_ID, default "0").
	DomainID string
	// Now is the time certificates and signatures are made at (zero: now).
	Now time.Time
	// NoRosDiscoveryTopic leaves out the allow_rule for ros_discovery_info
	// that sros2 adds for rmw_cyclonedds_cpp, rmw_fastrtps_cpp and
	// rmw_connextdds (so by default it is there).
	NoRosDiscoveryTopic bool
}

// OptionsFromEnv fills DomainID from ROS_DOMAIN_ID as sros2 does.
func OptionsFromEnv(getenv func(string) string) Options {
	if getenv == nil {
		getenv = os.Getenv
	}
	d := getenv(EnvDomainID)
	if d == "" {
		d = "0"
	}
	return Options{DomainID: d}
}

func (o *Options) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

func (o *Options) domain() string {
	if o.DomainID == "" {
		return "0"
	}
	return o.DomainID
}

// CreateKeystore makes a keystore as `ros2 security create_keystore` does:
// public/, private/, enclaves/; one self-signed ECDSA prime256v1 CA
// (CN=sros2CA, CA:true pathlen 1 critical, SHA-256, valid from a day ago
// for 3650 days) in public/ca.cert.pem and private/ca.key.pem, with
// identity_ca.* and permissions_ca.* symlinks to it; enclaves/governance.xml
// (sros2's default) and enclaves/governance.p7s signed by the permissions
// CA. Existing files are kept; a complete keystore is an error.
func CreateKeystore(dir string, o Options) error {
	if isKeystore(dir) {
		return fmt.Errorf("keystore %q already exists", dir)
	}
	for _, d := range []string{dir, filepath.Join(dir, "public"), filepath.Join(dir, "private"), filepath.Join(dir, "enclaves")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	pub, priv := filepath.Join(dir, "public"), filepath.Join(dir, "private")
	required := []string{filepath.Join(pub, "permissions_ca.cert.pem"), filepath.Join(priv, "permissions_ca.key.pem"),
		filepath.Join(pub, "identity_ca.cert.pem"), filepath.Join(priv, "identity_ca.key.pem")}
	all := true
	for _, p := range required {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			all = false
		}
	}
	if !all {
		now := o.now()
		cert, key, err := makeCert(pkix.Name{CommonName: DefaultCAName}, true, nil, nil, now)
		if err != nil {
			return err
		}
		if err := writeKey(filepath.Join(priv, "ca.key.pem"), key); err != nil {
			return err
		}
		if err := writeCert(filepath.Join(pub, "ca.cert.pem"), cert); err != nil {
			return err
		}
		for _, l := range []struct{ dst, src string }{
			{filepath.Join(pub, "permissions_ca.cert.pem"), "ca.cert.pem"},
			{filepath.Join(pub, "identity_ca.cert.pem"), "ca.cert.pem"},
			{filepath.Join(priv, "permissions_ca.key.pem"), "ca.key.pem"},
			{filepath.Join(priv, "identity_ca.key.pem"), "ca.key.pem"},
		} {
			if err := symlink(l.src, l.dst); err != nil {
				return err
			}
		}
	}
	gov := filepath.Join(dir, "enclaves", "governance.xml")
	if _, err := os.Stat(gov); err != nil {
		if err := os.WriteFile(gov, []byte(GovernanceXML(o.domain())), 0o644); err != nil {
			return err
		}
	}
	signed := filepath.Join(dir, "enclaves", "governance.p7s")
	if _, err := os.Stat(signed); err != nil {
		if err := signFile(dir, gov, signed, o); err != nil {
			return err
		}
	}
	return nil
}

// GovernanceXML is sros2's default governance document for a domain id:
// authentication and encryption, join and read/write access control on every
// topic (as `ros2 security create_keystore` writes enclaves/governance.xml).
func GovernanceXML(domainID string) string {
	return `<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
    <domain_access_rules>
        <domain_rule>
            <domains>
              <id>` + xmlEscape(domainID) + `</id>
            </domains>
            <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
            <enable_join_access_control>true</enable_join_access_control>
            <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
            <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
            <rtps_protection_kind>SIGN</rtps_protection_kind>
            <topic_access_rules>
                <topic_rule>
                    <topic_expression>*</topic_expression>
                    <enable_discovery_protection>true</enable_discovery_protection>
                    <enable_liveliness_protection>true</enable_liveliness_protection>
                    <enable_read_access_control>true</enable_read_access_control>
                    <enable_write_access_control>true</enable_write_access_control>
                    <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
                    <data_protection_kind>ENCRYPT</data_protection_kind>
                </topic_rule>
            </topic_access_rules>
        </domain_rule>
    </domain_access_rules>
</dds>
`
}

// ValidateEnclaveName checks an enclave name as sros2 does (a valid ROS
// namespace: absolute, tokens of letters, digits and '_').
func ValidateEnclaveName(name string) error {
	if err := rosargs.ValidateNamespace(name); err != nil {
		return fmt.Errorf("invalid enclave name %q: %v", name, err)
	}
	return nil
}

// CreateEnclave makes an enclave as `ros2 security create_enclave` does:
// the directory, symlinks to the public CA certificates and to
// enclaves/governance.p7s, a new ECDSA prime256v1 key and a certificate
// (subject CN=<name>, issuer the identity CA, CA:false) unless both exist,
// and a permissions.xml allowing everything (sros2's default policy) signed
// into permissions.p7s.
func CreateEnclave(keystore, name string, o Options) error {
	if !isKeystore(keystore) {
		return fmt.Errorf("%q is not a valid keystore", keystore)
	}
	if err := ValidateEnclaveName(name); err != nil {
		return err
	}
	dir := EnclaveDir(keystore, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range []string{"identity_ca.cert.pem", "permissions_ca.cert.pem"} {
		rel, err := filepath.Rel(dir, filepath.Join(keystore, "public", c))
		if err != nil {
			return err
		}
		if err := symlink(rel, filepath.Join(dir, c)); err != nil {
			return err
		}
	}
	if dir != filepath.Join(keystore, "enclaves") {
		rel, err := filepath.Rel(dir, filepath.Join(keystore, "enclaves", "governance.p7s"))
		if err != nil {
			return err
		}
		if err := symlink(rel, filepath.Join(dir, "governance.p7s")); err != nil {
			return err
		}
	}
	certPath, keyPath := filepath.Join(dir, FileCert), filepath.Join(dir, FileKey)
	if !regular(certPath) || !regular(keyPath) {
		caCert, err := readCert(filepath.Join(keystore, "public", "identity_ca.cert.pem"))
		if err != nil {
			return err
		}
		caKey, err := readKey(filepath.Join(keystore, "private", "identity_ca.key.pem"))
		if err != nil {
			return err
		}
		cert, key, err := makeCert(pkix.Name{CommonName: name}, false, caCert, caKey, o.now())
		if err != nil {
			return err
		}
		if err := writeKey(keyPath, key); err != nil {
			return err
		}
		if err := writeCert(certPath, cert); err != nil {
			return err
		}
	}
	pol, err := ParsePolicy([]byte(DefaultPolicyXML))
	if err != nil {
		return err
	}
	pol.Enclaves[0].Path = name
	return writePermissions(keystore, name, pol, o)
}

// CreatePermission writes enclaves/<name>/permissions.xml from the enclave
// <name> of a policy file (sros2's policy format, version 0.2.0) and signs
// it into permissions.p7s, as `ros2 security create_permission` does.
func CreatePermission(keystore, name, policyPath string, o Options) error {
	pol, err := ParsePolicyFile(policyPath)
	if err != nil {
		return err
	}
	return writePermissions(keystore, name, pol, o)
}

func writePermissions(keystore, name string, pol *Policy, o Options) error {
	if !isKeystore(keystore) {
		return fmt.Errorf("%q is not a valid keystore", keystore)
	}
	dir := EnclaveDir(keystore, name)
	cert, err := readCert(filepath.Join(dir, FileCert))
	if err != nil {
		return err
	}
	xml, err := pol.PermissionsXML(name, PermissionsParams{
		DomainID:          o.domain(),
		NotBefore:         cert.NotBefore,
		NotAfter:          cert.NotAfter,
		RosDiscoveryTopic: !o.NoRosDiscoveryTopic,
	})
	if err != nil {
		return err
	}
	p := filepath.Join(dir, "permissions.xml")
	if err := os.WriteFile(p, xml, 0o644); err != nil {
		return err
	}
	return signFile(keystore, p, filepath.Join(dir, FilePermissions), o)
}

func signFile(keystore, in, out string, o Options) error {
	cert, err := readCert(filepath.Join(keystore, "public", "permissions_ca.cert.pem"))
	if err != nil {
		return err
	}
	key, err := readKey(filepath.Join(keystore, "private", "permissions_ca.key.pem"))
	if err != nil {
		return err
	}
	content, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	signed, err := smime.SignAt(content, cert, key, o.now())
	if err != nil {
		return err
	}
	return os.WriteFile(out, signed, 0o644)
}

func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// symlink makes dst a symlink to src unless it already resolves to it (as
// sros2's create_symlink).
func symlink(src, dst string) error {
	if cur, err := os.Readlink(dst); err == nil {
		if cur == src {
			return nil
		}
		if err := os.Remove(dst); err != nil {
			return err
		}
	} else if _, err := os.Lstat(dst); err == nil {
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	return os.Symlink(src, dst)
}

// makeCert makes an ECDSA prime256v1 key and a certificate as sros2's
// build_key_and_cert: random serial, not before a day ago, not after in
// 3650 days, SHA-256; a CA gets basicConstraints CA:true, pathlen 1
// (critical), others CA:false (not critical). Without a CA it is
// self-signed.
func makeCert(subject pkix.Name, isCA bool, caCert *x509.Certificate, caKey crypto.Signer, now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             now.Add(-24 * time.Hour).UTC().Truncate(time.Second),
		NotAfter:              now.Add(3650 * 24 * time.Hour).UTC().Truncate(time.Second),
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		SignatureAlgorithm:    x509.ECDSAWithSHA256,
	}
	if isCA {
		tmpl.MaxPathLen = 1
	} else {
		tmpl.MaxPathLen = -1
	}
	parent, signer := tmpl, crypto.Signer(key)
	if caCert != nil {
		parent, signer = caCert, caKey
		if _, ok := caKey.Public().(*ecdsa.PublicKey); !ok {
			tmpl.SignatureAlgorithm = x509.SHA256WithRSA
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeCert(path string, cert *x509.Certificate) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644)
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
