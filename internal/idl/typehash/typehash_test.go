package typehash

import (
	"testing"

	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/interfaces"
)

// shipped loads the interface definitions nros-go ships and those of its
// test packages (test_msgs, example_interfaces).
func shipped(t *testing.T) *interfaces.Set {
	t.Helper()
	set := interfaces.NewSet()
	if err := set.Load("../gen/testdata/interfaces"); err != nil {
		t.Fatal(err)
	}
	if err := set.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	return set
}

// Hashes that ROS 2 Jazzy announces (rmw endpoint USER_DATA, rmw_zenoh
// key expressions) or records (rosbag2 type_description_hash).
func TestKnownHashes(t *testing.T) {
	set := shipped(t)
	for typ, want := range map[string]string{
		"std_msgs/String":           "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
		"std_msgs/MultiArrayLayout": "RIHS01_4c66e6f78e740ac103a94cf63259f968e48c617e7699e829b63c21a5cb50dac6",
		"sensor_msgs/Image":         "RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47",
		"rosgraph_msgs/Clock":       "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564",
		// ros_discovery_info (Iron and later layout).
		"rmw_dds_common/ParticipantEntitiesInfo": "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
		"builtin_interfaces/Time":                "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
		"service_msgs/ServiceEventInfo":          "RIHS01_41bcbbe07a75c9b52bc96bfd5c24d7f0fc0a08c0cb7921b3373c5732345a6f45",
		"unique_identifier_msgs/UUID":            "RIHS01_1b8e8aca958cbea28fe6ef60bf6c19b683c97a9ef60bb34752067d0f2f7ab437",
		// The bag testdata/bags/service_events_jazzy_mcap:
		// bounded strings, and a service event (bounded sequences).
		"test_msgs/Strings":          "RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32",
		"test_msgs/BasicTypes_Event": "RIHS01_5b9988a4805a06ae22dff12903a774ccda710e9514926b826ffc884e3a9a982e",
	} {
		pkg, name, _ := cut(typ)
		m := set.Lookup(pkg, name)
		if m == nil {
			t.Fatalf("%s: no definition", typ)
		}
		if got, err := Message(m, set.Lookup); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", typ, got, err, want)
		}
	}
	// example_interfaces/srv/AddTwoInts_Request: int64 a, int64 b.
	req := &idl.Msg{Package: "example_interfaces", Namespace: "srv", Name: "AddTwoInts_Request", Fields: []idl.Field{
		{Name: "a", Type: idl.Type{Kind: idl.Int64}}, {Name: "b", Type: idl.Type{Kind: idl.Int64}}}}
	if got, err := Message(req, nil); err != nil || got != "RIHS01_000c5fd92d6b2e1a05949348f584d6d652adea1e92d691792011ac2273508302" {
		t.Errorf("AddTwoInts_Request: %q %v", got, err)
	}
	if _, err := Message(&idl.Msg{Package: "p", Namespace: "msg", Name: "A", Fields: []idl.Field{
		{Name: "b", Type: idl.MsgType("p", "B")}}}, set.Lookup); err == nil {
		t.Error("a message of an unknown type hashed")
	}
}

func cut(typ string) (pkg, name string, ok bool) {
	for i := range len(typ) {
		if typ[i] == '/' {
			return typ[:i], typ[i+1:], true
		}
	}
	return "", typ, false
}

// A service's hash is that of a type with the fields request_message,
// response_message and event_message: example_interfaces/srv/AddTwoInts as
// rmw_zenoh announces it (its design document's key expression).
func TestServiceHash(t *testing.T) {
	set := shipped(t)
	sv := set.Packages["example_interfaces"].Srvs[0]
	if got, err := Service(sv, set.Lookup); err != nil || got != "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a" {
		t.Errorf("example_interfaces/srv/AddTwoInts: %q %v", got, err)
	}
	// Without service_msgs the event, so the service, cannot be described.
	if _, err := Service(sv, func(string, string) *idl.Msg { return nil }); err == nil {
		t.Error("a service hashed without service_msgs/ServiceEventInfo")
	}
}

// The action of ROS 2's "creating an action" tutorial
// (custom_action_interfaces/action/Fibonacci), whose hashes rosidl wrote
// into its generated type support (fibonacci__description.c) in Jazzy:
// each part, the wrappers, the two services (with their events) and the
// action itself.
func TestActionHashes(t *testing.T) {
	set := shipped(t)
	a, err := idl.ParseAction("custom_action_interfaces", "Fibonacci",
		[]byte("int32 order\n---\nint32[] sequence\n---\nint32[] partial_sequence\n"), "Fibonacci.action")
	if err != nil {
		t.Fatal(err)
	}
	ms := idl.ActionMsgs(a)
	lookup := func(pkg, name string) *idl.Msg {
		for _, m := range ms {
			if m.Package == pkg && m.Name == name {
				return m
			}
		}
		return set.Lookup(pkg, name)
	}
	want := map[string]string{
		"Fibonacci_Goal":               "RIHS01_3cce4e2f29dd61d845e5d9855df63808ee69963a1b2499b502d7175c8ef9ebdc",
		"Fibonacci_Result":             "RIHS01_d8cf1b3423f3c0a79296414cee21c9f195753ed16f8ea5fca19b83aea04bc123",
		"Fibonacci_Feedback":           "RIHS01_8e11980979ee5d599d6ddbf78a78af8b63ae7e4a6dfbc1df4cf3220454211ae8",
		"Fibonacci_SendGoal_Request":   "RIHS01_eda9edac51edbc2591a084a904d1dbba336595136f4da7fc92ba35ab418f6a05",
		"Fibonacci_SendGoal_Response":  "RIHS01_edb63579c419717f02d7eef58a85482abb39ec3f9c8f68d90e545fde29ab9fbc",
		"Fibonacci_GetResult_Request":  "RIHS01_dc378fd547235c9a976094492f1eb48a408a0a745ef051046207feafe6420f1d",
		"Fibonacci_GetResult_Response": "RIHS01_55ff57e8116baa89667710fed2e1a7de0e552cc02e284d53b361eca519f7012e",
		"Fibonacci_FeedbackMessage":    "RIHS01_0b862d2c534bf2d42019c82fcc71a0eeeee9d8023cc77277163f7f246876be07",
		"Fibonacci_SendGoal_Event":     "RIHS01_c4920dc51ce3107930b84dc92bbbda4f8d14dde7e37b6e499f6db0d177457302",
		"Fibonacci_GetResult_Event":    "RIHS01_465e3ccc3615c418a99f20e6aad940a997afb84bea01e3cedeedec711b11fe84",
		"action Fibonacci":             "RIHS01_cd2d79189d941df81b8a4bd952ce1f6f8bab678efaf2851a4b1ef6031a633828",
		"service Fibonacci_SendGoal":   "RIHS01_cd44195cea6407c31072909245178934e410f8ce3ffca90ab35a8e77a5dd08d7",
		"service Fibonacci_GetResult":  "RIHS01_2d01fbf73115b49b28af7e932bc7ff5ac9c94c19b9f71769dd81242a2667925a",
	}
	got := map[string]string{}
	for _, m := range append(ms, idl.Event(ms[3], ms[4]), idl.Event(ms[5], ms[6])) {
		h, err := Message(m, lookup)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		got[m.Name] = h
	}
	if got["action Fibonacci"], err = Action(a, set.Lookup); err != nil {
		t.Fatal(err)
	}
	if got["service Fibonacci_SendGoal"], got["service Fibonacci_GetResult"], err = ActionServices(a, set.Lookup); err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
}
