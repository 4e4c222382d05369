package interop

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// simFollowing reports whether simtimer printed a ROS-timer line on
// simulated time (the /clock script starts at 1000 s, far below Unix time).
func simFollowing(p *goProc) bool {
	for _, l := range strings.Split(p.stdout(), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "ros" {
			if v, err := strconv.ParseInt(f[2], 10, 64); err == nil && v < simRange {
				return true
			}
		}
	}
	return false
}

// startClock plays a long /clock script from a peer of vendor.
func startClock(t *testing.T, vendor string, dom int) {
	t.Helper()
	Start(t, "clockpub_"+vendor, "--domain", strconv.Itoa(dom), "--script", "start=1000;play 1x 120s")
}

// TestPeerSetsUseSimTime: a Cyclone and a Fast DDS peer, each acting as
// `ros2 param set` (a set_parameters client in its vendor's request-id
// mapping), set use_sim_time on a running examples/simtimer, which then
// follows /clock; notabool is refused with a reason naming the parameter;
// false again keeps the last simulated time.
func TestPeerSetsUseSimTime(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			sim := startSimtimer(t, dom, "-p", "duration_s:=120")
			startClock(t, vendor, dom)
			set := func(value string) string {
				t.Helper()
				p := Start(t, "svc_"+vendor, "--mode", "setparam", "--target", "/simtimer", "--param", "use_sim_time",
					"--value", value, "--timeout", "30", "--domain", strconv.Itoa(dom))
				if rc, err := p.Wait(40 * time.Second); err != nil || rc != ExitOK {
					t.Fatalf("setparam %s: exit %d %v", value, rc, err)
				}
				lines := p.Lines()
				if len(lines) != 1 {
					t.Fatalf("setparam %s printed %q", value, lines)
				}
				return strings.TrimSpace(lines[0])
			}
			time.Sleep(time.Second)
			if simFollowing(sim) {
				t.Fatal("simtimer on simulated time before use_sim_time was set")
			}
			if r := set("true"); r != "result 1" {
				t.Fatalf("set true: %q", r)
			}
			if !waitFor(15*time.Second, func() bool { return simFollowing(sim) }) {
				t.Fatalf("simtimer does not follow /clock after use_sim_time true:\n%s", sim.stdout())
			}
			if r := set("notabool"); !strings.HasPrefix(r, "result 0 ") || !strings.Contains(r, "use_sim_time") {
				t.Fatalf("set notabool: %q", r)
			}
			if r := set("false"); r != "result 1" {
				t.Fatalf("set false: %q", r)
			}
			// Back to false: the clock keeps the last simulated time (it
			// neither follows /clock nor returns to system time), so the
			// ROS timer fires no more.
			after := time.Now().Add(300 * time.Millisecond).UnixNano()
			time.Sleep(1500 * time.Millisecond)
			for _, l := range strings.Split(sim.stdout(), "\n") {
				f := strings.Fields(l)
				if len(f) != 4 || f[0] != "ros" {
					continue
				}
				if w, _ := strconv.ParseInt(f[1], 10, 64); w > after {
					t.Fatalf("ROS timer fired after use_sim_time false: %q", l)
				}
			}
		})
	}
}

// nrosCLI runs the nros command in domain dom and returns its exit code,
// stdout and stderr.
func nrosCLI(t *testing.T, dom int, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(nrosBinary(t), args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NROS_TRANSPORT=") && !strings.HasPrefix(kv, "ROS_DOMAIN_ID=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "ROS_DOMAIN_ID="+strconv.Itoa(dom))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

// TestNrosParamSetOnSimtimer: `nros param set /simtimer use_sim_time true`
// and `nros param get` against a running examples/simtimer over DDS.
func TestNrosParamSetOnSimtimer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	dom := Domain(t)
	sim := startSimtimer(t, dom, "-p", "duration_s:=120")
	startClock(t, "cyclone", dom)
	if code, out, errs := nrosCLI(t, dom, "param", "get", "/simtimer", "use_sim_time", "--timeout", "20s"); code != 0 || out != "Boolean value is: False\n" {
		t.Fatalf("get: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := nrosCLI(t, dom, "param", "set", "/simtimer", "use_sim_time", "true", "--timeout", "20s"); code != 0 || out != "Set parameter successful\n" {
		t.Fatalf("set: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := nrosCLI(t, dom, "param", "get", "/simtimer", "use_sim_time", "--timeout", "20s"); code != 0 || out != "Boolean value is: True\n" {
		t.Fatalf("get: exit %d %q %q", code, out, errs)
	}
	if !waitFor(15*time.Second, func() bool { return simFollowing(sim) }) {
		t.Fatalf("simtimer does not follow /clock after nros param set:\n%s", sim.stdout())
	}
	code, out, errs := nrosCLI(t, dom, "param", "set", "/simtimer", "use_sim_time", "notabool", "--timeout", "20s")
	if code == 0 || out != "" || !strings.Contains(errs, "Setting parameter failed") || !strings.Contains(errs, "use_sim_time") {
		t.Fatalf("notabool: exit %d %q %q", code, out, errs)
	}
}

// TestNrosParamGetFromPeer: nros param get against a peer-side parameter
// server (get_parameters in the peer's request-id mapping).
func TestNrosParamGetFromPeer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			srv := Start(t, "svc_"+vendor, "--mode", "paramserver", "--target", "/peer_node", "--node", "peer_node",
				"--timeout", "60", "--domain", strconv.Itoa(dom))
			for name, want := range map[string]string{
				"answer":       "Integer value is: 42\n",
				"vendor":       "String value is: " + vendor + "\n",
				"use_sim_time": "Boolean value is: False\n",
				"nope":         "Parameter not set.\n",
			} {
				code, out, errs := nrosCLI(t, dom, "param", "get", "/peer_node", name, "--timeout", "20s")
				if code != 0 || out != want {
					t.Fatalf("get %s: exit %d %q %q (peer printed %q)", name, code, out, errs, srv.Lines())
				}
			}
		})
	}
}
