package gen

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/nros-go/nros/internal/gen/idl"
)

// definitionSeparator separates the definitions of a concatenated ros2msg
// text (80 '=').
var definitionSeparator = strings.Repeat("=", 80)

// MessageDefinition returns the full definition of a shipped message type
// ("pkg/msg/Name" or "pkg/Name") as rosbag2 stores it in a bag (encoding
// "ros2msg"): the type's own .msg text, then, for each message type it
// uses (directly or not, each once, in the order first met), a line of 80
// '=', a line "MSG: pkg/Name" and that type's text. ok is false for a type
// nros-go does not ship a definition of.
func MessageDefinition(rosType string) (def string, ok bool) {
	pkg, name, ok := splitMsgType(rosType)
	if !ok {
		return "", false
	}
	text, m, err := bundledMsg(pkg, name)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(text, "\n"))
	b.WriteString("\n")
	seen := map[string]bool{pkg + "/" + name: true}
	queue := deps(m)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		dp, dn, _ := strings.Cut(d, "/")
		dtext, dm, err := bundledMsg(dp, dn)
		if err != nil {
			return "", false
		}
		fmt.Fprintf(&b, "%s\nMSG: %s\n%s\n", definitionSeparator, d, strings.TrimRight(dtext, "\n"))
		queue = append(queue, deps(dm)...)
	}
	return b.String(), true
}

// splitMsgType takes "pkg/msg/Name" or "pkg/Name".
func splitMsgType(t string) (pkg, name string, ok bool) {
	parts := strings.Split(t, "/")
	switch {
	case len(parts) == 3 && parts[1] == "msg":
		return parts[0], parts[2], parts[0] != "" && parts[2] != ""
	case len(parts) == 2:
		return parts[0], parts[1], parts[0] != "" && parts[1] != ""
	}
	return "", "", false
}

// bundledMsg reads and parses one shipped .msg file.
func bundledMsg(pkg, name string) (string, *idl.Msg, error) {
	data, err := fs.ReadFile(Interfaces, path.Join("interfaces", pkg, "msg", name+".msg"))
	if err != nil {
		return "", nil, err
	}
	m, err := idl.ParseMessage(pkg, name, data, name+".msg")
	if err != nil {
		return "", nil, err
	}
	return string(data), m, nil
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
