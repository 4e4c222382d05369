package nros

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// Hand-written types that carry type hashes as generated types do
// (msg.TypeHasher, msg.ServiceTypeHasher), and one that carries none.

func hashOf(c byte) string { return "RIHS01_" + strings.Repeat(string(c), 64) }

type emptyBody struct{}

func (*emptyBody) MarshalCDR(*cdr.Encoder)         {}
func (*emptyBody) UnmarshalCDR(*cdr.Decoder) error { return nil }

type hashedMsg struct{ emptyBody }

func (*hashedMsg) TypeName() string { return "nros_test/msg/Hashed" }
func (*hashedMsg) TypeHash() string { return hashOf('1') }

type unhashedMsg struct{ emptyBody }

func (*unhashedMsg) TypeName() string { return "nros_test/msg/Unhashed" }

type hashedReq struct{ emptyBody }

func (*hashedReq) TypeName() string        { return "nros_test/srv/Hashed_Request" }
func (*hashedReq) TypeHash() string        { return hashOf('2') }
func (*hashedReq) ServiceTypeHash() string { return hashOf('4') }

type hashedResp struct{ emptyBody }

func (*hashedResp) TypeName() string        { return "nros_test/srv/Hashed_Response" }
func (*hashedResp) TypeHash() string        { return hashOf('3') }
func (*hashedResp) ServiceTypeHash() string { return hashOf('4') }

// An action of hand-written parts whose generated wrappers (registered
// below) carry hashes.
type hGoal struct{ emptyBody }

func (*hGoal) TypeName() string { return "nros_test/action/H_Goal" }

type hResult struct{ emptyBody }

func (*hResult) TypeName() string { return "nros_test/action/H_Result" }

type hFeedback struct{ emptyBody }

func (*hFeedback) TypeName() string { return "nros_test/action/H_Feedback" }

type registeredPart struct {
	emptyBody
	name, hash, service string
}

func (m *registeredPart) TypeName() string        { return m.name }
func (m *registeredPart) TypeHash() string        { return m.hash }
func (m *registeredPart) ServiceTypeHash() string { return m.service }

func init() {
	for _, p := range []registeredPart{
		{name: "nros_test/action/H_SendGoal_Request", hash: hashOf('5'), service: hashOf('6')},
		{name: "nros_test/action/H_SendGoal_Response", hash: hashOf('7'), service: hashOf('6')},
		{name: "nros_test/action/H_FeedbackMessage", hash: hashOf('8')},
	} {
		msg.Register(p.name, func() msg.Message { q := p; return &q })
	}
}

// recordingTransport records the options of every endpoint made through
// it, by topic or service name and kind.
type recordingTransport struct {
	rmw.Transport
	mu   sync.Mutex
	opts map[string]rmw.EndpointOptions // "pub /t", "sub /t", "srv /s", "cli /s"
}

func (r *recordingTransport) record(key string, o rmw.EndpointOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts[key] = o
}

func (r *recordingTransport) get(key string) rmw.EndpointOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts[key]
}

func (r *recordingTransport) NewPublisher(node rmw.NodeInfo, topic, typ string, q rmw.QoS, o rmw.EndpointOptions) (rmw.Publisher, error) {
	r.record("pub "+topic, o)
	return r.Transport.NewPublisher(node, topic, typ, q, o)
}

func (r *recordingTransport) NewSubscription(node rmw.NodeInfo, topic, typ string, q rmw.QoS, d func(rmw.Sample), o rmw.EndpointOptions) (rmw.Subscription, error) {
	r.record("sub "+topic, o)
	return r.Transport.NewSubscription(node, topic, typ, q, d, o)
}

func (r *recordingTransport) NewServiceServer(node rmw.NodeInfo, name, req, resp string, q rmw.QoS, h func(rmw.Request), o rmw.EndpointOptions) (rmw.ServiceServer, error) {
	r.record("srv "+name, o)
	return r.Transport.NewServiceServer(node, name, req, resp, q, h, o)
}

func (r *recordingTransport) NewServiceClient(node rmw.NodeInfo, name, req, resp string, q rmw.QoS, d func(rmw.Response), o rmw.EndpointOptions) (rmw.ServiceClient, error) {
	r.record("cli "+name, o)
	return r.Transport.NewServiceClient(node, name, req, resp, q, d, o)
}

// TestTypeHashesReachTheTransport: every endpoint carries the hashes its
// types announce down to the transport, and the graph reports them.
func TestTypeHashesReachTheTransport(t *testing.T) {
	tr := &recordingTransport{Transport: intra.New(), opts: map[string]rmw.EndpointOptions{}}
	defer tr.Close()
	ctx := NewContext(WithTransport(tr), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("hasher", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := NewPublisher[hashedMsg](n, "/hashed", DefaultQoS()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSubscription[hashedMsg](n, "/hashed", DefaultQoS(), func(*hashedMsg) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPublisher[unhashedMsg](n, "/plain", DefaultQoS()); err != nil {
		t.Fatal(err)
	}
	handler := func(context.Context, *hashedReq) (*hashedResp, error) { return &hashedResp{}, nil }
	if _, err := NewService[hashedReq, hashedResp](n, "/svc", handler); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient[hashedReq, hashedResp](n, "/svc"); err != nil {
		t.Fatal(err)
	}
	_, err = NewActionServer[hGoal, hResult, hFeedback](n, "/act", ActionHandlers[hGoal, hResult, hFeedback]{
		Execute: func(context.Context, *ServerGoal[hGoal, hFeedback]) (*hResult, error) { return &hResult{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]rmw.EndpointOptions{
		"pub /hashed": {TypeHash: hashOf('1')},
		"sub /hashed": {TypeHash: hashOf('1')},
		"pub /plain":  {},
		"srv /svc":    {TypeHash: hashOf('4'), RequestTypeHash: hashOf('2'), ResponseTypeHash: hashOf('3')},
		"cli /svc":    {TypeHash: hashOf('4'), RequestTypeHash: hashOf('2'), ResponseTypeHash: hashOf('3')},
		// The action's wrappers announce the hashes of the registered
		// generated types of their names; the unregistered ones none.
		"srv /act/_action/send_goal":  {TypeHash: hashOf('6'), RequestTypeHash: hashOf('5'), ResponseTypeHash: hashOf('7')},
		"srv /act/_action/get_result": {},
		"pub /act/_action/feedback":   {TypeHash: hashOf('8')},
	} {
		got := tr.get(key)
		if got.OnEvent == nil {
			t.Errorf("%s: no endpoint, or no event handler", key)
		}
		if got.TypeHash != want.TypeHash || got.RequestTypeHash != want.RequestTypeHash || got.ResponseTypeHash != want.ResponseTypeHash {
			t.Errorf("%s: hashes %q %q %q, want %q %q %q", key, got.TypeHash, got.RequestTypeHash, got.ResponseTypeHash,
				want.TypeHash, want.RequestTypeHash, want.ResponseTypeHash)
		}
	}
	// The runtime's own endpoints announce their generated types' hashes
	// (empty until the generated types carry them).
	if err := n.InstallRosTimeSource(); err != nil {
		t.Fatal(err)
	}
	for key, m := range map[string]msg.Message{
		"sub /clock":            &rosgraph_msgs.Clock{},
		"pub /rosout":           &rcl_interfaces.Log{},
		"pub /parameter_events": &rcl_interfaces.ParameterEvent{},
	} {
		if got := tr.get(key); got.OnEvent == nil || got.TypeHash != messageTypeHash(m) {
			t.Errorf("%s: type hash %q, want %q", key, got.TypeHash, messageTypeHash(m))
		}
	}
	if got, want := tr.get("srv /hasher/get_parameters"), serviceTypeHashes(rmw.EndpointOptions{},
		&rcl_interfaces.GetParameters_Request{}, &rcl_interfaces.GetParameters_Response{}); got.OnEvent == nil ||
		got.TypeHash != want.TypeHash || got.RequestTypeHash != want.RequestTypeHash || got.ResponseTypeHash != want.ResponseTypeHash {
		t.Errorf("get_parameters: %+v", got)
	}
	pubs, err := n.GetPublishersInfoByTopic("/hashed")
	if err != nil || len(pubs) != 1 || pubs[0].TypeHash != hashOf('1') {
		t.Fatalf("publishers %+v %v", pubs, err)
	}
	if subs, _ := n.GetSubscriptionsInfoByTopic("/hashed"); len(subs) != 1 || subs[0].TypeHash != hashOf('1') {
		t.Fatalf("subscriptions %+v", subs)
	}
	if pubs, _ := n.GetPublishersInfoByTopic("/plain"); len(pubs) != 1 || pubs[0].TypeHash != "" {
		t.Fatalf("publishers %+v", pubs)
	}
}

// A type that announces a malformed hash cannot make an endpoint: the
// transport refuses it rather than put it on the wire.
type badHashMsg struct{ emptyBody }

func (*badHashMsg) TypeName() string { return "nros_test/msg/BadHash" }
func (*badHashMsg) TypeHash() string { return "RIHS01_;" }

func TestMalformedTypeHashRefused(t *testing.T) {
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("hasher", WithContext(ctx), WithoutParameterServices())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := NewPublisher[badHashMsg](n, "/bad", DefaultQoS()); err == nil || !strings.Contains(err.Error(), "RIHS01_;") {
		t.Fatalf("publisher of a malformed hash: %v", err)
	}
}
