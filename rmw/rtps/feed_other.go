//go:build !linux

package rtps

import "github.com/nros-go/nros/rmw"

// feed is Linux-only (it polls the socket with ppoll): elsewhere
// rmw.EndpointOptions.Feed is ignored and every subscription reads through
// the participant's sockets.
type feed struct{}

func (t *Transport) newFeedLocked(*Subscription) *feed { return nil }

func (f *feed) close() {}

func (s *Subscription) public() rmw.Subscription { return s }
