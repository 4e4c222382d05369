package interop

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// peerLease is the participant lease the peers announce: the vendors'
// defaults (the peers have no flag for it).
var peerLease = map[string]time.Duration{"cyclone": 10 * time.Second, "fastdds": 20 * time.Second}

// TestGoGraphPeerLeaseAndRestart: a peer killed with SIGKILL (no dispose)
// stays in the Go transport's graph until its lease runs out, then goes
// (participant and match); a peer started in its place is discovered at
// once and gets the Go publisher's samples.
func TestGoGraphPeerLeaseAndRestart(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			g := newGoNode(t, dom, "go_talker")
			pub, err := nros.NewPublisher[std_msgs.String](g.node, "/chatter", nros.KeepLast(10))
			if err != nil {
				t.Fatal(err)
			}
			subArgs := []string{"--domain", strconv.Itoa(dom), "--timeout", "60"}
			a := Start(t, "chattersub_"+vendor, append(subArgs, "--count", "1000")...)
			if !waitFor(20*time.Second, func() bool { return pub.MatchedSubscriptions() == 1 && len(g.tr.RemoteParticipants()) == 1 }) {
				t.Fatalf("first peer not discovered: %d participants, %d matched", len(g.tr.RemoteParticipants()), pub.MatchedSubscriptions())
			}
			first := g.tr.RemoteParticipants()[0]
			a.Kill()
			killed := time.Now()

			b := Start(t, "chattersub_"+vendor, append(subArgs, "--count", "5")...)
			var second wire.GuidPrefix
			if !waitFor(20*time.Second, func() bool {
				for _, p := range g.tr.RemoteParticipants() {
					if p != first {
						second = p
						return true
					}
				}
				return false
			}) {
				t.Fatal("the restarted peer was not discovered")
			}
			if !waitFor(10*time.Second, func() bool { return pub.MatchedSubscriptions() == 2 }) {
				t.Fatalf("the restarted peer's subscription did not match: %d matched", pub.MatchedSubscriptions())
			}
			if early := time.Since(killed); !slices.Contains(g.tr.RemoteParticipants(), first) {
				t.Fatalf("the killed peer left the graph %v after SIGKILL, before its lease of %v", early, peerLease[vendor])
			}

			lease := peerLease[vendor]
			if !waitFor(lease+5*time.Second, func() bool { return !slices.Contains(g.tr.RemoteParticipants(), first) }) {
				t.Fatalf("the killed peer is still in the graph %v after SIGKILL (lease %v)", time.Since(killed), lease)
			}
			gone := time.Since(killed)
			t.Logf("killed %s peer removed %v after SIGKILL (lease %v)", vendor, gone.Round(time.Millisecond), lease)
			if gone < lease/2 {
				t.Fatalf("the killed peer was removed after %v, well before its lease of %v", gone, lease)
			}
			if n := pub.MatchedSubscriptions(); n != 1 {
				t.Fatalf("after the lease: %d matched subscriptions, want 1 (the restarted peer)", n)
			}
			if ps := g.tr.RemoteParticipants(); len(ps) != 1 || ps[0] != second {
				t.Fatalf("after the lease: participants %v, want only the restarted peer %v", ps, second)
			}
			if n := g.tr.Stats().Discovery.ParticipantsExpired; n != 1 {
				t.Errorf("ParticipantsExpired = %d, want 1", n)
			}

			if err := b.WaitStderr("matched 1 publisher", 10*time.Second); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				if err := pub.Publish(&std_msgs.String{Data: chatterString(i, 0)}); err != nil {
					t.Fatal(err)
				}
			}
			if code, err := b.Wait(20 * time.Second); err != nil || code != ExitOK {
				t.Fatalf("restarted chattersub: exit %d, %v, %d strings", code, err, len(b.Lines()))
			}
		})
	}
}

// TestGoTransientLocalLateJoiner: a Go TRANSIENT_LOCAL publisher writes 15
// strings with no reader around; a peer reader that starts afterwards gets
// the last 10 (the history depth), in order.
func TestGoTransientLocalLateJoiner(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			g := newGoNode(t, dom, "go_latched")
			pub, err := nros.NewPublisher[std_msgs.String](g.node, "/chatter", nros.TransientLocalQoS(10))
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 15; i++ {
				if err := pub.Publish(&std_msgs.String{Data: chatterString(i, 0)}); err != nil {
					t.Fatal(err)
				}
			}
			sub := Start(t, "chattersub_"+vendor, "--domain", strconv.Itoa(dom), "--transient-local", "--depth", "10",
				"--first", "6", "--count", "10", "--timeout", "30")
			if code, err := sub.Wait(40 * time.Second); err != nil || code != ExitOK {
				t.Fatalf("late chattersub: exit %d, %v, %d strings", code, err, len(sub.Lines()))
			}
			for i, l := range sub.Lines() {
				if f := strings.SplitN(l, " ", 3); len(f) != 3 || f[2] != chatterString(i+6, 0) {
					t.Fatalf("late chattersub: string %d is %q, want %q", i+1, l, chatterString(i+6, 0))
				}
			}
		})
	}
}
