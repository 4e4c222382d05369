package simtest

import (
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
)

// PublishQoS is the profile Publish sends with: reliable, volatile, keep
// last 10 (it serves reliable and best-effort subscriptions alike).
func PublishQoS() nros.QoS { return nros.DefaultQoS() }

// Publish sends m on topic into the world, as another node would, and runs
// the executor until idle: when it returns, the subscriptions' callbacks
// have run. The first Publish on a topic makes its publisher (PublishQoS).
func Publish[T any, PT nros.MessagePtr[T]](s *Sim, topic string, m *T) {
	s.t.Helper()
	var p *nros.Publisher[T]
	if v, ok := s.pubs[topic]; ok {
		if p, ok = v.(*nros.Publisher[T]); !ok {
			s.t.Fatalf("simtest: Publish on %s with type %T, but it was used with another type", topic, m)
		}
	} else {
		var err error
		if p, err = nros.NewPublisher[T, PT](s.aux, topic, PublishQoS()); err != nil {
			s.t.Fatalf("simtest: publisher on %s: %v", topic, err)
		}
		s.pubs[topic] = p
	}
	if err := p.Publish(m); err != nil {
		s.t.Fatalf("simtest: publishing on %s: %v", topic, err)
	}
	s.RunUntilIdle()
}

// Received is one message a Recorder saw.
type Received[T any] struct {
	Msg  T
	Ros  nros.Time     // the context's ROS time when it was published
	Wall time.Duration // the Sim's wall time
}

// Recorder keeps every message published on one topic in the world (by
// the nodes under test, or by Publish).
type Recorder[T any] struct {
	s   *Sim
	mu  sync.Mutex
	got []Received[T]
	bad int
}

// Record starts recording topic. It listens best effort, so it matches
// every publisher; messages arrive at once (the world's transport delivers
// on the publishing call), without the executor.
func Record[T any, PT nros.MessagePtr[T]](s *Sim, topic string) *Recorder[T] {
	s.t.Helper()
	resolved, err := s.aux.ResolveTopicName(topic)
	if err != nil {
		s.t.Fatalf("simtest: %v", err)
	}
	r := &Recorder[T]{s: s}
	q := nros.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepAll}
	sub, err := s.tr.NewSubscription(rmw.NodeInfo{Name: "simtest_recorder", Namespace: "/", Enclave: "/"}, resolved,
		PT(new(T)).TypeName(), q, func(smp rmw.Sample) {
			v := new(T)
			err := msg.Unmarshal(smp.Data, PT(v))
			rec := Received[T]{Msg: *v, Ros: s.Now(), Wall: s.Elapsed()}
			r.mu.Lock()
			defer r.mu.Unlock()
			if err != nil {
				r.bad++
				return
			}
			r.got = append(r.got, rec)
		}, rmw.EndpointOptions{})
	if err != nil {
		s.t.Fatalf("simtest: recording %s: %v", resolved, err)
	}
	s.t.Cleanup(func() { sub.Close() })
	return r
}

// Messages returns the messages recorded so far.
func (r *Recorder[T]) Messages() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]T, len(r.got))
	for i, g := range r.got {
		out[i] = g.Msg
	}
	return out
}

// All returns the messages recorded so far with the times they came.
func (r *Recorder[T]) All() []Received[T] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received[T](nil), r.got...)
}

// Len returns how many messages were recorded.
func (r *Recorder[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// Malformed returns how many samples could not be decoded.
func (r *Recorder[T]) Malformed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// Reset forgets the recorded messages.
func (r *Recorder[T]) Reset() {
	r.mu.Lock()
	r.got = nil
	r.mu.Unlock()
}
