package nros

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw"
)

// testGoid reads the calling goroutine's id (tests only: the library never
// asks who it runs on).
func testGoid() uint64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// goroutineLog records, per kind of callback, how many ran and how many ran
// off the goroutine that spins the executor.
type goroutineLog struct {
	spin atomic.Uint64
	mu   sync.Mutex
	ran  map[string]int
	off  map[string]int
}

func (g *goroutineLog) record(kind string) {
	id := testGoid()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ran[kind]++
	if id != g.spin.Load() {
		g.off[kind]++
	}
}

// TestUserCodeRunsOnlyOnTheSpinningGoroutine (#16): during a /clock flood,
// with Spin idle between samples, every ROS-timer callback, jump handler,
// subscription callback, endpoint event handler and service handler runs on
// the goroutine that called Spin, never on a transport's goroutine.
func TestUserCodeRunsOnlyOnTheSpinningGoroutine(t *testing.T) {
	forTransports(t, []transportPair{intraPair, rtpsPair}, func(t *testing.T, tp transportPair) {
		a, b := pairContexts(t, tp)
		defer a.Shutdown()
		defer b.Shutdown()
		n, err := NewNode("user", WithContext(a), WithParameterOverrides(map[string]any{UseSimTimeParameter: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		sim, err := NewNode("sim", WithContext(b))
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		g := &goroutineLog{ran: map[string]int{}, off: map[string]int{}}
		if _, err := n.CreateTimer(n.Clock(), 10*time.Millisecond, func() { g.record("timer") }); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Clock().OnJump(JumpThreshold{OnClockChange: true, MinForward: Duration(time.Second), MinBackward: 1},
			func(TimeJump) { g.record("jump") }); err != nil {
			t.Fatal(err)
		}
		if _, err := NewSubscription(n, "/chatter", DefaultQoS(), func(*std_msgs.String) { g.record("subscription") },
			WithEndpointEvents(func(rmw.Event) { g.record("event") })); err != nil {
			t.Fatal(err)
		}
		services := tp.name == "intra" // rtps services are covered by the rtps package
		if services {
			if _, err := NewService(n, "/flag", func(context.Context, *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
				g.record("service")
				return &std_srvs.SetBool_Response{Success: true}, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		e := NewExecutor(WithExecutorContext(a))
		defer e.Close()
		if err := e.AddNode(n); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		spun := make(chan error, 1)
		go func() {
			g.spin.Store(testGoid())
			spun <- e.Spin(ctx)
		}()

		clk, err := b.Transport().NewPublisher(rmw.NodeInfo{Name: "sim", Namespace: "/", Enclave: "/"}, DefaultClockTopic,
			(&rosgraph_msgs.Clock{}).TypeName(), ClockQoS(), rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer clk.Close()
		chatter, err := NewPublisher[std_msgs.String](sim, "/chatter", DefaultQoS())
		if err != nil {
			t.Fatal(err)
		}
		var cl *Client[std_srvs.SetBool_Request, std_srvs.SetBool_Response]
		if services {
			if cl, err = NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](sim, "/flag"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second) // discovery (virtual time)

		// The flood: 500 samples 1 ms apart, 5 ms of simulated time each,
		// with a jump back and one ahead; chatter and calls in between.
		simNs := int64(100 * sec)
		for i := range 500 {
			switch i {
			case 200:
				simNs -= 3 * sec
			case 400:
				simNs += 10 * sec
			}
			simNs += 5 * ms
			var m rosgraph_msgs.Clock
			m.Clock.Sec, m.Clock.Nanosec = int32(simNs/sec), uint32(simNs%sec)
			if err := clk.Publish(msg.Marshal(&m, true, nil)); err != nil {
				t.Fatal(err)
			}
			if i%50 == 0 {
				if err := chatter.Publish(&std_msgs.String{Data: "hi"}); err != nil {
					t.Fatal(err)
				}
			}
			if services && i%100 == 0 {
				cctx, ccancel := context.WithTimeout(context.Background(), time.Second)
				if _, err := cl.Call(cctx, &std_srvs.SetBool_Request{Data: true}); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				ccancel()
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Second)
		cancel()
		if err := <-spun; err != nil {
			t.Fatal(err)
		}

		g.mu.Lock()
		defer g.mu.Unlock()
		kinds := []string{"timer", "jump", "subscription", "event"}
		if services {
			kinds = append(kinds, "service")
		}
		for _, k := range kinds {
			if g.ran[k] == 0 {
				t.Errorf("no %s callback ran", k)
			}
			if g.off[k] != 0 {
				t.Errorf("%d of %d %s callbacks ran off the spinning goroutine", g.off[k], g.ran[k], k)
			}
		}
		t.Logf("callbacks run: %v", g.ran)
	})
}
