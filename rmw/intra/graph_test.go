package intra

import (
	"slices"
	"strings"
	"testing"

	"github.com/nros-go/nros/rmw"
)

// TestGraphNodesAndTypeHash: the graph lists the nodes of topic and service
// endpoints once each, and every endpoint with the type hash its options
// carried; a malformed hash is refused.
func TestGraphNodesAndTypeHash(t *testing.T) {
	tr := New()
	defer tr.Close()
	h := "RIHS01_" + strings.Repeat("0f", 32)
	talker := rmw.NodeInfo{Name: "talker", Namespace: "/", Enclave: "/"}
	listener := rmw.NodeInfo{Name: "listener", Namespace: "/ns", Enclave: "/"}
	server := rmw.NodeInfo{Name: "server", Enclave: "/"} // "" namespace: the root
	if _, err := tr.NewPublisher(talker, "/chatter", strType, rmw.QoS{}, rmw.EndpointOptions{TypeHash: h}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.NewSubscription(listener, "/chatter", strType, rmw.QoS{}, func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.NewSubscription(talker, "/other", strType, rmw.QoS{}, func(rmw.Sample) {}, rmw.EndpointOptions{}); err != nil {
		t.Fatal(err)
	}
	srv, err := tr.NewServiceServer(server, "/svc", "std_srvs/srv/SetBool_Request", "std_srvs/srv/SetBool_Response", rmw.ServicesDefaultQoS,
		func(rmw.Request) {}, rmw.EndpointOptions{TypeHash: h, RequestTypeHash: h, ResponseTypeHash: h})
	if err != nil {
		t.Fatal(err)
	}
	want := []rmw.NodeInfo{{Name: "server", Namespace: "/"}, {Name: "talker", Namespace: "/"}, {Name: "listener", Namespace: "/ns"}}
	if got := tr.Nodes(); !slices.Equal(got, want) {
		t.Fatalf("nodes %+v, want %+v", got, want)
	}
	eps := tr.Endpoints("/chatter")
	if len(eps) != 2 || eps[0].TypeHash != h || eps[1].TypeHash != "" || !eps[0].Local || !eps[1].Local {
		t.Fatalf("endpoints %+v", eps)
	}
	if rmw.DiscoversPeers(tr) {
		t.Fatal("an in-process graph is complete at once: nothing to discover")
	}
	if got := rmw.Topics(tr); !slices.Equal(got, tr.Topics()) {
		t.Fatalf("rmw.Topics %+v, Topics %+v", got, tr.Topics())
	}
	srv.Close()
	if got := tr.Nodes(); len(got) != 2 {
		t.Fatalf("nodes after the server closed %+v", got)
	}
	bad := "RIHS01_" + strings.Repeat("0F", 32)
	if _, err := tr.NewPublisher(talker, "/bad", strType, rmw.QoS{}, rmw.EndpointOptions{TypeHash: bad}); err == nil {
		t.Fatal("publisher with an upper-case hash made")
	}
	if _, err := tr.NewSubscription(talker, "/bad", strType, rmw.QoS{}, func(rmw.Sample) {}, rmw.EndpointOptions{TypeHash: "x"}); err == nil {
		t.Fatal("subscription with a malformed hash made")
	}
	if _, err := tr.NewServiceClient(talker, "/bad", "std_srvs/srv/SetBool_Request", "std_srvs/srv/SetBool_Response", rmw.ServicesDefaultQoS,
		func(rmw.Response) {}, rmw.EndpointOptions{RequestTypeHash: bad}); err == nil {
		t.Fatal("client with a malformed hash made")
	}
	if got := tr.Nodes(); len(got) != 2 {
		t.Fatalf("refused endpoints left nodes behind: %+v", got)
	}
}
