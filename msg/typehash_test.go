package msg_test

import (
	"maps"
	"testing"

	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/gen"
	"github.com/nros-go/nros/internal/idl/interfaces"
	"github.com/nros-go/nros/internal/idl/typehash"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/msg/std_srvs"
)

// The hashes ROS 2 Jazzy announces for these types, straight from the
// generated methods.
func TestGeneratedTypeHashKnown(t *testing.T) {
	for _, c := range []struct {
		m    msg.TypeHasher
		want string
	}{
		{new(std_msgs.String), "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"},
		{new(rosgraph_msgs.Clock), "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564"},
		{new(rmw_dds_common.ParticipantEntitiesInfo), "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e"},
	} {
		if got := c.m.TypeHash(); got != c.want {
			t.Errorf("%T: %s, want %s", c.m, got, c.want)
		}
	}
	var req msg.ServiceTypeHasher = new(std_srvs.SetBool_Request)
	var resp msg.ServiceTypeHasher = new(std_srvs.SetBool_Response)
	if req.ServiceTypeHash() != resp.ServiceTypeHash() || req.ServiceTypeHash() == new(std_srvs.SetBool_Request).TypeHash() {
		t.Errorf("SetBool: service hash %s / %s, request hash %s", req.ServiceTypeHash(), resp.ServiceTypeHash(),
			new(std_srvs.SetBool_Request).TypeHash())
	}
}

// TestGeneratedTypeHashes: every generated type (the shipped packages and
// test_msgs) carries the hash the run-time computation (internal/idl/typehash)
// gives from its definition, each request and response its service's, each
// .msg message its rosbag2 definition; other types carry no definition.
func TestGeneratedTypeHashes(t *testing.T) {
	set, all := definitions(t)
	for _, def := range all {
		name := def.FullName()
		m, ok := msg.New(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		checkHash(t, set, def, m)
		d, isDefiner := m.(msg.Definer)
		if def.Namespace != "msg" {
			if isDefiner {
				t.Errorf("%s: a definition for a service or action part", name)
			}
			continue
		}
		want, err := gen.Definition(set, def)
		if err != nil {
			t.Fatal(err)
		}
		if !isDefiner || d.MessageDefinition() != want {
			t.Errorf("%s: generated definition differs from the definition files'", name)
		}
		if got, ok := msg.Definition(name); !ok || got != want {
			t.Errorf("msg.Definition(%s) = %q, %v", name, got, ok)
		}
	}
	services := 0
	for _, p := range set.Packages {
		for _, sv := range p.Srvs {
			want, err := typehash.Service(sv, set.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			checkServiceHash(t, sv.Request.FullName(), want)
			checkServiceHash(t, sv.Response.FullName(), want)
			services++
		}
		for _, a := range p.Actions {
			sendGoal, getResult, err := typehash.ActionServices(a, set.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			ns := a.Package + "/action/" + a.Name
			checkServiceHash(t, ns+"_SendGoal_Request", sendGoal)
			checkServiceHash(t, ns+"_SendGoal_Response", sendGoal)
			checkServiceHash(t, ns+"_GetResult_Request", getResult)
			checkServiceHash(t, ns+"_GetResult_Response", getResult)
			services += 2
			for _, part := range []string{"_Goal", "_Result", "_Feedback", "_FeedbackMessage"} {
				if m, _ := msg.New(ns + part); m != nil {
					if _, ok := m.(msg.ServiceTypeHasher); ok {
						t.Errorf("%s%s has a service hash", ns, part)
					}
				}
			}
		}
	}
	if services < 20 {
		t.Fatalf("only %d services checked", services)
	}
	// The Humble layout of ros_discovery_info's types (not registered).
	p := set.Packages["rmw_dds_common"]
	vset := &interfaces.Set{Packages: maps.Clone(set.Packages)}
	vset.Packages["rmw_dds_common"] = p.Variants[0]
	for _, m := range []msg.Message{new(humble.Gid), new(humble.NodeEntitiesInfo), new(humble.ParticipantEntitiesInfo)} {
		var def *idl.Msg
		for _, d := range p.Variants[0].Msgs {
			if d.FullName() == m.TypeName() {
				def = d
			}
		}
		checkHash(t, vset, def, m)
	}
	if new(humble.Gid).TypeHash() == new(rmw_dds_common.Gid).TypeHash() {
		t.Error("the Humble Gid (char[24]) hashes as the Jazzy one (char[16])")
	}
}

func checkHash(t *testing.T, set *interfaces.Set, def *idl.Msg, m msg.Message) {
	t.Helper()
	want, err := typehash.Message(def, set.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	th, ok := m.(msg.TypeHasher)
	if !ok {
		t.Fatalf("%s: %T has no TypeHash", def.FullName(), m)
	}
	if got := th.TypeHash(); got != want {
		t.Errorf("%s: generated hash %s, computed %s", def.FullName(), got, want)
	}
}

func checkServiceHash(t *testing.T, name, want string) {
	t.Helper()
	m, ok := msg.New(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	sh, ok := m.(msg.ServiceTypeHasher)
	if !ok {
		t.Fatalf("%s has no ServiceTypeHash", name)
	}
	if got := sh.ServiceTypeHash(); got != want {
		t.Errorf("%s: generated service hash %s, computed %s", name, got, want)
	}
}
