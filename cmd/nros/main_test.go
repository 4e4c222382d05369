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

// On a terminal, nros demo shows the summary alone unless --events.
func TestDemoOnTerminal(t *testing.T) {
	args := []string{"--script", "start=5;play 1x 200ms"}
	for _, tc := range []struct {
		args       []string
		wantEvents bool
	}{{args, false}, {append([]string{"--events"}, args...), true}} {
		var out, errb bytes.Buffer
		if code := runDemo(t.Context(), tc.args, &out, &errb, true); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errb.String())
		}
		if got := strings.Contains(out.String(), "clock "); got != tc.wantEvents {
			t.Fatalf("%q: event lines printed %v, want %v:\n%s", tc.args, got, tc.wantEvents, out.String())
		}
		if !strings.Contains(errb.String(), "step 2  play 1x 200ms") {
			t.Fatalf("%q: no summary:\n%s", tc.args, errb.String())
		}
	}
}

// TestCLIMistakes is the CLI's one rule, as a table: a bad command line
// exits 2, a runtime failure 1; one line on stderr, "<command>: <what>",
// with no second prefix, naming the flag, the value and what is accepted.
func TestCLIMistakes(t *testing.T) {
	t.Setenv("NROS_TRANSPORT", "intra")
	long := strings.Repeat("a", 300)
	for _, tc := range []struct {
		args []string
		code int
		want string // the whole stderr line, or "~substring"
	}{
		{[]string{"frobnicate"}, 2, `~nros: unknown command "frobnicate"`},
		{[]string{"demo", "--hz", "0"}, 2, `nros demo: --hz 0: want a rate above 0 and at most 1000000 Hz`},
		{[]string{"demo", "--hz", "-5"}, 2, `nros demo: --hz -5: want a rate above 0 and at most 1000000 Hz`},
		{[]string{"demo", "--hz", "abc"}, 2, `nros demo: --hz "abc": want a number (/clock publish rate in Hz)`},
		{[]string{"demo", "--period", "0s"}, 2, `nros demo: --period 0s: want a positive duration such as 100ms`},
		{[]string{"demo", "--wall-period", "1"}, 2, `nros demo: --wall-period "1": want a Go duration such as 100ms or 1.5s (wall timer period)`},
		{[]string{"demo", "--overrun", "sometimes"}, 2, `nros demo: --overrun "sometimes": want skip or catch_up`},
		{[]string{"demo", "--script", "play -1x 1s"}, 2, `nros demo: --script "play -1x 1s": step 1 "play -1x 1s": rate -1 must be positive (a decimal such as 0.5 or 2)`},
		{[]string{"demo", "extra"}, 2, `nros demo: unexpected argument "extra" (flags only; the script goes in --script)`},
		{[]string{"demo", "--bogus"}, 2, `nros demo: flag provided but not defined: -bogus (run 'nros demo -h' for the flags)`},
		{[]string{"clock", "--hz", "0"}, 2, `nros clock: --hz 0: want a rate above 0 and at most 1e9 Hz`},
		{[]string{"clock", "--script", "play -1x 1s"}, 2, `nros clock: --script "play -1x 1s": step 1 "play -1x 1s": rate -1 must be positive (a decimal such as 0.5 or 2)`},
		{[]string{"clock", "--topic", "a b"}, 2, `~nros clock: --topic "a b": topic "a b": topic name "a b" must not contain ' '`},
		{[]string{"clock", "--ros-args", "-p", "use_sim_time:=maybe"}, 2, `~nros clock: node /nros_clock: invalid parameter type: parameter 'use_sim_time' wants type bool`},
		{[]string{"clock", "--ros-args", "-r", "clock"}, 2, `nros clock: --ros-args: invalid ROS argument "clock": -r: expected [node:]from:=to`},
		{[]string{"clock", "--ros-args", "-r", "clock:=/" + long}, 2, `~more than the ROS 2 limit of 247`},
		{[]string{"clock", "--ros-args", "--params-file", "/nonexistent.yaml"}, 2, `~nros clock: node /nros_clock: params file "/nonexistent.yaml": open /nonexistent.yaml: no such file or directory`},
		{[]string{"clock", "--ros-args", "--params-file", "/dev/zero"}, 2, `nros clock: node /nros_clock: params file "/dev/zero": larger than the limit of 16777216 bytes (16 MiB)`},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "data: 1", "--rate", "0"}, 2, `nros topic pub: --rate 0: want a positive number of Hz`},
		{[]string{"topic", "echo", "/x", "--qos-depth", "0"}, 2, `nros topic echo: --qos-depth 0: want 1 or more`},
		{[]string{"topic", "echo", "/x", "--count", "-1"}, 2, `nros topic echo: --count -1: want 0 (no limit) or more`},
		{[]string{"topic", "echo"}, 2, `nros topic echo: want TOPIC [TYPE], got 0 arguments`},
		{[]string{"bench", "pingpong", "pang"}, 2, `nros bench pingpong: want ping or pong, got "pang"`},
		{[]string{"bench", "pingpong", "ping", "--size", "-1"}, 2, `nros bench pingpong: --size -1: want 0 to 268435456 bytes`},
		{[]string{"bench", "pingpong", "ping", "--mode", "fast"}, 2, `nros bench pingpong: --mode "fast": want latency or throughput`},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		msg := strings.TrimSuffix(errb.String(), "\n")
		if code != tc.code {
			t.Errorf("nros %q: exit %d, want %d (stderr %q)", tc.args, code, tc.code, msg)
			continue
		}
		if strings.HasPrefix(tc.want, "~") {
			if !strings.Contains(msg, tc.want[1:]) {
				t.Errorf("nros %q: stderr %q, want it to contain %q", tc.args, msg, tc.want[1:])
			}
		} else if msg != tc.want {
			t.Errorf("nros %q: stderr\n  %q\nwant\n  %q", tc.args, msg, tc.want)
		}
		if tc.args[0] != "frobnicate" && strings.Contains(msg, "\n") {
			t.Errorf("nros %q: more than one line on stderr: %q", tc.args, msg)
		}
		if i := strings.Index(msg, ": "); i >= 0 && (strings.Contains(msg[i:], " nros: ") || strings.Contains(msg[i:], "demo: demo:")) {
			t.Errorf("nros %q: a second prefix in %q", tc.args, msg)
		}
		if out.Len() != 0 {
			t.Errorf("nros %q: printed on stdout: %q", tc.args, out.String())
		}
	}
}

// -h prints the usage on stdout and exits 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"demo", "-h"}, {"clock", "-h"}, {"help"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || !strings.Contains(out.String(), "usage: nros") || errb.Len() != 0 {
			t.Errorf("nros %q: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 || !strings.HasPrefix(errb.String(), "usage: nros") {
		t.Errorf("nros with no command: exit %d, stderr %q", code, errb.String())
	}
}
