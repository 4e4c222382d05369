package interop

import (
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw/rtps"
)

// TestPeersListGoNodeInBothLayouts: a Humble-layout and a Jazzy-layout
// ros_discovery_info reader (Cyclone) each list the Go node with its
// endpoints. Unpinned, the Go transport learns the Jazzy layout from the
// Jazzy peer's own sample; pinned to Jazzy it writes it from the start.
func TestPeersListGoNodeInBothLayouts(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, c := range []struct {
		name, peer string
		gidSize    int
	}{
		{"humble_default", "graph_cyclone", 0},
		{"jazzy_learned", "graph_cyclone_jazzy", 0},
		{"jazzy_pinned", "graph_cyclone_jazzy", rmw_dds_common.GidSizeJazzy},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			tr, err := rtps.New(rtps.Config{DomainID: dom, GidSize: c.gidSize})
			if err != nil {
				t.Fatal(err)
			}
			ctx := nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))
			node, err := nros.NewNode("go_graph", nros.WithContext(ctx), nros.WithoutGlobalArguments())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { node.Close(); ctx.Shutdown(); tr.Close() })
			if _, err := nros.NewPublisher[std_msgs.String](node, "/chatter", nros.KeepLast(10)); err != nil {
				t.Fatal(err)
			}
			if _, err := nros.NewSubscription[std_msgs.String](node, "/heard", nros.KeepLast(10), func(*std_msgs.String) {}); err != nil {
				t.Fatal(err)
			}
			// 6 parameter services + /heard; 6 + /parameter_events +
			// /rosout + /chatter.
			p := Start(t, c.peer, "--want", "/go_graph", "--readers", "7", "--writers", "9", "--node", "peer_lister",
				"--linger", "3", "--timeout", "30", "--domain", strconv.Itoa(dom))
			// The Go side lists the peer's node too, in either layout.
			if !waitFor(10*time.Second, func() bool {
				for _, n := range tr.Nodes() {
					if n.Name == "peer_lister" {
						return true
					}
				}
				return false
			}) {
				t.Fatalf("Go transport does not list the peer: %+v (stats %+v)", tr.Nodes(), tr.Stats())
			}
			if rc, err := p.Wait(40 * time.Second); err != nil || rc != ExitOK {
				t.Fatalf("%s did not list /go_graph: exit %d %v, lines %q", c.peer, rc, err, p.Lines())
			}
		})
	}
}
