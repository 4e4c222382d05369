// Package dynamic decodes and encodes ROS 2 messages whose Go type the
// program was not compiled with, driven by their interface definitions:
// .msg files, or the definitions a bag stores next to its messages
// (rosbag2's message_definitions table, MCAP schemas of encoding "ros2msg").
//
// A decoded Message holds its field values in definition order and prints
// as YAML with msg.ToYAML exactly as the generated type would; its
// encoding is byte-identical to the generated type's.
package dynamic

import (
	"fmt"
	"strings"
	"sync"

	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/interfaces"
)

// Registry holds message definitions by type. The zero value is not
// ready; use NewRegistry.
type Registry struct {
	mu    sync.RWMutex
	defs  map[string]*idl.Msg // "pkg/Name" -> definition
	types map[string]*Type
}

// NewRegistry returns a registry that knows the definitions of the packages
// nros-go ships (std_msgs, sensor_msgs, ...); definitions added later take
// precedence over those.
func NewRegistry() *Registry {
	r := &Registry{defs: map[string]*idl.Msg{}, types: map[string]*Type{}}
	set := interfaces.NewSet()
	if err := set.LoadBundled(); err == nil {
		for _, p := range set.Packages {
			for _, m := range set.AllMsgs(p) {
				r.defs[m.Package+"/"+m.Name] = m
			}
		}
	}
	return r
}

// splitName turns "pkg/msg/Name", "pkg/Name" or "pkg::msg::dds_::Name_"
// into package, namespace ("msg" when not given) and name.
func splitName(name string) (pkg, ns, typ string, err error) {
	if strings.Contains(name, "::") {
		parts := strings.Split(name, "::")
		if len(parts) != 4 || parts[2] != "dds_" {
			return "", "", "", fmt.Errorf("dynamic: bad DDS type name %q", name)
		}
		return parts[0], parts[1], strings.TrimSuffix(parts[3], "_"), nil
	}
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 2:
		return parts[0], "msg", parts[1], nil
	case 3:
		switch parts[1] {
		case "msg", "srv", "action":
			return parts[0], parts[1], parts[2], nil
		}
	}
	return "", "", "", fmt.Errorf("dynamic: bad type name %q (want pkg/msg/Name)", name)
}

// AddMessage parses the text of a .msg file defining typeName
// ("pkg/msg/Name" or "pkg/Name") and adds it.
func (r *Registry) AddMessage(typeName string, src []byte) error {
	pkg, ns, name, err := splitName(typeName)
	if err != nil {
		return err
	}
	m, err := idl.ParseMessage(pkg, name, src, typeName)
	if err != nil {
		return err
	}
	m.Namespace = ns
	r.add(m)
	return nil
}

// Load adds the definitions found at dir: a ROS package folder (with msg/,
// srv/ or action/), an AMENT_PREFIX_PATH-style prefix (share/<pkg>/...) or a
// folder of package folders, as `nros gen` reads them.
func (r *Registry) Load(dir string) error {
	set := interfaces.NewSet()
	if err := set.Load(dir); err != nil {
		return err
	}
	if err := set.LoadBundled(); err != nil { // resolves service_msgs for service events
		return err
	}
	var ms []*idl.Msg
	for _, p := range set.Packages {
		if !p.Bundled {
			ms = append(ms, set.AllMsgs(p)...)
		}
	}
	r.add(ms...)
	return nil
}

// AddService parses the text of a .srv file defining typeName
// ("pkg/srv/Name" or "pkg/Name") and adds Name_Request, Name_Response and
// Name_Event (the service introspection message of Iron and later).
func (r *Registry) AddService(typeName string, src []byte) error {
	pkg, _, name, err := splitName(typeName)
	if err != nil {
		return err
	}
	sv, err := idl.ParseService(pkg, name, src, typeName)
	if err != nil {
		return err
	}
	r.add(sv.Request, sv.Response, idl.ServiceEvent(sv))
	return nil
}

// AddAction parses the text of a .action file defining typeName
// ("pkg/action/Name" or "pkg/Name") and adds its goal, result and feedback
// and the messages ROS 2 wraps them in (Name_SendGoal_Request, ...).
func (r *Registry) AddAction(typeName string, src []byte) error {
	pkg, _, name, err := splitName(typeName)
	if err != nil {
		return err
	}
	a, err := idl.ParseAction(pkg, name, src, typeName)
	if err != nil {
		return err
	}
	r.add(idl.ActionMsgs(a)...)
	return nil
}

// AddConcatenated adds the definitions of a rosbag2/MCAP "ros2msg" text:
// the definition of typeName, then for each dependency a separator line of
// '=' characters, a line "MSG: pkg/Name" (or pkg/msg/Name) and its
// definition.
func (r *Registry) AddConcatenated(typeName, text string) error {
	cur := typeName
	var body []string
	flush := func() error {
		if strings.TrimSpace(cur) == "" {
			return nil
		}
		return r.AddMessage(cur, []byte(strings.Join(body, "\n")))
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "====") && strings.Trim(l, "=") == "" {
			if err := flush(); err != nil {
				return err
			}
			cur, body = "", nil
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
				i++
			}
			if i+1 < len(lines) {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i+1]), "MSG:"); ok {
					cur = strings.TrimSpace(rest)
					i++
					continue
				}
			}
			return fmt.Errorf("dynamic: %s: separator not followed by \"MSG: pkg/Name\" (line %d)", typeName, i+1)
		}
		body = append(body, l)
	}
	return flush()
}

func (r *Registry) add(ms ...*idl.Msg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range ms {
		r.defs[m.Package+"/"+m.Name] = m
	}
	r.types = map[string]*Type{} // a new definition may change compiled types
}

// Type returns the compiled type of a message name ("pkg/msg/Name",
// "pkg/Name" or the DDS name), resolving nested types among the known
// definitions.
func (r *Registry) Type(name string) (*Type, error) {
	pkg, _, n, err := splitName(name)
	if err != nil {
		return nil, err
	}
	key := pkg + "/" + n
	r.mu.RLock()
	t := r.types[key]
	r.mu.RUnlock()
	if t != nil {
		return t, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compile(key, map[string]bool{})
}

func (r *Registry) compile(key string, stack map[string]bool) (*Type, error) {
	if t := r.types[key]; t != nil {
		return t, nil
	}
	def := r.defs[key]
	if def == nil {
		return nil, fmt.Errorf("dynamic: no definition of %s", key)
	}
	if stack[key] {
		return nil, fmt.Errorf("dynamic: %s contains itself", key)
	}
	stack[key] = true
	defer delete(stack, key)
	t := &Type{Def: def, Fields: make([]FieldType, len(def.Fields))}
	for i, f := range def.Fields {
		ft := FieldType{Name: f.Name, Type: f.Type}
		if f.Type.Kind == idl.Message {
			nt, err := r.compile(f.Type.Package+"/"+f.Type.Name, stack)
			if err != nil {
				return nil, fmt.Errorf("dynamic: %s field %s: %w", key, f.Name, err)
			}
			ft.Msg = nt
		}
		t.Fields[i] = ft
	}
	min := 0
	for _, f := range t.Fields {
		min = capAdd(min, f.minSize())
	}
	t.minSize = max(min, 1)
	r.types[key] = t
	return t, nil
}

func capAdd(a, b int) int {
	if a+b > 1<<30 {
		return 1 << 30
	}
	return a + b
}

// Type is a compiled message type.
type Type struct {
	Def     *idl.Msg
	Fields  []FieldType
	minSize int
}

// FieldType is one field of a Type.
type FieldType struct {
	Name string
	Type idl.Type
	Msg  *Type // for nested messages
}

// minSize is the least number of bytes the field takes on the wire.
func (f FieldType) minSize() int {
	t := f.Type
	var n int
	switch {
	case t.Array == idl.Bounded || t.Array == idl.Unbounded:
		return 4
	case t.Kind.IsPrimitive():
		n = t.Kind.Size()
	case t.Kind.IsString():
		n = 4
	default:
		n = f.Msg.minSize
	}
	if t.Array == idl.Fixed {
		if n > (1<<30)/t.Size {
			return 1 << 30
		}
		n *= t.Size
	}
	return n
}

// Name returns the ROS type name, e.g. "sensor_msgs/msg/Imu".
func (t *Type) Name() string { return t.Def.FullName() }

// New returns a zero message of the type: numbers 0, strings "", fixed
// arrays of zero values, empty sequences, nested messages zero.
func (t *Type) New() *Message {
	m := &Message{Type: t, Values: make([]any, len(t.Fields))}
	for i, f := range t.Fields {
		m.Values[i] = zero(f)
	}
	return m
}
