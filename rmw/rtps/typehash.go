package rtps

import (
	"github.com/nros-go/nros/internal/typehash"
	"github.com/nros-go/nros/msg"
)

// endpointUserData is the USER_DATA of an endpoint of DDS type ddsType:
// extra (clientid/serviceid of service endpoints) and, for a type whose
// definition nros-go ships, "typehash=RIHS01_<hex>;" as Iron and later
// announce it (Humble ignores it).
func endpointUserData(extra []byte, ddsType string) []byte {
	ros, err := msg.ROSTypeName(ddsType)
	if err != nil {
		return extra
	}
	h, ok := typehash.Bundled(ros)
	if !ok {
		return extra
	}
	out := make([]byte, 0, len(extra)+len(h)+10)
	out = append(out, extra...)
	return append(out, "typehash="+h+";"...)
}
