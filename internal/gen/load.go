// Package gen turns ROS 2 interface files into Go packages: one package per
// ROS package, a struct per message, the Request and Response of each
// service (Name_Request, Name_Response), and for each action its Goal,
// Result and Feedback and the wrappers ROS 2 builds from them
// (Name_SendGoal_Request/_Response, Name_GetResult_Request/_Response,
// Name_FeedbackMessage). Every struct implements msg.Message with XCDR1
// encoding and decoding. The command is `nros gen`.
package gen

import (
	"embed"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nros-go/nros/internal/gen/idl"
)

// Interfaces holds the interface definitions of the packages that nros-go
// ships pre-generated under msg/ (see interfaces/NOTICE).
//
//go:embed interfaces
var Interfaces embed.FS

// Package is one ROS package's interfaces.
type Package struct {
	Name    string
	Msgs    []*idl.Msg
	Srvs    []*idl.Srv
	Actions []*idl.Action
	Bundled bool // comes from the embedded definitions
	// Variants are other layouts of a shipped package: its interfaces as
	// an older distro defines them where the wire format differs (e.g.
	// rmw_dds_common's Gid, char[24] in Humble). Each is generated as the
	// Go package <pkg>/<variant>, named after the variant, with the same
	// ROS and DDS type names; its types are not registered with
	// msg.Register (the main package's are). The embedded definitions of
	// variant v of package p are in interfaces/p/v/msg.
	Variants []*Package
	// Variant is the name of a variant (empty for a main package).
	Variant string
}

// Set is a collection of packages, keyed by name.
type Set struct {
	Packages map[string]*Package
	// Skipped lists the packages Load found but did not take because the
	// set already held the shipped (bundled) package of that name.
	Skipped []string
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{Packages: map[string]*Package{}} }

// LoadBundled adds the embedded definitions of the pre-generated packages
// that are not in the set yet.
func (s *Set) LoadBundled() error {
	ents, err := fs.ReadDir(Interfaces, "interfaces")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() || s.Packages[e.Name()] != nil {
			continue
		}
		dir := path.Join("interfaces", e.Name())
		p, err := loadPackage(Interfaces, dir, e.Name())
		if err != nil {
			return err
		}
		p.Bundled = true
		if p.Variants, err = loadVariants(Interfaces, dir, p.Name); err != nil {
			return err
		}
		s.Packages[p.Name] = p
	}
	return nil
}

// loadVariants loads the variants of the package in dir: its subfolders,
// other than msg, srv and action, that hold interfaces.
func loadVariants(fsys fs.FS, dir, name string) ([]*Package, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*Package
	for _, e := range ents {
		sub := path.Join(dir, e.Name())
		if !e.IsDir() || e.Name() == "msg" || e.Name() == "srv" || e.Name() == "action" || !isPackageDir(fsys, sub) {
			continue
		}
		if !idl.ValidPackageName(e.Name()) || goReserved[e.Name()] {
			return nil, fmt.Errorf("%s: %q cannot be the Go package name of a variant", sub, e.Name())
		}
		v, err := loadPackage(fsys, sub, name)
		if err != nil {
			return nil, err
		}
		v.Bundled, v.Variant = true, e.Name()
		out = append(out, v)
	}
	return out, nil
}

// BundledNames lists the packages of the embedded definitions.
func BundledNames() []string {
	ents, _ := fs.ReadDir(Interfaces, "interfaces")
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Load adds the packages found at dir (a package the set already holds as
// bundled is skipped and listed in Skipped): a package folder (one holding msg/,
// srv/ or action/; its name comes from package.xml or the folder name), an
// AMENT_PREFIX_PATH-style prefix (holding share/<pkg>/...), or a folder of
// package folders (such as a share/ folder or a workspace src/).
func (s *Set) Load(dir string) error {
	fsys := os.DirFS(dir)
	if isPackageDir(fsys, ".") {
		return s.add(fsys, ".", packageName(fsys, ".", filepath.Base(filepath.Clean(dir))), dir)
	}
	root := "."
	if st, err := fs.Stat(fsys, "share"); err == nil && st.IsDir() {
		root = "share"
	}
	ents, err := fs.ReadDir(fsys, root)
	if err != nil {
		return err
	}
	found := false
	for _, e := range ents {
		sub := path.Join(root, e.Name())
		if !e.IsDir() || !isPackageDir(fsys, sub) {
			continue
		}
		found = true
		if err := s.add(fsys, sub, packageName(fsys, sub, e.Name()), filepath.Join(dir, filepath.FromSlash(sub))); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("%s: no ROS package (a folder with msg/, srv/ or action/) found", dir)
	}
	return nil
}

func (s *Set) add(fsys fs.FS, dir, name, osDir string) error {
	if prev := s.Packages[name]; prev != nil {
		if prev.Bundled {
			// nros-go ships this package: keep its definitions, so that
			// the generated code uses (and registers) the shipped types once.
			s.Skipped = append(s.Skipped, name)
			return nil
		}
		return fmt.Errorf("%s: package %s is given twice", osDir, name)
	}
	p, err := loadPackageAt(fsys, dir, name, osDir)
	if err != nil {
		return err
	}
	s.Packages[name] = p
	return nil
}

func isPackageDir(fsys fs.FS, dir string) bool {
	for _, sub := range []string{"msg", "srv", "action"} {
		if st, err := fs.Stat(fsys, path.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

func packageName(fsys fs.FS, dir, fallback string) string {
	data, err := fs.ReadFile(fsys, path.Join(dir, "package.xml"))
	if err != nil {
		return fallback
	}
	var px struct {
		Name string `xml:"name"`
	}
	if xml.Unmarshal(data, &px) != nil || strings.TrimSpace(px.Name) == "" {
		return fallback
	}
	return strings.TrimSpace(px.Name)
}

func loadPackage(fsys fs.FS, dir, name string) (*Package, error) {
	return loadPackageAt(fsys, dir, name, dir)
}

func loadPackageAt(fsys fs.FS, dir, name, osDir string) (*Package, error) {
	if !idl.ValidPackageName(name) {
		return nil, fmt.Errorf("%s: %q is not a valid ROS package name", osDir, name)
	}
	p := &Package{Name: name}
	for _, sub := range []string{"msg", "srv", "action"} {
		files, err := fs.Glob(fsys, path.Join(dir, sub, "*."+sub))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, err
			}
			shown := filepath.Join(osDir, sub, path.Base(f))
			base := strings.TrimSuffix(path.Base(f), "."+sub)
			switch sub {
			case "msg":
				m, err := idl.ParseMessage(name, base, data, shown)
				if err != nil {
					return nil, err
				}
				p.Msgs = append(p.Msgs, m)
			case "srv":
				sv, err := idl.ParseService(name, base, data, shown)
				if err != nil {
					return nil, err
				}
				p.Srvs = append(p.Srvs, sv)
			case "action":
				a, err := idl.ParseAction(name, base, data, shown)
				if err != nil {
					return nil, err
				}
				p.Actions = append(p.Actions, a)
			}
		}
	}
	return p, nil
}

// AllMsgs returns every message the package defines, in generation order:
// its .msg messages, the request and response of each service (and the
// service event, when service_msgs is known), and the messages of each
// action (goal, result, feedback and the wrappers).
func (s *Set) AllMsgs(p *Package) []*idl.Msg {
	out := append([]*idl.Msg(nil), p.Msgs...)
	haveEvents := s.lookup("service_msgs", "ServiceEventInfo") != nil
	for _, sv := range p.Srvs {
		out = append(out, sv.Request, sv.Response)
		if haveEvents {
			out = append(out, ServiceEvent(sv))
		}
	}
	for _, a := range p.Actions {
		out = append(out, ActionMsgs(a)...)
	}
	return out
}

func msgType(pkg, name string) idl.Type {
	return idl.Type{Kind: idl.Message, Package: pkg, Name: name}
}

// ServiceEvent builds Name_Event, the message Iron and later publish on
// a service's introspection topic.
func ServiceEvent(sv *idl.Srv) *idl.Msg {
	req, resp := msgType(sv.Package, sv.Name+"_Request"), msgType(sv.Package, sv.Name+"_Response")
	req.Array, req.Size = idl.Bounded, 1
	resp.Array, resp.Size = idl.Bounded, 1
	return &idl.Msg{Package: sv.Package, Namespace: "srv", Name: sv.Name + "_Event", File: sv.File,
		Comment: "The service event of " + sv.FullName() + " (service introspection).",
		Fields: []idl.Field{
			{Name: "info", Type: msgType("service_msgs", "ServiceEventInfo")},
			{Name: "request", Type: req},
			{Name: "response", Type: resp},
		}}
}

// ActionMsgs returns the messages of an action: Goal, Result, Feedback, and
// the wrappers of its send_goal and get_result services and its feedback
// topic.
func ActionMsgs(a *idl.Action) []*idl.Msg {
	uuid := idl.Field{Name: "goal_id", Type: msgType("unique_identifier_msgs", "UUID")}
	mk := func(name string, fields ...idl.Field) *idl.Msg {
		return &idl.Msg{Package: a.Package, Namespace: "action", Name: a.Name + name, File: a.File, Fields: fields}
	}
	return []*idl.Msg{
		a.Goal, a.Result, a.Feedback,
		mk("_SendGoal_Request", uuid,
			idl.Field{Name: "goal", Type: msgType(a.Package, a.Name+"_Goal")}),
		mk("_SendGoal_Response",
			idl.Field{Name: "accepted", Type: idl.Type{Kind: idl.Bool}},
			idl.Field{Name: "stamp", Type: msgType("builtin_interfaces", "Time")}),
		mk("_GetResult_Request", uuid),
		mk("_GetResult_Response",
			idl.Field{Name: "status", Type: idl.Type{Kind: idl.Int8}},
			idl.Field{Name: "result", Type: msgType(a.Package, a.Name+"_Result")}),
		mk("_FeedbackMessage", uuid,
			idl.Field{Name: "feedback", Type: msgType(a.Package, a.Name+"_Feedback")}),
	}
}

// lookup finds a message by package and name among all the set's
// messages, including service and action parts.
func (s *Set) lookup(pkg, name string) *idl.Msg {
	p := s.Packages[pkg]
	if p == nil {
		return nil
	}
	for _, m := range p.Msgs {
		if m.Name == name {
			return m
		}
	}
	for _, sv := range p.Srvs {
		if sv.Request.Name == name {
			return sv.Request
		}
		if sv.Response.Name == name {
			return sv.Response
		}
		if sv.Name+"_Event" == name {
			return ServiceEvent(sv)
		}
	}
	for _, a := range p.Actions {
		if !strings.HasPrefix(name, a.Name+"_") {
			continue
		}
		for _, m := range ActionMsgs(a) {
			if m.Name == name {
				return m
			}
		}
	}
	return nil
}

// Check verifies that every nested type of the named packages resolves and
// that no message contains itself.
func (s *Set) Check(pkgs []string) error {
	for _, name := range pkgs {
		p := s.Packages[name]
		if p == nil {
			return fmt.Errorf("unknown package %s", name)
		}
		for _, m := range s.AllMsgs(p) {
			if err := s.checkMsg(m, map[string]bool{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Set) checkMsg(m *idl.Msg, stack map[string]bool) error {
	key := m.Package + "/" + m.Name
	if stack[key] {
		return fmt.Errorf("%s: message %s contains itself", m.File, key)
	}
	stack[key] = true
	defer delete(stack, key)
	for _, f := range m.Fields {
		if f.Type.Kind != idl.Message {
			continue
		}
		n := s.lookup(f.Type.Package, f.Type.Name)
		if n == nil {
			where := m.File
			if f.Line > 0 {
				where = fmt.Sprintf("%s:%d", m.File, f.Line)
			}
			hint := fmt.Sprintf("give the folder of package %s too", f.Type.Package)
			if f.Type.Name == "Header" && f.Type.Package == m.Package {
				hint = "ROS 2 does not read a bare Header as std_msgs/Header; write std_msgs/Header"
			} else if slices.Contains(s.Skipped, f.Type.Package) {
				hint = fmt.Sprintf("the %s that nros-go ships has no %s; its definitions are used in place of the folder given", f.Type.Package, f.Type.Name)
			}
			return fmt.Errorf("%s: field %s: unknown type %s (%s)", where, f.Name, f.Type.FullName(), hint)
		}
		if err := s.checkMsg(n, stack); err != nil {
			return err
		}
	}
	return nil
}
