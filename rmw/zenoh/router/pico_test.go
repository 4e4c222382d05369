package router_test

// zenoh-pico 1.7.2 clients (../shared/zenoh, built by interop/build.sh)
// meeting through the router, on loopback inside the namespace:
//
//	NROS_INTEROP_PEERS=$PWD/interop/build interop/netns go test -race -run Pico ./rmw/zenoh/router/

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/fixture/peers"
	"github.com/nros-go/nros/rmw/zenoh/router"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

const (
	clockKey   = "0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564"
	chatterKey = "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
)

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// picoRouter starts a router on a loopback port and returns its endpoint.
func picoRouter(t *testing.T) (*router.Router, string) {
	t.Helper()
	peers.RequireZenohPeers(t)
	r, err := router.Open(router.Config{Listen: []string{"tcp/127.0.0.1:0"},
		Logger: slog.New(slog.NewTextHandler(logWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, r.Listeners()[0].String()
}

var zidLine = regexp.MustCompile(`zid ([0-9a-f]+) `)

func picoZID(t *testing.T, p *peers.Proc) string {
	t.Helper()
	m := zidLine.FindStringSubmatch(p.Stderr())
	if m == nil {
		t.Fatalf("no zid in %q", p.Stderr())
	}
	return m[1]
}

// waitLines waits until p printed at least n lines.
func waitLines(t *testing.T, p *peers.Proc, n int, timeout time.Duration) []string {
	t.Helper()
	lines, err := p.WaitLines(n, timeout)
	if err != nil {
		t.Fatalf("%s: %d lines of %d: %v", p.Name, len(p.Lines()), n, err)
	}
	return lines
}

// TestPicoClockThroughRouter: zclockpub (client) -> router -> zclocksub
// (client): every sample arrives, in order, with the times pico published
// and rmw_zenoh's attachment. The publisher learns of the subscriber from
// the router's answer to its aggregate interest.
func TestPicoClockThroughRouter(t *testing.T) {
	for _, modes := range [][2]string{{"client", "client"}, {"peer", "peer"}, {"client", "peer"}} {
		t.Run(modes[0]+"-to-"+modes[1], func(t *testing.T) { picoClockThroughRouter(t, modes[0], modes[1]) })
	}
}

func picoClockThroughRouter(t *testing.T, pubMode, subMode string) {
	r, ep := picoRouter(t)
	sub := peers.Start(t, "zclocksub", "--mode", subMode, "--connect", ep, "--domain", "0", "--timeout", "40")
	if err := sub.WaitStderr("subscribed to", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	pub := peers.Start(t, "zclockpub", "--mode", pubMode, "--connect", ep, "--domain", "0",
		"--script", "start=5;play 1x 0.5s;pause 0.2s;jump +10s;play 2x 0.3s;jump -3s;play 1x 0.2s", "--hz", "50",
		"--wait-subs", "1", "--wait-timeout", "15", "--linger", "0.5")
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub exit %d: %v", code, err)
	}
	sent := pub.Lines()
	if len(sent) < 40 {
		t.Fatalf("zclockpub published %d samples", len(sent))
	}
	got := waitLines(t, sub, len(sent), 10*time.Second)
	for i, line := range got[:len(sent)] {
		f, g := strings.Fields(sent[i]), strings.Fields(line)
		want := fmt.Sprintf("seq=%d", i+1)
		if len(g) < 8 || g[1] != f[1] || g[2] != f[2] || g[3] != want || g[5] != "att=33" || g[6] != "cdr=ok" || g[7] != "key="+clockKey {
			t.Fatalf("sample %d: received %q, published %q", i, line, sent[i])
		}
	}
	if len(got) > len(sent) {
		t.Errorf("%d samples received, %d published", len(got), len(sent))
	}
	if n := r.Stats().Pushes.Load(); n != uint64(len(sent)) {
		t.Errorf("router forwarded %d pushes for %d samples", n, len(sent))
	}
}

// TestPicoChatterThroughRouter: zchatterpub (client) -> router ->
// zchattersub (client), which checks every attachment and CDR payload.
func TestPicoChatterThroughRouter(t *testing.T) {
	_, ep := picoRouter(t)
	const n = 20
	sub := peers.Start(t, "zchattersub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--count", strconv.Itoa(n), "--timeout", "30")
	if err := sub.WaitStderr("subscribed to", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	pub := peers.Start(t, "zchatterpub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--count", strconv.Itoa(n), "--hz", "50", "--wait-subs", "1", "--wait-timeout", "15")
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchatterpub exit %d: %v", code, err)
	}
	if code, err := sub.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub exit %d: %v", code, err)
	}
	lines := sub.Lines()
	summary := lines[len(lines)-1]
	if want := fmt.Sprintf("summary received=%d bad_att=0 bad_cdr=0 seq_nonincreasing=0 seq_gaps=0 gids=1", n); summary != want {
		t.Errorf("zchattersub: %q, want %q", summary, want)
	}
	if !strings.Contains(lines[n-1], fmt.Sprintf("data=Hello World: %d", n)) {
		t.Errorf("last sample %q", lines[n-1])
	}
}

// TestPicoLivelinessThroughRouter: zlivewatch (client) sees, through the
// router, the tokens of another pico client and of a Go client, through
// its liveliness subscriber and its gets, and sees them go away; a Go
// liveliness get lists pico's tokens.
func TestPicoLivelinessThroughRouter(t *testing.T) {
	_, ep := picoRouter(t)
	w := peers.Start(t, "zlivewatch", "--mode", "client", "--connect", ep, "--domain", "0",
		"--duration", "6", "--get-every", "0.5")
	waitLines(t, w, 1, 15*time.Second)
	waitLine := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			for _, l := range w.Lines() {
				if l == want {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("zlivewatch never printed %q:\n%s", want, strings.Join(w.Lines(), "\n"))
	}
	// a Go client with a token
	g := &tokens{m: map[string]bool{}}
	gs, err := session.Open(session.Config{Mode: wire.Client, Connect: []string{ep}}, g)
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	goNN := "@ros2_lv/0/" + gs.ZID().String() + "/0/0/NN/%/%/gonode"
	goTok, _ := gs.DeclareToken(goNN)
	// another pico client, with its node and subscriber tokens
	sub := peers.Start(t, "zchattersub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--node", "listener", "--count", "0", "--timeout", "2")
	if err := sub.WaitStderr("subscribed to", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	nn := "@ros2_lv/0/" + picoZID(t, sub) + "/0/0/NN/%/%/listener"
	waitLine("token put " + goNN)
	waitLine("token put " + nn)
	waitLine("token get " + nn)
	// Go's liveliness get through the router lists pico's tokens
	id, _ := gs.DeclareInterest(wire.InterestCurrent, wire.InterestTokens, "@ros2_lv/0/**")
	if !g.waitFinal(id, 10*time.Second) || !g.has(nn) {
		t.Errorf("Go's liveliness get: %v", g.keys())
	}
	if code, err := sub.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub exit %d: %v", code, err)
	}
	waitLine("token del " + nn)
	gs.UndeclareToken(goTok)
	waitLine("token del " + goNN)
	if code, err := w.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("zlivewatch exit %d: %v", code, err)
	}
	out := strings.Join(w.Lines(), "\n")
	if !regexp.MustCompile(`(?m)^get done 1 [1-9]`).MatchString(out) || strings.Contains(out, "get pending") {
		t.Errorf("liveliness gets not answered:\n%s", out)
	}
}

// tokens collects the tokens a Go session's interests report.
type tokens struct {
	session.NopHandler
	mu     sync.Mutex
	m      map[string]bool
	finals map[uint32]bool
}

func (g *tokens) Declared(f *session.Face, d session.Decl) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d.Kind == session.KindToken {
		g.m[d.Key] = !d.Undeclare
	}
}

func (g *tokens) InterestFinal(id uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finals == nil {
		g.finals = map[uint32]bool{}
	}
	g.finals[id] = true
}

func (g *tokens) waitFinal(id uint32, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		done := g.finals[id]
		g.mu.Unlock()
		if done {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func (g *tokens) has(k string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[k]
}

func (g *tokens) keys() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ks []string
	for k, v := range g.m {
		if v {
			ks = append(ks, k)
		}
	}
	return ks
}

// samples collects a Go session's puts.
type samples struct {
	session.NopHandler
	mu   sync.Mutex
	puts []*wire.Put
	keys []string
}

func (s *samples) Push(f *session.Face, key string, m *wire.Push, _ bool) {
	if p, ok := m.Body.(*wire.Put); ok {
		c := p.Clone()
		s.mu.Lock()
		s.puts = append(s.puts, c)
		s.keys = append(s.keys, key)
		s.mu.Unlock()
	}
}

func (s *samples) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.puts)
}

// TestPicoWithGoPeerThroughRouter: a Go session in peer mode (rmw_zenoh's
// default) linked to the router receives every sample of a pico client
// publisher, and publishes to a pico client subscriber once the router
// declared it (the Go peer asks with a subscriber interest, as zenoh
// publishers do).
func TestPicoWithGoPeerThroughRouter(t *testing.T) {
	_, ep := picoRouter(t)
	h := &samples{}
	gs, err := session.Open(session.Config{Mode: wire.Peer, Connect: []string{ep}}, h)
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	if _, err := gs.DeclareSubscriber("0/clock/rosgraph_msgs::msg::dds_::Clock_/*"); err != nil {
		t.Fatal(err)
	}
	pub := peers.Start(t, "zclockpub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--script", "start=7;play 1x 0.6s", "--hz", "50", "--wait-subs", "1", "--wait-timeout", "15", "--linger", "0.3")
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub exit %d: %v", code, err)
	}
	sent := pub.Lines()
	deadline := time.Now().Add(5 * time.Second)
	for h.count() < len(sent) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	h.mu.Lock()
	if len(h.puts) != len(sent) || len(sent) < 20 {
		t.Errorf("Go peer received %d samples, pico published %d", len(h.puts), len(sent))
	}
	for i, p := range h.puts {
		if h.keys[i] != clockKey || len(p.Attachment) != 33 || binary.LittleEndian.Uint64(p.Attachment) != uint64(i+1) {
			t.Errorf("sample %d: key %s attachment %x", i, h.keys[i], p.Attachment)
			break
		}
		f := strings.Fields(sent[i])
		sec, _ := strconv.ParseInt(f[1], 10, 32)
		if int32(binary.LittleEndian.Uint32(p.Payload[4:])) != int32(sec) {
			t.Errorf("sample %d: payload %x, pico printed %q", i, p.Payload, sent[i])
			break
		}
	}
	h.mu.Unlock()

	// Go peer -> router -> pico client subscriber
	sub := peers.Start(t, "zchattersub", "--mode", "client", "--connect", ep, "--domain", "0", "--count", "5", "--timeout", "20")
	if _, err := gs.DeclareInterest(wire.InterestCurrentFuture, wire.InterestKeyExprs|wire.InterestSubscribers, chatterKey); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(15 * time.Second)
	for !gs.Matching(chatterKey) {
		if time.Now().After(deadline) {
			t.Fatalf("the router never declared pico's subscriber; pico: %s", sub.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 1; i <= 5; i++ {
		text := fmt.Sprintf("Hello World: %d", i)
		payload := binary.LittleEndian.AppendUint32([]byte{0, 1, 0, 0}, uint32(len(text)+1))
		payload = append(append(payload, text...), 0)
		att := binary.LittleEndian.AppendUint64(nil, uint64(i))
		att = binary.LittleEndian.AppendUint64(att, uint64(time.Now().UnixNano()))
		att = append(append(att, 16), bytes.Repeat([]byte{7}, 16)...)
		if n := gs.Put(chatterKey, &wire.Put{Attachment: att, Payload: payload}, session.PutOptions{}); n != 1 {
			t.Fatalf("put went to %d faces", n)
		}
	}
	if code, err := sub.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub exit %d: %v", code, err)
	}
	if l := sub.Lines(); !strings.HasPrefix(l[len(l)-1], "summary received=5 bad_att=0 bad_cdr=0 seq_nonincreasing=0 seq_gaps=0 gids=1") {
		t.Errorf("pico: %q", l[len(l)-1])
	}
}
