package config

import "strings"

// The keys of zenoh 1.x's configuration (commons/zenoh-config's Config, as
// of zenoh 1.7), as '/'-separated paths. zenoh rejects a key it does not
// know (its structs deny unknown fields), and so does this package; keys
// it knows but this package does not use are accepted and ignored (Config
// lists them in Ignored).

// leafKeys are the paths whose value is taken whole (a scalar, a list, or
// a mode-dependent value: one value or {router, peer, client}).
var leafKeys = []string{
	"id", "mode", "namespace",
	"connect/endpoints", "connect/timeout_ms", "connect/exit_on_failure",
	"connect/retry/period_init_ms", "connect/retry/period_max_ms", "connect/retry/period_increase_factor",
	"listen/endpoints", "listen/timeout_ms", "listen/exit_on_failure",
	"listen/retry/period_init_ms", "listen/retry/period_max_ms", "listen/retry/period_increase_factor",
	"open/return_conditions/connect_scouted", "open/return_conditions/declares",
	"scouting/timeout", "scouting/delay",
	"scouting/multicast/enabled", "scouting/multicast/address", "scouting/multicast/interface",
	"scouting/multicast/ttl", "scouting/multicast/autoconnect", "scouting/multicast/autoconnect_strategy",
	"scouting/multicast/listen",
	"scouting/gossip/enabled", "scouting/gossip/multihop", "scouting/gossip/target",
	"scouting/gossip/autoconnect", "scouting/gossip/autoconnect_strategy",
	"timestamping/enabled", "timestamping/drop_future_timestamp",
	"queries_default_timeout",
	"routing/router/peers_failover_brokering", "routing/peer/mode", "routing/interests/timeout",
	"transport/unicast/open_timeout", "transport/unicast/accept_timeout", "transport/unicast/accept_pending",
	"transport/unicast/max_sessions", "transport/unicast/max_links", "transport/unicast/lowlatency",
	"transport/unicast/qos/enabled", "transport/unicast/compression/enabled",
	"transport/multicast/join_interval", "transport/multicast/max_sessions",
	"transport/multicast/qos/enabled", "transport/multicast/compression/enabled",
	"transport/link/protocols",
	"transport/link/tx/sequence_number_resolution", "transport/link/tx/lease", "transport/link/tx/keep_alive",
	"transport/link/tx/batch_size", "transport/link/tx/threads",
	"transport/link/tx/queue/size/control", "transport/link/tx/queue/size/real_time",
	"transport/link/tx/queue/size/interactive_high", "transport/link/tx/queue/size/interactive_low",
	"transport/link/tx/queue/size/data_high", "transport/link/tx/queue/size/data",
	"transport/link/tx/queue/size/data_low", "transport/link/tx/queue/size/background",
	"transport/link/tx/queue/congestion_control/drop/wait_before_drop",
	"transport/link/tx/queue/congestion_control/drop/max_wait_before_drop_fragments",
	"transport/link/tx/queue/congestion_control/block/wait_before_close",
	"transport/link/tx/queue/batching/enabled", "transport/link/tx/queue/batching/time_limit",
	"transport/link/tx/queue/allocation/mode",
	"transport/link/rx/buffer_size", "transport/link/rx/max_message_size",
	"transport/link/tls/root_ca_certificate", "transport/link/tls/listen_private_key",
	"transport/link/tls/listen_certificate", "transport/link/tls/enable_mtls",
	"transport/link/tls/connect_private_key", "transport/link/tls/connect_certificate",
	"transport/link/tls/verify_name_on_connect", "transport/link/tls/close_link_on_expiration",
	"transport/link/tls/so_sndbuf", "transport/link/tls/so_rcvbuf",
	"transport/link/tcp/so_sndbuf", "transport/link/tcp/so_rcvbuf",
	"transport/link/unixpipe/file_access_mask",
	"transport/shared_memory/enabled", "transport/shared_memory/mode",
	"transport/shared_memory/transport_optimization/enabled",
	"transport/shared_memory/transport_optimization/pool_size",
	"transport/shared_memory/transport_optimization/message_size_threshold",
	"transport/auth/usrpwd/user", "transport/auth/usrpwd/password", "transport/auth/usrpwd/dictionary_file",
	"transport/auth/pubkey/public_key_pem", "transport/auth/pubkey/private_key_pem",
	"transport/auth/pubkey/public_key_file", "transport/auth/pubkey/private_key_file",
	"transport/auth/pubkey/key_size", "transport/auth/pubkey/known_keys_file",
	"adminspace/enabled", "adminspace/permissions/read", "adminspace/permissions/write",
	"downsampling", "low_pass_filter",
}

// openKeys are subtrees whose content this package does not check (free
// JSON in zenoh, or structures of lists it does not use).
var openKeys = []string{
	"metadata", "plugins", "plugins_loading", "access_control", "stats", "qos", "aggregation",
	"routing/router/linkstate", "routing/peer/linkstate",
}

type keyKind uint8

const (
	keyUnknown keyKind = iota
	keyBranch          // an object of known keys
	keyLeaf
	keyOpen
)

var keyIndex = func() map[string]keyKind {
	m := map[string]keyKind{}
	for _, k := range leafKeys {
		m[k] = keyLeaf
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			m[k[:i]] = keyBranch
		}
	}
	for _, k := range openKeys {
		m[k] = keyOpen
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			m[k[:i]] = keyBranch
		}
	}
	return m
}()

// lookupKey returns what path is: a branch, a leaf, inside an open
// subtree, or unknown.
func lookupKey(path string) keyKind {
	if k, ok := keyIndex[path]; ok {
		return k
	}
	for i := strings.IndexByte(path, '/'); i > 0; {
		if keyIndex[path[:i]] == keyOpen {
			return keyOpen
		}
		j := strings.IndexByte(path[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return keyUnknown
}
