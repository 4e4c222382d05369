// Package session is the zenoh session of nros: the link handshake, the
// transport of network messages over each link, and a Session that owns
// the links (faces) to other zenoh nodes, this node's declarations, and
// dispatches what the faces send to a Handler.
//
// # Sans-IO pieces
//
// Handshake is the INIT/OPEN exchange (NewInitiator, NewAcceptor, Handle):
// it agrees batch size, sequence-number and request-id resolutions, QoS
// and the protocol patch as zenoh 1.x does, and yields Params. Tx packs
// network messages into batches (one FRAME per channel and batch,
// FRAGMENTs for what does not fit); Rx checks sequence numbers per
// priority and reliability, reassembles fragments (bounded) and delivers
// messages. None of them touch a socket or a clock.
//
// # Session
//
// Open starts a Session in peer or client mode on rmw/zenoh/link links:
// it listens, connects (with backoff 1 s doubling to 4 s), and runs per
// face a reader (decode, then dispatch), a writer (takes what queued while
// it wrote: batching under load, immediate when idle) and a lease
// goroutine (KEEP_ALIVE at lease/4 when idle, CLOSE EXPIRED after the
// remote's lease of silence). Sending never blocks: past 1 MiB queued,
// droppable messages are dropped (counted); past 16 MiB the link is closed
// as unresponsive.
//
// What the transport on top uses:
//
//   - DeclareSubscriber, DeclareQueryable, DeclareToken (and Undeclare*):
//     declared to peers and routers at once and on every new face (p2p:
//     with interest id 0 then DeclareFinal(0)); to clients when they asked
//     (aggregate interests answered with one declaration on their key).
//   - Put: a PUT or DEL to the faces that want it (peer mode: a matching
//     subscriber, and the routers, which declare subscribers to a peer
//     only when asked: to a router that finalized a future subscriber
//     interest covering the key, only on its declarations; client mode:
//     the router). Matching tells whether any face declared a subscriber
//     on a key.
//   - Request: a query to the faces that can answer (peer: a matching
//     queryable, and the routers; client: the router); Handler.Response
//     per reply, one
//     Handler.ResponseFinal when all are done or the timeout passed.
//     Reply and ReplyFinal answer a Handler.Request.
//   - DeclareInterest: (Current, Tokens, "@ros2_lv/<domain>/**") is a
//     liveliness get, answered from what the session knows and by routers;
//     a Future mode keeps declarations coming. UndeclareInterest ends it.
//   - Handler: FaceUp/FaceDown, Push, Request, Response, ResponseFinal,
//     Declared (remote declarations and undeclarations with resolved keys,
//     including everything of a face that went down), InterestFinal.
//
// Handler calls come from the faces' reader goroutines (in order per
// face) and from one dispatcher goroutine (answers from the session's own
// tables, timeouts); no session lock is held during a call, and none
// happens after Close returns. Remote interests (a zenoh-pico liveliness
// subscriber or get, a client's subscriber interest) are answered by the
// session itself.
//
// Routing between faces is not done here. A Session in router mode
// (Config.Mode wire.Router, as rmw/zenoh/router opens it) says it is a
// router in its handshakes and leaves the routing to a Handler that
// implements Routing: every remote interest goes to it (the session
// answers none), and the responses to the requests it forwarded with
// Face.Send. A peer does not forward its clients' data or tokens to other
// faces.
package session
