package rtps

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// A burst of requests larger than the service QoS depth (keep last 10),
// over a network that loses datagrams: the request writer and the reply
// writer keep what is not acknowledged (as Cyclone's writer history does
// for reliable writers), so every request is answered. A keep last 10
// writer used to overwrite unacknowledged requests and replies: a lost
// datagram then lost the call (#19 item 4).
func TestServiceBurstOverLossyNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		var lossy atomic.Bool
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(1, 2)) // one datagram in four, not in step with the repair rounds
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			return lossy.Load() && rng.IntN(4) == 0
		}
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		echoServer(t, b, "/set")
		c, r := newClient(t, a, "/set")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !c.ServiceAvailable() {
			t.Fatal("not available")
		}
		lossy.Store(true)
		seqs := callN(t, c, 64)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		lossy.Store(false)
		checkResponses(t, r, seqs)
		c.Close()
	})
}

// serverInline answers SetBool from the handler itself (as the executor
// does) and records how long each SendResponse took.
func serverInline(t *testing.T, tr *Transport, name string, took *[]time.Duration, mu *sync.Mutex) rmw.ServiceServer {
	t.Helper()
	var srv rmw.ServiceServer
	srv, err := tr.NewServiceServer(node, name, boolReq, boolResp, rmw.ServicesDefaultQoS, func(r rmw.Request) {
		var req std_srvs.SetBool_Request
		if err := msg.Unmarshal(r.Data, &req); err != nil {
			t.Errorf("server: %v", err)
			return
		}
		start := time.Now()
		if err := srv.SendResponse(r.ID, msg.Marshal(&std_srvs.SetBool_Response{Success: req.Data, Message: "ok"}, true, nil)); err != nil {
			t.Error(err)
		}
		mu.Lock()
		*took = append(*took, time.Since(start))
		mu.Unlock()
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// A request can arrive before the server has discovered the client's
// response reader (the client's two endpoints are announced apart).
// SendResponse must not block (it runs on the executor): the reply waits
// in the server until the reader matches, then goes out.
func TestServiceResponseWaitsForReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		var hide atomic.Bool
		hide.Store(true)
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			// the client's announcement of its reply reader
			return hide.Load() && bytes.Contains(b, []byte("rr/setReply"))
		}
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		var took []time.Duration
		var mu sync.Mutex
		serverInline(t, b, "/set", &took, &mu)
		c, r := newClient(t, a, "/set")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		seqs := callN(t, c, 3)
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		if len(took) != 3 || took[0] != 0 || took[1] != 0 || took[2] != 0 {
			t.Fatalf("SendResponse took %v, want 0 each", took)
		}
		mu.Unlock()
		r.mu.Lock()
		if len(r.got) != 0 {
			t.Fatalf("responses %v before the reader matched", r.got)
		}
		r.mu.Unlock()
		hide.Store(false)
		time.Sleep(3 * time.Second) // the announcement is sent again
		synctest.Wait()
		checkResponses(t, r, seqs)
		if st := b.Stats(); st.DroppedResponses != 0 {
			t.Fatalf("dropped %d responses", st.DroppedResponses)
		}
		c.Close()
	})
}

// A reply whose client's reader never matches is dropped after
// svcReplyTimeout, counted and logged; SendResponse did not block.
func TestServiceResponseNeverMatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			return bytes.Contains(b, []byte("rr/setReply"))
		}
		var logMu sync.Mutex
		var logs []string
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, func(c *Config) {
			c.Logf = func(f string, v ...any) {
				logMu.Lock()
				logs = append(logs, fmt.Sprintf(f, v...))
				logMu.Unlock()
			}
		})
		defer b.Close()
		var took []time.Duration
		var mu sync.Mutex
		serverInline(t, b, "/set", &took, &mu)
		c, _ := newClient(t, a, "/set")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		callN(t, c, 2)
		time.Sleep(svcReplyTimeout + time.Second)
		synctest.Wait()
		mu.Lock()
		if len(took) != 2 || took[0] != 0 || took[1] != 0 {
			t.Fatalf("SendResponse took %v", took)
		}
		mu.Unlock()
		if st := b.Stats(); st.DroppedResponses != 2 {
			t.Fatalf("dropped %d responses, want 2", st.DroppedResponses)
		}
		logMu.Lock()
		found := false
		for _, l := range logs {
			if bytes.Contains([]byte(l), []byte("response")) && bytes.Contains([]byte(l), []byte("/set")) {
				found = true
			}
		}
		logMu.Unlock()
		if !found {
			t.Fatalf("no log of the dropped responses: %q", logs)
		}
		c.Close()
	})
}

// A response whose client the server cannot tie to a matched reader (here
// the reader of another client of the same participant is matched, the
// client's own announcement is lost) goes out after svcReplyTimeout to the
// readers that are matched, as Cyclone and Fast DDS send after their
// wait: the participant routes it to the client's reader all the same.
func TestServiceResponseSentAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		var hideID atomic.Value
		hideID.Store("")
		nw.Drop = func(src, dst netip.AddrPort, b []byte) bool {
			id := hideID.Load().(string)
			return id != "" && bytes.Contains(b, []byte("rr/setReply")) && bytes.Contains(b, []byte("clientid="+id+";"))
		}
		a := newMem(t, nw, nil)
		defer a.Close()
		b := newMem(t, nw, nil)
		defer b.Close()
		var took []time.Duration
		var mu sync.Mutex
		serverInline(t, b, "/set", &took, &mu)
		c2, _ := newClient(t, a, "/set") // its reader is discovered
		defer c2.Close()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		a.mu.Lock()
		next := svcID(wire.GUID{Prefix: a.prefix, Entity: wire.NewEntityID(a.entitySeq+1, 0)})
		a.mu.Unlock()
		hideID.Store(next)
		c, r := newClient(t, a, "/set")
		if got := c.(*ServiceClient).idTag; got != next {
			t.Fatalf("clientid %q, want %q", got, next)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		seqs := callN(t, c, 1)
		time.Sleep(time.Second)
		synctest.Wait()
		r.mu.Lock()
		if len(r.got) != 0 {
			t.Fatal("answered before the timeout")
		}
		r.mu.Unlock()
		time.Sleep(svcReplyTimeout)
		synctest.Wait()
		checkResponses(t, r, seqs)
		if st := b.Stats(); st.UnmatchedResponses != 1 || st.DroppedResponses != 0 {
			t.Fatalf("unmatched %d dropped %d, want 1, 0", st.UnmatchedResponses, st.DroppedResponses)
		}
		c.Close()
	})
}
