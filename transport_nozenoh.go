//go:build nros_nozenoh

package nros

import (
	"fmt"

	"github.com/nros-go/nros/rmw"
)

// newZenohTransport refuses: the program was built without the Zenoh
// transport, to link only DDS (about 1 MB less binary and 0.6 MB less
// resident memory per process).
func (c *Context) newZenohTransport() (rmw.Transport, error) {
	return nil, fmt.Errorf("nros: %s=rmw_zenoh_cpp (or %s=zenoh): this program was built without the Zenoh transport (-tags nros_nozenoh)",
		RMWImplementationEnv, TransportEnv)
}
