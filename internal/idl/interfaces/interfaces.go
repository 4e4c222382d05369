// Package interfaces is nros-go's database of ROS 2 interface definitions:
// the definitions of the packages nros-go ships (embedded, under share/),
// and the loading of interface folders (a ROS package, an ament prefix, a
// folder of packages) into a Set of parsed messages, services and actions.
// The generator (internal/gen, `nros gen`) and msg/dynamic (types known
// only at run time) use it; programs that only use generated types do not
// link it.
package interfaces

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

	"github.com/nros-go/nros/internal/idl"
)

// shipped holds the interface definitions of the packages that nros-go
// ships pre-generated under msg/ (see NOTICE), as share/<pkg>/msg/*.msg,
// share/<pkg>/srv/*.srv and share/<pkg>/action/*.action; a variant of a
// package (see Package.Variants) is in share/<pkg>/<variant>/msg.
//
//go:embed share
var shipped embed.FS

// shippedRoot is the folder of shipped that holds the package folders.
const shippedRoot = "share"

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
	ents, err := fs.ReadDir(shipped, shippedRoot)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() || s.Packages[e.Name()] != nil {
			continue
		}
		dir := path.Join(shippedRoot, e.Name())
		p, err := loadPackage(shipped, dir, e.Name())
		if err != nil {
			return err
		}
		p.Bundled = true
		if p.Variants, err = loadVariants(shipped, dir, p.Name); err != nil {
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
		if !idl.ValidPackageName(e.Name()) {
			return nil, fmt.Errorf("%s: %q cannot be the name of a variant", sub, e.Name())
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
	ents, _ := fs.ReadDir(shipped, shippedRoot)
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
	haveEvents := s.HaveEvents()
	for _, sv := range p.Srvs {
		out = append(out, sv.Request, sv.Response)
		if haveEvents {
			out = append(out, idl.ServiceEvent(sv))
		}
	}
	for _, a := range p.Actions {
		out = append(out, idl.ActionMsgs(a)...)
	}
	return out
}

// HaveEvents reports whether the set knows service_msgs/ServiceEventInfo,
// which the service event messages (Name_Event) use.
func (s *Set) HaveEvents() bool { return s.Lookup("service_msgs", "ServiceEventInfo") != nil }

// Lookup finds a message by package and name ("Header",
// "SetBool_Request") among all the set's messages, including the parts of
// services and actions; nil if the set has none.
func (s *Set) Lookup(pkg, name string) *idl.Msg {
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
			return idl.ServiceEvent(sv)
		}
	}
	for _, a := range p.Actions {
		if !strings.HasPrefix(name, a.Name+"_") {
			continue
		}
		for _, m := range idl.ActionMsgs(a) {
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
		n := s.Lookup(f.Type.Package, f.Type.Name)
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
