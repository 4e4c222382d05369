package intra

import (
	"bytes"
	"testing"

	"github.com/nros-go/nros/rmw"
)

func TestServiceRoundTrip(t *testing.T) {
	tr := New()
	defer tr.Close()
	var srv rmw.ServiceServer
	srv, err := tr.NewServiceServer(rmw.NodeInfo{Name: "s"}, "/add", "p/srv/A_Request", "p/srv/A_Response", rmw.ServicesDefaultQoS,
		func(r rmw.Request) {
			if err := srv.SendResponse(r.ID, append([]byte("re:"), r.Data...)); err != nil {
				t.Error(err)
			}
		}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []rmw.Response
	matched := 0
	cl, err := tr.NewServiceClient(rmw.NodeInfo{Name: "c"}, "/add", "p/srv/A_Request", "p/srv/A_Response", rmw.ServicesDefaultQoS,
		func(r rmw.Response) { got = append(got, rmw.Response{Data: bytes.Clone(r.Data), Seq: r.Seq}) },
		rmw.EndpointOptions{OnEvent: func(e rmw.Event) {
			if e.Kind == rmw.EventMatched {
				matched++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !cl.ServiceAvailable() || matched != 1 {
		t.Fatalf("available %v matched %d", cl.ServiceAvailable(), matched)
	}
	for i := 1; i <= 2; i++ {
		seq, err := cl.SendRequest([]byte{byte(i)})
		if err != nil || seq != int64(i) {
			t.Fatalf("seq %d err %v", seq, err)
		}
	}
	if len(got) != 2 || got[1].Seq != 2 || string(got[1].Data) != "re:\x02" {
		t.Fatalf("got %v", got)
	}
	// A client with other types does not match.
	other, err := tr.NewServiceClient(rmw.NodeInfo{Name: "c"}, "/add", "p/srv/B_Request", "p/srv/B_Response", rmw.ServicesDefaultQoS,
		func(rmw.Response) {}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.ServiceAvailable() {
		t.Fatal("type mismatch matched")
	}
	srv.Close()
	if cl.ServiceAvailable() {
		t.Fatal("available after server Close")
	}
	if _, err := cl.SendRequest(nil); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if _, err := cl.SendRequest(nil); err == nil {
		t.Fatal("SendRequest after Close")
	}
}

func TestServiceResponseToClosedClientDropped(t *testing.T) {
	tr := New()
	var ids []rmw.RequestID
	srv, _ := tr.NewServiceServer(rmw.NodeInfo{Name: "s"}, "/x", "a", "b", rmw.ServicesDefaultQoS, func(r rmw.Request) { ids = append(ids, r.ID) }, rmw.EndpointOptions{})
	called := false
	cl, _ := tr.NewServiceClient(rmw.NodeInfo{Name: "c"}, "/x", "a", "b", rmw.ServicesDefaultQoS, func(rmw.Response) { called = true }, rmw.EndpointOptions{})
	cl.SendRequest(nil)
	cl.Close()
	if err := srv.SendResponse(ids[0], nil); err != nil || called {
		t.Fatalf("err %v called %v", err, called)
	}
	tr.Close()
	if err := srv.SendResponse(ids[0], nil); err == nil {
		t.Fatal("SendResponse after transport Close")
	}
	if _, err := tr.NewServiceServer(rmw.NodeInfo{}, "/x", "a", "b", rmw.QoS{}, func(rmw.Request) {}, rmw.EndpointOptions{}); err == nil {
		t.Fatal("server on closed transport")
	}
	if _, err := tr.NewServiceClient(rmw.NodeInfo{}, "x", "a", "b", rmw.QoS{}, func(rmw.Response) {}, rmw.EndpointOptions{}); err == nil {
		t.Fatal("relative service name accepted")
	}
}

func TestServiceCloseFromHandler(t *testing.T) {
	tr := New()
	defer tr.Close()
	var srv rmw.ServiceServer
	srv, _ = tr.NewServiceServer(rmw.NodeInfo{}, "/x", "a", "b", rmw.QoS{}, func(r rmw.Request) { srv.Close() }, rmw.EndpointOptions{})
	cl, _ := tr.NewServiceClient(rmw.NodeInfo{}, "/x", "a", "b", rmw.QoS{}, func(rmw.Response) {}, rmw.EndpointOptions{})
	cl.SendRequest(nil) // must not deadlock
	if cl.ServiceAvailable() {
		t.Fatal("still available")
	}
}

func TestServicesGraph(t *testing.T) {
	tr := New()
	defer tr.Close()
	n := rmw.NodeInfo{Name: "s", Namespace: "/"}
	tr.NewServiceServer(n, "/b", "p/srv/B_Request", "p/srv/B_Response", rmw.QoS{}, func(rmw.Request) {}, rmw.EndpointOptions{})
	tr.NewServiceServer(n, "/a", "p/srv/A_Request", "p/srv/A_Response", rmw.QoS{}, func(rmw.Request) {}, rmw.EndpointOptions{})
	tr.NewServiceClient(rmw.NodeInfo{Name: "c", Namespace: "/"}, "/a", "p/srv/A_Request", "p/srv/A_Response", rmw.QoS{}, func(rmw.Response) {}, rmw.EndpointOptions{})
	got := tr.Services()
	if len(got) != 2 || got[0].Name != "/a" || got[0].Type != "p/srv/A" || len(got[0].ServerNodes) != 1 ||
		len(got[0].ClientNodes) != 1 || got[0].ClientNodes[0].Name != "c" || got[1].Name != "/b" {
		t.Fatalf("%+v", got)
	}
}

func TestGraphChanged(t *testing.T) {
	tr := New()
	defer tr.Close()
	ch := tr.GraphChanged()
	select {
	case <-ch:
		t.Fatal("closed before any change")
	default:
	}
	s, _ := tr.NewServiceServer(rmw.NodeInfo{}, "/x", "a", "b", rmw.QoS{}, func(rmw.Request) {}, rmw.EndpointOptions{})
	select {
	case <-ch:
	default:
		t.Fatal("not closed by a new server")
	}
	ch = tr.GraphChanged()
	p, _ := tr.NewPublisher(rmw.NodeInfo{}, "/t", "a", rmw.QoS{}, rmw.EndpointOptions{})
	<-ch
	ch = tr.GraphChanged()
	p.Close()
	<-ch
	ch = tr.GraphChanged()
	s.Close()
	<-ch
}
