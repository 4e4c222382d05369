package interop

// Go nodes on Zenoh (RMW_IMPLEMENTATION=rmw_zenoh_cpp) next to the
// rmw_zenoh-shaped zenoh-pico peers that interop/build.sh builds, peer to peer over loopback TCP (one
// side listening, the other connecting, both ways), and Go to Go.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw/zenoh"
	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/ros"
)

// zenohEnv is the environment of a Go program on Zenoh: rmw_zenoh's
// variables, listening on or connecting to one loopback endpoint and
// nothing else, no router check.
func zenohEnv(listen, connect string) []string {
	var env []string
	for _, kv := range os.Environ() {
		for _, drop := range []string{"NROS_TRANSPORT=", "ROS_DOMAIN_ID=", "RMW_IMPLEMENTATION=", "ZENOH_"} {
			if strings.HasPrefix(kv, drop) {
				kv = ""
				break
			}
		}
		if kv != "" {
			env = append(env, kv)
		}
	}
	q := func(e string) string {
		if e == "" {
			return "[]"
		}
		return `["` + e + `"]`
	}
	return append(env, "RMW_IMPLEMENTATION=rmw_zenoh_cpp", "ROS_DOMAIN_ID=0", "ZENOH_ROUTER_CHECK_ATTEMPTS=-1",
		"ZENOH_CONFIG_OVERRIDE=listen/endpoints="+q(listen)+";connect/endpoints="+q(connect))
}

var exampleBuilds sync.Map // name -> *exampleBuild

type exampleBuild struct {
	once sync.Once
	path string
	err  error
}

// exampleBinary builds examples/<name> once per test process.
func exampleBinary(t testing.TB, name string) string {
	t.Helper()
	if name == "simtimer" {
		return simtimerBinary(t)
	}
	v, _ := exampleBuilds.LoadOrStore(name, &exampleBuild{})
	b := v.(*exampleBuild)
	b.once.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("nros-interop-%d", os.Getuid()))
		if b.err = os.MkdirAll(dir, 0o755); b.err != nil {
			return
		}
		tmp := filepath.Join(dir, fmt.Sprintf("%s.%d", name, os.Getpid()))
		out, err := exec.Command("go", "build", "-o", tmp, "github.com/nros-go/nros/examples/"+name).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build examples/%s: %v\n%s", name, err, out)
			return
		}
		b.path = filepath.Join(dir, name)
		b.err = os.Rename(tmp, b.path)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// startGoZenoh runs a Go program (an example's binary, or nros) on Zenoh.
func startGoZenoh(t testing.TB, bin string, env []string, args ...string) *goProc {
	t.Helper()
	RequireNamespace(t)
	p := &goProc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
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
			t.Logf("%s %v stdout (%d bytes):\n%s\nstderr:\n%s", filepath.Base(bin), args, len(p.stdout()), tailText(p.stdout(), 2000), p.stderr())
		}
	})
	return p
}

var picoUpLine = regexp.MustCompile(`zid [0-9a-f]+ (publishing on|subscribed to|serving) `)

// picoUp waits until a zenoh-pico peer's session is open (its "zid …"
// line). A pico that listens must be up before anything connects to it:
// zenoh-pico 1.7.2 starts its accept task inside z_open, and a connection
// that arrives at that instant crashes it (SIGSEGV in
// _z_unicast_handshake_listen; seen about once in 50 starts with a Go node
// connecting and retrying from before).
func picoUp(t *testing.T, p *Proc) {
	t.Helper()
	if err := p.WaitStderrMatch(picoUpLine, 20*time.Second); err != nil {
		t.Fatalf("zenoh-pico peer not up: %v", err)
	}
}

// waitRunning waits for simtimer's first log line: its node, and so its
// zenoh session and listener, exist.
func waitRunning(t testing.TB, p *goProc) {
	t.Helper()
	if !waitFor(20*time.Second, func() bool { return strings.Contains(p.stderr(), "running use_sim_time=") }) {
		t.Fatalf("simtimer did not start: %s", p.stderr())
	}
}

func tailText(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestZenohPicoClockToSimtimer: a zenoh-pico /clock publisher (shaped like
// nano-ros's) drives examples/simtimer on rmw_zenoh's wire through pause,
// 2x, both jumps, 1x and 0.5x (simScriptHalf: the DDS clock tests' script
// and 0.5x), peer to peer with no router, the pico listening and the Go
// node connecting, and the reverse; skip and catch_up; the ROS timer
// matches the model of the samples pico published, as on DDS.
func TestZenohPicoClockToSimtimer(t *testing.T) {
	RequireZenohPeers(t)
	simtimerBinary(t)
	for _, dir := range []string{"pico-listens", "go-listens"} {
		for _, catchUp := range []bool{false, true} {
			// one at a time: four 100 Hz publishers and timers at once
			// starve a loaded 2-core machine (as -race makes it)
			t.Run(fmt.Sprintf("%s/catch_up=%v", dir, catchUp), func(t *testing.T) {
				ep := LoopbackTCP(FreeTCPPort(t))
				policy := "skip"
				if catchUp {
					policy = "catch_up"
				}
				var env []string
				pubArgs := []string{"--mode", "peer", "--domain", "0", "--script", simScriptHalf, "--hz", "100",
					"--wait-subs", "1", "--wait-timeout", "30", "--settle", "0.5", "--open-timeout", "20"}
				if dir == "pico-listens" {
					env = zenohEnv("", ep)
					pubArgs = append(pubArgs, "--listen", ep)
				} else {
					env = zenohEnv(ep, "")
					pubArgs = append(pubArgs, "--connect", ep)
				}
				var pub *Proc
				if dir == "pico-listens" {
					pub = Start(t, "zclockpub", pubArgs...)
					picoUp(t, pub)
				}
				st := startGoZenoh(t, exampleBinary(t, "simtimer"), env, "--ros-args", "-p", "use_sim_time:=true",
					"-p", "overrun:="+policy, "-p", "duration_s:=60")
				if dir == "go-listens" {
					waitRunning(t, st) // the Go node listens
					pub = Start(t, "zclockpub", pubArgs...)
				}
				checkPicoClock(t, pub, st, catchUp)
			})
		}
	}
}

// checkPicoClock waits for zclockpub (playing simScriptHalf) to finish and
// checks simtimer's ROS timer against the model of what it published.
func checkPicoClock(t *testing.T, pub *Proc, st *goProc, catchUp bool) {
	t.Helper()
	if code, err := pub.Wait(45 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub: exit %d, %v\n%s", code, err, pub.Stderr())
	}
	samples := parseClockpub(t, pub.Lines())
	if len(samples) != 730 {
		t.Fatalf("zclockpub published %d samples, want 730", len(samples))
	}
	checkSimtimerScript(t, simScriptHalf, samples, st, catchUp)
}

// zenohDefaultEnv is the environment of a Go program that selects Zenoh
// as a ROS 2 user does, RMW_IMPLEMENTATION=rmw_zenoh_cpp and nothing else:
// rmw_zenoh's default configuration (peer mode, connect tcp/localhost:7447,
// listen tcp/localhost:0, no multicast scouting, the router check).
func zenohDefaultEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, drop := range []string{"NROS_TRANSPORT=", "ROS_DOMAIN_ID=", "RMW_IMPLEMENTATION=", "ZENOH_"} {
			keep = keep && !strings.HasPrefix(kv, drop)
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env, "RMW_IMPLEMENTATION=rmw_zenoh_cpp")
}

// startZenohd runs `nros zenohd` with its default listener
// (tcp/127.0.0.1:7447: the port rmw_zenoh's default configuration
// connects to; the test's namespace is its own) and waits until it is up.
func startZenohd(t *testing.T, args ...string) *goProc {
	t.Helper()
	zd := startNros(t, 0, append([]string{"zenohd"}, args...)...)
	if !waitFor(15*time.Second, func() bool { return strings.Contains(zd.stderr(), `msg="zenoh router up"`) }) {
		t.Fatalf("nros zenohd did not start: %s", zd.stderr())
	}
	return zd
}

// TestZenohdPicoClientClockToSimtimer: nano-ros's arrangement. A zenoh-pico
// /clock publisher in client mode -> `nros zenohd` -> examples/simtimer
// with RMW_IMPLEMENTATION=rmw_zenoh_cpp, use_sim_time true and rmw_zenoh's
// default configuration (no ZENOH_* variable: a peer that finds the router
// on tcp/localhost:7447). The ROS timer follows the clock through pause,
// 2x, both jumps, 1x and 0.5x, skip and catch_up, as the model of the
// published samples says (as on DDS).
func TestZenohdPicoClientClockToSimtimer(t *testing.T) {
	RequireZenohPeers(t)
	simtimerBinary(t)
	for _, catchUp := range []bool{false, true} {
		t.Run(fmt.Sprintf("catch_up=%v", catchUp), func(t *testing.T) {
			zd := startZenohd(t)
			policy := "skip"
			if catchUp {
				policy = "catch_up"
			}
			st := startGoZenoh(t, exampleBinary(t, "simtimer"), zenohDefaultEnv(), "--ros-args", "-p", "use_sim_time:=true",
				"-p", "overrun:="+policy, "-p", "duration_s:=60")
			waitRunning(t, st)
			pub := Start(t, "zclockpub", "--mode", "client", "--connect", "tcp/127.0.0.1:7447", "--domain", "0",
				"--script", simScriptHalf, "--hz", "100", "--wait-subs", "1", "--wait-timeout", "30", "--settle", "0.5",
				"--open-timeout", "20")
			checkPicoClock(t, pub, st, catchUp)
			if strings.Contains(st.stderr(), "Unable to connect to a Zenoh router") {
				t.Errorf("simtimer warned that no router answered although nros zenohd ran:\n%s", st.stderr())
			}
			if n := strings.Count(zd.stderr(), `msg="face up"`); n < 2 {
				t.Errorf("the router saw %d faces, want the pico client and the Go peer:\n%s", n, zd.stderr())
			}
		})
	}
}

var picoSample = regexp.MustCompile(`^sample recv=\d+ seq=(\d+) ts=(\d+) gid=([0-9a-f]{32}) att=(\d+) cdr=(\S+) key=(\S+) data=(.*)$`)

// TestZenohTalkerToPico: examples/talker on Zenoh reaches a zenoh-pico
// subscriber on the exact key rmw_zenoh uses, with valid attachments
// (sequence numbers from 1 without gaps, one gid: the XXH3 of the talker's
// publisher token, which a liveliness watcher sees byte-equal to
// rmw_zenoh's format); the pico connecting to the Go node.
func TestZenohTalkerToPico(t *testing.T) {
	RequireZenohPeers(t)
	ep := LoopbackTCP(FreeTCPPort(t))
	talker := startGoZenoh(t, exampleBinary(t, "talker"), zenohEnv(ep, ""), "--ros-args", "-p", "period_ms:=100")
	time.Sleep(500 * time.Millisecond)
	watch := Start(t, "zlivewatch", "--mode", "peer", "--connect", ep, "--domain", "0", "--duration", "4")
	sub := Start(t, "zchattersub", "--mode", "peer", "--connect", ep, "--domain", "0", "--hash", "exact", "--count", "5", "--timeout", "20")
	if code, err := sub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub: exit %d, %v", code, err)
	}
	var gid string
	var seqs []string
	for _, l := range sub.Lines() {
		m := picoSample.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[4] != "33" || m[5] != "ok" || m[6] != "0/chatter/std_msgs::msg::dds_::String_/"+ros.DistroJazzy.TypeHash("RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18") ||
			!strings.HasPrefix(m[7], "Hello World: ") {
			t.Fatalf("sample %q", l)
		}
		if gid != "" && m[3] != gid {
			t.Fatalf("two gids: %s %s", gid, m[3])
		}
		gid = m[3]
		seqs = append(seqs, m[1])
	}
	if len(seqs) < 5 {
		t.Fatalf("%d samples: %q", len(seqs), sub.Lines())
	}
	if !strings.Contains(lastLine(strings.Join(sub.Lines(), "\n")), "bad_att=0 bad_cdr=0 seq_nonincreasing=0 seq_gaps=0 gids=1") {
		t.Fatalf("summary %q", lastLine(strings.Join(sub.Lines(), "\n")))
	}
	if code, err := watch.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("zlivewatch: exit %d, %v", code, err)
	}
	// The talker's tokens as the watcher saw them: each parses as
	// rmw_zenoh's and rebuilds to the same bytes; the publisher's hashes
	// to the gid on the samples.
	var pubTok string
	kinds := map[string]int{}
	for _, l := range watch.Lines() {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "token" || (f[1] != "put" && f[1] != "get") || !strings.Contains(f[2], "/talker") {
			continue
		}
		e, err := ros.ParseToken(f[2])
		if err != nil {
			t.Fatalf("token %q: %v", f[2], err)
		}
		if again, err := e.Token(); err != nil || again != f[2] {
			t.Fatalf("token %q rebuilds as %q (%v)", f[2], again, err)
		}
		kinds[e.Kind.String()]++
		if e.Kind == ros.KindPublisher && e.Topic == "/chatter" {
			pubTok = f[2]
		}
	}
	if kinds["NN"] == 0 || kinds["SS"] < 6 || pubTok == "" {
		t.Fatalf("talker tokens by kind %v (publisher %q):\n%s", kinds, pubTok, strings.Join(watch.Lines(), "\n"))
	}
	if want := ros.TokenGID(pubTok); fmt.Sprintf("%x", want) != gid {
		t.Fatalf("samples carry gid %s, the publisher token %q hashes to %x", gid, pubTok, want)
	}
	if code, err := talker.interrupt(5 * time.Second); err != nil || code != 0 {
		t.Fatalf("talker: exit %d, %v", code, err)
	}
}

// TestZenohPicoToListener: a zenoh-pico publisher reaches examples/listener
// on Zenoh (the Go node connecting to the listening pico).
func TestZenohPicoToListener(t *testing.T) {
	RequireZenohPeers(t)
	ep := LoopbackTCP(FreeTCPPort(t))
	pub := Start(t, "zchatterpub", "--mode", "peer", "--listen", ep, "--domain", "0", "--count", "20", "--hz", "10",
		"--wait-subs", "1", "--wait-timeout", "20")
	picoUp(t, pub)
	lis := startGoZenoh(t, exampleBinary(t, "listener"), zenohEnv("", ep))
	if code, err := pub.Wait(40 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchatterpub: exit %d, %v\n%s", code, err, pub.Stderr())
	}
	if !waitFor(5*time.Second, func() bool { return strings.Count(lis.stderr(), "I heard: [") >= 15 }) {
		t.Fatalf("listener heard %d of 20", strings.Count(lis.stderr(), "I heard: ["))
	}
	if code, err := lis.interrupt(5 * time.Second); err != nil || code != 0 {
		t.Fatalf("listener: exit %d, %v", code, err)
	}
}

// TestZenohGraphCLI: nros node list and topic list -t on Zenoh list a
// zenoh-pico node's tokens.
func TestZenohGraphCLI(t *testing.T) {
	RequireZenohPeers(t)
	ep := LoopbackTCP(FreeTCPPort(t))
	picoUp(t, Start(t, "zchattersub", "--mode", "peer", "--listen", ep, "--domain", "0", "--timeout", "30", "--quiet"))
	nodes := startGoZenoh(t, nrosBinary(t), zenohEnv("", ep), "node", "list")
	if code, err := nodes.wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("nros node list: exit %d, %v", code, err)
	}
	if !strings.Contains(nodes.stdout(), "/zchattersub\n") {
		t.Fatalf("node list:\n%s", nodes.stdout())
	}
	topics := startGoZenoh(t, nrosBinary(t), zenohEnv("", ep), "topic", "list", "-t")
	if code, err := topics.wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("nros topic list -t: exit %d, %v", code, err)
	}
	if !strings.Contains(topics.stdout(), "/chatter [std_msgs/msg/String]") {
		t.Fatalf("topic list -t:\n%s", topics.stdout())
	}
}

// TestZenohParamSetTurnsSimTimeOn: Go to Go over Zenoh, services and
// parameters: nros param set /simtimer use_sim_time true on a Zenoh graph
// turns sim time on, and a zenoh-pico /clock then drives the timer.
func TestZenohParamSetTurnsSimTimeOn(t *testing.T) {
	RequireZenohPeers(t)
	ep := LoopbackTCP(FreeTCPPort(t))
	st := startGoZenoh(t, exampleBinary(t, "simtimer"), zenohEnv(ep, ""), "--ros-args", "-p", "duration_s:=60")
	waitRunning(t, st)
	set := startGoZenoh(t, nrosBinary(t), zenohEnv("", ep), "param", "set", "--timeout", "15s", "/simtimer", "use_sim_time", "true")
	if code, err := set.wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("nros param set: exit %d, %v", code, err)
	}
	if !strings.Contains(set.stdout(), "Set parameter successful") {
		t.Fatalf("param set said %q", set.stdout())
	}
	get := startGoZenoh(t, nrosBinary(t), zenohEnv("", ep), "param", "get", "--timeout", "15s", "/simtimer", "use_sim_time")
	if code, err := get.wait(20 * time.Second); err != nil || code != 0 || !strings.Contains(get.stdout(), "True") {
		t.Fatalf("nros param get: exit %d, %v: %q", code, err, get.stdout())
	}
	pub := Start(t, "zclockpub", "--mode", "peer", "--connect", ep, "--domain", "0", "--script", "start=500;play 1x 1s",
		"--hz", "100", "--wait-subs", "1", "--wait-timeout", "20")
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub: exit %d, %v", code, err)
	}
	if !waitFor(3*time.Second, func() bool { return strings.Contains(st.stdout(), " 500500000000 ") }) {
		t.Fatalf("simtimer never fired at sim time 500.5 s")
	}
	if code, err := st.interrupt(5 * time.Second); err != nil || code != 0 {
		t.Fatalf("simtimer: exit %d, %v", code, err)
	}
	tl := parseSimtimer(t, st.stdout())
	if len(tl.ros) < 8 || tl.ros[0].ros != 500*int64(time.Second)+100*int64(time.Millisecond) {
		t.Fatalf("ROS timer on the pico clock: %v", tl.ros)
	}
}

// newZenohGoNode starts a Go node on Zenoh in this process: a peer that
// listens on listen and connects to connect (loopback endpoints, either
// may be ""), no router check.
func newZenohGoNode(t *testing.T, name, listen, connect string) *goNode {
	t.Helper()
	RequireNamespace(t)
	zc := config.Default()
	eps := func(s string) []config.Endpoint {
		if s == "" {
			return []config.Endpoint{}
		}
		e, err := config.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		return []config.Endpoint{e}
	}
	zc.Listen.Endpoints, zc.Connect.Endpoints = config.Unique(eps(listen)), config.Unique(eps(connect))
	tr, err := zenoh.New(zenoh.Config{Zenoh: zc, Warnf: t.Logf})
	if err != nil {
		t.Fatalf("zenoh.New: %v", err)
	}
	g := &goNode{ztr: tr, ctx: nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))}
	if g.node, err = nros.NewNode(name, nros.WithContext(g.ctx), nros.WithoutGlobalArguments()); err != nil {
		tr.Close()
		t.Fatalf("NewNode: %v", err)
	}
	t.Cleanup(g.close)
	return g
}

var picoRequest = regexp.MustCompile(`^request seq=(\d+) ts=(\d+) gid=([0-9a-f]{32}) att=33 data=([01]) dup=0$`)

// TestZenohGoClientToPicoServer: a zenoh-pico queryable shaped as
// rmw_zenoh's service server (zsvcserver: std_srvs/SetBool, SS token)
// answers a Go client: the client finds the server in the graph by its
// token, each request carries the client's sequence number (1, 2, 3) and
// gid in its attachment, and the replies, which carry them back, reach the
// calls they answer. Both directions of the connection.
func TestZenohGoClientToPicoServer(t *testing.T) {
	RequireZenohPeers(t)
	for _, dir := range []string{"pico-listens", "go-listens"} {
		t.Run(dir, func(t *testing.T) {
			ep := LoopbackTCP(FreeTCPPort(t))
			args := []string{"--mode", "peer", "--domain", "0", "--service", "/set_flag", "--count", "3", "--timeout", "40",
				"--label", "pico"}
			var srv *Proc
			var g *goNode
			if dir == "pico-listens" {
				srv = Start(t, "zsvcserver", append(args, "--listen", ep)...)
				picoUp(t, srv)
				g = newZenohGoNode(t, "go_client", "", ep)
			} else {
				g = newZenohGoNode(t, "go_client", ep, "")
				srv = Start(t, "zsvcserver", append(args, "--connect", ep)...)
			}
			cl, err := nros.NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](g.node, "set_flag")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := cl.WaitForService(ctx); err != nil {
				t.Fatalf("the pico server never appeared in the graph: %v", err)
			}
			for i := 1; i <= 3; i++ {
				resp, err := cl.Call(ctx, &std_srvs.SetBool_Request{Data: i%2 == 1})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				want := fmt.Sprintf("pico %v", i%2 == 1)
				if resp.Success != (i%2 == 1) || resp.Message != want {
					t.Fatalf("call %d: %+v, want message %q", i, resp, want)
				}
			}
			if code, err := srv.Wait(20 * time.Second); err != nil || code != 0 {
				t.Fatalf("zsvcserver: exit %d, %v\n%s", code, err, srv.Stderr())
			}
			var gid string
			n := 0
			for _, l := range srv.Lines() {
				if strings.HasPrefix(l, "summary ") {
					if l != "summary answered=3 dropped=0" {
						t.Fatalf("zsvcserver: %s", l)
					}
					continue
				}
				m := picoRequest.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("zsvcserver saw %q", l)
				}
				n++
				if m[1] != fmt.Sprint(n) || m[4] != map[bool]string{true: "1", false: "0"}[n%2 == 1] {
					t.Fatalf("request %d: %q", n, l)
				}
				if gid != "" && m[3] != gid {
					t.Fatalf("two client gids: %s %s", gid, m[3])
				}
				gid = m[3]
			}
			if n != 3 {
				t.Fatalf("zsvcserver saw %d requests:\n%s", n, strings.Join(srv.Lines(), "\n"))
			}
		})
	}
}
