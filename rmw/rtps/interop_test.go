package rtps

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
)

// Interop tests run the reference peers built by
// /work/shared/peers/build.sh. They run only inside a network namespace
// whose only interface is lo:
//
//	NROS_PEERS=/tmp/nros-peers /work/shared/peers/netns go test -run Interop -v ./rmw/rtps
//
// (netns turns multicast on for lo; in a namespace where lo has no
// MULTICAST flag only unicast discovery is possible, which finds Fast DDS
// participants on 7410+2i but not Cyclone ones on ephemeral ports.)
func peers(t *testing.T) string {
	dir := os.Getenv("NROS_PEERS")
	if dir == "" {
		t.Skip("NROS_PEERS not set")
	}
	if !loopbackOnly() {
		t.Skip("interop tests run only in a namespace with lo alone (/work/shared/peers/netns)")
	}
	return dir
}

func loopbackOnly() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, ifi := range ifs {
		if ifi.Name != "lo" {
			return false
		}
	}
	return true
}

type peerProc struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	errb   bytes.Buffer
	done   chan error
	cancel context.CancelFunc
}

func startPeer(t *testing.T, dir, name string, args ...string) *peerProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &peerProc{cancel: cancel, done: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, filepath.Join(dir, name), args...)
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.errb
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

func (p *peerProc) wait(t *testing.T, d time.Duration) error {
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("peer %s did not finish; stderr: %s", p.cmd.Path, p.errb.String())
		return nil
	}
}

func newReal(t *testing.T) *Transport {
	t.Helper()
	tr, err := New(Config{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

var clockQoS = rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}

func testClockFrom(t *testing.T, pubName string) {
	dir := peers(t)
	tr := newReal(t)
	var mu sync.Mutex
	var got []string
	_, err := tr.NewSubscription(rmw.NodeInfo{Name: "gosub", Namespace: "/"}, "/clock", "rosgraph_msgs/msg/Clock", clockQoS, func(s rmw.Sample) {
		var c rosgraph_msgs.Clock
		if err := msg.Unmarshal(s.Data, &c); err != nil {
			t.Errorf("bad clock %x", s.Data)
			return
		}
		mu.Lock()
		got = append(got, fmt.Sprintf("%d %d", c.Clock.Sec, c.Clock.Nanosec))
		mu.Unlock()
	}, rmw.EndpointOptions{OnEvent: func(e rmw.Event) { t.Logf("sub event %+v", e) }})
	if err != nil {
		t.Fatal(err)
	}
	p := startPeer(t, dir, pubName, "--hz", "50", "--wait-subs", "1", "--wait-timeout", "20",
		"--script", "start=100.0;play 1x 1s;jump -5s;play 2x 0.5s")
	if err := p.wait(t, 40*time.Second); err != nil {
		t.Fatalf("%s: %v\n%s", pubName, err, p.errb.String())
	}
	time.Sleep(200 * time.Millisecond)
	var want []string
	sc := bufio.NewScanner(bytes.NewReader(p.out.Bytes()))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 {
			want = append(want, f[1]+" "+f[2])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%s published %d, we received %d; stats %+v", pubName, len(want), len(got), tr.Stats())
	if len(want) == 0 || len(got) < len(want)*9/10 {
		t.Fatalf("received %d of %d\nstderr: %s", len(got), len(want), p.errb.String())
	}
	// in order, a subsequence of what was sent
	i := 0
	for _, g := range got {
		for i < len(want) && want[i] != g {
			i++
		}
		if i == len(want) {
			t.Fatalf("sample %q out of order or unknown", g)
		}
	}
}

func TestInteropClockFromCyclone(t *testing.T) { testClockFrom(t, "clockpub_cyclone") }
func TestInteropClockFromFastDDS(t *testing.T) { testClockFrom(t, "clockpub_fastdds") }

func testClockTo(t *testing.T, subName string) {
	dir := peers(t)
	tr := newReal(t)
	pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "gopub", Namespace: "/"}, "/clock", "rosgraph_msgs/msg/Clock", clockQoS, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	p := startPeer(t, dir, subName, "--count", fmt.Sprint(n), "--timeout", "30")
	deadline := time.Now().Add(20 * time.Second)
	for pub.MatchedSubscriptions() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no match with %s; stats %+v\nstderr: %s", subName, tr.Stats(), p.errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let the remote reader match us too
	for i := 0; i < 3*n; i++ {
		select {
		case <-p.done:
			p.done <- nil
			i = 3 * n
			continue
		default:
		}
		c := rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: int32(100 + i), Nanosec: 5}}
		if err := pub.Publish(msg.Marshal(&c, true, nil)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s\nstats %+v", subName, err, p.out.String(), p.errb.String(), tr.Stats())
	}
	t.Logf("%s: %s", subName, strings.TrimSpace(p.errb.String()))
}

func TestInteropClockToFastDDS(t *testing.T) { testClockTo(t, "clocksub_fastdds") }
func TestInteropClockToCyclone(t *testing.T) { testClockTo(t, "clocksub_cyclone") }

func testChatter(t *testing.T, pubName string, size int) {
	dir := peers(t)
	tr := newReal(t)
	var mu sync.Mutex
	var got []string
	_, err := tr.NewSubscription(rmw.NodeInfo{Name: "gosub", Namespace: "/"}, "/chatter", strType, reliable, func(s rmw.Sample) {
		var m std_msgs.String
		if err := msg.Unmarshal(s.Data, &m); err != nil {
			t.Errorf("bad string %x", s.Data)
			return
		}
		mu.Lock()
		got = append(got, m.Data)
		mu.Unlock()
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--count", "20", "--hz", "50", "--wait-subs", "1", "--wait-timeout", "20"}
	if size > 0 {
		args = append(args, "--size", fmt.Sprint(size))
	}
	p := startPeer(t, dir, pubName, args...)
	// The peer's node shows up from its ros_discovery_info (Humble Gid
	// layout), and owns the writer.
	defer func() {
		if t.Failed() {
			tr.mu.Lock()
			for _, s := range tr.subs {
				if s.internal {
					t.Logf("graph reader %+v", s.r.Stats())
				}
			}
			tr.mu.Unlock()
		}
	}()
	waitUntil(t, "peer node", 5*time.Second, func() bool {
		for _, e := range tr.Endpoints("/chatter") {
			if e.Publisher && e.Node == (rmw.NodeInfo{Name: pubName, Namespace: "/"}) {
				return true
			}
		}
		return false
	})
	t.Logf("graph samples %d", tr.Stats().GraphSamples)
	if !slices.Contains(tr.Nodes(), rmw.NodeInfo{Name: pubName, Namespace: "/"}) {
		t.Errorf("nodes %v", tr.Nodes())
	}
	if err := p.wait(t, 40*time.Second); err != nil {
		t.Fatalf("%s: %v\n%s", pubName, err, p.errb.String())
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 20 {
		t.Fatalf("received %d of 20; stats %+v\nstderr %s", len(got), tr.Stats(), p.errb.String())
	}
	for i, g := range got {
		if !strings.HasPrefix(g, fmt.Sprintf("Hello World: %d", i+1)) || (size > 0 && len(g) != size) {
			t.Fatalf("sample %d = %.40q (len %d)", i, g, len(g))
		}
	}
}

func TestInteropChatterFromCyclone(t *testing.T)      { testChatter(t, "chatter_pub_cyclone", 0) }
func TestInteropChatterFromFastDDS(t *testing.T)      { testChatter(t, "chatter_pub_fastdds", 0) }
func TestInteropChatterFromCycloneLarge(t *testing.T) { testChatter(t, "chatter_pub_cyclone", 100000) }
func TestInteropChatterFromFastDDSLarge(t *testing.T) { testChatter(t, "chatter_pub_fastdds", 100000) }

func testChatterTo(t *testing.T, subName string, size int) {
	dir := peers(t)
	tr := newReal(t)
	pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "gopub", Namespace: "/"}, "/chatter", strType, reliable, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := startPeer(t, dir, subName, "--count", "20", "--timeout", "30")
	deadline := time.Now().Add(20 * time.Second)
	for pub.MatchedSubscriptions() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no match with %s; stats %+v\nstderr: %s", subName, tr.Stats(), p.errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The peer's ros_discovery_info reader (reliable, transient-local)
	// matches our graph writer.
	waitUntil(t, "graph reader match", 10*time.Second, func() bool { return tr.graph.MatchedSubscriptions() >= 1 })
	time.Sleep(300 * time.Millisecond)
	for i := 1; i <= 20; i++ {
		s := fmt.Sprintf("Hello World: %d", i)
		if size > len(s) {
			s += strings.Repeat(".", size-len(s))
		}
		if err := pub.Publish(str(s)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Fatalf("%s: %v\nstdout: %.2000s\nstderr: %s\nstats %+v", subName, err, p.out.String(), p.errb.String(), tr.Stats())
	}
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	for i, l := range lines {
		if !strings.Contains(l, fmt.Sprintf("Hello World: %d", i+1)) {
			t.Fatalf("line %d: %.80q", i, l)
		}
	}
}

func TestInteropChatterToCyclone(t *testing.T)      { testChatterTo(t, "chatter_sub_cyclone", 0) }
func TestInteropChatterToFastDDS(t *testing.T)      { testChatterTo(t, "chatter_sub_fastdds", 0) }
func TestInteropChatterToCycloneLarge(t *testing.T) { testChatterTo(t, "chatter_sub_cyclone", 100000) }
func TestInteropChatterToFastDDSLarge(t *testing.T) { testChatterTo(t, "chatter_sub_fastdds", 100000) }

// testPong runs a Go pong (echo rt/ping to rt/pong) against the peer's
// latency ping and logs the round-trip statistics the peer prints.
func testPong(t *testing.T, pingName string, size, count int, reliableQoS bool) {
	dir := peers(t)
	tr := newReal(t)
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	args := []string{"ping", "--size", fmt.Sprint(size), "--count", fmt.Sprint(count), "--warmup", "50", "--wait-timeout", "20"}
	if !reliableQoS {
		q.Reliability = rmw.BestEffort
		args = append(args, "--best-effort")
	}
	const typ = "nros_bench/msg/Payload"
	pub, err := tr.NewPublisher(rmw.NodeInfo{Name: "gopong", Namespace: "/"}, "/pong", typ, q, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	echo := make(chan []byte, 1024)
	quit := make(chan struct{})
	_, err = tr.NewSubscription(rmw.NodeInfo{Name: "gopong", Namespace: "/"}, "/ping", typ, q, func(s rmw.Sample) {
		select {
		case echo <- bytes.Clone(s.Data):
		default:
		}
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m nros_bench.Payload
		for {
			select {
			case b := <-echo:
				if msg.Unmarshal(b, &m) != nil {
					continue
				}
				if m.StampNs == -9 {
					continue
				}
				if m.StampNs == -2 || m.StampNs == -1 {
					b = msg.Marshal(&nros_bench.Payload{StampNs: m.StampNs, Data: make([]byte, 32)}, true, nil)
				}
				pub.Publish(b)
			case <-quit:
				return
			}
		}
	}()
	p := startPeer(t, dir, pingName, args...)
	err = p.wait(t, 50*time.Second)
	close(quit)
	wg.Wait()
	if err != nil {
		t.Fatalf("%s: %v\nstdout %s\nstderr %s\nstats %+v", pingName, err, p.out.String(), p.errb.String(), tr.Stats())
	}
	out := strings.TrimSpace(p.out.String())
	t.Logf("%s -> Go pong: %s", pingName, out)
	if !strings.Contains(out, "lost=0") {
		t.Errorf("samples lost: %s", out)
	}
}

func TestInteropPongCyclone(t *testing.T)      { testPong(t, "pingpong_cyclone", 64, 2000, true) }
func TestInteropPongFastDDS(t *testing.T)      { testPong(t, "pingpong_fastdds", 64, 2000, true) }
func TestInteropPongCycloneLarge(t *testing.T) { testPong(t, "pingpong_cyclone", 65536, 300, true) }
func TestInteropPongFastDDSLarge(t *testing.T) { testPong(t, "pingpong_fastdds", 65536, 300, true) }
func TestInteropPongCycloneBE(t *testing.T)    { testPong(t, "pingpong_cyclone", 64, 2000, false) }

// TestInteropDomain: ROS_DOMAIN_ID 7 peers talk; a domain-0 participant
// hears nothing.
func TestInteropDomain(t *testing.T) {
	dir := peers(t)
	mk := func(domain int) (*Transport, *[]string, *sync.Mutex) {
		tr, err := New(Config{DomainID: domain})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		var mu sync.Mutex
		got := &[]string{}
		_, err = tr.NewSubscription(node, "/clock", "rosgraph_msgs/msg/Clock", clockQoS, func(s rmw.Sample) {
			mu.Lock()
			*got = append(*got, "x")
			mu.Unlock()
		}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr, got, &mu
	}
	tr7, got7, mu7 := mk(7)
	tr0, got0, mu0 := mk(0)
	if tr7.MetaAddr().Port() != 7410+250*7 {
		t.Fatalf("domain 7 port %v", tr7.MetaAddr())
	}
	for _, pub := range []string{"clockpub_cyclone", "clockpub_fastdds"} {
		p := startPeer(t, dir, pub, "--domain", "7", "--hz", "50", "--wait-subs", "1", "--wait-timeout", "20",
			"--script", "start=1.0;play 1x 0.5s")
		if err := p.wait(t, 40*time.Second); err != nil {
			t.Fatalf("%s: %v\n%s", pub, err, p.errb.String())
		}
	}
	time.Sleep(200 * time.Millisecond)
	mu7.Lock()
	n7 := len(*got7)
	mu7.Unlock()
	mu0.Lock()
	n0 := len(*got0)
	mu0.Unlock()
	t.Logf("domain 7 got %d, domain 0 got %d; domain 0 saw %d participants", n7, n0, len(tr0.RemoteParticipants()))
	if n7 < 40 || n0 != 0 {
		t.Fatalf("domain 7 got %d samples, domain 0 got %d", n7, n0)
	}
}
