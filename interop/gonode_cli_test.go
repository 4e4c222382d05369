package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The nros CLI over DDSI-RTPS against the peers: `nros bench pingpong`
// pairs with the peers' pingpong both ways, and `nros clock` feeds a peer's
// clocksub the script's samples.

var nrosBuild struct {
	once sync.Once
	path string
	err  error
}

// nrosBinary builds cmd/nros once per test process, as simtimerBinary does.
func nrosBinary(t testing.TB) string {
	t.Helper()
	nrosBuild.once.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("nros-interop-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			nrosBuild.err = err
			return
		}
		tmp := filepath.Join(dir, fmt.Sprintf("nros.%d", os.Getpid()))
		out, err := exec.Command("go", "build", "-o", tmp, "github.com/nros-go/nros/cmd/nros").CombinedOutput()
		if err != nil {
			nrosBuild.err = fmt.Errorf("go build cmd/nros: %v\n%s", err, out)
			return
		}
		nrosBuild.path = filepath.Join(dir, "nros")
		nrosBuild.err = os.Rename(tmp, nrosBuild.path)
	})
	if nrosBuild.err != nil {
		t.Fatal(nrosBuild.err)
	}
	return nrosBuild.path
}

// startNros runs `nros args...` in domain dom over DDS (NROS_TRANSPORT
// removed from its environment).
func startNros(t testing.TB, dom int, args ...string) *goProc {
	t.Helper()
	RequireNamespace(t)
	p := &goProc{done: make(chan struct{})}
	p.cmd = exec.Command(nrosBinary(t), args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NROS_TRANSPORT=") && !strings.HasPrefix(kv, "ROS_DOMAIN_ID=") {
			env = append(env, kv)
		}
	}
	p.cmd.Env = append(env, "ROS_DOMAIN_ID="+strconv.Itoa(dom))
	p.cmd.Stdout = lockedWriter{&p.mu, &p.out}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.errb}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("nros %v stdout:\n%s\nstderr:\n%s", args, p.stdout(), p.stderr())
		}
	})
	return p
}

// wait waits up to timeout for the exit code.
func (p *goProc) wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("no exit after %v", timeout)
	}
}

var goLatencyLine = regexp.MustCompile(`^go reliable size=64 samples=300 lost=0 rtt_us `)

func TestGoPingPongWithPeers(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	nrosBinary(t)
	for _, vendor := range Vendors {
		t.Run("go_ping_"+vendor+"_pong", func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			pong := Start(t, "pingpong_"+vendor, "pong", "--domain", d(dom))
			ping := startNros(t, dom, "bench", "pingpong", "ping", "--count", "300", "--warmup", "50", "--wait-timeout", "20")
			if code, err := ping.wait(60 * time.Second); err != nil || code != 0 {
				t.Fatalf("nros ping: exit %d, %v", code, err)
			}
			if code, err := pong.Wait(10 * time.Second); err != nil || code != 0 {
				t.Errorf("%s pong did not quit on request: exit %d, %v", vendor, code, err)
			}
			if out := strings.TrimSpace(ping.stdout()); !goLatencyLine.MatchString(out) {
				t.Fatalf("nros ping printed %q", out)
			}
		})
		t.Run(vendor+"_ping_go_pong", func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			pong := startNros(t, dom, "bench", "pingpong", "pong")
			ping := Start(t, "pingpong_"+vendor, "ping", "--domain", d(dom), "--count", "300", "--warmup", "50", "--wait-timeout", "20")
			if code, err := ping.Wait(60 * time.Second); err != nil || code != 0 {
				t.Fatalf("%s ping: exit %d, %v", vendor, code, err)
			}
			if code, err := pong.wait(10 * time.Second); err != nil || code != 0 {
				t.Errorf("nros pong did not quit on request: exit %d, %v", code, err)
			}
			lines := ping.Lines()
			if len(lines) != 1 || !strings.Contains(lines[0], " samples=300 lost=0 ") {
				t.Fatalf("%s ping printed %q", vendor, lines)
			}
		})
	}
}

// TestGoClockToPeers: `nros clock` publishes clockScript; the peer's
// clocksub receives the samples nros says it published, in order (best
// effort: up to 2 may be missed on a busy machine, as between
// the peers themselves).
func TestGoClockToPeers(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	nrosBinary(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			sub := Start(t, "clocksub_"+vendor, "--domain", d(dom), "--depth", "1000", "--count", "138", "--timeout", "30")
			pub := startNros(t, dom, "clock", "--hz", "100", "--script", clockScript, "--wait-subs", "1", "--wait-timeout", "20")
			if code, err := pub.wait(40 * time.Second); err != nil || code != 0 {
				t.Fatalf("nros clock: exit %d, %v", code, err)
			}
			if code, err := sub.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("clocksub: exit %d, %v (%d lines)", code, err, len(sub.Lines()))
			}
			var pubSim, subSim []int64
			for _, l := range strings.Split(strings.TrimSpace(pub.stdout()), "\n") {
				var wall, sim int64
				if _, err := fmt.Sscanf(l, "clock %d %d", &wall, &sim); err != nil {
					t.Fatalf("nros clock line %q", l)
				}
				pubSim = append(pubSim, sim)
			}
			for _, l := range sub.Lines() {
				var wall, sec, nsec int64
				if _, err := fmt.Sscan(l, &wall, &sec, &nsec); err != nil {
					t.Fatalf("clocksub line %q", l)
				}
				subSim = append(subSim, sec*1e9+nsec)
			}
			if len(pubSim) != 140 || len(subSim) != 138 {
				t.Fatalf("published %d, received %d", len(pubSim), len(subSim))
			}
			j := 0
			for i, v := range subSim {
				for j < len(pubSim) && pubSim[j] != v {
					j++
				}
				if j == len(pubSim) || j-i > 2 {
					t.Fatalf("received sample %d (%d ns) out of order or too many missing", i, v)
				}
				j++
			}
		})
	}
}
