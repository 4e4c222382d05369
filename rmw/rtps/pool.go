package rtps

import (
	"sync/atomic"

	"github.com/nros-go/nros/rmw"
)

// callback is one entry of the Transport's hand-out queue: an event
// (onEvent) or a sample for a subscription. A remote sample's Data lives in
// a pooled buffer (buf) that goes back to the pool once deliver returns:
// rmw.Sample.Data belongs to the deliver function only for the call, so
// the receive path copies each sample once and allocates nothing. gate is
// the closed flag of the endpoint whose callback this is: once it is set
// the entry is dropped instead of handed out.
type callback struct {
	gate    *atomic.Bool
	onEvent func(rmw.Event)
	ev      rmw.Event
	sub     *Subscription
	smp     rmw.Sample
	buf     *[]byte
	id      rmw.RequestID // of a service sample (service.go)
}
