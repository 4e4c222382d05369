package nros

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	_ "github.com/nros-go/nros/sros2" // these tests run secured participants
)

// SROS2's strategies: Enforce refuses to start without valid artifacts and
// names the file; Permissive runs unsecured with a warning; a valid enclave
// makes the transport secure, with the enclave from --enclave.
func TestSecurityStrategy(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "ks")
	o := keystore.Options{DomainID: "0"}
	if err := keystore.CreateKeystore(ks, o); err != nil {
		t.Fatal(err)
	}
	if err := keystore.CreateEnclave(ks, "/good", o); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROS_SECURITY_ENABLE", "true")
	t.Setenv("ROS_SECURITY_KEYSTORE", ks)
	t.Setenv("ROS_SECURITY_ENCLAVE_OVERRIDE", "")
	run := func(strategy string, args ...string) (rtps.Config, string, error) {
		t.Setenv("ROS_SECURITY_STRATEGY", strategy)
		c := NewContext()
		if _, err := c.Init(args); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		var cfg rtps.Config
		err := c.securityConfig(&cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		return cfg, logs.String(), err
	}
	_, _, err := run("Enforce", "--ros-args", "--enclave", "/missing")
	if err == nil || !strings.Contains(err.Error(), filepath.Join("enclaves", "missing")) {
		t.Fatalf("Enforce with a missing enclave: %v", err)
	}
	cfg, logs, err := run("Permissive", "--ros-args", "--enclave", "/missing")
	if err != nil || cfg.Security != nil || !strings.Contains(logs, "running unsecured") {
		t.Fatalf("Permissive: err %v, secure %v, logs %q", err, cfg.Security != nil, logs)
	}
	cfg, _, err = run("Enforce", "--ros-args", "-e", "/good")
	if err != nil || cfg.Security == nil || cfg.Enclave != "/good" {
		t.Fatalf("Enforce with /good: err %v, secure %v, enclave %q", err, cfg.Security != nil, cfg.Enclave)
	}
	t.Setenv("ROS_SECURITY_ENCLAVE_OVERRIDE", "/good")
	cfg, _, err = run("Enforce", "--ros-args", "-e", "/missing")
	if err != nil || cfg.Security == nil || cfg.Enclave != "/good" {
		t.Fatalf("override: err %v, secure %v, enclave %q", err, cfg.Security != nil, cfg.Enclave)
	}
}
