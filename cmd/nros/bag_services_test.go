package main

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosbag2_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// call makes one call to a player service from another node of the same
// in-process graph.
func call[Req, Resp any, PReq MessagePtr[Req], PResp MessagePtr[Resp]](t *testing.T, n *nros.Node, name string, req *Req) *Resp {
	t.Helper()
	cl, err := nros.NewClient[Req, Resp, PReq, PResp](n, name)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Call(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resp
}

// MessagePtr mirrors nros.MessagePtr for the test's generic helper.
type MessagePtr[T any] = nros.MessagePtr[T]

// The player's services, as rosbag2 has them: a bag started paused is
// queried, resumed, slowed, paused, seeked and resumed by a client; /clock
// follows every step (held while paused, jumping at the seek).
func TestBagPlayerServices(t *testing.T) {
	path := filepath.Join(testBags, "walker_galactic_clock_sqlite3")
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		var mu sync.Mutex
		var clock []int64
		ctx := nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))
		defer ctx.Shutdown()
		probe, err := nros.NewNode("probe", nros.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer probe.Close()
		if _, err := nros.NewSubscription[rosgraph_msgs.Clock](probe, "/clock", nros.ClockQoS(), func(m *rosgraph_msgs.Clock) {
			mu.Lock()
			clock = append(clock, nros.NewTime(m.Clock.Sec, m.Clock.Nanosec).Nanoseconds())
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
		exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
		defer exec.Close()
		exec.AddNode(probe)
		spinCtx, stopSpin := context.WithCancel(context.Background())
		spun := make(chan struct{})
		go func() { exec.Spin(spinCtx); close(spun) }()
		defer func() { stopSpin(); <-spun }()
		last := func() int64 {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(clock) == 0 {
				return 0
			}
			return clock[len(clock)-1]
		}

		e, _, errb := testEnv(tr, realClock{})
		done := make(chan int, 1)
		playCtx, stop := context.WithCancel(context.Background())
		defer stop()
		go func() {
			done <- e.bagCmd(playCtx, []string{"play", path, "--clock", "100", "--start-paused", "--quiet"})
		}()
		time.Sleep(500 * time.Millisecond)
		if r := call[rosbag2_interfaces.IsPaused_Request, rosbag2_interfaces.IsPaused_Response](t, probe, "/rosbag2_player/is_paused", &rosbag2_interfaces.IsPaused_Request{}); !r.Paused {
			t.Fatal("is_paused: false for --start-paused")
		}
		held := last()
		time.Sleep(time.Second)
		if v := last(); v != held || v == 0 {
			t.Fatalf("paused /clock moved: %d -> %d", held, v)
		}
		call[rosbag2_interfaces.Resume_Request, rosbag2_interfaces.Resume_Response](t, probe, "/rosbag2_player/resume", &rosbag2_interfaces.Resume_Request{})
		if r := call[rosbag2_interfaces.SetRate_Request, rosbag2_interfaces.SetRate_Response](t, probe, "/rosbag2_player/set_rate", &rosbag2_interfaces.SetRate_Request{Rate: 0.5}); !r.Success {
			t.Fatal("set_rate 0.5 refused")
		}
		if r := call[rosbag2_interfaces.SetRate_Request, rosbag2_interfaces.SetRate_Response](t, probe, "/rosbag2_player/set_rate", &rosbag2_interfaces.SetRate_Request{Rate: -1}); r.Success {
			t.Fatal("set_rate -1 accepted")
		}
		if r := call[rosbag2_interfaces.GetRate_Request, rosbag2_interfaces.GetRate_Response](t, probe, "/rosbag2_player/get_rate", &rosbag2_interfaces.GetRate_Request{}); r.Rate != 0.5 {
			t.Fatalf("get_rate %v, want 0.5", r.Rate)
		}
		a := last()
		time.Sleep(2 * time.Second)
		if d := last() - a; d < 950*int64(time.Millisecond) || d > 1050*int64(time.Millisecond) {
			t.Fatalf("2 s at 0.5x moved /clock by %v", time.Duration(d))
		}
		call[rosbag2_interfaces.Pause_Request, rosbag2_interfaces.Pause_Response](t, probe, "/rosbag2_player/pause", &rosbag2_interfaces.Pause_Request{})
		if r := call[rosbag2_interfaces.PlayNext_Request, rosbag2_interfaces.PlayNext_Response](t, probe, "/rosbag2_player/play_next", &rosbag2_interfaces.PlayNext_Request{}); !r.Success {
			t.Fatal("play_next refused while paused")
		}
		target := held + 20*int64(time.Second)
		ts := nros.TimeFromNanoseconds(target)
		sec, nsec, _ := ts.SecNanosec()
		if r := call[rosbag2_interfaces.Seek_Request, rosbag2_interfaces.Seek_Response](t, probe, "/rosbag2_player/seek",
			&rosbag2_interfaces.Seek_Request{Time: builtin_interfaces.Time{Sec: sec, Nanosec: nsec}}); !r.Success {
			t.Fatal("seek refused")
		}
		time.Sleep(200 * time.Millisecond)
		if v := last(); v != target {
			t.Fatalf("after seek (paused) /clock %d, want %d", v, target)
		}
		call[rosbag2_interfaces.TogglePaused_Request, rosbag2_interfaces.TogglePaused_Response](t, probe, "/rosbag2_player/toggle_paused", &rosbag2_interfaces.TogglePaused_Request{})
		time.Sleep(time.Second)
		if v := last(); v <= target {
			t.Fatalf("toggle_paused did not resume: /clock %d", v)
		}
		stop()
		if code := <-done; code != 0 {
			t.Fatalf("play exit %d: %s", code, errb)
		}
	})
}
