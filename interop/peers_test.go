package interop

import (
	"fmt"
	"math/big"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The self-check: every publisher vendor against every subscriber vendor.
// Run inside the namespace:  interop/netns go test ./interop/ -run . -v

type pairing struct{ pub, sub string }

func pairings() []pairing {
	var ps []pairing
	for _, p := range Vendors {
		for _, s := range Vendors {
			ps = append(ps, pairing{p, s})
		}
	}
	return ps
}

func (p pairing) String() string { return p.pub + "_to_" + p.sub }

// clockScript exercises play at several rates, pause and both jumps; it
// publishes 140 samples at 100 Hz.
const clockScript = "start=100.0;play 1x 0.5s;pause 0.2s;play 2x 0.3s;jump -5s;play 0.5x 0.2s;jump +10s;play 1x 0.2s"

func d(n int) string { return strconv.Itoa(n) }

// simStamps keeps "sec nanosec" of "wall sec nanosec" lines.
func simStamps(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("bad clock line %q", l)
		}
		out = append(out, f[1]+" "+f[2])
	}
	return out
}

func TestClockPairs(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	want := dryRun(t, "clockpub_cyclone", clockScript, "100")
	if len(want) != 140 {
		t.Fatalf("dry run of the script: %d samples, want 140", len(want))
	}
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			// Depth 1000 on the reader: the check is about the wire, not
			// about a starved KEEP_LAST 1 reader on a busy machine.
			sub := Start(t, "clocksub_"+pr.sub, "--domain", d(dom), "--depth", "1000", "--count", "140", "--timeout", "30")
			pub := Start(t, "clockpub_"+pr.pub, "--domain", d(dom), "--wait-subs", "1", "--wait-timeout", "20",
				"--settle", "0", "--gate", "--script", clockScript)
			Release(t, 20*time.Second, pub, sub)
			if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("clockpub: exit %d, %v", code, err)
			}
			if code, err := sub.Wait(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("clocksub: exit %d, %v (%d samples)", code, err, len(sub.Lines()))
			}
			sent, got := simStamps(t, pub.Lines()), simStamps(t, sub.Lines())
			if strings.Join(sent, "\n") != strings.Join(want, "\n") {
				t.Errorf("publisher samples differ from the dry run of the script")
			}
			if strings.Join(got, "\n") != strings.Join(sent, "\n") {
				t.Errorf("subscriber got %d samples that differ from the %d sent:\n%s", len(got), len(sent), firstDiff(sent, got))
			}
		})
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at #%d: sent %q, got %q", i, x, y)
		}
	}
	return "no difference"
}

// chatter runs one subscriber against small strings and then, with a new
// subscriber and writer, against 1 MiB strings (DATA_FRAG and fragment
// repair); everything must arrive, in order. The 1 MiB phase is
// TRANSIENT_LOCAL: a VOLATILE Cyclone reader never repairs a sample it lost
// before a Fast DDS writer's first HEARTBEAT (up to 3 s after the data),
// and a 1 MiB burst can overflow its socket buffer (README, findings).
//
// Both ends are reference peers, so a phase whose subscriber lost its match
// with the publisher (it printed "matched 0 publisher") is started once more,
// logged: under 20 % loss on the loaded CI machine a Cyclone reader once
// dropped a Fast DDS writer after matching and never heard from it again
// (interop/README.md, findings). No Go code is on that path.
func chatter(t *testing.T, pr pairing, dom int, small, big int, extra ...string) {
	t.Helper()
	phase := func(first, count, size int, more ...string) {
		t.Helper()
		args := func(a ...string) []string {
			return append(append(append([]string{"--domain", d(dom)}, extra...), more...), a...)
		}
		var sub *Proc
		for attempt := 0; ; attempt++ {
			sub = Start(t, "chattersub_"+pr.sub, args("--first", d(first), "--count", d(count), "--timeout", "45")...)
			pubArgs := args("--first", d(first), "--count", d(count), "--hz", "100", "--wait-subs", "1", "--settle", "0", "--gate")
			if size > 0 {
				pubArgs = append(pubArgs, "--size", d(size))
			}
			pub := Start(t, "chatterpub_"+pr.pub, pubArgs...)
			Release(t, 20*time.Second, pub, sub)
			code, err := pub.Wait(40 * time.Second)
			if err == nil && code == 0 {
				break
			}
			if attempt == 0 && lostMatch.MatchString(sub.Stderr()) {
				t.Logf("the subscriber lost its match (chatterpub: exit %d, %v); starting the pair again.\n  %s: %s\n  %s: %s",
					code, err, pub.Name, strings.TrimSpace(pub.Stderr()), sub.Name, strings.TrimSpace(sub.Stderr()))
				pub.Kill()
				sub.Kill()
				continue
			}
			t.Fatalf("chatterpub: exit %d, %v", code, err)
		}
		code, err := sub.Wait(20 * time.Second)
		if err != nil || code != 0 {
			t.Fatalf("chattersub: exit %d, %v, %d of %d samples", code, err, len(sub.Lines()), count)
		}
		for i, l := range sub.Lines() {
			n := first + i
			f := strings.SplitN(l, " ", 3)
			wantLen := len(fmt.Sprintf("Hello World: %d", n))
			if size > wantLen {
				wantLen = size
			}
			if len(f) != 3 || f[1] != d(wantLen) || !strings.HasPrefix(f[2], fmt.Sprintf("Hello World: %d", n)) {
				t.Fatalf("sample #%d: %q, want length %d and number %d", n, l, wantLen, n)
			}
		}
	}
	phase(1, small, 0)
	if big > 0 {
		phase(small+1, big, 1<<20, "--transient-local")
	}
}

// lostMatch matches a peer subscriber's report that its publisher went away.
var lostMatch = regexp.MustCompile(`matched 0 publisher`)

func TestChatterPairs(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			chatter(t, pr, Domain(t), 20, 3)
		})
	}
}

func TestChatterPairsUnderLoss(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			UDPLoss(t, dom, 20)
			// TRANSIENT_LOCAL: a VOLATILE Cyclone reader does not ask a
			// Fast DDS writer to repair what it lost before the writer's
			// first HEARTBEAT reached it (see README, findings).
			chatter(t, pr, dom, 20, 0, "--fixed-ports", "--depth", "30", "--transient-local")
		})
	}
}

var latencyLine = regexp.MustCompile(`^(cyclone|fastdds) reliable size=64 samples=(\d+) lost=(\d+) rtt_us ` +
	`min=[0-9.]+ mean=[0-9.]+ p50=[0-9.]+ p90=[0-9.]+ p99=[0-9.]+ max=[0-9.]+$`)

func TestPingPongPairs(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			pong := Start(t, "pingpong_"+pr.sub, "pong", "--domain", d(dom))
			ping := Start(t, "pingpong_"+pr.pub, "ping", "--domain", d(dom), "--count", "1000", "--warmup", "50", "--wait-timeout", "20")
			if code, err := ping.Wait(40 * time.Second); err != nil || code != 0 {
				t.Fatalf("ping: exit %d, %v", code, err)
			}
			if code, err := pong.Wait(10 * time.Second); err != nil || code != 0 {
				t.Errorf("pong did not quit on request: exit %d, %v", code, err)
			}
			lines := ping.Lines()
			if len(lines) != 1 {
				t.Fatalf("ping printed %d lines, want 1: %q", len(lines), lines)
			}
			m := latencyLine.FindStringSubmatch(lines[0])
			if m == nil || m[1] != pr.pub || m[2] != "1000" || m[3] != "0" {
				t.Fatalf("result line %q: want %s, samples=1000 lost=0", lines[0], pr.pub)
			}
			t.Log(lines[0])
		})
	}
}

// dryRun returns "sec nanosec" of every sample a script publishes, computed
// by the peer without any DDS (clockpub --dry-run).
func dryRun(t *testing.T, prog, script, hz string) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(Peers(t), prog), "--dry-run", "--hz", hz, "--script", script).Output()
	if err != nil {
		t.Fatalf("%s --dry-run: %v", prog, err)
	}
	return simStamps(t, strings.Split(strings.TrimSpace(string(out)), "\n"))
}

// expectStamps computes the samples of a script independently, with exact
// rationals: grid instants k*period, sim = s0 + rate*(w - w0), rounded to
// the nearest ns (half up), split ROS style (nanosec in [0, 1e9)).
type seg struct {
	rate  string // "" = jump
	dur   int64  // ns
	jump  int64  // ns
	quiet bool
}

func expectStamps(start int64, period int64, segs []seg) []string {
	var out []string
	var w0, next int64
	sim := start
	for _, s := range segs {
		if s.rate == "" {
			sim += s.jump
			continue
		}
		r, _ := new(big.Rat).SetString(s.rate)
		adv := func(e int64) int64 {
			x := new(big.Rat).Mul(r, new(big.Rat).SetInt64(e))
			x.Add(x, big.NewRat(1, 2))
			q := new(big.Int).Quo(x.Num(), x.Denom()) // floor for x >= 0
			return q.Int64()
		}
		for ; next < w0+s.dur; next += period {
			if s.quiet {
				continue
			}
			v := sim + adv(next-w0)
			sec, ns := v/1e9, v%1e9
			if ns < 0 {
				ns += 1e9
				sec--
			}
			out = append(out, fmt.Sprintf("%d %d", sec, ns))
		}
		sim += adv(s.dur)
		w0 += s.dur
	}
	return out
}

func TestClockScriptDryRun(t *testing.T) {
	cases := []struct {
		name, script, hz string
		start, period    int64
		segs             []seg
	}{
		{"plain", "start=0;play 1x 50ms", "100", 0, 10e6, []seg{{rate: "1", dur: 50e6}}},
		{"decimals", "start=1.000000001;play 0.333333333x 1s;jump -0.5s;pause 30ms", "7", 1000000001, 142857143,
			[]seg{{rate: "0.333333333", dur: 1e9}, {jump: -5e8}, {rate: "0", dur: 30e6}}},
		{"negative", "start=-1.25;play 2x 300ms;jump +1s;play 1x 100ms", "20", -1250000000, 50e6,
			[]seg{{rate: "2", dur: 300e6}, {jump: 1e9}, {rate: "1", dur: 100e6}}},
		{"stall and silent", "start=5;play 1x 40ms;stall 30ms;pause 20ms;play 3x 20ms silent;play 1x 20ms", "100", 5e9, 10e6,
			[]seg{{rate: "1", dur: 40e6}, {rate: "0", dur: 30e6, quiet: true}, {rate: "0", dur: 20e6},
				{rate: "3", dur: 20e6, quiet: true}, {rate: "1", dur: 20e6}}},
		{"units", "start=0;play 1.5x 1500us;play 1x 2000000ns", "1000", 0, 1e6,
			[]seg{{rate: "1.5", dur: 1500e3}, {rate: "1", dur: 2e6}}},
	}
	for _, vendor := range Vendors {
		for _, c := range cases {
			t.Run(vendor+"/"+c.name, func(t *testing.T) {
				got := dryRun(t, "clockpub_"+vendor, c.script, c.hz)
				want := expectStamps(c.start, c.period, c.segs)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got %d samples, want %d: %s", len(got), len(want), firstDiff(want, got))
				}
			})
		}
	}
}

func TestClockScriptErrors(t *testing.T) {
	for _, script := range []string{"play 1y 1s", "play 1x", "jump 5s", "pause -1s", "start=abc", "hz 0", "warp 9"} {
		cmd := exec.Command(filepath.Join(Peers(t), "clockpub_cyclone"), "--dry-run", "--script", script)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitUsage || !strings.Contains(string(out), "bad script statement") {
			t.Errorf("script %q: err %v, output %q; want exit 2 naming the bad statement", script, err, out)
		}
	}
}

func TestInNamespaceMatchesInterfaces(t *testing.T) {
	// Outside netns a machine always has a non-loopback interface; inside
	// there is only lo. Either way InNamespace must agree with `ip`.
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Skip("no ip command")
	}
	onlyLo := true
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] != "lo:" {
			onlyLo = false
		}
	}
	if InNamespace() != onlyLo {
		t.Errorf("InNamespace() = %v, ip link says only lo = %v", InNamespace(), onlyLo)
	}
}

var throughputLine = regexp.MustCompile(`^(cyclone|fastdds) reliable throughput size=64 depth=0 duration_s=[0-9.]+ ` +
	`sent=(\d+) sent_msgs_per_s=\d+ received=(\d+) lost=(-?\d+) recv_msgs_per_s=\d+ recv_MB_per_s=[0-9.]+ recv_Mbit_per_s=[0-9.]+$`)

// A short RELIABLE KEEP_ALL flood: the report protocol works across
// vendors and nothing is lost.
func TestPingPongThroughputPairs(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			pong := Start(t, "pingpong_"+pr.sub, "pong", "--domain", d(dom), "--depth", "0")
			ping := Start(t, "pingpong_"+pr.pub, "ping", "--domain", d(dom), "--depth", "0", "--mode", "throughput",
				"--duration", "0.5", "--wait-timeout", "20")
			if code, err := ping.Wait(60 * time.Second); err != nil || code != 0 {
				t.Fatalf("ping: exit %d, %v", code, err)
			}
			if code, err := pong.Wait(10 * time.Second); err != nil || code != 0 {
				t.Errorf("pong did not quit on request: exit %d, %v", code, err)
			}
			lines := ping.Lines()
			if len(lines) != 1 {
				t.Fatalf("ping printed %d lines, want 1: %q", len(lines), lines)
			}
			m := throughputLine.FindStringSubmatch(lines[0])
			if m == nil || m[1] != pr.pub || m[2] != m[3] || m[4] != "0" || m[2] == "0" {
				t.Fatalf("result line %q: want %s, sent = received > 0, lost=0", lines[0], pr.pub)
			}
			t.Log(lines[0])
		})
	}
}
