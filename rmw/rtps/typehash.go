package rtps

import (
	"github.com/nros-go/nros/msg"
)

// endpointUserData is the USER_DATA of an endpoint of DDS type ddsType:
// extra (clientid/serviceid of service endpoints) and, for a registered
// generated type, "typehash=RIHS01_<hex>;" as Iron and later announce it
// (Humble ignores it). The hash is the one the generator wrote into the
// type (msg.TypeHasher).
func endpointUserData(extra []byte, ddsType string) []byte {
	m, ok := msg.New(ddsType)
	if !ok {
		return extra
	}
	th, ok := m.(msg.TypeHasher)
	if !ok {
		return extra
	}
	h := th.TypeHash()
	out := make([]byte, 0, len(extra)+len(h)+10)
	out = append(out, extra...)
	return append(out, "typehash="+h+";"...)
}
