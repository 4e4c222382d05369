package session_test

// Interop with the rmw_zenoh-shaped zenoh-pico 1.7.2 peers (built by
// interop/build.sh), on loopback inside the namespace:
//
//	interop/netns go test -race -run Pico ./rmw/zenoh/session/
//
// NROS_ZENOH_CAPTURE=DIR writes every batch exchanged with pico to
// DIR/<test>.txt (the format of rmw/zenoh/wire/testdata/pico).

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/fixture/peers"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

const (
	clockKey   = "0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564"
	chatterKey = "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
)

// tracer keeps every batch exchanged and checks, at the end, that each
// batch pico sent decodes and re-encodes to the same bytes.
type tracer struct {
	mu       sync.Mutex
	batches  []string
	fromPeer [][]byte
}

func (tr *tracer) trace(_ link.Endpoint, rx bool, b []byte) {
	dir := "G>P"
	if rx {
		dir = "P>G"
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.batches = append(tr.batches, dir+" "+hex.EncodeToString(b))
	if rx {
		tr.fromPeer = append(tr.fromPeer, append([]byte(nil), b...))
	}
}

func (tr *tracer) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if dir := os.Getenv("NROS_ZENOH_CAPTURE"); dir != "" {
		name := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".txt")
		if err := os.WriteFile(name, []byte(strings.Join(tr.batches, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(tr.fromPeer) == 0 {
		t.Error("nothing received from pico")
	}
	for _, b := range tr.fromPeer {
		var re []byte
		err := wire.DecodeBatch(b, func(m wire.TransportMessage) error {
			if f, ok := m.(*wire.Frame); ok {
				var p []byte
				if err := wire.DecodeFrame(f.Payload, func(n wire.NetworkMessage) error {
					var err error
					p, err = wire.AppendNetwork(p, n)
					return err
				}); err != nil {
					return err
				}
				c := *f
				c.Payload = p
				m = &c
			}
			var err error
			re, err = wire.AppendTransport(re, m)
			return err
		})
		if err != nil || !bytes.Equal(re, b) {
			t.Errorf("pico batch %x: re-encoded %x, %v", b, re, err)
		}
	}
}

type event struct {
	kind string
	key  string
	put  *wire.Put
	face *session.Face
}

// collector forwards handler calls to a channel.
type collector struct {
	session.NopHandler
	ch chan event
}

func newCollector() *collector { return &collector{ch: make(chan event, 4096)} }

func (c *collector) FaceUp(f *session.Face)              { c.ch <- event{kind: "up", face: f} }
func (c *collector) FaceDown(f *session.Face, err error) { c.ch <- event{kind: "down", face: f} }
func (c *collector) Push(f *session.Face, key string, m *wire.Push, _ bool) {
	if p, ok := m.Body.(*wire.Put); ok {
		c.ch <- event{kind: "put", key: key, put: p.Clone(), face: f}
	}
}
func (c *collector) Declared(f *session.Face, d session.Decl) {
	k := d.Kind.String()
	if d.Undeclare {
		k = "un" + k
	}
	c.ch <- event{kind: k, key: d.Key, face: f}
}

func (c *collector) next(t *testing.T, timeout time.Duration, kinds ...string) event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e := <-c.ch:
			for _, k := range kinds {
				if e.kind == k {
					return e
				}
			}
		case <-deadline:
			t.Fatalf("no %v within %v", kinds, timeout)
		}
	}
}

func picoSession(t *testing.T, cfg session.Config, h session.Handler, tr *tracer) *session.Session {
	t.Helper()
	cfg.Mode = wire.Peer
	cfg.Trace = tr.trace
	cfg.Logf = t.Logf
	s, err := session.Open(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var zidLine = regexp.MustCompile(`zid ([0-9a-f]+) `)

// TestPicoClockPubToGo: Go connects to a listening zclockpub, declares a
// subscriber on the /clock key; pico publishes once it sees it, and every
// sample arrives with rmw_zenoh's 33-byte attachment and the Clock times
// pico printed. Go also sees pico's liveliness tokens.
func TestPicoClockPubToGo(t *testing.T) {
	peers.RequireZenohPeers(t)
	port := peers.FreeTCPPort(t)
	pub := peers.Start(t, "zclockpub", "--mode", "peer", "--listen", peers.LoopbackTCP(port), "--domain", "0",
		"--script", "start=5;play 1x 0.5s;pause 0.2s;jump +10s;play 2x 0.3s;jump -3s;play 1x 0.2s", "--hz", "50",
		"--wait-subs", "1", "--wait-timeout", "20", "--linger", "0.5")
	if err := pub.WaitStderr("publishing on", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	m := zidLine.FindStringSubmatch(pub.Stderr())
	if m == nil {
		t.Fatalf("no zid in %q", pub.Stderr())
	}
	picoZID := m[1]
	c, tr := newCollector(), &tracer{}
	s := picoSession(t, session.Config{Connect: []string{peers.LoopbackTCP(port)}}, c, tr)
	if _, err := s.DeclareSubscriber("0/clock/rosgraph_msgs::msg::dds_::Clock_/*"); err != nil {
		t.Fatal(err)
	}
	up := c.next(t, 10*time.Second, "up")
	if up.face.ZID.String() != picoZID || up.face.WhatAmI != wire.Peer || up.face.Params.BatchSize != 2048 {
		t.Errorf("face %v zid %s, pico says %s, batch %d", up.face, up.face.ZID, picoZID, up.face.Params.BatchSize)
	}
	if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub exit %d: %v", code, err)
	}
	lines := pub.Lines()
	var puts []event
	tokens := map[string]bool{}
	for done := false; !done; {
		select {
		case e := <-c.ch:
			switch e.kind {
			case "put":
				puts = append(puts, e)
			case "token":
				tokens[e.key] = true
			case "down":
				done = true
			}
		case <-time.After(5 * time.Second):
			done = true
		}
	}
	if len(puts) != len(lines) || len(lines) < 40 {
		t.Fatalf("%d samples received, pico published %d", len(puts), len(lines))
	}
	var gid []byte
	for i, e := range puts {
		f := strings.Fields(lines[i])
		sec, _ := strconv.ParseInt(f[1], 10, 32)
		nsec, _ := strconv.ParseUint(f[2], 10, 32)
		p := e.put.Payload
		if e.key != clockKey || len(p) != 12 || !bytes.Equal(p[:4], []byte{0, 1, 0, 0}) ||
			int32(binary.LittleEndian.Uint32(p[4:])) != int32(sec) || binary.LittleEndian.Uint32(p[8:]) != uint32(nsec) {
			t.Fatalf("sample %d: key %s payload %x, pico printed %q", i, e.key, p, lines[i])
		}
		a := e.put.Attachment
		if len(a) != 33 || a[16] != 0x10 || binary.LittleEndian.Uint64(a) != uint64(i+1) {
			t.Fatalf("sample %d attachment %x", i, a)
		}
		if gid == nil {
			gid = a[17:]
		} else if !bytes.Equal(gid, a[17:]) {
			t.Fatalf("gid changed at sample %d", i)
		}
	}
	nn := "@ros2_lv/0/" + picoZID + "/0/0/NN/%/%/zclockpub"
	mp := "@ros2_lv/0/" + picoZID + "/0/10/MP/%/%/zclockpub/%clock/rosgraph_msgs::msg::dds_::Clock_/" +
		strings.TrimPrefix(clockKey, "0/clock/rosgraph_msgs::msg::dds_::Clock_/") + "/2::,1:,:,:,,"
	if !tokens[nn] || !tokens[mp] {
		t.Errorf("pico's tokens: %v", tokens)
	}
	tr.check(t)
}

// TestPicoChatterGoToSub: Go listens, zchattersub connects; Go waits for
// pico's subscriber declaration, then publishes std_msgs/String with the
// rmw_zenoh attachment; pico checks every attachment and CDR payload.
func TestPicoChatterGoToSub(t *testing.T) {
	peers.RequireZenohPeers(t)
	c, tr := newCollector(), &tracer{}
	s := picoSession(t, session.Config{Listen: []string{"tcp/127.0.0.1:0"}}, c, tr)
	ep := s.Listeners()[0].String()
	zid := s.ZID().String()
	s.DeclareToken("@ros2_lv/0/" + zid + "/0/0/NN/%/%/talker")
	s.DeclareToken("@ros2_lv/0/" + zid + "/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/" +
		strings.TrimPrefix(chatterKey, "0/chatter/std_msgs::msg::dds_::String_/") + "/::,7:,:,:,,")
	const n = 20
	sub := peers.Start(t, "zchattersub", "--mode", "peer", "--connect", ep, "--domain", "0", "--count", strconv.Itoa(n), "--timeout", "20")
	deadline := time.Now().Add(15 * time.Second)
	for !s.Matching(chatterKey) {
		if time.Now().After(deadline) {
			t.Fatalf("pico's subscriber never declared; pico: %s", sub.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	gid := bytes.Repeat([]byte{0xab}, 16)
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("Hello World: %d", i)
		payload := binary.LittleEndian.AppendUint32([]byte{0, 1, 0, 0}, uint32(len(text)+1))
		payload = append(append(payload, text...), 0)
		for len(payload)%4 != 0 {
			payload = append(payload, 0)
		}
		att := binary.LittleEndian.AppendUint64(nil, uint64(i))
		att = binary.LittleEndian.AppendUint64(att, uint64(time.Now().UnixNano()))
		att = append(append(att, 16), gid...)
		if got := s.Put(chatterKey, &wire.Put{Attachment: att, Payload: payload}, session.PutOptions{}); got != 1 {
			t.Fatalf("sample %d went to %d faces", i, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, err := sub.Wait(25 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub exit %d: %v\n%s", code, err, sub.Stderr())
	}
	lines := sub.Lines()
	summary := lines[len(lines)-1]
	if want := fmt.Sprintf("summary received=%d bad_att=0 bad_cdr=0 seq_nonincreasing=0 seq_gaps=0 gids=1", n); summary != want {
		t.Errorf("pico: %q, want %q", summary, want)
	}
	if !strings.Contains(lines[n-1], "data=Hello World: 20") || !strings.Contains(lines[0], "gid="+hex.EncodeToString(gid)) {
		t.Errorf("pico's lines: %q ... %q", lines[0], lines[n-1])
	}
	tr.check(t)
}

// TestPicoLiveliness: zlivewatch (connecting to a listening Go session)
// sees the Go session's tokens, through its liveliness subscriber and its
// liveliness get (which the Go session answers), and sees one go away.
func TestPicoLiveliness(t *testing.T) {
	peers.RequireZenohPeers(t)
	c, tr := newCollector(), &tracer{}
	s := picoSession(t, session.Config{Listen: []string{"tcp/127.0.0.1:0"}}, c, tr)
	zid := s.ZID().String()
	nn := "@ros2_lv/0/" + zid + "/0/0/NN/%/%/gonode"
	ms := "@ros2_lv/0/" + zid + "/0/11/MS/%/%/gonode/%chatter/std_msgs::msg::dds_::String_/RIHS01_x/::,7:,:,:,,"
	s.DeclareToken(nn)
	tok, _ := s.DeclareToken(ms)
	s.DeclareToken("@ros2_lv/1/" + zid + "/0/0/NN/%/%/otherdomain")
	w := peers.Start(t, "zlivewatch", "--mode", "peer", "--connect", s.Listeners()[0].String(), "--domain", "0",
		"--duration", "3", "--get-every", "0.5")
	if _, err := w.WaitLines(1, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	c.next(t, 10*time.Second, "up")
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
	waitLine("token put " + nn)
	waitLine("token put " + ms)
	waitLine("token get " + nn)
	s.UndeclareToken(tok)
	waitLine("token del " + ms)
	if code, err := w.Wait(15 * time.Second); err != nil || code != 0 {
		t.Fatalf("zlivewatch exit %d: %v", code, err)
	}
	out := strings.Join(w.Lines(), "\n")
	if strings.Contains(out, "otherdomain") {
		t.Error("zlivewatch saw a token of another domain")
	}
	if !regexp.MustCompile(`(?m)^get done 1 [1-9]`).MatchString(out) || strings.Contains(out, "get pending") {
		t.Errorf("liveliness gets not answered:\n%s", out)
	}
	tr.check(t)
}

// TestPicoClientsOnGoPeer: zenoh-pico clients connect to a listening Go
// peer as they would to a router: zclockpub (client) asks for subscribers
// with an aggregate interest and publishes to the Go subscriber;
// zchattersub (client) declares its subscriber and receives what Go
// publishes.
func TestPicoClientsOnGoPeer(t *testing.T) {
	peers.RequireZenohPeers(t)
	c, tr := newCollector(), &tracer{}
	s := picoSession(t, session.Config{Listen: []string{"tcp/127.0.0.1:0"}}, c, tr)
	ep := s.Listeners()[0].String()
	s.DeclareSubscriber("0/clock/rosgraph_msgs::msg::dds_::Clock_/*")
	pub := peers.Start(t, "zclockpub", "--mode", "client", "--connect", ep, "--domain", "0",
		"--script", "start=7;play 1x 0.4s", "--hz", "50", "--wait-subs", "1", "--wait-timeout", "10", "--linger", "0.3")
	sub := peers.Start(t, "zchattersub", "--mode", "client", "--connect", ep, "--domain", "0", "--count", "5", "--timeout", "20")
	if code, err := pub.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("zclockpub (client) exit %d: %v\n%s", code, err, pub.Stderr())
	}
	n := 0
	for done := false; !done; {
		select {
		case e := <-c.ch:
			if e.kind == "put" && e.key == clockKey && len(e.put.Attachment) == 33 {
				n++
			}
		case <-time.After(time.Second):
			done = true
		}
	}
	if n != len(pub.Lines()) || n < 15 {
		t.Errorf("%d clock samples from the pico client, it published %d", n, len(pub.Lines()))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !s.Matching(chatterKey) {
		if time.Now().After(deadline) {
			t.Fatalf("the pico client's subscriber never came: %s", sub.Stderr())
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
		s.Put(chatterKey, &wire.Put{Attachment: att, Payload: payload}, session.PutOptions{})
	}
	if code, err := sub.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("zchattersub (client) exit %d: %v\n%s", code, err, sub.Stderr())
	}
	if l := sub.Lines(); !strings.HasPrefix(l[len(l)-1], "summary received=5 bad_att=0 bad_cdr=0") {
		t.Errorf("pico client: %q", l[len(l)-1])
	}
	tr.check(t)
}
