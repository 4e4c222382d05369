package session_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// TestGoGoOverSockets: Go sessions over loopback TCP and UDP, with QoS
// negotiated (priority channels), small and fragmented samples.
func TestGoGoOverSockets(t *testing.T) {
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			ca, cb := newCollector(), newCollector()
			a, err := session.Open(session.Config{Listen: []string{proto + "/127.0.0.1:0"}}, ca)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := session.Open(session.Config{Connect: []string{a.Listeners()[0].String()}, BatchSize: 4096}, cb)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			up := cb.next(t, 10*time.Second, "up")
			if !up.face.Params.QoS || up.face.Params.BatchSize != 4096 || up.face.ZID != a.ZID() {
				t.Errorf("params %+v", up.face.Params)
			}
			a.DeclareSubscriber("demo/**")
			deadline := time.Now().Add(10 * time.Second)
			for !b.Matching("demo/x") {
				if time.Now().After(deadline) {
					t.Fatal("subscriber never seen")
				}
				time.Sleep(10 * time.Millisecond)
			}
			big := bytes.Repeat([]byte("zenoh"), 5000)
			b.Put("demo/small", &wire.Put{Payload: []byte("hi")}, session.PutOptions{QoS: wire.MakeQoS(wire.PriorityRealTime, wire.Block, false)})
			b.Put("demo/big", &wire.Put{Payload: big}, session.PutOptions{})
			e := ca.next(t, 10*time.Second, "put")
			if e.key != "demo/small" || string(e.put.Payload) != "hi" {
				t.Errorf("first sample %s %q", e.key, e.put.Payload)
			}
			e = ca.next(t, 10*time.Second, "put")
			if e.key != "demo/big" || !bytes.Equal(e.put.Payload, big) {
				t.Errorf("big sample %s %d bytes", e.key, len(e.put.Payload))
			}
		})
	}
}
