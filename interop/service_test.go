package interop

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_srvs"
)

// TestGoClientToPeerServer: a Go client calls std_srvs/SetBool on a peer
// server, which answers in its vendor's request-id mapping (Cyclone: the
// header in the payload; Fast DDS: the related sample identity).
func TestGoClientToPeerServer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			srv := Start(t, "svc_"+vendor, "--mode", "server", "--service", "/set_flag", "--count", "3",
				"--timeout", "60", "--domain", fmt.Sprint(dom))
			g := newGoNode(t, dom, "go_client")
			cl, err := nros.NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](g.node, "set_flag")
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				resp, err := cl.Call(ctx, &std_srvs.SetBool_Request{Data: i%2 == 1})
				cancel()
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				want := fmt.Sprintf("%s %v", vendor, i%2 == 1)
				if resp.Success != (i%2 == 1) || resp.Message != want {
					t.Fatalf("call %d: %+v, want message %q", i, resp, want)
				}
			}
			if rc, err := srv.Wait(20 * time.Second); err != nil || rc != ExitOK {
				t.Fatalf("server exit %d %v", rc, err)
			}
		})
	}
}

// TestPeerClientToGoServer: a peer client calls a Go SetBool server; the Go
// server answers each in the mapping its request came with.
func TestPeerClientToGoServer(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			g := newGoNode(t, dom, "go_server")
			srv, err := nros.NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](g.node, "/set_flag",
				func(_ context.Context, req *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
					return &std_srvs.SetBool_Response{Success: req.Data, Message: fmt.Sprintf("go %v", req.Data)}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			g.spin()
			cl := Start(t, "svc_"+vendor, "--mode", "client", "--service", "/set_flag", "--count", "4",
				"--timeout", "60", "--domain", fmt.Sprint(dom))
			if rc, err := cl.Wait(60 * time.Second); err != nil || rc != ExitOK {
				t.Fatalf("client exit %d %v", rc, err)
			}
			lines := cl.Lines()
			if len(lines) != 4 {
				t.Fatalf("client printed %q", lines)
			}
			for i, l := range lines {
				on := i%2 == 0
				b := 0
				if on {
					b = 1
				}
				// response <seq> <success> <message>; the sequence numbers
				// are the client's own (from 1).
				want := fmt.Sprintf("response %d %d go %v", i+1, b, on)
				if l != want {
					t.Fatalf("line %d: %q, want %q", i, l, want)
				}
			}
			if srv.Answered() != 4 || srv.Dropped() != 0 {
				t.Fatalf("answered %d dropped %d", srv.Answered(), srv.Dropped())
			}
		})
	}
}

// TestGoCallToMuteServerTimesOut: a peer server that takes requests and never
// answers, then one killed mid-call; the Go call returns the context's
// error at its deadline and leaves no goroutine and no pending request
// behind.
func TestGoCallToMuteServerTimesOut(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			dom := Domain(t)
			srv := Start(t, "svc_"+vendor, "--mode", "server", "--mute", "--service", "/mute",
				"--timeout", "60", "--domain", fmt.Sprint(dom))
			g := newGoNode(t, dom, "go_client")
			cl, err := nros.NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](g.node, "/mute")
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = cl.WaitForService(wctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			const d = 1500 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), d)
			start := time.Now()
			_, err = cl.Call(ctx, &std_srvs.SetBool_Request{Data: true})
			took := time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v", err)
			}
			if took < d || took > d+500*time.Millisecond {
				t.Fatalf("returned after %v, deadline %v", took, d)
			}
			if cl.Pending() != 0 {
				t.Fatalf("%d pending", cl.Pending())
			}
			// The peer did get the request.
			if _, err := srv.WaitLines(1, 10*time.Second); err != nil || !strings.HasPrefix(srv.Lines()[0], "request 1 1") {
				t.Fatalf("server lines %q %v", srv.Lines(), err)
			}
			if !waitFor(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
				t.Fatalf("goroutines %d -> %d", before, runtime.NumGoroutine())
			}
			// The server goes away mid-call: the call still ends at its
			// deadline, with nothing left behind.
			go func() { time.Sleep(300 * time.Millisecond); srv.Kill() }()
			ctx, cancel = context.WithTimeout(context.Background(), d)
			start = time.Now()
			_, err = cl.Call(ctx, &std_srvs.SetBool_Request{Data: true})
			took = time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || took < d || took > d+500*time.Millisecond {
				t.Fatalf("server gone mid-call: %v after %v", err, took)
			}
			if cl.Pending() != 0 {
				t.Fatalf("%d pending", cl.Pending())
			}
			if !waitFor(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
				t.Fatalf("goroutines %d -> %d", before, runtime.NumGoroutine())
			}
		})
	}
}

// TestNrosServiceAndNodeAgainstPeers: nros service list/call and nros node
// list see a peer's server and node (from SEDP and ros_discovery_info) and
// call it in the peer's mapping.
func TestNrosServiceAndNodeAgainstPeers(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			Start(t, "svc_"+vendor, "--mode", "server", "--service", "/set_flag", "--node", "peer_server",
				"--timeout", "60", "--domain", fmt.Sprint(dom))
			code, out, errs := nrosCLI(t, dom, "service", "list", "-t", "--spin-time", "2")
			if code != 0 || !strings.Contains(out, "/set_flag [std_srvs/srv/SetBool]\n") {
				t.Fatalf("service list: exit %d %q %q", code, out, errs)
			}
			code, out, errs = nrosCLI(t, dom, "node", "list", "--spin-time", "2")
			if code != 0 || !strings.Contains(out, "/peer_server\n") {
				t.Fatalf("node list: exit %d %q %q", code, out, errs)
			}
			code, out, errs = nrosCLI(t, dom, "service", "call", "/set_flag", "std_srvs/srv/SetBool", "{data: true}", "--timeout", "20s")
			want := fmt.Sprintf("response:\nstd_srvs.srv.SetBool_Response(success=True, message='%s true')\n", vendor)
			if code != 0 || !strings.Contains(out, want) {
				t.Fatalf("service call: exit %d %q %q", code, out, errs)
			}
		})
	}
}

// TestServiceRoundTripRatio measures the mean round trip of sequential
// SetBool calls Go client -> Go server (two participants, one process)
// against Cyclone client -> Cyclone server (two processes) and logs the
// ratio (the target is <= 1.0). Without the race detector it fails
// when Go is more than 3 times slower, which no loaded machine explains.
func TestServiceRoundTripRatio(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	if testing.Short() {
		t.Skip("benchmark")
	}
	const n = 500
	dom := Domain(t)
	srv := Start(t, "svc_cyclone", "--mode", "server", "--service", "/rt", "--quiet", "--timeout", "60", "--domain", fmt.Sprint(dom))
	cl := Start(t, "svc_cyclone", "--mode", "client", "--service", "/rt", "--count", fmt.Sprint(n), "--quiet",
		"--timeout", "60", "--domain", fmt.Sprint(dom))
	if rc, err := cl.Wait(60 * time.Second); err != nil || rc != ExitOK {
		t.Fatalf("cyclone client: exit %d %v", rc, err)
	}
	srv.Kill()
	var cyUs float64
	for _, l := range strings.Split(cl.Stderr(), "\n") {
		if i := strings.Index(l, "mean round trip "); i >= 0 {
			fmt.Sscanf(l[i+len("mean round trip "):], "%f", &cyUs)
		}
	}
	if cyUs <= 0 {
		t.Fatalf("no round trip in %q", cl.Stderr())
	}

	dom2 := Domain(t)
	gs := newGoNode(t, dom2, "go_rt_server")
	if _, err := nros.NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](gs.node, "/rt",
		func(_ context.Context, req *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
			return &std_srvs.SetBool_Response{Success: req.Data}, nil
		}); err != nil {
		t.Fatal(err)
	}
	gs.spin()
	gc := newGoNode(t, dom2, "go_rt_client")
	c, err := nros.NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](gc.node, "/rt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // as the peer client settles
	start := time.Now()
	for i := range n {
		if _, err := c.Call(ctx, &std_srvs.SetBool_Request{Data: i%2 == 0}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	goUs := float64(time.Since(start).Microseconds()) / n
	ratio := goUs / cyUs
	t.Logf("service round trip: Go %.1f us, Cyclone %.1f us, ratio Go/Cyclone %.2f (race detector %v)", goUs, cyUs, ratio, raceEnabled)
	if !raceEnabled && ratio > 3 {
		t.Fatalf("Go round trip %.1f us is %.1f times Cyclone's %.1f us", goUs, ratio, cyUs)
	}
}
