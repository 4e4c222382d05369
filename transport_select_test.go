package nros

import (
	"strings"
	"testing"
)

// The transport is chosen as ROS 2 users choose the middleware
// (RMW_IMPLEMENTATION), NROS_TRANSPORT first; a value neither knows is an
// error naming the variable.
func TestTransportKind(t *testing.T) {
	for _, c := range []struct {
		nros, rmw, want, err string
	}{
		{want: "rtps"},
		{rmw: "rmw_zenoh_cpp", want: "zenoh"},
		{rmw: "rmw_cyclonedds_cpp", want: "rtps"},
		{rmw: "rmw_fastrtps_cpp", want: "rtps"},
		{rmw: "rmw_fastrtps_dynamic_cpp", want: "rtps"},
		{rmw: "rmw_zenoh", err: RMWImplementationEnv},
		{nros: "intra", rmw: "rmw_zenoh_cpp", want: "intra"},
		{nros: "zenoh", want: "zenoh"},
		{nros: "dds", rmw: "rmw_zenoh_cpp", want: "rtps"},
		{nros: "udp", err: TransportEnv},
	} {
		env := map[string]string{TransportEnv: c.nros, RMWImplementationEnv: c.rmw}
		got, err := transportKind(func(k string) string { return env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err %v, want one naming %s", c, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c, got, err, c.want)
		}
	}
}
