package keystore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/token"
)

func mkKeystore(t *testing.T, enclaves ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "keys")
	if err := CreateKeystore(dir, Options{DomainID: "0"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range enclaves {
		if err := CreateEnclave(dir, e, Options{DomainID: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCreateAndLoad(t *testing.T) {
	ks := mkKeystore(t, "/talker_listener/talker", "/simtimer")
	// sros2's layout, with the symlinks
	for _, p := range []string{"public/ca.cert.pem", "private/ca.key.pem", "enclaves/governance.xml", "enclaves/governance.p7s",
		"enclaves/talker_listener/talker/cert.pem", "enclaves/talker_listener/talker/key.pem", "enclaves/talker_listener/talker/permissions.xml"} {
		if fi, err := os.Lstat(filepath.Join(ks, p)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: not a regular file (%v)", p, err)
		}
	}
	for p, target := range map[string]string{
		"public/identity_ca.cert.pem":                          "ca.cert.pem",
		"private/permissions_ca.key.pem":                       "ca.key.pem",
		"enclaves/talker_listener/talker/governance.p7s":       "../../governance.p7s",
		"enclaves/talker_listener/talker/identity_ca.cert.pem": "../../../public/identity_ca.cert.pem",
		"enclaves/simtimer/permissions_ca.cert.pem":            "../../public/permissions_ca.cert.pem",
	} {
		if got, err := os.Readlink(filepath.Join(ks, p)); err != nil || got != target {
			t.Errorf("%s -> %q (%v), want %q", p, got, err, target)
		}
	}
	if fi, _ := os.Stat(filepath.Join(ks, "private/ca.key.pem")); fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("CA key mode %v is readable by others", fi.Mode())
	}
	got, err := ListEnclaves(ks)
	if err != nil || !reflect.DeepEqual(got, []string{"/simtimer", "/talker_listener/talker"}) {
		t.Fatalf("ListEnclaves = %v, %v", got, err)
	}
	a, err := Load(EnclaveDir(ks, "/talker_listener/talker"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a.Cert.Subject.CommonName != "/talker_listener/talker" || a.IdentityCA.Subject.CommonName != DefaultCAName {
		t.Fatalf("subjects %v / %v", a.Cert.Subject, a.IdentityCA.Subject)
	}
	if !a.IdentityCA.IsCA || a.IdentityCA.MaxPathLen != 1 || a.Cert.IsCA {
		t.Fatal("CA flags differ from sros2's")
	}
	if strings.Contains(a.String(), "PRIVATE") {
		t.Fatal("String prints key material")
	}
	// the documents are what the access-control plugin accepts
	l, err := access.NewLocal(access.Config{Domain: 0, Governance: a.Governance, Permissions: a.Permissions,
		PermissionsCA: a.PermissionsCA, Identity: a.Cert, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"rt/chatter", "rq/add_two_intsRequest", "rr/fib/_action/get_resultReply", "ros_discovery_info"} {
		if _, err := l.CheckCreateWriter(topic, nil); err != nil {
			t.Errorf("default policy: %v", err)
		}
	}
	pt := l.PermissionsToken()
	if w, err := token.Unmarshal(pt.Marshal(true), true); err != nil || w.ClassID != access.PermissionsTokenClassID || len(w.Properties) != 0 {
		t.Errorf("announced permissions token %+v %v: properties must not be propagated", w, err)
	}
	if _, err := l.CheckCreateReader("DCPSSomething", nil); err == nil {
		t.Error("a topic outside rt/ rq/ rr/ was allowed by the default policy")
	}
	if err := CreateKeystore(ks, Options{}); err == nil {
		t.Fatal("CreateKeystore over a keystore succeeded")
	}
	if err := CreateEnclave(ks, "bad name", Options{}); err == nil {
		t.Fatal("invalid enclave name accepted")
	}
}

func TestSelect(t *testing.T) {
	ks := mkKeystore(t, "/a/b")
	env := func(m map[string]string) Env { return EnvFrom(func(k string) string { return m[k] }) }
	s, err := Select(env(map[string]string{EnvEnable: "True", EnvKeystore: ks}), "/a/b")
	if err != nil || s.Enabled {
		t.Fatalf("ROS_SECURITY_ENABLE=True (rcl wants exactly \"true\"): %+v %v", s, err)
	}
	s, err = Select(env(map[string]string{EnvEnable: "true", EnvKeystore: ks, EnvStrategy: "Enforce"}), "/a/b")
	if err != nil || !s.Enabled || s.Strategy != Enforce || s.Dir != filepath.Join(ks, "enclaves", "a", "b") {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = Select(env(map[string]string{EnvEnable: "true", EnvKeystore: ks, EnvStrategy: "enforce"}), "/a/b")
	if err != nil || s.Strategy != Permissive {
		t.Fatalf("strategy 'enforce' (lower case) is permissive in rcl: %+v", s)
	}
	s, err = Select(env(map[string]string{EnvEnable: "true", EnvKeystore: ks, EnvEnclaveOverride: "/a/b"}), "/other")
	if err != nil || s.Enclave != "/a/b" {
		t.Fatalf("override: %+v %v", s, err)
	}
	s, err = Select(env(map[string]string{EnvEnable: "true", EnvKeystore: ks}), "")
	if err != nil || s.Dir != filepath.Join(ks, "enclaves") {
		t.Fatalf("default enclave '/': %+v %v", s, err)
	}
	_, err = Select(env(map[string]string{EnvEnable: "true", EnvKeystore: ks}), "/missing")
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing enclave: %v", err)
	}
	_, err = Select(env(map[string]string{EnvEnable: "true"}), "/a/b")
	if !errors.Is(err, ErrNoKeystore) {
		t.Fatalf("no keystore: %v", err)
	}
}

func TestLoadRefusals(t *testing.T) {
	ks := mkKeystore(t, "/n")
	dir := EnclaveDir(ks, "/n")
	// a missing file is named
	os.Rename(filepath.Join(dir, FileKey), filepath.Join(dir, "key.bak"))
	if _, err := Load(dir, time.Now()); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileKey)+": missing") {
		t.Fatalf("missing key: %v", err)
	}
	os.Rename(filepath.Join(dir, "key.bak"), filepath.Join(dir, FileKey))
	// tampered permissions.p7s
	p := filepath.Join(dir, FilePermissions)
	orig, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(orig), "<default>DENY</default>", "<default>ALLOW</default>", 1)), 0o644)
	if _, err := Load(dir, time.Now()); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("tampered permissions: %v", err)
	}
	os.WriteFile(p, orig, 0o644)
	if _, err := Load(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	// expired certificate (checked 11 years on)
	if _, err := Load(dir, time.Now().Add(11*365*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired: %v", err)
	}
	// a certificate from another keystore's CA
	other := mkKeystore(t, "/n")
	b, _ := os.ReadFile(filepath.Join(EnclaveDir(other, "/n"), FileCert))
	k, _ := os.ReadFile(filepath.Join(EnclaveDir(other, "/n"), FileKey))
	os.WriteFile(filepath.Join(dir, FileCert), b, 0o644)
	os.WriteFile(filepath.Join(dir, FileKey), k, 0o600)
	if _, err := Load(dir, time.Now()); err == nil || !strings.Contains(err.Error(), "not signed by the identity CA") {
		t.Fatalf("foreign CA: %v", err)
	}
}

const samplePolicy = `<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/talker_listener/talker">
      <profiles>
        <profile ns="/" node="talker">
          <topics publish="ALLOW">
            <topic>chatter</topic>
          </topics>
          <topics subscribe="DENY">
            <topic>/clock</topic>
          </topics>
          <services reply="ALLOW">
            <service>~/describe_parameters</service>
          </services>
          <actions call="ALLOW">
            <action>fibonacci</action>
          </actions>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
`

func TestCreatePermissionFromPolicy(t *testing.T) {
	ks := mkKeystore(t, "/talker_listener/talker")
	pol := filepath.Join(t.TempDir(), "policy.xml")
	os.WriteFile(pol, []byte(samplePolicy), 0o644)
	if err := CreatePermission(ks, "/talker_listener/talker", pol, Options{DomainID: "7"}); err != nil {
		t.Fatal(err)
	}
	dir := EnclaveDir(ks, "/talker_listener/talker")
	a, err := Load(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	perms, err := access.ParsePermissions(a.PermissionsXML)
	if err != nil {
		t.Fatal(err)
	}
	g, err := perms.FindGrant("CN=/talker_listener/talker")
	if err != nil {
		t.Fatal(err)
	}
	if !g.NotBefore.Equal(a.Cert.NotBefore) || !g.NotAfter.Equal(a.Cert.NotAfter) {
		t.Fatalf("validity %v..%v, cert %v..%v", g.NotBefore, g.NotAfter, a.Cert.NotBefore, a.Cert.NotAfter)
	}
	want := map[string]string{ // topic op -> "" allowed or the deciding rule
		"publish rt/chatter":                             "",
		"subscribe rt/clock":                             "deny_rule #1",
		"publish rr/talker/describe_parametersReply":     "",
		"subscribe rq/talker/describe_parametersRequest": "",
		"publish rq/fibonacci/_action/send_goalRequest":  "",
		"subscribe rt/fibonacci/_action/feedback":        "",
		"publish ros_discovery_info":                     "",
		"subscribe rt/chatter":                           "default DENY",
	}
	for k, rule := range want {
		op, topic, _ := strings.Cut(k, " ")
		err := g.Check(access.Op(op), 7, topic, nil)
		if rule == "" && err != nil || rule != "" && (err == nil || !strings.Contains(err.Error(), rule)) {
			t.Errorf("%s: %v, want %q", k, err, rule)
		}
	}
	if err := g.Check(access.OpPublish, 0, "rt/chatter", nil); err == nil {
		t.Error("domain 0 allowed by a domain-7 permissions document")
	}
}

func TestPolicyErrors(t *testing.T) {
	for _, bad := range []string{
		`<policy version="0.1.0"><enclaves><enclave path="/"><profiles><profile ns="/" node="n"/></profiles></enclave></enclaves></policy>`,
		`<policy version="0.2.0"><enclaves><enclave path="/"><profiles><profile ns="/" node="n"><topics publish="MAYBE"><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>`,
		`<policy version="0.2.0"><enclaves><enclave path="/"><profiles><profile ns="/" node="n"><topics publish="ALLOW"><service>x</service></topics></profile></profiles></enclave></enclaves></policy>`,
		`not xml`,
	} {
		if _, err := ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(samplePolicy))
	f.Add([]byte(DefaultPolicyXML))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePolicy(b)
		if err != nil {
			return
		}
		for _, e := range p.Enclaves {
			x, err := p.PermissionsXML(e.Path, PermissionsParams{DomainID: "0", NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1e9, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := access.ParsePermissions(x); err != nil {
				t.Fatalf("transform of a valid policy is not a valid permissions document: %v\n%s", err, x)
			}
		}
	})
}

// TestOpenSSLKeystore makes a keystore with the openssl commands sros2 ran
// before it used python-cryptography (dashing/eloquent: ecparam, req -x509
// with its ca_conf.cnf, req -new with request.cnf, ca -batch, smime -sign
// -text) and loads it; and checks that openssl accepts ours (verify, smime
// -verify).
func TestOpenSSLKeystore(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	root := t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(root, "ca_conf.cnf"), []byte(opensslCAConf), 0o644)
	os.WriteFile(filepath.Join(root, "index.txt"), nil, 0o644)
	run(root, "ecparam", "-name", "prime256v1", "-out", "ecdsaparam")
	run(root, "req", "-nodes", "-x509", "-days", "3650", "-newkey", "ec:ecdsaparam", "-keyout", "ca.key.pem", "-out", "ca.cert.pem", "-config", "ca_conf.cnf")
	os.WriteFile(filepath.Join(root, "governance.xml"), []byte(GovernanceXML("0")), 0o644)
	run(root, "smime", "-sign", "-in", "governance.xml", "-text", "-out", "governance.p7s", "-signer", "ca.cert.pem", "-inkey", "ca.key.pem")
	enc := filepath.Join(root, "talker")
	os.MkdirAll(enc, 0o755)
	os.WriteFile(filepath.Join(enc, "request.cnf"), []byte("prompt = no\nstring_mask = utf8only\ndistinguished_name = req_distinguished_name\n\n[ req_distinguished_name ]\ncommonName = /talker\n"), 0o644)
	run(root, "req", "-nodes", "-new", "-newkey", "ec:ecdsaparam", "-config", "talker/request.cnf", "-keyout", "talker/key.pem", "-out", "talker/req.pem")
	run(root, "ca", "-batch", "-create_serial", "-config", "ca_conf.cnf", "-days", "3650", "-in", "talker/req.pem", "-out", "talker/cert.pem")
	cert, err := ReadCert(filepath.Join(enc, "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := ParsePolicy([]byte(DefaultPolicyXML))
	pol.Enclaves[0].Path = "/talker"
	px, err := pol.PermissionsXML("/talker", PermissionsParams{DomainID: "0", NotBefore: cert.NotBefore, NotAfter: cert.NotAfter, RosDiscoveryTopic: true})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(enc, "permissions.xml"), px, 0o644)
	run(root, "smime", "-sign", "-in", "talker/permissions.xml", "-text", "-out", "talker/permissions.p7s", "-signer", "ca.cert.pem", "-inkey", "ca.key.pem")
	for _, l := range []struct{ src, dst string }{{"../ca.cert.pem", "identity_ca.cert.pem"}, {"../ca.cert.pem", "permissions_ca.cert.pem"}, {"../governance.p7s", "governance.p7s"}} {
		os.Symlink(l.src, filepath.Join(enc, l.dst))
	}
	a, err := Load(enc, time.Now())
	if err != nil {
		t.Fatalf("openssl-made enclave: %v", err)
	}
	if _, err := access.NewLocal(access.Config{Governance: a.Governance, Permissions: a.Permissions, PermissionsCA: a.PermissionsCA, Identity: a.Cert, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}

	// and openssl accepts what we make
	ks := mkKeystore(t, "/talker")
	d := EnclaveDir(ks, "/talker")
	run(d, "verify", "-CAfile", "identity_ca.cert.pem", "cert.pem")
	run(d, "smime", "-verify", "-in", "permissions.p7s", "-CAfile", "permissions_ca.cert.pem", "-out", os.DevNull)
	run(d, "smime", "-verify", "-in", "governance.p7s", "-CAfile", "permissions_ca.cert.pem", "-out", os.DevNull)
	run(d, "pkey", "-in", "key.pem", "-noout")
}

// opensslCAConf is sros2's ca_conf.cnf (dashing), with the CA's common name.
const opensslCAConf = `[ ca ]
default_ca = CA_default

[ CA_default ]
dir = .
database = $dir/index.txt
unique_subject = no
new_certs_dir = $dir
certificate = $dir/ca.cert.pem
private_key = $dir/ca.key.pem
serial = $dir/serial
default_days = 1825
default_md = sha256
preserve = no
policy = policy_match
x509_extensions = local_ca_extensions
copy_extensions = copy

[ policy_match ]
countryName = optional
stateOrProvinceName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
emailAddress = optional

[ local_ca_extensions ]
basicConstraints = CA:false

[ req ]
prompt = no
distinguished_name = req_distinguished_name
string_mask = utf8only
x509_extensions = root_ca_extensions

[ req_distinguished_name ]
commonName = sros2testCA

[ root_ca_extensions ]
basicConstraints = CA:true
`

func TestResolve(t *testing.T) {
	ks := mkKeystore(t, "/simtimer")
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	a, sel, err := Resolve(EnvFrom(getenv(nil)), "/simtimer", time.Now(), Load)
	if a != nil || err != nil || sel.Enabled {
		t.Fatalf("disabled: %v %+v %v", a, sel, err)
	}
	on := map[string]string{EnvEnable: "true", EnvKeystore: ks, EnvStrategy: "Enforce"}
	a, sel, err = Resolve(EnvFrom(getenv(on)), "/simtimer", time.Now(), Load)
	if err != nil || a == nil || sel.Strategy != Enforce {
		t.Fatalf("%+v %v", sel, err)
	}
	os.Remove(filepath.Join(EnclaveDir(ks, "/simtimer"), FileGovernance))
	_, sel, err = Resolve(EnvFrom(getenv(on)), "/simtimer", time.Now(), Load)
	if err == nil || sel.Strategy != Enforce || !strings.Contains(err.Error(), "governance.p7s: missing") {
		t.Fatalf("missing governance: %+v %v", sel, err)
	}
}

// TestPolicyXInclude: sros2's policies include common profiles with
// xi:include (enclaves from another policy, profile contents from a
// profile file), resolved relative to the including file.
func TestPolicyXInclude(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "common", "node"), 0o755)
	files := map[string]string{
		"common/node/time.xml": `<profile><topics subscribe="ALLOW"><topic>/clock</topic></topics></profile>`,
		"common/node.xml": `<profile xmlns:xi="http://www.w3.org/2003/XInclude">
  <xi:include href="node/time.xml" xpointer="xpointer(/profile/*)"/></profile>`,
		"other.policy.xml": `<policy version="0.2.0"><enclaves><enclave path="/other"><profiles>
  <profile ns="/" node="other"><topics publish="ALLOW"><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>`,
		"main.policy.xml": `<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude">
  <enclaves>
    <xi:include href="other.policy.xml" xpointer="xpointer(/policy/enclaves/*)"/>
    <enclave path="/simtimer">
      <profiles>
        <profile ns="/" node="simtimer">
          <xi:include href="common/node.xml" xpointer="xpointer(/profile/*)"/>
          <topics publish="ALLOW"><topic>tick</topic></topics>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>`,
	}
	for name, body := range files {
		os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644)
	}
	p, err := ParsePolicyFile(filepath.Join(dir, "main.policy.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Enclaves) != 2 || p.Enclaves[0].Path != "/other" || p.Enclaves[1].Path != "/simtimer" {
		t.Fatalf("enclaves %+v", p.Enclaves)
	}
	x, err := p.PermissionsXML("/simtimer", PermissionsParams{DomainID: "0", NotBefore: time.Unix(0, 0), NotAfter: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	perms, err := access.ParsePermissions(x)
	if err != nil {
		t.Fatal(err)
	}
	g := &perms.Grants[0]
	if err := g.Check(access.OpSubscribe, 0, "rt/clock", nil); err != nil {
		t.Errorf("included /clock: %v", err)
	}
	if err := g.Check(access.OpPublish, 0, "rt/tick", nil); err != nil {
		t.Error(err)
	}
	// without the file, an include is refused, not ignored
	b, _ := os.ReadFile(filepath.Join(dir, "main.policy.xml"))
	if _, err := ParsePolicy(b); err == nil || !strings.Contains(err.Error(), "ParsePolicyFile") {
		t.Fatalf("ParsePolicy with includes: %v", err)
	}
	// a cycle ends
	os.WriteFile(filepath.Join(dir, "loop.xml"), []byte(`<profile xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="loop.xml" xpointer="xpointer(/profile/*)"/></profile>`), 0o644)
	os.WriteFile(filepath.Join(dir, "cyc.policy.xml"), []byte(`<policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><enclaves><enclave path="/c"><profiles><profile ns="/" node="c"><xi:include href="loop.xml" xpointer="xpointer(/profile/*)"/></profile></profiles></enclave></enclaves></policy>`), 0o644)
	if _, err := ParsePolicyFile(filepath.Join(dir, "cyc.policy.xml")); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("include cycle: %v", err)
	}
}
