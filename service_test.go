package nros

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

// svcFixture is two nodes, "server" spun by an executor on its own
// goroutine and "client" unspun, on one transport or on the two of a
// transport pair (one context each).
type svcFixture struct {
	server, client *Node
	exec           *Executor
	stop           func()
}

func newSvcFixture(t *testing.T, tr rmw.Transport, clientArgs ...string) *svcFixture {
	t.Helper()
	return newSvcFixturePair(t, tr, tr, clientArgs...)
}

// newSvcFixtureOver is the fixture on a transport pair.
func newSvcFixtureOver(t *testing.T, tp transportPair, clientArgs ...string) *svcFixture {
	t.Helper()
	a, b := tp.make(t)
	return newSvcFixturePair(t, a, b, clientArgs...)
}

func newSvcFixturePair(t *testing.T, srvTr, clTr rmw.Transport, clientArgs ...string) *svcFixture {
	t.Helper()
	ctx := NewContext(WithTransport(srvTr), WithLogOutput(io.Discard))
	clCtx := ctx
	if clTr != srvTr {
		clCtx = NewContext(WithTransport(clTr), WithLogOutput(io.Discard))
	}
	srv, err := NewNode("server", WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewNode("client", WithContext(clCtx), WithArguments(clientArgs...))
	if err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(WithExecutorContext(ctx))
	if err := e.AddNode(srv); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); e.Spin(sctx) }()
	f := &svcFixture{server: srv, client: cl, exec: e}
	f.stop = func() {
		cancel()
		wg.Wait()
		srv.Close()
		cl.Close()
		e.Close()
		ctx.Shutdown()
		clCtx.Shutdown()
	}
	return f
}

func TestServiceCall(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		var calls int
		srv, err := NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "set",
			func(ctx context.Context, req *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
				calls++ // the executor goroutine only: the race detector checks
				if !req.Data {
					return nil, errors.New("refused")
				}
				return &std_srvs.SetBool_Response{Success: true, Message: "on"}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if srv.Name() != "/set" {
			t.Fatalf("name %q", srv.Name())
		}
		cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "/set")
		if err != nil {
			t.Fatal(err)
		}
		// A remote server's announcement arrives (at once in the bubble,
		// after a few discovery rounds on DDS).
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer wcancel()
		if err := cl.WaitForService(wctx); err != nil || !cl.ServiceIsReady() {
			t.Fatalf("not ready: %v", err)
		}
		for range 3 {
			resp, err := cl.Call(context.Background(), &std_srvs.SetBool_Request{Data: true})
			if err != nil || !resp.Success || resp.Message != "on" {
				t.Fatalf("%+v %v", resp, err)
			}
		}
		// A handler error sends nothing: the call runs into its deadline.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if _, err := cl.Call(ctx, &std_srvs.SetBool_Request{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("returned after %v", d)
		}
		if cl.Pending() != 0 {
			t.Fatalf("%d pending", cl.Pending())
		}
		if srv.Answered() != 3 || srv.Received() != 4 {
			t.Fatalf("answered %d received %d", srv.Answered(), srv.Received())
		}
		synctest.Wait()
		if calls != 4 {
			t.Fatalf("%d calls", calls)
		}
	})
}

func TestServiceDeferredAndConcurrentCalls(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		_, err := NewDeferredService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "set",
			func(req *std_srvs.SetBool_Request, r *Responder[std_srvs.SetBool_Response]) {
				data := req.Data
				go func() {
					time.Sleep(10 * time.Millisecond)
					if err := r.Send(&std_srvs.SetBool_Response{Success: data}); err != nil {
						t.Error(err)
					}
					if err := r.Send(&std_srvs.SetBool_Response{}); !errors.Is(err, ErrAlreadyResponded) {
						t.Errorf("second Send: %v", err)
					}
				}()
			}, WithServiceQoS(QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 100}))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "set")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := cl.Call(context.Background(), &std_srvs.SetBool_Request{Data: i%2 == 0})
				if err != nil || resp.Success != (i%2 == 0) {
					t.Errorf("call %d: %+v %v", i, resp, err)
				}
			}()
		}
		wg.Wait()
	})
}

// A call to a server that never answers returns ctx's error at its deadline
// and leaves neither a goroutine nor a pending entry behind; so does one
// whose server goes away mid-call, and one cancelled.
func TestServiceCallNoAnswerLeavesNothing(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		srv, err := NewDeferredService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "mute",
			func(*std_srvs.SetBool_Request, *Responder[std_srvs.SetBool_Response]) {})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "mute")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		before := bubbleGoroutines()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		_, err = cl.Call(ctx, &std_srvs.SetBool_Request{})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 2*time.Second {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
		cctx, ccancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second); ccancel() }()
		if _, err := cl.Call(cctx, &std_srvs.SetBool_Request{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel: %v", err)
		}
		// The server goes away mid-call.
		go func() { time.Sleep(time.Second); srv.Close() }()
		ctx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
		start = time.Now()
		_, err = cl.Call(ctx, &std_srvs.SetBool_Request{})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 3*time.Second {
			t.Fatalf("server gone: err %v after %v", err, time.Since(start))
		}
		synctest.Wait()
		if cl.Pending() != 0 {
			t.Fatalf("%d pending", cl.Pending())
		}
		if after := bubbleGoroutines(); after > before {
			t.Fatalf("goroutines %d -> %d", before, after)
		}
		// No server: WaitForService and Call honour ctx too.
		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := cl.WaitForService(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wait: %v", err)
		}
		// Close wakes a waiting call.
		go func() { time.Sleep(time.Second); cl.Close() }()
		if _, err := cl.Call(context.Background(), &std_srvs.SetBool_Request{}); !errors.Is(err, ErrServiceClosed) {
			t.Fatalf("closed: %v", err)
		}
	})
}

func TestWaitForServiceWakesOnServer(t *testing.T) {
	forTransports(t, serviceTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		defer f.stop()
		cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "~/later")
		if err != nil {
			t.Fatal(err)
		}
		if cl.Name() != "/client/later" {
			t.Fatalf("name %q", cl.Name())
		}
		go func() {
			time.Sleep(time.Second)
			NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "/client/later",
				func(context.Context, *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
					return &std_srvs.SetBool_Response{}, nil
				})
		}()
		start := time.Now()
		err = cl.WaitForService(context.Background())
		// DDS discovers the new endpoints in its next rounds.
		slack := time.Duration(0)
		if tp.name == "rtps" {
			slack = 100 * time.Millisecond
		}
		if d := time.Since(start); err != nil || d < time.Second || d > time.Second+slack {
			t.Fatalf("%v after %v", err, d)
		}
	})
}

func TestServiceNameRemap(t *testing.T) {
	f := newSvcFixture(t, intra.New(), "--ros-args", "-r", "set:=/other")
	defer f.stop()
	cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "set")
	if err != nil {
		t.Fatal(err)
	}
	if cl.Name() != "/other" {
		t.Fatalf("remapped to %q", cl.Name())
	}
}

func TestServiceBadRequestCounted(t *testing.T) {
	tr := intra.New()
	f := newSvcFixture(t, tr)
	defer f.stop()
	srv, err := NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "set",
		func(context.Context, *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
			return &std_srvs.SetBool_Response{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tr.NewServiceClient(rmw.NodeInfo{Name: "raw"}, "/set", "std_srvs/srv/SetBool_Request", "std_srvs/srv/SetBool_Response",
		rmw.ServicesDefaultQoS, func(rmw.Response) {}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, b := range [][]byte{nil, {0, 1}, {7, 7, 0, 0, 1}} {
		raw.SendRequest(b)
	}
	// The fixture's executor decodes them.
	for deadline := time.Now().Add(5 * time.Second); srv.Dropped() < 3 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if srv.Dropped() != 3 {
		t.Fatalf("dropped %d", srv.Dropped())
	}
}

func TestNodeGraphChanged(t *testing.T) {
	f := newSvcFixture(t, intra.New())
	defer f.stop()
	ch := f.client.GraphChanged()
	if _, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("a new client did not change the graph")
	}
}
