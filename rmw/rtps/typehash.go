package rtps

import (
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// endpointUserData is the USER_DATA of an endpoint of DDS type ddsType:
// extra (clientid/serviceid of service endpoints) and "typehash=<hash>;"
// as Iron and later announce it (Humble ignores it). The hash is hash, the
// one the endpoint's EndpointOptions carried; when that is empty, the hash
// the generator wrote into the registered type of that name
// (msg.TypeHasher), else none.
func endpointUserData(extra []byte, ddsType, hash string) []byte {
	if hash == "" {
		m, ok := msg.New(ddsType)
		if !ok {
			return extra
		}
		th, ok := m.(msg.TypeHasher)
		if !ok {
			return extra
		}
		hash = th.TypeHash()
	}
	out := make([]byte, 0, len(extra)+len(hash)+10)
	out = append(out, extra...)
	return append(out, "typehash="+hash+";"...)
}

// announcedTypeHash is the type hash an endpoint's USER_DATA announces,
// or "" when it announces none or a malformed one.
func announcedTypeHash(ud []byte) string {
	h, ok := wire.UserDataValue(ud, "typehash")
	if !ok || rmw.CheckTypeHash(h) != nil {
		return ""
	}
	return h
}
