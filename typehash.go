package nros

import (
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
)

// Type hashes reach the transport through rmw.EndpointOptions: every
// endpoint a node makes (publishers, subscriptions, services, clients, and
// with them actions, parameter services, /rosout, /parameter_events and
// the /clock subscription) announces the RIHS01 hash of its message type
// when the type carries one (msg.TypeHasher, which generated types
// implement), and none for a type that does not (a hand-written one).

// messageTypeHash returns the RIHS01 hash m's type announces, or "".
func messageTypeHash(m msg.Message) string {
	if h, ok := m.(msg.TypeHasher); ok {
		return h.TypeHash()
	}
	return ""
}

// serviceTypeHashes fills the type hashes of a service endpoint's options
// from its request and response types: theirs, and the service type's
// (msg.ServiceTypeHasher, from either).
func serviceTypeHashes(o rmw.EndpointOptions, req, resp msg.Message) rmw.EndpointOptions {
	o.RequestTypeHash, o.ResponseTypeHash = messageTypeHash(req), messageTypeHash(resp)
	o.TypeHash = ""
	for _, m := range []msg.Message{req, resp} {
		if h, ok := m.(msg.ServiceTypeHasher); ok {
			o.TypeHash = h.ServiceTypeHash()
			break
		}
	}
	return o
}

// registeredTypeHash returns the hash of the generated type registered
// under the ROS type name, or "" (for the action wrappers, which stand in
// for generated types of the same name).
func registeredTypeHash(name string) string {
	if m, ok := msg.New(name); ok {
		return messageTypeHash(m)
	}
	return ""
}

// registeredServiceTypeHash returns the service type hash that the
// generated type registered under name carries, or "".
func registeredServiceTypeHash(name string) string {
	if m, ok := msg.New(name); ok {
		if h, ok := m.(msg.ServiceTypeHasher); ok {
			return h.ServiceTypeHash()
		}
	}
	return ""
}
