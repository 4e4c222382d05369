// Package keystore reads and writes SROS2 keystores: the layout
// `ros2 security create_keystore` writes, the ROS_SECURITY_* environment
// that selects an enclave, and the artifacts of an enclave (identity CA,
// permissions CA, certificate, key, governance.p7s, permissions.p7s),
// checked and parsed.
//
//	<keystore>/public/{ca.cert.pem, identity_ca.cert.pem, permissions_ca.cert.pem}
//	<keystore>/private/{ca.key.pem, identity_ca.key.pem, permissions_ca.key.pem}
//	<keystore>/enclaves/{governance.xml, governance.p7s}
//	<keystore>/enclaves/<enclave path>/{cert.pem, key.pem, identity_ca.cert.pem,
//	    permissions_ca.cert.pem, governance.p7s, permissions.xml, permissions.p7s}
//
// The enclave directory of a participant is found as rcl does it
// (rcl/security.c): ROS_SECURITY_ENABLE must be exactly "true";
// ROS_SECURITY_STRATEGY "Enforce" enforces, anything else is permissive;
// the directory is <ROS_SECURITY_KEYSTORE>/enclaves/<enclave>, where the
// enclave is ROS_SECURITY_ENCLAVE_OVERRIDE if set, else the --enclave
// argument, else "/". Which files an enclave needs is rmw_dds_common's list
// (security.cpp): identity_ca.cert.pem, cert.pem, key.pem,
// permissions_ca.cert.pem, governance.p7s, permissions.p7s, and crl.pem
// when present.
package keystore

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/smime"
)

// Environment variable names (rcl/security.h).
const (
	EnvEnable          = "ROS_SECURITY_ENABLE"
	EnvStrategy        = "ROS_SECURITY_STRATEGY"
	EnvKeystore        = "ROS_SECURITY_KEYSTORE"
	EnvEnclaveOverride = "ROS_SECURITY_ENCLAVE_OVERRIDE"
	EnvDomainID        = "ROS_DOMAIN_ID"
)

// File names of an enclave directory.
const (
	FileIdentityCA    = "identity_ca.cert.pem"
	FileCert          = "cert.pem"
	FileKey           = "key.pem"
	FilePermissionsCA = "permissions_ca.cert.pem"
	FileGovernance    = "governance.p7s"
	FilePermissions   = "permissions.p7s"
	FileCRL           = "crl.pem"
)

// maxFileSize bounds every file read from a keystore.
const maxFileSize = 4 << 20

// Strategy is ROS_SECURITY_STRATEGY.
type Strategy int

// Strategies.
const (
	// Permissive: without usable artifacts the participant runs unsecured
	// (with a warning, the caller's to print).
	Permissive Strategy = iota
	// Enforce: without usable artifacts the participant must not start.
	Enforce
)

// String implements fmt.Stringer.
func (s Strategy) String() string {
	if s == Enforce {
		return "Enforce"
	}
	return "Permissive"
}

// Env is the security environment of a process.
type Env struct {
	Enable          bool
	Strategy        Strategy
	Keystore        string
	EnclaveOverride string
}

// EnvFrom reads the environment through getenv (os.Getenv when nil), with
// rcl's exact comparisons: ROS_SECURITY_ENABLE == "true",
// ROS_SECURITY_STRATEGY == "Enforce".
func EnvFrom(getenv func(string) string) Env {
	if getenv == nil {
		getenv = os.Getenv
	}
	e := Env{
		Enable:          getenv(EnvEnable) == "true",
		Keystore:        getenv(EnvKeystore),
		EnclaveOverride: getenv(EnvEnclaveOverride),
	}
	if getenv(EnvStrategy) == "Enforce" {
		e.Strategy = Enforce
	}
	return e
}

// Selection is where a participant's artifacts are, resolved from the
// environment and the enclave argument.
type Selection struct {
	// Enabled is false when ROS_SECURITY_ENABLE is not "true": no security.
	Enabled  bool
	Strategy Strategy
	// Enclave is the enclave name used ("/talker_listener/talker").
	Enclave string
	// Dir is the enclave directory ("" if it could not be resolved).
	Dir string
}

// ErrNoKeystore is wrapped when ROS_SECURITY_KEYSTORE is empty or unset.
var ErrNoKeystore = errors.New(EnvKeystore + " is not set")

// Select resolves the enclave directory: enclave is the --enclave/-e value
// ("" means "/"). With security disabled it returns Enabled false and no
// error. Otherwise an error says what is missing (the caller enforces or
// warns according to Strategy; the Selection is returned in both cases).
func Select(env Env, enclave string) (Selection, error) {
	s := Selection{Enabled: env.Enable, Strategy: env.Strategy}
	if !env.Enable {
		return s, nil
	}
	if enclave == "" {
		enclave = "/"
	}
	if env.EnclaveOverride != "" {
		enclave = env.EnclaveOverride
	}
	s.Enclave = enclave
	if env.Keystore == "" {
		return s, fmt.Errorf("security enabled (%s=true) but %w", EnvEnable, ErrNoKeystore)
	}
	if !strings.HasPrefix(enclave, "/") {
		return s, fmt.Errorf("enclave %q is not an absolute name (it must start with '/')", enclave)
	}
	dir := EnclaveDir(env.Keystore, enclave)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return s, &FileError{Path: dir, Err: fmt.Errorf("no enclave directory for %q in keystore %q", enclave, env.Keystore)}
	}
	s.Dir = dir
	return s, nil
}

// EnclaveDir is the directory of an enclave in a keystore.
func EnclaveDir(keystore, enclave string) string {
	rel := strings.TrimPrefix(enclave, "/")
	if rel == "" {
		return filepath.Join(keystore, "enclaves")
	}
	return filepath.Join(keystore, "enclaves", filepath.FromSlash(rel))
}

// FileError is a missing or invalid artifact; Path names the file.
type FileError struct {
	Path string
	Err  error
}

// Error implements the error interface.
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// Artifacts are the checked contents of an enclave directory.
type Artifacts struct {
	Dir           string
	IdentityCA    *x509.Certificate
	PermissionsCA *x509.Certificate
	Cert          *x509.Certificate
	// Key is the private key of Cert. It is never printed: Artifacts has
	// a String method that leaves it out.
	Key crypto.Signer
	// Governance and Permissions are the signed documents as read
	// (governance.p7s, permissions.p7s); GovernanceXML and PermissionsXML
	// their verified contents.
	Governance, Permissions       []byte
	GovernanceXML, PermissionsXML []byte
	// CRL is crl.pem, if present (not checked here).
	CRL []byte
}

// String describes the artifacts without key material.
func (a *Artifacts) String() string {
	return fmt.Sprintf("enclave %s (subject %q, identity CA %q, permissions CA %q)", a.Dir, a.Cert.Subject, a.IdentityCA.Subject, a.PermissionsCA.Subject)
}

// Load reads and checks the artifacts of an enclave directory at time now:
// every file present and parseable; the certificate within its validity,
// signed by the identity CA, with an RSA-2048 or ECDSA P-256 key that the
// private key matches; both documents signed by the permissions CA. The
// first problem found is a *FileError naming the file.
func Load(dir string, now time.Time) (*Artifacts, error) {
	a := &Artifacts{Dir: dir}
	var err error
	if a.IdentityCA, err = readCert(filepath.Join(dir, FileIdentityCA)); err != nil {
		return nil, err
	}
	if a.PermissionsCA, err = readCert(filepath.Join(dir, FilePermissionsCA)); err != nil {
		return nil, err
	}
	certPath := filepath.Join(dir, FileCert)
	if a.Cert, err = readCert(certPath); err != nil {
		return nil, err
	}
	if err := CheckIdentity(a.Cert, a.IdentityCA, now); err != nil {
		return nil, &FileError{Path: certPath, Err: err}
	}
	keyPath := filepath.Join(dir, FileKey)
	if a.Key, err = readKey(keyPath); err != nil {
		return nil, err
	}
	if !publicKeysEqual(a.Key.Public(), a.Cert.PublicKey) {
		return nil, &FileError{Path: keyPath, Err: errors.New("private key does not belong to " + FileCert)}
	}
	for _, d := range []struct {
		name     string
		raw, xml *[]byte
	}{{FileGovernance, &a.Governance, &a.GovernanceXML}, {FilePermissions, &a.Permissions, &a.PermissionsXML}} {
		p := filepath.Join(dir, d.name)
		if *d.raw, err = readFile(p); err != nil {
			return nil, err
		}
		if *d.xml, err = smime.Verify(*d.raw, a.PermissionsCA, now); err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
	}
	if b, err := readFile(filepath.Join(dir, FileCRL)); err == nil {
		a.CRL = b
	}
	return a, nil
}

// CheckIdentity checks an identity certificate against its CA at now: the
// validity dates, the signature of the CA (directly: the builtin plugins of
// Cyclone DDS and Fast DDS trust one CA, not a chain), and the key type
// (RSA-2048 or ECDSA P-256, the only ones PKI-DH signs with).
func CheckIdentity(cert, ca *x509.Certificate, now time.Time) error {
	if now.Before(cert.NotBefore) {
		return fmt.Errorf("certificate %q is not valid before %s", cert.Subject, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(cert.NotAfter) {
		return fmt.Errorf("certificate %q expired at %s", cert.Subject, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(ca.NotBefore) || now.After(ca.NotAfter) {
		return fmt.Errorf("CA certificate %q is not valid now (valid %s to %s)", ca.Subject,
			ca.NotBefore.UTC().Format(time.RFC3339), ca.NotAfter.UTC().Format(time.RFC3339))
	}
	if !cert.Equal(ca) {
		if err := cert.CheckSignatureFrom(ca); err != nil {
			// CheckSignatureFrom also wants the CA to be marked as one;
			// say which of the two failed.
			if err2 := ca.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err2 != nil {
				return fmt.Errorf("certificate %q is not signed by the identity CA %q", cert.Subject, ca.Subject)
			}
			return fmt.Errorf("certificate %q: identity CA %q: %v", cert.Subject, ca.Subject, err)
		}
	}
	switch k := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() != 2048 {
			return fmt.Errorf("certificate %q has an RSA-%d key; PKI-DH wants RSA-2048 or EC prime256v1", cert.Subject, k.N.BitLen())
		}
	case *ecdsa.PublicKey:
		if k.Curve.Params().Name != "P-256" {
			return fmt.Errorf("certificate %q has an EC %s key; PKI-DH wants RSA-2048 or EC prime256v1", cert.Subject, k.Curve.Params().Name)
		}
	default:
		return fmt.Errorf("certificate %q has a %T key; PKI-DH wants RSA-2048 or EC prime256v1", cert.Subject, cert.PublicKey)
	}
	return nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type eq interface{ Equal(crypto.PublicKey) bool }
	if x, ok := a.(eq); ok {
		return x.Equal(b)
	}
	return false
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FileError{Path: path, Err: errors.New("missing")}
		}
		return nil, &FileError{Path: path, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if len(b) > maxFileSize {
		return nil, &FileError{Path: path, Err: fmt.Errorf("larger than %d bytes", maxFileSize)}
	}
	return b, nil
}

// ReadCert reads the first certificate of a PEM file.
func ReadCert(path string) (*x509.Certificate, error) { return readCert(path) }

func readCert(path string) (*x509.Certificate, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseCertPEM(b)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return c, nil
}

// ParseCertPEM parses the first CERTIFICATE block of PEM data.
func ParseCertPEM(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if blk.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("bad certificate: %v", err)
			}
			return c, nil
		}
	}
}

// ReadKey reads a PEM private key (PKCS#8, SEC 1 or PKCS#1, unencrypted).
func ReadKey(path string) (crypto.Signer, error) { return readKey(path) }

func readKey(path string) (crypto.Signer, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKeyPEM(b)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return k, nil
}

// ParseKeyPEM parses an unencrypted private key. Errors never quote the
// key's bytes.
func ParseKeyPEM(b []byte) (crypto.Signer, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM private key block")
		}
		var k any
		var err error
		switch blk.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(blk.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the private key is encrypted (a password-protected key is not supported)")
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bad %s block", blk.Type)
		}
		switch s := k.(type) {
		case *ecdsa.PrivateKey:
			return s, nil
		case *rsa.PrivateKey:
			return s, nil
		case ed25519.PrivateKey:
			return nil, errors.New("an Ed25519 key (PKI-DH wants RSA-2048 or EC prime256v1)")
		}
		return nil, fmt.Errorf("unsupported private key type %T", k)
	}
}

// isKeystore reports whether dir holds what sros2's is_valid_keystore
// checks.
func isKeystore(dir string) bool {
	for _, p := range []string{"public/permissions_ca.cert.pem", "public/identity_ca.cert.pem",
		"private/permissions_ca.key.pem", "private/identity_ca.key.pem", "enclaves/governance.p7s"} {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// ListEnclaves returns the enclaves of a keystore, sorted: every directory
// under enclaves/ that holds a key.pem, as "/" + its relative path (what
// `ros2 security list_enclaves` prints).
func ListEnclaves(keystore string) ([]string, error) {
	if !isKeystore(keystore) {
		return nil, fmt.Errorf("%q is not a valid keystore", keystore)
	}
	root := filepath.Join(keystore, "enclaves")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == FileKey && !d.IsDir() {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel == "." {
				out = append(out, "/")
			} else {
				out = append(out, "/"+filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// Resolve is what a participant does at start (rcl then rmw): select the
// enclave from env and the --enclave argument, then load its artifacts at
// now (load is Load, or a stand-in where Load is not linked). It returns
// nil artifacts and no error when security is disabled. When security is
// enabled and the artifacts are missing or invalid, it returns the error
// (naming the file) and the Selection, whose Strategy tells the caller what
// to do: Enforce refuses to start, Permissive runs unsecured with a warning.
func Resolve(env Env, enclave string, now time.Time, load func(dir string, now time.Time) (*Artifacts, error)) (*Artifacts, Selection, error) {
	sel, err := Select(env, enclave)
	if err != nil || !sel.Enabled {
		return nil, sel, err
	}
	a, err := load(sel.Dir, now)
	if err != nil {
		return nil, sel, err
	}
	return a, sel, nil
}
