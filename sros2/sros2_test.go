package sros2_test

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program links DDS Security only when it imports package sros2:
// examples/listener does not and carries none of it (neither the transport's
// secure state nor certificate parsing), examples/talker does.
func TestLinkedOnlyWhenImported(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		pkg  string
		want bool
	}{
		{"github.com/nros-go/nros/examples/listener", false},
		{"github.com/nros-go/nros/examples/talker", true},
	} {
		bin := filepath.Join(dir, filepath.Base(tc.pkg))
		cmd := exec.Command("go", "build", "-o", bin, tc.pkg)
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", tc.pkg, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"github.com/nros-go/nros/rmw/rtps.newSecState", "crypto/x509.ParseCertificate", "encoding/xml.(*Decoder).Token"} {
			found := false
			for _, s := range syms {
				if s.Name == name || strings.HasPrefix(s.Name, name+".") {
					found = true
					break
				}
			}
			if found != tc.want {
				t.Errorf("%s: symbol %s linked %v, want %v", filepath.Base(tc.pkg), name, found, tc.want)
			}
		}
	}
}
