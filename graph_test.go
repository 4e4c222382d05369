package nros

import (
	"context"
	"slices"
	"testing"

	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw/intra"
)

func TestGraphQueries(t *testing.T) {
	f := newSvcFixture(t, intra.New())
	defer f.stop()
	if _, err := NewPublisher[std_msgs.String](f.server, "chatter", KeepLast(7)); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSubscription[std_msgs.String](f.client, "/chatter", KeepLast(1), func(*std_msgs.String) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "~/enable",
		func(context.Context, *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	names := f.client.GetNodeNames()
	if !slices.Equal(names, []string{"/client", "/server"}) {
		t.Fatalf("nodes %q", names)
	}
	topics := f.client.GetTopicNamesAndTypes()
	if !slices.Equal(topics["/chatter"], []string{"std_msgs/msg/String"}) || topics["/rosout"] == nil {
		t.Fatalf("topics %v", topics)
	}
	svcs := f.client.GetServiceNamesAndTypes()
	if !slices.Equal(svcs["/server/enable"], []string{"std_srvs/srv/SetBool"}) || svcs["/client/get_parameters"] == nil {
		t.Fatalf("services %v", svcs)
	}
	pubs, _ := f.client.GetPublishersInfoByTopic("chatter")
	if len(pubs) != 1 || pubs[0].NodeName != "server" || pubs[0].QoS.Depth != 7 {
		t.Fatalf("publishers %+v", pubs)
	}
	if n, _ := f.server.CountSubscribers("/chatter"); n != 1 {
		t.Fatalf("%d subscribers", n)
	}
}
