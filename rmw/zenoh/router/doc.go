// Package router is a zenoh 1.x router for one machine: the routing of
// `nros zenohd`, a drop-in for rmw_zenoh's rmw_zenohd, so that zenoh-pico
// clients (nano-ros boards), rmw_zenoh nodes and Go nodes meet.
//
// It runs a rmw/zenoh/session Session in router mode whose Handler
// implements session.Routing, and routes between its faces as zenoh's
// router does for the clients and peers linked to it:
//
//   - Declarations (subscribers, queryables, liveliness tokens) are kept
//     per face under the face's own ids and key-expression mappings, and
//     indexed by key. The router declares to a face only what the face's
//     interests ask for, clients and peers alike (zenoh 1.x routers push
//     nothing unasked): a future interest makes every matching key of the
//     other faces declared once to it, under an id of the router's
//     numbering for that face, whatever number of entities the other faces
//     have on that key (queryables with their merged completeness and
//     distance, re-declared when they change), and undeclared when the last
//     of them goes. An aggregate interest of a client (zenoh-pico's
//     publishers and queriers ask that way) is answered with one
//     declaration on the interest's own key while anything matches it, a
//     queryable aggregate being complete when a complete queryable
//     includes it. The current part of an interest is answered at once
//     from every face's declarations, then DeclareFinal: the router knows
//     everything (there is no other router to ask). Liveliness gets are
//     current token interests. A face going away undeclares what it
//     declared.
//   - PUSH (put, delete) goes to every other face with a matching
//     subscriber, never back to its sender.
//   - REQUEST goes to the faces with a matching queryable as its target
//     says (best matching: one complete queryable when some face has one
//     whose key includes the query's, else all; all complete; all), each
//     under a request id of that face; RESPONSEs go back under the
//     querier's id, and one RESPONSE_FINAL when every face finished, went
//     away or timed out (the query's timeout, else QueryTimeout: zenoh's
//     "Timeout" error then comes from that face).
//
// Differences from zenohd: the router speaks no gossip nor link state, so
// it brokers between peers (zenohd leaves peers that gossip told it are
// linked to talk directly) and does not route between routers linked to
// it. Keys are sent whole (no key-expression declarations of its own).
//
// Bad input from a face is the session's to count and drop; the routing
// tables bound each face's interests and pending queries (Stats).
package router
