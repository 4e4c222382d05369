// Package link carries zenoh batches over sockets: TCP (each batch behind
// a 2-byte little-endian length), UDP unicast (one batch per datagram) and
// an in-memory pipe for tests. Endpoints are zenoh locators such as
// "tcp/127.0.0.1:7447", "udp/[::1]:7447" or "tcp/localhost:0#iface=lo".
//
// A Link is used by one reader goroutine (ReadBatch) and one writer
// goroutine (WriteBatch) at a time; Close may be called from anywhere and
// unblocks both.
package link
