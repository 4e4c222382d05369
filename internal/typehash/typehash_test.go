package typehash

import (
	"testing"

	"github.com/nros-go/nros/internal/gen/idl"
)

// Hashes that ROS 2 Jazzy announces (rmw endpoint USER_DATA).
func TestKnownHashes(t *testing.T) {
	for typ, want := range map[string]string{
		"std_msgs/msg/String":           "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
		"std_msgs/msg/MultiArrayLayout": "RIHS01_4c66e6f78e740ac103a94cf63259f968e48c617e7699e829b63c21a5cb50dac6",
		"sensor_msgs/msg/Image":         "RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47",
	} {
		got, ok := Bundled(typ)
		if !ok || got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
	// example_interfaces/srv/AddTwoInts_Request: int64 a, int64 b.
	req := &idl.Msg{Package: "example_interfaces", Namespace: "srv", Name: "AddTwoInts_Request", Fields: []idl.Field{
		{Name: "a", Type: idl.Type{Kind: idl.Int64}}, {Name: "b", Type: idl.Type{Kind: idl.Int64}}}}
	if got, err := Hash(req, nil); err != nil || got != "RIHS01_000c5fd92d6b2e1a05949348f584d6d652adea1e92d691792011ac2273508302" {
		t.Errorf("AddTwoInts_Request: %q %v", got, err)
	}
	if _, ok := Bundled("no_such/msg/Type"); ok {
		t.Error("unknown type hashed")
	}
}
