// Package session is the zenoh session of nros: the link handshake, the
// transport of network messages over each link, and a Session that owns
// the links (faces) to other zenoh nodes and dispatches what they send to
// a Handler.
package session
