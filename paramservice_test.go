package nros

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

func call[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](t *testing.T, n *Node, name string, req *Req) *Resp {
	t.Helper()
	cl, err := NewClient[Req, Resp, PReq, PResp](n, name)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Call(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resp
}

func setParam(t *testing.T, n *Node, node string, p rcl_interfaces.Parameter) rcl_interfaces.SetParametersResult {
	t.Helper()
	resp := call[rcl_interfaces.SetParameters_Request, rcl_interfaces.SetParameters_Response](t, n, node+"/set_parameters",
		&rcl_interfaces.SetParameters_Request{Parameters: []rcl_interfaces.Parameter{p}})
	if len(resp.Results) != 1 {
		t.Fatalf("%d results", len(resp.Results))
	}
	return resp.Results[0]
}

func boolParam(name string, b bool) rcl_interfaces.Parameter {
	return rcl_interfaces.Parameter{Name: name, Value: rcl_interfaces.ParameterValue{Type: 1, BoolValue: b}}
}

// use_sim_time set through set_parameters behaves as set in code: the node
// follows /clock, a refusal comes back with its reason and changes nothing,
// and every change is published on /parameter_events.
func TestParameterServiceUseSimTime(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		var mu sync.Mutex
		var events []rcl_interfaces.ParameterEvent
		if _, err := NewSubscription[rcl_interfaces.ParameterEvent](f.server, ParameterEventsTopic, ParametersQoS(),
			func(e *rcl_interfaces.ParameterEvent) {
				mu.Lock()
				events = append(events, *e)
				mu.Unlock()
			}); err != nil {
			t.Fatal(err)
		}
		clk, err := NewPublisher[rosgraph_msgs.Clock](f.client, "/clock", ClockQoS())
		if err != nil {
			t.Fatal(err)
		}
		if r := setParam(t, f.client, "/server", boolParam(UseSimTimeParameter, true)); !r.Successful {
			t.Fatalf("refused: %q", r.Reason)
		}
		if v, _ := f.server.GetParameter(UseSimTimeParameter); v.String() != "Boolean value is: True" {
			t.Fatalf("use_sim_time is %v", v)
		}
		// The server's /clock subscription exists now; over DDS the
		// client's publisher matches it when discovery has run.
		for i := 0; clk.MatchedSubscriptions() == 0; i++ {
			if i == 100 {
				t.Fatal("the client's /clock publisher never matched the server's subscription")
			}
			time.Sleep(100 * time.Millisecond) // virtual time (synctest)
		}
		clk.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 42}})
		synctest.Wait()
		if now := f.server.Clock().Now(); now.Nanoseconds() != 42e9 {
			t.Fatalf("clock %v, want the simulated 42 s", now)
		}
		// Not a bool: refused with a reason, nothing changes.
		r := setParam(t, f.client, "/server", rcl_interfaces.Parameter{Name: UseSimTimeParameter,
			Value: rcl_interfaces.ParameterValue{Type: 4, StringValue: "notabool"}})
		if r.Successful || !strings.Contains(r.Reason, UseSimTimeParameter) {
			t.Fatalf("notabool: %+v", r)
		}
		// An unknown type: refused with a reason.
		r = setParam(t, f.client, "/server", rcl_interfaces.Parameter{Name: UseSimTimeParameter,
			Value: rcl_interfaces.ParameterValue{Type: 42}})
		if r.Successful || !strings.Contains(r.Reason, "unknown parameter type 42") {
			t.Fatalf("type 42: %+v", r)
		}
		if !f.server.Clock().RosTimeIsActive() {
			t.Fatal("a refused set changed the time source")
		}
		// Back to false: the last simulated time is kept, /clock no longer
		// moves it.
		if r := setParam(t, f.client, "/server", boolParam(UseSimTimeParameter, false)); !r.Successful {
			t.Fatalf("refused: %q", r.Reason)
		}
		clk.Publish(&rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 50}})
		synctest.Wait()
		if now := f.server.Clock().Now(); now.Nanoseconds() != 42e9 {
			t.Fatalf("clock %v after use_sim_time false, want the last simulated 42 s", now)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(events) != 2 {
			t.Fatalf("%d parameter events: %+v", len(events), events)
		}
		for i, want := range []bool{true, false} {
			e := events[i]
			if e.Node != "/server" || len(e.ChangedParameters) != 1 || e.ChangedParameters[0].Name != UseSimTimeParameter ||
				e.ChangedParameters[0].Value.BoolValue != want {
				t.Fatalf("event %d: %+v", i, e)
			}
		}
	})
}

func TestParameterServicesQueries(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		if _, err := f.server.DeclareParameter("gain", IntegerValue(3), ParameterDescriptor{Description: "how much",
			IntegerRange: &IntegerRange{From: 0, To: 10}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.server.DeclareParameter("ns.deep.x", StringValue("hi")); err != nil {
			t.Fatal(err)
		}
		get := call[rcl_interfaces.GetParameters_Request, rcl_interfaces.GetParameters_Response](t, f.client, "/server/get_parameters",
			&rcl_interfaces.GetParameters_Request{Names: []string{"gain", "use_sim_time", "ns.deep.x"}})
		if len(get.Values) != 3 || get.Values[0].IntegerValue != 3 || get.Values[1].Type != 1 || get.Values[2].StringValue != "hi" {
			t.Fatalf("get %+v", get)
		}
		get = call[rcl_interfaces.GetParameters_Request, rcl_interfaces.GetParameters_Response](t, f.client, "/server/get_parameters",
			&rcl_interfaces.GetParameters_Request{Names: []string{"gain", "nope"}})
		if len(get.Values) != 0 {
			t.Fatalf("undeclared: %+v", get)
		}
		types := call[rcl_interfaces.GetParameterTypes_Request, rcl_interfaces.GetParameterTypes_Response](t, f.client, "/server/get_parameter_types",
			&rcl_interfaces.GetParameterTypes_Request{Names: []string{"gain", "nope"}})
		if len(types.Types) != 2 || types.Types[0] != 2 || types.Types[1] != 0 {
			t.Fatalf("types %+v", types)
		}
		list := call[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](t, f.client, "/server/list_parameters",
			&rcl_interfaces.ListParameters_Request{})
		if strings.Join(list.Result.Names, ",") != "gain,ns.deep.x,use_sim_time" || strings.Join(list.Result.Prefixes, ",") != "ns.deep" {
			t.Fatalf("list %+v", list)
		}
		desc := call[rcl_interfaces.DescribeParameters_Request, rcl_interfaces.DescribeParameters_Response](t, f.client, "/server/describe_parameters",
			&rcl_interfaces.DescribeParameters_Request{Names: []string{"gain"}})
		if len(desc.Descriptors) != 1 || desc.Descriptors[0].Description != "how much" || desc.Descriptors[0].Type != 2 ||
			len(desc.Descriptors[0].IntegerRange) != 1 || desc.Descriptors[0].IntegerRange[0].ToValue != 10 {
			t.Fatalf("describe %+v", desc)
		}
		// Out of range, atomically with a valid one: nothing changes.
		at := call[rcl_interfaces.SetParametersAtomically_Request, rcl_interfaces.SetParametersAtomically_Response](t, f.client, "/server/set_parameters_atomically",
			&rcl_interfaces.SetParametersAtomically_Request{Parameters: []rcl_interfaces.Parameter{
				{Name: "ns.deep.x", Value: rcl_interfaces.ParameterValue{Type: 4, StringValue: "changed"}},
				{Name: "gain", Value: rcl_interfaces.ParameterValue{Type: 2, IntegerValue: 11}},
			}})
		if at.Result.Successful || at.Result.Reason == "" {
			t.Fatalf("atomic %+v", at)
		}
		if v, _ := f.server.GetParameter("ns.deep.x"); v.ValueString() != "hi" {
			t.Fatalf("ns.deep.x = %v after a refused atomic set", v)
		}
	})
}

func TestParameterServicesCanBeTurnedOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		ctx := NewContext(WithTransport(tr), WithLogOutput(nil))
		defer ctx.Shutdown()
		for _, opt := range []NodeOption{WithoutParameterServices(), WithArguments("--ros-args", "-p", "start_parameter_services:=false")} {
			n, err := NewNode("quiet", WithContext(ctx), opt)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := NewNode("asker", WithContext(ctx))
			cl, err := NewClient[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](c, "/quiet/list_parameters")
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := cl.WaitForService(wctx); err == nil {
				t.Fatal("parameter services are served")
			}
			cancel()
			n.Close()
			c.Close()
		}
	})
}

// FuzzParameterServiceRequests feeds outside bytes to the set_parameters
// and get_parameters handlers as the service does (decode, then handle):
// an error or a refusal with a reason, never a panic.
func FuzzParameterServiceRequests(f *testing.F) {
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(nil))
	n, err := NewNode("fuzzed", WithContext(ctx), WithoutParameterServices(), AllowUndeclaredParameters())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { n.Close(); ctx.Shutdown() })
	good := msg.Marshal(&rcl_interfaces.SetParameters_Request{Parameters: []rcl_interfaces.Parameter{boolParam("x", true)}}, true, nil)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var set rcl_interfaces.SetParameters_Request
		if msg.Unmarshal(b, &set) == nil && len(set.Parameters) < 64 {
			resp, _ := n.setParametersService(context.Background(), &set)
			for _, r := range resp.Results {
				if !r.Successful && r.Reason == "" {
					t.Fatal("refusal without a reason")
				}
			}
		}
		var get rcl_interfaces.GetParameters_Request
		if msg.Unmarshal(b, &get) == nil {
			n.getParametersService(context.Background(), &get)
			n.describeParametersService(context.Background(), &rcl_interfaces.DescribeParameters_Request{Names: get.Names})
			n.listParametersService(context.Background(), &rcl_interfaces.ListParameters_Request{Prefixes: get.Names, Depth: uint64(len(b))})
		}
	})
}
