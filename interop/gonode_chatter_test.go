package interop

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
)

// chatterString is the i-th string of the peers' chatter: "Hello World: i",
// padded with '.' to size bytes when size is larger.
func chatterString(i, size int) string {
	s := fmt.Sprintf("Hello World: %d", i)
	if len(s) < size {
		s += strings.Repeat(".", size-len(s))
	}
	return s
}

// checkChatter checks "len data-prefix" records against small short strings
// followed by big 1 MiB strings, numbered from 1, in order.
func checkChatter(t *testing.T, who string, got []string, small, big int) {
	t.Helper()
	if len(got) != small+big {
		t.Fatalf("%s: %d strings, want %d", who, len(got), small+big)
	}
	for i, l := range got {
		size := 0
		if i >= small {
			size = 1 << 20
		}
		want := chatterString(i+1, size)
		f := strings.SplitN(l, " ", 2)
		if len(f) != 2 || f[0] != strconv.Itoa(len(want)) || !strings.HasPrefix(want, f[1]) || len(f[1]) < min(len(want), 40) {
			t.Fatalf("%s: string #%d is %q, want length %d and prefix %.40q", who, i+1, l, len(want), want)
		}
	}
}

type chatterCase struct {
	name       string
	qos        nros.QoS
	peerArgs   []string // QoS flags of the peer, the same as qos
	subArgs    []string // more flags for chattersub
	small, big int
	loss       int // percent of UDP datagrams dropped
}

func chatterCases() []chatterCase {
	rel := nros.KeepLast(10)
	be := nros.SensorDataQoS()
	be.Depth = 10
	deep := nros.KeepLast(30)
	return []chatterCase{
		{name: "reliable", qos: rel, small: 20, big: 3},
		{name: "best_effort", qos: be, peerArgs: []string{"--best-effort"}, subArgs: []string{"--allow-gaps"}, small: 20, big: 3},
		// Depth 30 covers the whole 100 Hz burst, so KEEP_LAST never
		// overwrites what is still unacknowledged.
		{name: "reliable_20pct_loss", qos: deep, peerArgs: []string{"--fixed-ports", "--depth", "30"}, small: 20, big: 2, loss: 20},
	}
}

// TestGoChatterToPeer: a Go publisher of std_msgs/String, a peer
// chattersub (which checks numbering and order itself, exit 4 otherwise).
func TestGoChatterToPeer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		for _, c := range chatterCases() {
			t.Run(vendor+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dom := Domain(t)
				if c.loss > 0 {
					UDPLoss(t, dom, c.loss)
				}
				args := append([]string{"--domain", strconv.Itoa(dom), "--count", strconv.Itoa(c.small + c.big), "--timeout", "60"}, c.peerArgs...)
				args = append(args, c.subArgs...)
				sub := Start(t, "chattersub_"+vendor, args...)
				g := newGoNode(t, dom, "go_talker")
				pub, err := nros.NewPublisher[std_msgs.String](g.node, "/chatter", c.qos)
				if err != nil {
					t.Fatal(err)
				}
				if err := sub.WaitStderr("matched 1 publisher", 20*time.Second); err != nil {
					t.Fatal(err)
				}
				if !waitFor(20*time.Second, func() bool { return pub.MatchedSubscriptions() >= 1 }) {
					t.Fatalf("the Go publisher did not match the peer's subscription\n%s", graphReport(g))
				}
				if c.loss > 0 {
					// A volatile Cyclone DDS reader starts at the first
					// HEARTBEAT it sees and never asks for what was
					// written before (by design, for writers of other
					// vendors: ddsi_receive.c), so a sample lost before
					// that is lost for good. The writer offers a
					// HEARTBEAT every 100 ms until the reader answers
					// one; half a second makes "none arrived" a 0.2^5
					// event.
					time.Sleep(500 * time.Millisecond)
				}
				bestEffort := c.qos.Reliability == nros.ReliabilityBestEffort
				for i := 1; i <= c.small+c.big; i++ {
					size, gap := 0, 10*time.Millisecond
					if i > c.small {
						size, gap = 1<<20, 50*time.Millisecond
					}
					if err := pub.Publish(&std_msgs.String{Data: chatterString(i, size)}); err != nil {
						t.Fatalf("publish #%d: %v", i, err)
					}
					time.Sleep(gap)
				}
				if bestEffort {
					// A best-effort 1 MiB sample is lost as a whole when
					// one fragment is: the Fast DDS reader drops some, on
					// a loaded machine all, even from Fast DDS and Cyclone
					// writers on loopback (its socket buffer is smaller
					// than a burst). The sub then runs with --allow-gaps,
					// and short strings fill its count up.
					for i := c.small + c.big + 1; i <= c.small+c.big+300 && !sub.Exited(); i++ {
						pub.Publish(&std_msgs.String{Data: chatterString(i, 0)})
						time.Sleep(10 * time.Millisecond)
					}
				}
				code, err := sub.Wait(60 * time.Second)
				if err != nil || code != ExitOK {
					t.Fatalf("chattersub: exit %d, %v; %d of %d strings", code, err, len(sub.Lines()), c.small+c.big)
				}
				var got []string
				for _, l := range sub.Lines() {
					got = append(got, strings.SplitN(l, " ", 2)[1])
				}
				if bestEffort {
					checkBestEffortChatter(t, "chattersub_"+vendor, got, c.small, c.big, vendor == "fastdds")
					return
				}
				checkChatter(t, "chattersub_"+vendor, got, c.small, c.big)
			})
		}
	}
}

// checkBestEffortChatter checks what a best-effort reader got from
// checkChatter's sequence followed by short strings: numbers increasing,
// every short string of the first small present, every string intact, and
// all big strings (any number when anyBig).
func checkBestEffortChatter(t *testing.T, who string, got []string, small, big int, anyBig bool) {
	t.Helper()
	prev, bigs := 0, 0
	for _, l := range got {
		f := strings.SplitN(l, " ", 2)
		var n int
		if len(f) != 2 {
			t.Fatalf("%s: bad record %q", who, l)
		}
		fmt.Sscanf(strings.TrimPrefix(f[1], "Hello World: "), "%d", &n)
		if n <= prev {
			t.Fatalf("%s: #%d after #%d", who, n, prev)
		}
		if n > small+1 && prev < small {
			t.Fatalf("%s: short strings %d..%d lost on loopback", who, prev+1, small)
		}
		prev = n
		size := 0
		if n > small && n <= small+big {
			size = 1 << 20
			bigs++
		}
		want := chatterString(n, size)
		if f[0] != strconv.Itoa(len(want)) || !strings.HasPrefix(want, f[1]) {
			t.Fatalf("%s: string #%d is %q, want length %d and prefix %.40q", who, n, l, len(want), want)
		}
	}
	if prev < small || (!anyBig && bigs < big) {
		t.Fatalf("%s: %d records up to #%d with %d of %d 1 MiB strings", who, len(got), prev, bigs, big)
	}
	t.Logf("%s: %d of %d best-effort 1 MiB strings arrived", who, bigs, big)
}

// TestPeerChatterToGo: a peer chatterpub, a Go subscription; then, for the
// big strings, a second chatterpub run that the same subscription matches.
func TestPeerChatterToGo(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		for _, c := range chatterCases() {
			t.Run(vendor+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dom := Domain(t)
				if c.loss > 0 {
					UDPLoss(t, dom, c.loss)
				}
				g := newGoNode(t, dom, "go_listener")
				var mu sync.Mutex
				var got []string
				sub, err := nros.NewSubscription[std_msgs.String](g.node, "/chatter", c.qos, func(m *std_msgs.String) {
					mu.Lock()
					got = append(got, fmt.Sprintf("%d %.40s", len(m.Data), m.Data))
					mu.Unlock()
				})
				if err != nil {
					t.Fatal(err)
				}
				g.spin()
				received := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
				run := func(first, count, size, hz int) {
					args := append([]string{"--domain", strconv.Itoa(dom), "--first", strconv.Itoa(first), "--count", strconv.Itoa(count),
						"--hz", strconv.Itoa(hz), "--wait-subs", "1", "--settle", "0", "--gate", "--timeout", "60"}, c.peerArgs...)
					if size > 0 {
						args = append(args, "--size", strconv.Itoa(size))
					}
					known := remotePublishers(g, "/chatter")
					pub := Start(t, "chatterpub_"+vendor, args...)
					// Matched: a publisher not seen before is in the graph
					// and every remote publisher there is matched.
					if !waitFor(20*time.Second, func() bool {
						ps := remotePublishers(g, "/chatter")
						for gid := range ps {
							if !known[gid] {
								return sub.MatchedPublishers() == len(ps)
							}
						}
						return false
					}) {
						t.Fatalf("the Go subscription did not match the peer's publisher (%d matched)\n%s", sub.MatchedPublishers(), graphReport(g))
					}
					Release(t, 20*time.Second, pub)
					if code, err := pub.Wait(60 * time.Second); err != nil || code != ExitOK {
						t.Fatalf("chatterpub: exit %d, %v", code, err)
					}
					if !waitFor(20*time.Second, func() bool { return received() >= first-1+count }) {
						t.Fatalf("the Go subscription has %d strings, want %d", received(), first-1+count)
					}
					// The peer is gone and said so: its writer is unmatched
					// (under loss its last SPDP may be lost: then only its
					// lease would end the match).
					if c.loss == 0 && !waitFor(10*time.Second, func() bool { return sub.MatchedPublishers() == 0 }) {
						t.Fatal("the Go subscription still matches the publisher of a peer that exited")
					}
				}
				run(1, c.small, 0, 100)
				if c.big > 0 {
					run(c.small+1, c.big, 1<<20, 20)
				}
				mu.Lock()
				defer mu.Unlock()
				checkChatter(t, "Go subscription", got, c.small, c.big)
			})
		}
	}
}

// remotePublishers returns the GIDs of the remote publishers on topic in
// the Go node's graph.
func remotePublishers(g *goNode, topic string) map[[16]byte]bool {
	m := map[[16]byte]bool{}
	for _, e := range g.tr.Endpoints(topic) {
		if e.Publisher && !e.Local {
			m[e.GID] = true
		}
	}
	return m
}
