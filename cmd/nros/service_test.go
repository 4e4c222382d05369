package main

import (
	"context"
	"strings"
	"testing"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw/intra"
)

func TestServiceListTypeCall(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	n := paramNode(t, tr)
	if _, err := nros.NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](n, "~/enable",
		func(_ context.Context, r *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
			return &std_srvs.SetBool_Response{Success: r.Data, Message: "done"}, nil
		}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		e, out, errb := testEnv(tr, realClock{})
		code := e.serviceCmd(context.Background(), args)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("list")
	if code != 0 || !strings.Contains(out, "/simtimer/enable\n") || !strings.Contains(out, "/simtimer/set_parameters\n") {
		t.Fatalf("list: exit %d %q %q", code, out, errs)
	}
	code, out, _ = run("list", "-t")
	if code != 0 || !strings.Contains(out, "/simtimer/enable [std_srvs/srv/SetBool]\n") ||
		!strings.Contains(out, "/simtimer/get_parameters [rcl_interfaces/srv/GetParameters]\n") {
		t.Fatalf("list -t: exit %d %q", code, out)
	}
	if code, out, _ = run("type", "/simtimer/enable"); code != 0 || out != "std_srvs/srv/SetBool\n" {
		t.Fatalf("type: exit %d %q", code, out)
	}
	code, out, errs = run("call", "/simtimer/enable", "std_srvs/srv/SetBool", "{data: true}")
	want := "requester: making request: std_srvs.srv.SetBool_Request(data=True)\n\n" +
		"response:\nstd_srvs.srv.SetBool_Response(success=True, message='done')\n\n"
	if code != 0 || out != want {
		t.Fatalf("call: exit %d\n%q\nwant\n%q\n%s", code, out, want, errs)
	}
	if code, _, errs := run("call", "/simtimer/enable", "std_srvs/NoSuch", "{}"); code != 2 || errs == "" {
		t.Fatalf("bad type: exit %d %q", code, errs)
	}
	if code, _, errs := run("call", "/nobody", "std_srvs/SetBool", "--timeout", "50ms"); code != 1 || !strings.Contains(errs, "not available") {
		t.Fatalf("no server: exit %d %q", code, errs)
	}
}

func TestNodeListInfo(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	n := paramNode(t, tr)
	if _, err := nros.NewPublisher[std_srvs.SetBool_Request](n, "odd", nros.KeepLast(1)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		e, out, errb := testEnv(tr, realClock{})
		code := e.nodeCmd(context.Background(), args)
		return code, out.String(), errb.String()
	}
	if code, out, errs := run("list"); code != 0 || out != "/simtimer\n" {
		t.Fatalf("list: exit %d %q %q", code, out, errs)
	}
	code, out, errs := run("info", "simtimer")
	want := "/simtimer\n  Subscribers:\n\n  Publishers:\n    /odd: std_srvs/srv/SetBool_Request\n    /parameter_events: rcl_interfaces/msg/ParameterEvent\n" +
		"    /rosout: rcl_interfaces/msg/Log\n" +
		"  Service Servers:\n" +
		"    /simtimer/describe_parameters: rcl_interfaces/srv/DescribeParameters\n" +
		"    /simtimer/get_parameter_types: rcl_interfaces/srv/GetParameterTypes\n" +
		"    /simtimer/get_parameters: rcl_interfaces/srv/GetParameters\n" +
		"    /simtimer/list_parameters: rcl_interfaces/srv/ListParameters\n" +
		"    /simtimer/set_parameters: rcl_interfaces/srv/SetParameters\n" +
		"    /simtimer/set_parameters_atomically: rcl_interfaces/srv/SetParametersAtomically\n" +
		"  Service Clients:\n\n  Action Servers:\n\n  Action Clients:\n\n"
	if code != 0 || out != want {
		t.Fatalf("info: exit %d\n%s\nwant\n%s\n%s", code, out, want, errs)
	}
	if code, _, errs := run("info", "/nobody"); code != 1 || !strings.Contains(errs, "unable to find node") {
		t.Fatalf("info nobody: exit %d %q", code, errs)
	}
}
