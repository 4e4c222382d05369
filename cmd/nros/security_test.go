package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
)

func secRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := securityCmd(args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestSecurityCommands(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "keys")
	env := map[string]string{"ROS_DOMAIN_ID": "42"}
	if code, _, e := secRun(t, env, "create_keystore", ks); code != 0 {
		t.Fatalf("create_keystore: %d %s", code, e)
	}
	for _, n := range []string{"/talker_listener/talker", "/simtimer"} {
		if code, _, e := secRun(t, env, "create_enclave", ks, n); code != 0 {
			t.Fatalf("create_enclave %s: %d %s", n, code, e)
		}
	}
	code, out, e := secRun(t, env, "list_enclaves", ks)
	if code != 0 || out != "/simtimer\n/talker_listener/talker\n" {
		t.Fatalf("list_enclaves: %d %q %s", code, out, e)
	}
	// a policy denying /clock
	pol := filepath.Join(t.TempDir(), "policy.xml")
	os.WriteFile(pol, []byte(`<policy version="0.2.0"><enclaves><enclave path="/simtimer"><profiles>
<profile ns="/" node="simtimer"><topics subscribe="DENY"><topic>/clock</topic></topics>
<topics publish="ALLOW" subscribe="ALLOW"><topic>/*</topic></topics></profile></profiles></enclave></enclaves></policy>`), 0o644)
	if code, _, e := secRun(t, env, "create_permission", ks, "/simtimer", pol); code != 0 {
		t.Fatalf("create_permission: %d %s", code, e)
	}
	a, err := keystore.Load(keystore.EnclaveDir(ks, "/simtimer"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l, err := access.NewLocal(access.Config{Domain: 42, Governance: a.Governance, Permissions: a.Permissions,
		PermissionsCA: a.PermissionsCA, Identity: a.Cert, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.CheckCreateReader("rt/clock", nil); err == nil ||
		err.Error() != `permissions deny subscribe to rt/clock: grant "/simtimer", deny_rule #1` {
		t.Fatalf("rt/clock: %v", err)
	}
	if _, err := l.CheckCreateWriter("rt/clock", nil); err != nil {
		t.Fatal(err)
	}
	// domain 42 from ROS_DOMAIN_ID: another domain is not governed
	if _, err := access.NewLocal(access.Config{Domain: 0, Governance: a.Governance, Permissions: a.Permissions,
		PermissionsCA: a.PermissionsCA, Identity: a.Cert, Now: time.Now()}); err == nil {
		t.Fatal("domain 0 accepted by a domain-42 keystore")
	}
}

func TestSecurityCommandErrors(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "keys")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: nros security"},
		{[]string{"frobnicate"}, 2, `unknown verb "frobnicate"`},
		{[]string{"create_enclave", ks}, 2, "want 2 argument(s), got 1"},
		{[]string{"create_enclave", ks, "no_slash"}, 2, "invalid enclave name"},
		{[]string{"create_enclave", ks, "/x"}, 1, "not a valid keystore"},
		{[]string{"list_enclaves", ks}, 1, "not a valid keystore"},
	} {
		code, _, e := secRun(t, nil, c.args...)
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("%q: exit %d %q, want %d %q", c.args, code, e, c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"security", "-h"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "create_permission") {
		t.Fatalf("nros security -h: %d %s", code, errb.String())
	}
}
