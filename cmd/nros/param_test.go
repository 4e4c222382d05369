package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// paramNode runs a node "simtimer" on tr with an executor until the test
// ends.
func paramNode(t *testing.T, tr rmw.Transport) *nros.Node {
	t.Helper()
	c := nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(&bytes.Buffer{}))
	n, err := nros.NewNode("simtimer", nros.WithContext(c), nros.WithoutGlobalArguments())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.DeclareParameter("gain", nros.IntegerValue(3), nros.ParameterDescriptor{Description: "how much"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.DeclareParameter("ns.list", nros.StringArrayValue([]string{"a", "b"})); err != nil {
		t.Fatal(err)
	}
	e := nros.NewExecutor(nros.WithExecutorContext(c))
	e.AddNode(n)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Spin(ctx) }()
	t.Cleanup(func() { cancel(); <-done; n.Close(); e.Close(); c.Shutdown() })
	return n
}

func paramRun(t *testing.T, tr rmw.Transport, args ...string) (int, string, string) {
	t.Helper()
	e, out, errb := testEnv(tr, realClock{})
	code := e.paramCmd(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestParamSetGetUseSimTime(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	n := paramNode(t, tr)
	if code, out, errs := paramRun(t, tr, "get", "/simtimer", "use_sim_time"); code != 0 || out != "Boolean value is: False\n" {
		t.Fatalf("get: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := paramRun(t, tr, "set", "/simtimer", "use_sim_time", "true"); code != 0 || out != "Set parameter successful\n" {
		t.Fatalf("set: exit %d %q %q", code, out, errs)
	}
	if v, _ := n.GetParameter("use_sim_time"); v.String() != "Boolean value is: True" {
		t.Fatalf("node has %v", v)
	}
	if code, out, _ := paramRun(t, tr, "get", "simtimer", "use_sim_time"); code != 0 || out != "Boolean value is: True\n" {
		t.Fatalf("get after set: exit %d %q", code, out)
	}
	// Refused: non-zero, the node's reason on stderr, nothing changed.
	code, out, errs := paramRun(t, tr, "set", "/simtimer", "use_sim_time", "notabool")
	if code == 0 || out != "" || !strings.Contains(errs, "Setting parameter failed") || !strings.Contains(errs, "use_sim_time") {
		t.Fatalf("notabool: exit %d %q %q", code, out, errs)
	}
	if v, _ := n.GetParameter("use_sim_time"); v.String() != "Boolean value is: True" {
		t.Fatalf("refused set changed it to %v", v)
	}
}

func TestParamListDescribeDumpLoadDelete(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	n := paramNode(t, tr)
	if code, out, errs := paramRun(t, tr, "list", "/simtimer"); code != 0 || out != "  gain\n  ns.list\n  use_sim_time\n" {
		t.Fatalf("list: exit %d %q %q", code, out, errs)
	}
	code, out, errs := paramRun(t, tr, "describe", "/simtimer", "gain")
	if code != 0 || out != "Parameter name: gain\n  Type: integer\n  Description: how much\n  Constraints:\n" {
		t.Fatalf("describe: exit %d %q %q", code, out, errs)
	}
	code, out, errs = paramRun(t, tr, "dump", "/simtimer")
	want := "/simtimer:\n  ros__parameters:\n    gain: 3\n    ns:\n      list:\n      - a\n      - b\n    use_sim_time: false\n"
	if code != 0 || out != want {
		t.Fatalf("dump: exit %d\n%s\nwant\n%s\n%s", code, out, want, errs)
	}
	// Load what dump printed, changed.
	file := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(file, []byte(strings.Replace(want, "gain: 3", "gain: 7", 1)), 0o644)
	if code, out, errs := paramRun(t, tr, "load", "/simtimer", file); code != 0 || !strings.Contains(out, "Set parameter gain successful") {
		t.Fatalf("load: exit %d %q %q", code, out, errs)
	}
	if v, _ := n.GetParameter("gain"); v.String() != "Integer value is: 7" {
		t.Fatalf("gain %v", v)
	}
	// A statically typed parameter cannot be deleted.
	if code, _, errs := paramRun(t, tr, "delete", "/simtimer", "gain"); code == 0 || !strings.Contains(errs, "Deleting parameter failed") {
		t.Fatalf("delete: exit %d %q", code, errs)
	}
}

func TestParamNodeNotFoundAndUsage(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	code, _, errs := paramRun(t, tr, "get", "/nobody", "x", "--timeout", "50ms")
	if code != 1 || !strings.Contains(errs, "Node not found") {
		t.Fatalf("exit %d %q", code, errs)
	}
	for _, args := range [][]string{nil, {"frob"}, {"get", "/n"}, {"set", "/n", "a"}, {"get", "/n", "x", "--bogus"}} {
		if code, _, errs := paramRun(t, tr, args...); code != 2 || errs == "" {
			t.Fatalf("%q: exit %d %q", args, code, errs)
		}
	}
}

func TestParamListAllNodes(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	paramNode(t, tr)
	code, out, errs := paramRun(t, tr, "list")
	if code != 0 || out != "/simtimer:\n  gain\n  ns.list\n  use_sim_time\n" {
		t.Fatalf("list: exit %d %q %q", code, out, errs)
	}
}
