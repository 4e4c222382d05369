package gen

import (
	"fmt"
	"strings"

	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/interfaces"
	"github.com/nros-go/nros/internal/idl/typehash"
)

// describe computes what the generated types carry besides their code:
// the RIHS01 hash of every message, that of the service each request and
// response belongs to, and the rosbag2 definition of each .msg message.
func (g *generator) describe() error {
	g.hashes, g.serviceHashes, g.definitions = map[string]string{}, map[string]string{}, map[string]string{}
	lookup := typehash.Lookup(g.set.Lookup)
	for _, m := range g.set.AllMsgs(g.pkg) {
		h, err := typehash.Message(m, lookup)
		if err != nil {
			return fmt.Errorf("%s: %w", m.File, err)
		}
		g.hashes[m.Name] = h
		if m.Namespace == "msg" {
			def, err := Definition(g.set, m)
			if err != nil {
				return err
			}
			g.definitions[m.Name] = def
		}
	}
	if !g.set.HaveEvents() {
		// A service's description includes its event, which needs
		// service_msgs (always there but in a set without the shipped
		// packages).
		return nil
	}
	for _, sv := range g.pkg.Srvs {
		h, err := typehash.Service(sv, lookup)
		if err != nil {
			return fmt.Errorf("%s: %w", sv.File, err)
		}
		g.serviceHashes[sv.Request.Name], g.serviceHashes[sv.Response.Name] = h, h
	}
	for _, a := range g.pkg.Actions {
		sendGoal, getResult, err := typehash.ActionServices(a, lookup)
		if err != nil {
			return fmt.Errorf("%s: %w", a.File, err)
		}
		for _, suffix := range []string{"_SendGoal_Request", "_SendGoal_Response"} {
			g.serviceHashes[a.Name+suffix] = sendGoal
		}
		for _, suffix := range []string{"_GetResult_Request", "_GetResult_Response"} {
			g.serviceHashes[a.Name+suffix] = getResult
		}
	}
	return nil
}

// serviceName is the ROS name of the service whose request or response m
// is: std_srvs/srv/SetBool, example_interfaces/action/Fibonacci_SendGoal.
func serviceName(m *idl.Msg) string {
	name := strings.TrimSuffix(strings.TrimSuffix(m.Name, "_Request"), "_Response")
	return m.Package + "/" + m.Namespace + "/" + name
}

// definitionSeparator separates the definitions of a concatenated ros2msg
// text (80 '=').
var definitionSeparator = strings.Repeat("=", 80)

// Definition returns the full definition of .msg message m as rosbag2
// stores it in a bag (encoding "ros2msg"): m's own .msg text, then, for
// each message type it uses (directly or not, each once, in the order
// first met), a line of 80 '=', a line "MSG: pkg/Name" and that type's
// text. The types are looked up in s.
func Definition(s *interfaces.Set, m *idl.Msg) (string, error) {
	var b strings.Builder
	b.WriteString(strings.TrimRight(m.Text, "\n"))
	b.WriteString("\n")
	seen := map[string]bool{m.Package + "/" + m.Name: true}
	queue := deps(m)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		dp, dn, _ := strings.Cut(d, "/")
		dm := s.Lookup(dp, dn)
		if dm == nil || dm.Namespace != "msg" {
			return "", fmt.Errorf("%s: no .msg definition of %s", m.File, d)
		}
		fmt.Fprintf(&b, "%s\nMSG: %s\n%s\n", definitionSeparator, d, strings.TrimRight(dm.Text, "\n"))
		queue = append(queue, deps(dm)...)
	}
	return b.String(), nil
}

// deps lists the message types m's fields use, as "pkg/Name".
func deps(m *idl.Msg) []string {
	var out []string
	for _, f := range m.Fields {
		if t := f.Type.Elem(); t.Kind == idl.Message {
			out = append(out, t.Package+"/"+t.Name)
		}
	}
	return out
}
