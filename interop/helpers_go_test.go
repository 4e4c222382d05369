package interop

// Helpers for the tests that put a Go node (package nros over rmw/rtps)
// next to the real peers: a Go participant in the test process, the
// examples/simtimer binary as a separate process, and the reference model
// of a ROS-time timer that the simtimer output is checked against.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw/rtps"
	"github.com/nros-go/nros/rmw/zenoh"
)

// goNode is a Go participant of the domain (one rtps.Transport), one
// context on it, one node and, once spin is called, an executor.
type goNode struct {
	tr   *rtps.Transport
	ztr  *zenoh.Transport // instead of tr: a node on Zenoh (newZenohGoNode)
	ctx  *nros.Context
	node *nros.Node
	stop func()
}

// newGoNode starts a Go participant in domain dom. Everything is closed when
// the test ends (or earlier by close).
func newGoNode(t testing.TB, dom int, name string, opts ...nros.NodeOption) *goNode {
	t.Helper()
	RequireNamespace(t)
	tr, err := rtps.New(rtps.Config{DomainID: dom})
	if err != nil {
		t.Fatalf("rtps.New(domain %d): %v", dom, err)
	}
	g := &goNode{tr: tr, ctx: nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))}
	opts = append([]nros.NodeOption{nros.WithContext(g.ctx), nros.WithoutGlobalArguments()}, opts...)
	if g.node, err = nros.NewNode(name, opts...); err != nil {
		tr.Close()
		t.Fatalf("NewNode: %v", err)
	}
	t.Cleanup(g.close)
	return g
}

// spin runs an executor for the node until close.
func (g *goNode) spin() {
	ex := nros.NewExecutor(nros.WithExecutorContext(g.ctx))
	ex.AddNode(g.node)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ex.Spin(c) }()
	g.stop = func() { cancel(); <-done }
}

// close stops the executor and closes node, context and transport, in that
// order. Idempotent.
func (g *goNode) close() {
	if g.tr == nil && g.ztr == nil {
		return
	}
	if g.stop != nil {
		g.stop()
	}
	g.node.Close()
	g.ctx.Shutdown()
	if g.tr != nil {
		g.tr.Close()
	} else {
		g.ztr.Close()
	}
	g.tr, g.ztr = nil, nil
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// ---- examples/simtimer as a process ---------------------------------------

var simtimerBuild struct {
	once sync.Once
	path string
	err  error
}

// simtimerBinary builds examples/simtimer once per test process (into a
// per-user temp directory; the file is replaced atomically on every run).
func simtimerBinary(t testing.TB) string {
	t.Helper()
	simtimerBuild.once.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("nros-interop-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			simtimerBuild.err = err
			return
		}
		tmp := filepath.Join(dir, fmt.Sprintf("simtimer.%d", os.Getpid()))
		out, err := exec.Command("go", "build", "-o", tmp, "github.com/nros-go/nros/examples/simtimer").CombinedOutput()
		if err != nil {
			simtimerBuild.err = fmt.Errorf("go build examples/simtimer: %v\n%s", err, out)
			return
		}
		simtimerBuild.path = filepath.Join(dir, "simtimer")
		simtimerBuild.err = os.Rename(tmp, simtimerBuild.path)
	})
	if simtimerBuild.err != nil {
		t.Fatal(simtimerBuild.err)
	}
	return simtimerBuild.path
}

// goProc is a Go program run by a test (not a peer: it needs no vendor
// config), with stdout and stderr collected.
type goProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	errb bytes.Buffer
	done chan struct{}
	err  error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startSimtimer runs the simtimer binary in domain dom with the given ROS
// arguments (after --ros-args). NROS_TRANSPORT is removed from its
// environment so that it uses DDS.
func startSimtimer(t testing.TB, dom int, rosArgs ...string) *goProc {
	t.Helper()
	return startSimtimerEnv(t, dom, nil, rosArgs...)
}

// startSimtimerEnv is startSimtimer with more environment ("K=V").
func startSimtimerEnv(t testing.TB, dom int, extraEnv []string, rosArgs ...string) *goProc {
	t.Helper()
	return startGoBinEnv(t, simtimerBinary(t), dom, extraEnv, rosArgs...)
}

// startGoBinEnv runs the Go program bin with --ros-args rosArgs in domain
// dom, with more environment ("K=V").
func startGoBinEnv(t testing.TB, bin string, dom int, extraEnv []string, rosArgs ...string) *goProc {
	t.Helper()
	RequireNamespace(t)
	p := &goProc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"--ros-args"}, rosArgs...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NROS_TRANSPORT=") && !strings.HasPrefix(kv, "ROS_DOMAIN_ID=") {
			env = append(env, kv)
		}
	}
	p.cmd.Env = append(append(env, "ROS_DOMAIN_ID="+strconv.Itoa(dom)), extraEnv...)
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
			t.Logf("simtimer %v stderr:\n%s", rosArgs, p.stderr())
		}
	})
	return p
}

// interrupt sends SIGINT and waits up to timeout for the exit code.
func (p *goProc) interrupt(timeout time.Duration) (int, error) {
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		return -1, fmt.Errorf("no exit %v after SIGINT", timeout)
	}
	return p.cmd.ProcessState.ExitCode(), nil
}

func (p *goProc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *goProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

// ---- simtimer and clockpub lines ------------------------------------------

// fire is one activation of the ROS-time timer: the ROS time it printed and
// the overrun count at that moment.
type fire struct {
	ros      int64
	overruns uint64
}

func (f fire) String() string { return fmt.Sprintf("%d.%09d/%d", f.ros/1e9, f.ros%1e9, f.overruns) }

// timerLines holds simtimer's output split by kind.
type timerLines struct {
	ros      []fire  // lines of the ROS timer whose time is simulated
	rosWall  []int64 // their wall instants
	sysFires int     // ROS-timer lines on system time (before the first sample)
	wall     []int64 // wall instants of the wall timer
}

// simRange separates simulated times (the scripts stay below 10^6 s) from
// system times (Unix ns, above 10^18).
const simRange = int64(1e6) * int64(time.Second)

func parseSimtimer(t *testing.T, out string) timerLines {
	t.Helper()
	var tl timerLines
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		nums := make([]int64, len(f)-1)
		for i, s := range f[1:] {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("simtimer line %q: %v", l, err)
			}
			nums[i] = v
		}
		switch {
		case f[0] == "ros" && len(nums) == 3:
			if nums[1] >= simRange {
				if len(tl.ros) > 0 {
					t.Fatalf("ROS timer on system time after the first /clock sample: %q", l)
				}
				tl.sysFires++
				continue
			}
			tl.ros = append(tl.ros, fire{nums[1], uint64(nums[2])})
			tl.rosWall = append(tl.rosWall, nums[0])
		case f[0] == "wall" && len(nums) == 2:
			tl.wall = append(tl.wall, nums[0])
		default:
			t.Fatalf("bad simtimer line %q", l)
		}
	}
	return tl
}

// clockSample is one line of clockpub: when it was written and what it said.
type clockSample struct{ wall, sim int64 }

func parseClockpub(t *testing.T, lines []string) []clockSample {
	t.Helper()
	out := make([]clockSample, 0, len(lines))
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("bad clockpub line %q", l)
		}
		w, e1 := strconv.ParseInt(f[0], 10, 64)
		s, e2 := strconv.ParseInt(f[1], 10, 64)
		ns, e3 := strconv.ParseInt(f[2], 10, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			t.Fatalf("bad clockpub line %q", l)
		}
		out = append(out, clockSample{w, s*1e9 + ns})
	}
	return out
}

// expectFires is the reference model of a ROS-time timer of the given period
// that follows the samples in order. The first sample replaces system time
// and starts the period there; a sample equal to the previous changes
// nothing; a smaller one restarts the period at it; a larger one fires the
// timer if it reaches the deadline. A backlog of k+1 due deadlines counts k
// overruns and gives one activation (skip) or k+1 activations at that
// sample (catch-up, replayed before the next sample arrives); either way the
// next deadline stays on the grid.
func expectFires(samples []clockSample, period int64, catchUp bool) (fires []fire, at []int) {
	var last, next int64
	var overruns uint64
	for i, s := range samples {
		switch {
		case i == 0 || s.sim < last:
			next = s.sim + period
		case s.sim > last && s.sim >= next:
			behind := (s.sim - next) / period
			overruns += uint64(behind)
			n := int64(1)
			if catchUp {
				n = behind + 1
			}
			for k := int64(0); k < n; k++ {
				fires = append(fires, fire{s.sim, overruns})
				at = append(at, i)
			}
			next += (behind + 1) * period
		}
		last = s.sim
	}
	return fires, at
}

// maxLagSamples is how many samples later than the one that made a
// deadline due the ROS time printed by the timer callback may be: the
// callback reads the clock when it runs, and on a loaded machine further
// samples may have been installed by then (the deadline served and the
// overrun count must still be those of the model).
const maxLagSamples = 5

// matchFires compares the fires of the timer with the model's: the same
// number, the same overrun counts, and each printed ROS time a published
// sample at most maxLagSamples after the model's. It returns the largest
// lag seen.
func matchFires(samples []clockSample, want []fire, at []int, got []fire) (int, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%s", fireDiff(want, got))
	}
	worst := 0
	for i := range want {
		lag := -1
		for j := at[i]; j < len(samples) && j <= at[i]+maxLagSamples; j++ {
			if samples[j].sim == got[i].ros {
				lag = j - at[i]
				break
			}
		}
		if got[i].overruns != want[i].overruns || lag < 0 {
			return 0, fmt.Errorf("fire #%d is %v, want %v (or a sample up to %d later)", i, got[i], want[i], maxLagSamples)
		}
		worst = max(worst, lag)
	}
	return worst, nil
}

func fireDiff(want, got []fire) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		if w != g {
			return fmt.Sprintf("got %d fires, want %d; first difference at #%d: got %q, want %q", len(got), len(want), i, g, w)
		}
	}
	return "no difference"
}

// graphReport describes the Go transport's view for a failure message.
func graphReport(g *goNode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Go participant %x (id %d, meta %v, user %v), remote participants %x\n", g.tr.GuidPrefix(), g.tr.ParticipantID(),
		g.tr.MetaAddr(), g.tr.UserAddr(), g.tr.RemoteParticipants())
	for _, e := range g.tr.Endpoints("") {
		fmt.Fprintf(&b, "  endpoint %s %s pub=%v local=%v gid=%x qos=%+v\n", e.Topic, e.Type, e.Publisher, e.Local, e.GID, e.QoS)
	}
	st := g.tr.Stats()
	fmt.Fprintf(&b, "  stats: datagrams %d bad %d/%d sent %d filtered %d incompatibleQoS %d\n", st.Datagrams, st.BadDatagrams,
		st.BadSubmessages, st.Sent, st.Filtered, st.IncompatibleQoS)
	fmt.Fprintf(&b, "  discovery: %+v", st.Discovery)
	return b.String()
}
