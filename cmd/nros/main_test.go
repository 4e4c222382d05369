package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemoCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"demo", "--script", "start=5;play 2x 300ms;jump -1s;play 1x 200ms", "--hz", "50", "--period", "50ms", "--wall-period", "100ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "\nros ") || !strings.Contains(out.String(), "clock ") {
		t.Fatalf("no timeline:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "backward jump") {
		t.Fatalf("no summary:\n%s", errb.String())
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"demo", "--overrun", "sometimes"},
		{"demo", "--period", "0s"},
		{"demo", "--script", "play -1x 1s"},
		{"demo", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Fatalf("%q: exit %d, want 2 (stderr %s)", args, code, errb.String())
		}
		if errb.Len() == 0 {
			t.Fatalf("%q: no message", args)
		}
	}
}
