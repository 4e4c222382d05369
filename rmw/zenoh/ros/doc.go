// Package ros maps ROS 2 onto Zenoh exactly as rmw_zenoh_cpp does: data
// key expressions, liveliness tokens and their QoS field, the attachment
// of samples, queries and replies, entity gids, service request ids and
// the keys of transient-local (advanced) publishers. It is pure functions
// on strings and bytes: no sockets, no state.
//
// The facts below were read from rmw_zenoh's released sources (Humble
// 0.1.0-0.1.9, Jazzy 0.2.0-0.2.10, Kilted 0.6.x, Lyrical 0.10.x, Rolling
// 0.12.0: liveliness_utils.cpp, attachment_helpers.cpp, qos.cpp,
// rmw_publisher_data.cpp, rmw_subscription_data.cpp, rmw_client_data.cpp,
// rmw_service_data.cpp, graph_cache.cpp, docs/design.md) and zenoh-ext 1.7
// (advanced_publisher.rs, advanced_subscriber.rs, advanced_cache.rs,
// serialization.rs).
//
// # Data keys
//
//	<domain>/<name>/<dds type>/<type hash>
//
// name is the fully qualified topic or service name without its leading
// and trailing '/' ("/robot1/chatter" -> "robot1/chatter"); dds type is
// "<pkg>::<msg|srv|action>::dds_::<Name>_" (a service's is its request
// type's without "Request_"); type hash is "RIHS01_<64 hex>" from Iron on
// and the literal "TypeHashNotSupported" on Humble (Distro). TopicKey.
//
// # Liveliness tokens
//
//	@ros2_lv/<domain>/<zid>/<nid>/<id>/NN/<enclave>/<ns>/<node>
//	@ros2_lv/<domain>/<zid>/<nid>/<id>/<MP|MS|SS|SC>/<enclave>/<ns>/<node>/<topic>/<type>/<hash>/<qos>[/<backends>]
//
// zid is the session's zenoh id as zenoh prints it: its 16 bytes read as a
// little-endian u128, lowercase hex, no leading zeros (FormatZID). nid is
// the node's id and id the entity's (equal for a node), both decimal, drawn
// from one counter per context starting at 0 (nodes and their entities
// share it). Every name field is mangled: each '/' becomes '%' and nothing
// else is escaped ("/" -> "%", "/chatter" -> "%chatter"); an enclave is "/"
// by default. The fields are joined with '/' up to the first empty one, so
// an empty enclave or namespace would silently truncate the token: Token
// refuses empty fields instead. Buffer-aware endpoints of rmw_zenoh 0.10
// and later (Lyrical, Rolling) add a 14th chunk "backends:<name>:<meta>;…"
// (fields escaped as %25 %3B %3A %2F); older parsers ignore it. The graph
// cache subscribes to and queries "@ros2_lv/<domain>/**".
//
// rmw_zenoh parses a token (Entity::make) by splitting on '/': at least 9
// chunks, none empty, "@ros2_lv" first, a known kind, 13 chunks for
// endpoints, a valid QoS field; chunks past those are ignored. It then
// rebuilds the token from the parsed fields and hashes that into the gid.
// ParseToken and Entity.Token do the same, so Entity.GID of a parsed peer
// token is the gid the peer uses.
//
// # QoS field
//
//	<rel>:<dur>:<hist>,<depth>:<deadline s>,<ns>:<lifespan s>,<ns>:<liv>,<lease s>,<ns>
//
// rmw enum integers (reliability 1 RELIABLE, 2 BEST_EFFORT, 4
// BEST_AVAILABLE; durability 1 TRANSIENT_LOCAL, 2 VOLATILE; history 1
// KEEP_LAST, 2 KEEP_ALL; liveliness 1 AUTOMATIC, 3 MANUAL_BY_TOPIC) and
// rmw_time_t halves; a value equal to rmw_zenoh's default (RELIABLE,
// VOLATILE, KEEP_LAST, depth 42, infinite = {9223372036, 854775807},
// AUTOMATIC) is left empty. Before it writes a profile rmw_zenoh adapts it:
// system-default policies become the defaults, depth 0 becomes 42,
// unspecified ({0,0}) durations become infinite (Profile.Adapt). So
// rclcpp's ClockQoS is "2::,1:,:,:,," and its default keep-last 10
// "::,10:,:,:,,". Humble's rmw has no BEST_AVAILABLE values; Humble's
// rmw_zenoh wrote the integers directly, Jazzy's through tables: the
// strings are the same.
//
// Congestion control: a publisher is BLOCK when RELIABLE and KEEP_ALL,
// else DROP; zenoh reliability RELIABLE for RELIABLE, else BEST_EFFORT.
// rmw_zenoh sets no priority and no express flag anywhere (zenoh's
// defaults: priority Data, express off), and nothing on queries and
// replies beyond what Services says (service.go).
//
// # Attachment
//
// Every sample, query and reply carries 33 bytes, zenoh-ext's
// serialization of (int64, int64, [16]uint8): the sequence number (int64
// LE, from 1 per publisher or client), the source timestamp (int64 LE,
// system clock ns), LEB128 16, the 16-byte gid. A reply carries the
// request's sequence number and the client's gid (ReplyAttachment).
// rmw_zenoh 0.1.0-0.1.1 (Humble), 0.2.0-0.2.3 (Jazzy) and 0.3.0-0.5.0
// (Rolling) prefixed each value with its name as a zenoh-ext string (77
// bytes, LayoutKeyed); ParseAttachment reads both.
//
// # Gids
//
// An entity's gid is XXH3-128 (seed 0) of its token string, low 64 bits
// then high 64 bits, little endian (TokenGID; every released version).
//
// # Distro differences
//
// Across released rmw_zenoh versions the wire differs only in: the type
// hash (Humble: TypeHashNotSupported), the attachment layout of the
// earliest releases (above), transient-local topics (PublicationCache and
// QueryingSubscriber before Humble 0.1.2, Jazzy 0.2.2 and Rolling 0.4.0;
// AdvancedPublisher and AdvancedSubscriber since: advanced.go) and the
// optional backends chunk of 0.10+. Token layout, QoS field, gid and the
// service mapping are the same in every release. Pre-release
// rmw_zenoh (2023-2024, zenoh 0.x) used other layouts that no release
// shipped; they are not supported.
package ros
