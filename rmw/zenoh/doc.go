// Package zenoh is the rmw.Transport of nros-go over Zenoh 1.x, putting
// ROS 2 on Zenoh exactly as rmw_zenoh_cpp does, so that a Go node talks to
// rmw_zenoh nodes, zenoh-pico boards (nano-ros) and zenoh routers.
//
// # Mapping
//
// Every context is one zenoh session (rmw/zenoh/session); the keys,
// tokens and attachments are package rmw/zenoh/ros's:
//
//   - A publisher puts on <domain>/<topic>/<dds type>/<type hash> with the
//     33-byte attachment (sequence number from 1, source timestamp, gid),
//     reliability and congestion control as rmw_zenoh chooses them for its
//     QoS; a subscription subscribes on the same key. The type hash is the
//     endpoint's RIHS01 hash (rmw.EndpointOptions.TypeHash) or, with
//     Config.Distro Humble, TypeHashNotSupported.
//   - zenoh delivers a put to the session's own subscribers; the session
//     here does not, so the transport delivers a publication to its own
//     matching subscriptions itself, on the publishing goroutine, and
//     answers its own queries from its own queryables.
//   - Transient-local publishers and subscriptions are zenoh-ext's
//     advanced publisher and subscriber as rmw_zenoh configures them
//     (advanced.go): a cache queryable and a detection token per publisher,
//     a history query per subscription at start and per late publisher,
//     heartbeats and recovery when reliable.
//   - A service server is a complete queryable on the service's key and
//     a client queries it (target all complete, no consolidation,
//     queries_default_timeout, none for an action's get_result); the
//     request id is the query's attachment (client gid, sequence number)
//     and comes back in the reply's.
//   - The graph is rmw_zenoh's graph cache: liveliness tokens
//     @ros2_lv/<domain>/<zid>/<nid>/<id>/<NN|MP|MS|SS|SC>/..., declared for
//     this transport's nodes and endpoints (ids from one counter, as
//     rmw_zenoh draws them per context) and learnt from the others by a
//     liveliness subscriber and an initial liveliness get on
//     @ros2_lv/<domain>/**. Matched events follow it (see graph.go);
//     rmw_zenoh reports no incompatible-QoS event and neither does this
//     transport.
//
// # Configuration
//
// ConfigFromEnv reads what rmw_zenoh reads: ZENOH_SESSION_CONFIG_URI,
// ZENOH_CONFIG_OVERRIDE (rmw/zenoh/config), ROS_DOMAIN_ID, ROS_DISTRO and
// ZENOH_ROUTER_CHECK_ATTEMPTS. The default is rmw_zenoh's: peer mode,
// connect tcp/localhost:7447 (a router), listen tcp/localhost:0, no
// multicast scouting; without a router it warns as rmw_zenoh does and
// goes on. Time comes from Config.Clock and Config.WallNow.
//
// # Callbacks
//
// deliver, handle and OnEvent functions run on the session's reader
// goroutines (or on the goroutine that published or answered, for this
// transport's own endpoints); they only copy and queue (package rmw). Once
// an endpoint's Close returns, none of its callbacks runs or starts; once
// Transport.Close returns, none of any.
package zenoh
