package zenoh

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw"
)

// TestSubscriberDeclaredBeforeToken: a publisher that sees a remote
// subscription in the graph (its liveliness token) can publish to it at
// once: the subscription declares its subscriber before its token, so the
// publishing session, which learns of both in that order on one link,
// already routes to it. The other way round the samples published in
// between were dropped (TestPubSubOverTransports/zenoh failed now and
// then: "keep last 4 of 10 queued: []" or "[7 8 9]"). Services declare
// their queryable first for the same reason (service.go).
func TestSubscriberDeclaredBeforeToken(t *testing.T) {
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 10}
	for i := range 40 {
		name := fmt.Sprintf("declorder-%d", memSeq.Add(1))
		a, err := New(memConfig(name, ""))
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(memConfig("", name))
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		pub, err := a.NewPublisher(rmw.NodeInfo{Name: "p"}, "/order", "std_msgs/msg/String", q, rmw.EndpointOptions{TypeHash: hashString})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewSubscription(rmw.NodeInfo{Name: "s"}, "/order", "std_msgs/msg/String", q, func(rmw.Sample) {}, rmw.EndpointOptions{TypeHash: hashString}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for pub.MatchedSubscriptions() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no match in 10 s")
			}
			runtime.Gosched()
		}
		routed := a.sess.Matching(pub.(*Publisher).key)
		a.Close()
		c.Close()
		if !routed {
			t.Fatalf("run %d: the publisher saw the subscription's token before its subscriber declaration: a sample published now is dropped", i)
		}
	}
}
