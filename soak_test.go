package nros

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg/std_srvs"
)

// Services and actions under load (#19 item 4): many concurrent callers on
// one client, and many goals with cancels sent at once right after
// WaitForServer, must lose nothing, leave nothing stuck and no goroutine
// behind. The CI-sized soaks run here in virtual time over every transport;
// scripts/soak.sh runs the long ones on real loopback sockets.

// soakTransports are the transports the soaks run over: in-process, two
// zenoh sessions and two DDS participants on an in-memory network.
var soakTransports = []transportPair{intraPair, zenohPair, rtpsPair}

// soakFigures are what a soak reports.
type soakFigures struct {
	calls, lost, stuck int64
	lat                []time.Duration
}

func (f *soakFigures) String() string {
	slices.Sort(f.lat)
	q := func(p float64) time.Duration {
		if len(f.lat) == 0 {
			return 0
		}
		return f.lat[int(p*float64(len(f.lat)-1))]
	}
	return fmt.Sprintf("calls %d lost %d stuck %d p50 %v p99 %v", f.calls, f.lost, f.stuck, q(0.5), q(0.99))
}

// serviceSoak runs callers goroutines on one client, each making calls
// calls (or calling until deadline when it is not zero), every call with a
// timeout of callTimeout; a call that times out is lost. It returns the
// figures.
func serviceSoak(t *testing.T, f *svcFixture, callers, calls int, deadline time.Time, callTimeout time.Duration) *soakFigures {
	t.Helper()
	var served atomic.Int64
	srv, err := NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.server, "soak",
		func(_ context.Context, req *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
			served.Add(1)
			return &std_srvs.SetBool_Response{Success: req.Data}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl, err := NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](f.client, "soak")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.WaitForService(wctx); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		fig soakFigures
		wg  sync.WaitGroup
	)
	for i := range callers {
		wg.Go(func() {
			var lat []time.Duration
			var n, lost int64
			for k := 0; ; k++ {
				if deadline.IsZero() && k >= calls || !deadline.IsZero() && time.Now().After(deadline) {
					break
				}
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				start := time.Now()
				resp, err := cl.Call(ctx, &std_srvs.SetBool_Request{Data: (i+k)%2 == 0})
				cancel()
				n++
				if err != nil {
					lost++
					continue
				}
				if resp.Success != ((i+k)%2 == 0) {
					t.Errorf("caller %d call %d: a wrong response", i, k)
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			fig.calls += n
			fig.lost += lost
			fig.lat = append(fig.lat, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	fig.stuck = int64(cl.Pending())
	if srv.Lost() != 0 {
		t.Errorf("the server's history dropped %d requests", srv.Lost())
	}
	return &fig
}

// 32 concurrent callers on one client: every call is answered.
func TestServiceSoakConcurrentCallers(t *testing.T) {
	forTransports(t, soakTransports, func(t *testing.T, tp transportPair) {
		f := newSvcFixtureOver(t, tp)
		synctest.Wait()
		before := runtime.NumGoroutine()
		fig := serviceSoak(t, f, 32, 30, time.Time{}, 30*time.Second)
		t.Log(fig)
		if fig.lost != 0 || fig.stuck != 0 || fig.calls != 32*30 {
			t.Errorf("%v", fig)
		}
		synctest.Wait()
		if after := runtime.NumGoroutine(); after > before {
			t.Errorf("goroutines %d -> %d", before, after)
		}
		f.stop()
	})
}

// soakDuration is NROS_SOAK (a duration, "3m"): how long the long soaks
// run; they are skipped when it is unset.
func soakDuration(t *testing.T) time.Duration {
	v := os.Getenv("NROS_SOAK")
	if v == "" {
		t.Skip("NROS_SOAK unset (scripts/soak.sh runs the long soaks)")
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("NROS_SOAK=%q: %v", v, err)
	}
	return d
}
