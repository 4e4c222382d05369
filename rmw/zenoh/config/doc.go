// Package config reads zenoh configurations as rmw_zenoh does: a JSON5
// file (ZENOH_SESSION_CONFIG_URI, or rmw_zenoh's default session
// configuration), then ZENOH_CONFIG_OVERRIDE's key=value pairs, decoded
// into the keys a zenoh session or router of this project uses. It has no
// sockets and reads the environment and files only through the functions
// it is given.
//
// # What it reads
//
// ParseJSON5 is a complete JSON5 parser (comments, unquoted keys,
// single-quoted strings, hex numbers, Infinity/NaN, trailing commas) whose
// errors name the line and column. Config holds mode, id, connect and
// listen (endpoints, timeout_ms, exit_on_failure, retry), scouting
// (timeout, delay, multicast, gossip), timestamping, queries_default_timeout,
// transport/unicast (timeouts, limits, lowlatency, qos, compression) and
// transport/link (protocols, tx: sequence_number_resolution, lease,
// keep_alive, batch_size; rx: buffer_size, max_message_size). The lease is
// transport/link/tx/lease in zenoh 1.x (there is no transport/unicast/lease);
// keep-alives are sent lease/keep_alive apart. Mode-dependent keys take
// one value or {router, peer, client}.
//
// zenoh refuses a key it does not know (its configuration structs deny
// unknown fields), so does Parse (errors.Is(err, ErrUnknownKey)); keys
// zenoh knows and this package does not use are accepted and listed in
// Config.Ignored; the free-form subtrees (metadata, plugins, access_control,
// qos, downsampling, …) are not looked into. A bad value is an *Error
// naming the key and, when it came from text, its line and column.
//
// # Defaults
//
// Default is rmw_zenoh's DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5 (the same
// in every release, Humble to Rolling): peer mode, connect
// tcp/localhost:7447, listen tcp/localhost:0, multicast scouting off,
// gossip on, timestamping on, queries_default_timeout 600 s, lease 60 s
// with 2 keep-alives, open and accept timeouts 60 s. DefaultRouter is
// DEFAULT_RMW_ZENOH_ROUTER_CONFIG.json5 (router mode) except that it
// listens on tcp/127.0.0.1:7447 where rmw_zenohd listens on tcp/[::]:7447
// (every interface): this project's router binds loopback unless the user
// says otherwise (-l, ZENOH_ROUTER_CONFIG_URI or ZENOH_CONFIG_OVERRIDE).
// A file given by ZENOH_SESSION_CONFIG_URI replaces Default whole: the keys
// it leaves out take zenoh's built-in defaults (Builtin), as in rmw_zenoh,
// except two that are loopback and multicast-free here (Builtin's doc).
//
// # Router check
//
// After opening, an rmw_zenoh session checks once a
// second for a router (ZENOH_ROUTER_CHECK_ATTEMPTS, RouterCheck), logging
// NoRouterWarning each time and NoRouterGiveUp after the last attempt;
// then it goes on without one.
package config
