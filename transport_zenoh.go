//go:build !nros_nozenoh

package nros

import (
	"fmt"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/zenoh"
)

// newZenohTransport makes the context's default Zenoh transport, configured
// as rmw_zenoh is (ZENOH_SESSION_CONFIG_URI, ZENOH_CONFIG_OVERRIDE,
// ROS_DOMAIN_ID).
func (c *Context) newZenohTransport() (rmw.Transport, error) {
	cfg, err := zenoh.ConfigFromEnv()
	if err != nil {
		return nil, fmt.Errorf("nros: %w", err)
	}
	if c.ownClock {
		cfg.Clock = transportClock{c.src}
	}
	cfg.Logf, cfg.Warnf = transportLogs(c.logger("rmw_zenoh_cpp"))
	t, err := zenoh.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("nros: starting the Zenoh transport: %w", err)
	}
	return t, nil
}
