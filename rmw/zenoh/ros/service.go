package ros

import (
	"strings"
	"time"
)

// Services, as rmw_zenoh maps them:
//
//   - The server declares a queryable, complete, on the service's key
//     (TopicKey with the service's DDS type, e.g.
//     "0/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/RIHS01_…",
//     the hash being the service type's), and an SS token.
//   - The client declares an SC token and a querier on the same key: target
//     ALL_COMPLETE, consolidation NONE, the session's default query timeout
//     (queries_default_timeout: 600 s in rmw_zenoh's session config, 10 s in
//     zenoh's built-in one) except for action get_result services, whose
//     queries never time out (ClientQueryTimeout). The request is the
//     query's payload (CDR), its attachment carries the client's sequence
//     number (from 1), the time and the client's gid.
//   - The server answers with one reply on its own key: the response as
//     payload, ReplyAttachment as attachment. The server keys pending
//     queries by (client gid, sequence number) and drops a duplicate.
//   - A reply that is an error ("z_reply_is_ok returned False") is logged
//     and dropped by the client.

// QueryTarget, consolidation and the queryable's completeness, as rmw_zenoh
// sets them.
const (
	// ServiceQueryableComplete: the server's queryable is declared complete.
	ServiceQueryableComplete = true
	// ClientQueryTargetAllComplete: queries go to all complete queryables.
	ClientQueryTargetAllComplete = true
	// ClientConsolidationNone: no consolidation of replies.
	ClientConsolidationNone = true
)

// ClientQueryTimeout returns the timeout rmw_zenoh gives a client's
// queries on key: none (infinite is true) for an action's get_result
// service (the key intersects "**/_action/get_result/**"), else the
// session's default (def).
func ClientQueryTimeout(key string, def time.Duration) (d time.Duration, infinite bool) {
	c := strings.Split(key, "/")
	for i := 0; i+1 < len(c); i++ {
		if c[i] == "_action" && c[i+1] == "get_result" {
			return 0, true
		}
	}
	return def, false
}

// ServiceTypeFromRequest returns the service's DDS type name from its
// request type's ("…::dds_::AddTwoInts_Request_" -> "…::dds_::AddTwoInts_"),
// as rmw_zenoh derives it; ok is false when the name has no "Request_".
func ServiceTypeFromRequest(requestDDSType string) (string, bool) {
	i := strings.LastIndex(requestDDSType, "Request_")
	if i < 0 {
		return "", false
	}
	return requestDDSType[:i], true
}
