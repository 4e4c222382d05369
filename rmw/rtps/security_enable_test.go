package rtps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/keystore"
)

// The package's own tests run secured participants (secure_test.go);
// TestSecurityNotLinked unlinks it for its own duration.
func init() { EnableSecurity() }

// A program that did not link DDS Security (no EnableSecurity, no import of
// package sros2): security off works as always; asked for it, New and
// SecurityFromEnv say what to import, and the strategy comes back for the
// caller to enforce or warn. Not parallel: it unlinks the package's hooks.
func TestSecurityNotLinked(t *testing.T) {
	saveNew, saveLoad := newSecurity, loadArtifacts
	newSecurity, loadArtifacts = nil, nil
	defer func() { newSecurity, loadArtifacts = saveNew, saveLoad }()
	if SecurityLinked() {
		t.Fatal("SecurityLinked with the hooks unset")
	}
	ks := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ks, "enclaves", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env      map[string]string
		wantErr  error
		strategy keystore.Strategy
	}{
		{env: map[string]string{}},
		{env: map[string]string{"ROS_SECURITY_ENABLE": "false", "ROS_SECURITY_KEYSTORE": ks}},
		{env: map[string]string{"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_KEYSTORE": ks, "ROS_SECURITY_STRATEGY": "Enforce"},
			wantErr: ErrSecurityNotLinked, strategy: keystore.Enforce},
		{env: map[string]string{"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_KEYSTORE": ks},
			wantErr: ErrSecurityNotLinked, strategy: keystore.Permissive},
	} {
		art, sel, err := SecurityFromEnv(func(k string) string { return tc.env[k] }, "/app", time.Now())
		if art != nil || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) || sel.Strategy != tc.strategy {
			t.Errorf("%v: artifacts %v, strategy %v, err %v; want none, %v, %v", tc.env, art, sel.Strategy, err, tc.strategy, tc.wantErr)
		}
	}
	if !strings.Contains(ErrSecurityNotLinked.Error(), `import _ "github.com/nros-go/nros/sros2"`) {
		t.Errorf("the error does not say what to import: %v", ErrSecurityNotLinked)
	}
	// New refuses before it opens a socket.
	tr, err := New(Config{Security: &keystore.Artifacts{}})
	if !errors.Is(err, ErrSecurityNotLinked) {
		if tr != nil {
			tr.Close()
		}
		t.Fatalf("New with Security set: %v, want ErrSecurityNotLinked", err)
	}
	EnableSecurity()
	if !SecurityLinked() {
		t.Fatal("not linked after EnableSecurity")
	}
}
