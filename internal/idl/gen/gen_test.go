package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nros-go/nros/internal/idl/interfaces"
)

// repoRoot is the module root, three levels up from this package.
const repoRoot = "../../.."

// TestCommittedPackagesUpToDate regenerates the shipped packages (msg/) and
// the test packages (internal/fixture/testmsgs) and fails on any difference, so the
// committed code never drifts from the definitions or the generator.
func TestCommittedPackagesUpToDate(t *testing.T) {
	set := interfaces.NewSet()
	if err := set.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	for _, p := range set.Packages {
		p.Bundled = false
	}
	compareTree(t, set, interfaces.BundledNames(), filepath.Join(repoRoot, "msg"), NROSMsgPath)

	tset := interfaces.NewSet()
	if err := tset.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	if err := tset.Load("testdata/interfaces"); err != nil {
		t.Fatal(err)
	}
	compareTree(t, tset, []string{"example_interfaces", "test_msgs"}, filepath.Join(repoRoot, "internal/fixture/testmsgs"),
		"github.com/nros-go/nros/internal/fixture/testmsgs")
}

func compareTree(t *testing.T, set *interfaces.Set, pkgs []string, dir, prefix string) {
	t.Helper()
	for _, pkg := range pkgs {
		files, err := Generate(set, pkg, Options{ImportPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join(dir, pkg, filepath.FromSlash(name)))
			if err != nil {
				t.Errorf("%s/%s: %v (run go generate)", pkg, name, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from what nros gen produces now (run go generate ./msg ./internal/fixture/testmsgs)", pkg, name)
			}
		}
		existing, _ := filepath.Glob(filepath.Join(dir, pkg, "*.go"))
		for _, v := range set.Packages[pkg].Variants {
			more, _ := filepath.Glob(filepath.Join(dir, pkg, v.Variant, "*.go"))
			existing = append(existing, more...)
		}
		for _, f := range existing {
			rel, _ := filepath.Rel(filepath.Join(dir, pkg), f)
			if _, ok := files[filepath.ToSlash(rel)]; !ok && isGenerated(f) {
				t.Errorf("%s: a generated file nros gen no longer produces", f)
			}
		}
	}
}

// TestDebianTestInterfaceFiles runs the generator over every file of
// Debian's ros2-test-interface-files package and builds and vets the
// result. It is skipped when the package is absent, except under CI=true.
func TestDebianTestInterfaceFiles(t *testing.T) {
	const share = "/usr/share/test_interface_files"
	if _, err := os.Stat(share); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing: install the Debian package ros2-test-interface-files", share)
		}
		t.Skip("ros2-test-interface-files is not installed (apt-get install ros2-test-interface-files)")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	gomod := "module example.com/gentest\n\ngo 1.26.0\n\nrequire github.com/nros-go/nros v0.0.0\n\nreplace github.com/nros-go/nros => " + root + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	// The prefix layout (share/<pkg>/...) and the package folder itself.
	if code := Main([]string{"-o", filepath.Join(tmp, "msg"), "-v", "/usr"}, &stdout, &stderr); code != 0 {
		t.Fatalf("nros gen /usr: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "example.com/gentest/msg/test_interface_files") {
		t.Fatalf("nros gen /usr generated %q", stdout.String())
	}
	files, _ := filepath.Glob(share + "/*/*.*")
	gen, _ := filepath.Glob(filepath.Join(tmp, "msg", "test_interface_files", "*.go"))
	if len(gen) < len(files)/2 {
		t.Fatalf("%d Go files for %d interface files", len(gen), len(files))
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in the generated module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if sc := "/root/go/bin/staticcheck"; fileExists(sc) {
		cmd := exec.Command(sc, "./...")
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("staticcheck of the generated module: %v\n%s", err, out)
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestGoFieldName(t *testing.T) {
	for in, want := range map[string]string{"frame_id": "FrameID", "node_entities_info_seq": "NodeEntitiesInfoSeq",
		"stamp_ns": "StampNs", "uuid": "UUID", "float32_values": "Float32Values", "x": "X", "goal_id": "GoalID"} {
		if got := GoFieldName(in); got != want {
			t.Errorf("GoFieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnknownTypeError(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "my_msgs", "msg"), 0o755)
	os.WriteFile(filepath.Join(dir, "my_msgs", "msg", "A.msg"), []byte("int32 x\nother_msgs/B b\n"), 0o644)
	set := interfaces.NewSet()
	if err := set.Load(filepath.Join(dir, "my_msgs")); err != nil {
		t.Fatal(err)
	}
	set.LoadBundled()
	_, err := Generate(set, "my_msgs", Options{ImportPrefix: "x/msg"})
	if err == nil || !strings.Contains(err.Error(), "A.msg:2: field b: unknown type other_msgs/B") {
		t.Errorf("error %v", err)
	}
}

func TestNoSelfNesting(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p", "msg"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "msg", "A.msg"), []byte("B b\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p", "msg", "B.msg"), []byte("A[1] a\n"), 0o644)
	set := interfaces.NewSet()
	if err := set.Load(filepath.Join(dir, "p")); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(set, "p", Options{ImportPrefix: "x"}); err == nil || !strings.Contains(err.Error(), "contains itself") {
		t.Errorf("error %v", err)
	}
}

func TestBareHeaderHint(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "my_msgs", "msg"), 0o755)
	os.WriteFile(filepath.Join(dir, "my_msgs", "msg", "A.msg"), []byte("Header header\n"), 0o644)
	set := interfaces.NewSet()
	if err := set.Load(filepath.Join(dir, "my_msgs")); err != nil {
		t.Fatal(err)
	}
	set.LoadBundled()
	if _, err := Generate(set, "my_msgs", Options{ImportPrefix: "x"}); err == nil || !strings.Contains(err.Error(), "write std_msgs/Header") {
		t.Errorf("error %v", err)
	}
}

func TestNameClashes(t *testing.T) {
	for _, c := range []struct {
		pkg   string
		files map[string]string
		want  string
	}{
		{"p", map[string]string{"msg/Foo_Request.msg": "int32 a\n", "srv/Foo.srv": "---\n"}, "the Go name Foo_Request is both"},
		{"p", map[string]string{"msg/NewFoo.msg": "int32 a\n", "msg/Foo.msg": "int32 a 1\n"}, "the Go name NewFoo is both"},
		{"map", map[string]string{"msg/A.msg": "int32 a\n"}, "cannot be a Go package name"},
	} {
		dir := filepath.Join(t.TempDir(), c.pkg)
		for name, src := range c.files {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
		}
		set := interfaces.NewSet()
		if err := set.Load(dir); err != nil {
			t.Fatal(err)
		}
		set.LoadBundled()
		if _, err := Generate(set, c.pkg, Options{ImportPrefix: "x"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.files, err, c.want)
		}
	}
}

// TestMainWrites runs `nros gen` on a package folder inside a module: the
// import path comes from go.mod, stale generated files go, hand-written
// files stay and are never overwritten.
func TestMainWrites(t *testing.T) {
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/robot\n\ngo 1.26.0\n"), 0o644)
	pkg := filepath.Join(mod, "interfaces", "robot_msgs")
	os.MkdirAll(filepath.Join(pkg, "msg"), 0o755)
	os.MkdirAll(filepath.Join(pkg, "action"), 0o755)
	os.WriteFile(filepath.Join(pkg, "package.xml"), []byte("<package><name>robot_msgs</name></package>"), 0o644)
	os.WriteFile(filepath.Join(pkg, "msg", "Status.msg"), []byte("std_msgs/Header header\nuint8 OK=0\nuint8 level\n"), 0o644)
	os.WriteFile(filepath.Join(pkg, "action", "Dock.action"), []byte("string station\n---\nbool ok\n---\nfloat32 distance\n"), 0o644)
	out := filepath.Join(mod, "gen")
	os.MkdirAll(filepath.Join(out, "robot_msgs"), 0o755)
	stale := filepath.Join(out, "robot_msgs", "old.go")
	os.WriteFile(stale, []byte(GeneratedPrefix+" from x. DO NOT EDIT.\n\npackage robot_msgs\n"), 0o644)
	mine := filepath.Join(out, "robot_msgs", "extra.go")
	os.WriteFile(mine, []byte("package robot_msgs\n"), 0o644)

	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-o", out, "-v", pkg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "example.com/robot/gen/robot_msgs" {
		t.Errorf("stdout %q", got)
	}
	for _, f := range []string{"doc.go", "status.go", "dock_action.go"} {
		if !fileExists(filepath.Join(out, "robot_msgs", f)) {
			t.Errorf("%s not written", f)
		}
	}
	if fileExists(stale) || !fileExists(mine) {
		t.Errorf("stale generated file kept (%v) or hand-written file removed (%v)", fileExists(stale), !fileExists(mine))
	}
	src, _ := os.ReadFile(filepath.Join(out, "robot_msgs", "status.go"))
	for _, want := range []string{`"github.com/nros-go/nros/msg/std_msgs"`, "Status_OK uint8 = 0",
		"func (m *Status) StampHeader() *std_msgs.Header"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("status.go lacks %q", want)
		}
	}
	// A hand-written file in the way of a generated one is not overwritten.
	os.WriteFile(filepath.Join(out, "robot_msgs", "status.go"), []byte("package robot_msgs\n"), 0o644)
	stderr.Reset()
	if code := Main([]string{"-o", out, pkg}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "not overwriting") {
		t.Errorf("exit %d, %s", code, stderr.String())
	}
	// Errors carry file:line.
	os.WriteFile(filepath.Join(pkg, "msg", "Bad.msg"), []byte("int32 ok\nfloat33 x\n"), 0o644)
	stderr.Reset()
	if code := Main([]string{"-o", out, pkg}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "Bad.msg:2: unknown type \"float33\"") {
		t.Errorf("exit %d, %s", code, stderr.String())
	}
	if code := Main(nil, &stdout, &stderr); code != 2 {
		t.Errorf("no arguments: exit %d", code)
	}
}

// TestMainTypeHashes: the types `nros gen` writes for a user's interfaces
// carry the hashes ROS 2 computes for them (known values: a message with
// bounded strings, a service, an action), and a .msg message carries its
// definition with those of the shipped types it uses.
func TestMainTypeHashes(t *testing.T) {
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/r\n\ngo 1.26.0\n"), 0o644)
	share := filepath.Join(mod, "prefix", "share")
	strs, err := os.ReadFile("testdata/interfaces/test_msgs/msg/Strings.msg")
	if err != nil {
		t.Fatal(err)
	}
	for f, src := range map[string]string{
		"test_msgs/msg/Strings.msg":                        string(strs),
		"example_interfaces/srv/AddTwoInts.srv":            "int64 a\nint64 b\n---\nint64 sum\n",
		"custom_action_interfaces/action/Fibonacci.action": "int32 order\n---\nint32[] sequence\n---\nint32[] partial_sequence\n",
		"my_msgs/msg/Stamped.msg":                          "# a stamped value\nstd_msgs/Header header\nfloat64 value\n",
	} {
		os.MkdirAll(filepath.Join(share, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(share, f), []byte(src), 0o644)
	}
	out := filepath.Join(mod, "msg")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-o", out, filepath.Join(mod, "prefix")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	method := func(typ, name, value string) string {
		return "func (*" + typ + ") " + name + "() string {\n\treturn " + strconv.Quote(value) + "\n}"
	}
	for file, wants := range map[string][]string{
		"test_msgs/strings.go": {method("Strings", "TypeHash", "RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32"),
			method("Strings", "MessageDefinition", string(strs))},
		"example_interfaces/add_two_ints_srv.go": {
			method("AddTwoInts_Request", "TypeHash", "RIHS01_000c5fd92d6b2e1a05949348f584d6d652adea1e92d691792011ac2273508302"),
			method("AddTwoInts_Request", "ServiceTypeHash", "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"),
			method("AddTwoInts_Response", "ServiceTypeHash", "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a")},
		"custom_action_interfaces/fibonacci_action.go": {
			method("Fibonacci_Goal", "TypeHash", "RIHS01_3cce4e2f29dd61d845e5d9855df63808ee69963a1b2499b502d7175c8ef9ebdc"),
			method("Fibonacci_SendGoal_Request", "TypeHash", "RIHS01_eda9edac51edbc2591a084a904d1dbba336595136f4da7fc92ba35ab418f6a05"),
			method("Fibonacci_SendGoal_Request", "ServiceTypeHash", "RIHS01_cd44195cea6407c31072909245178934e410f8ce3ffca90ab35a8e77a5dd08d7"),
			method("Fibonacci_SendGoal_Response", "ServiceTypeHash", "RIHS01_cd44195cea6407c31072909245178934e410f8ce3ffca90ab35a8e77a5dd08d7"),
			method("Fibonacci_GetResult_Request", "ServiceTypeHash", "RIHS01_2d01fbf73115b49b28af7e932bc7ff5ac9c94c19b9f71769dd81242a2667925a"),
			method("Fibonacci_GetResult_Response", "TypeHash", "RIHS01_55ff57e8116baa89667710fed2e1a7de0e552cc02e284d53b361eca519f7012e"),
			method("Fibonacci_FeedbackMessage", "TypeHash", "RIHS01_0b862d2c534bf2d42019c82fcc71a0eeeee9d8023cc77277163f7f246876be07")},
		"my_msgs/stamped.go": {method("Stamped", "MessageDefinition", "# a stamped value\nstd_msgs/Header header\nfloat64 value\n"+
			strings.Repeat("=", 80)+"\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"+
			strings.Repeat("=", 80)+"\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n")},
	} {
		src := read(file)
		for _, want := range wants {
			if !strings.Contains(src, want) {
				t.Errorf("%s lacks\n%s", file, want)
			}
		}
	}
	// Neither the goal nor the feedback message belongs to a service, and
	// only .msg messages carry a definition.
	if src := read("custom_action_interfaces/fibonacci_action.go"); strings.Contains(src, "(*Fibonacci_Goal) ServiceTypeHash") ||
		strings.Contains(src, "(*Fibonacci_FeedbackMessage) ServiceTypeHash") || strings.Contains(src, "MessageDefinition") {
		t.Error("fibonacci_action.go: a service hash or a definition where none belongs")
	}
}

// A share tree that also holds a shipped package (std_msgs) generates only
// the user's packages; their references use the shipped std_msgs.
func TestMainSkipsShippedPackages(t *testing.T) {
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/r\n\ngo 1.26.0\n"), 0o644)
	share := filepath.Join(mod, "prefix", "share")
	for f, src := range map[string]string{
		"std_msgs/msg/Header.msg": "builtin_interfaces/Time stamp\nstring frame_id\n",
		"my_msgs/msg/A.msg":       "std_msgs/Header header\n",
	} {
		os.MkdirAll(filepath.Join(share, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(share, f), []byte(src), 0o644)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-o", filepath.Join(mod, "msg"), "-v", filepath.Join(mod, "prefix")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "example.com/r/msg/my_msgs" {
		t.Errorf("generated %q", got)
	}
	if !strings.Contains(stderr.String(), "std_msgs: using the package nros-go ships") {
		t.Errorf("stderr %q", stderr.String())
	}
	if fileExists(filepath.Join(mod, "msg", "std_msgs")) {
		t.Error("std_msgs generated again")
	}
}

// TestVariantWrite: a shipped package's variant (rmw_dds_common's Humble
// layout) is written to <pkg>/<variant> as Go package <variant>, with its
// own field sizes, the same type names, no registration, and its stale
// generated files removed like the main package's.
func TestVariantWrite(t *testing.T) {
	set := interfaces.NewSet()
	if err := set.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	p := set.Packages["rmw_dds_common"]
	if p == nil || len(p.Variants) != 1 || p.Variants[0].Variant != "humble" {
		t.Fatalf("rmw_dds_common variants: %+v", p)
	}
	out := t.TempDir()
	vdir := filepath.Join(out, "rmw_dds_common", "humble")
	os.MkdirAll(vdir, 0o755)
	stale := filepath.Join(vdir, "old.go")
	os.WriteFile(stale, []byte(GeneratedPrefix+" from x. DO NOT EDIT.\n\npackage humble\n"), 0o644)
	mine := filepath.Join(vdir, "extra.go")
	os.WriteFile(mine, []byte("package humble\n"), 0o644)
	if err := Write(set, out, []string{"rmw_dds_common"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if fileExists(stale) || !fileExists(mine) {
		t.Errorf("stale generated file kept (%v) or hand-written file removed (%v)", fileExists(stale), !fileExists(mine))
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(out, "rmw_dds_common", f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	main, humble := read("gid.go"), read("humble/gid.go")
	for _, want := range []string{"package rmw_dds_common", "Data [16]uint8", `msg.Register("rmw_dds_common/msg/Gid"`} {
		if !strings.Contains(main, want) {
			t.Errorf("gid.go lacks %q", want)
		}
	}
	for _, want := range []string{"from rmw_dds_common/humble/msg/Gid.msg", "package humble", "Data [24]uint8",
		`return "rmw_dds_common::msg::dds_::Gid_"`} {
		if !strings.Contains(humble, want) {
			t.Errorf("humble/gid.go lacks %q", want)
		}
	}
	if strings.Contains(humble, "msg.Register") {
		t.Error("a variant registers its types")
	}
	// Nested types resolve inside the variant: a Gid takes 24 bytes.
	if n := read("humble/node_entities_info.go"); !strings.Contains(n, "m.ReaderGidSeq, 24, -1") {
		t.Errorf("humble NodeEntitiesInfo does not bound its gids by 24 bytes:\n%s", n)
	}
}

// TestProgramsDoNotLinkGenerator: the library, bags and the example
// programs carry their types' hashes and definitions in the generated code,
// so they link neither the generator, the parser, the hash computation nor
// the embedded interface definitions; only msg/dynamic (types known at run
// time) and the nros command do.
func TestProgramsDoNotLinkGenerator(t *testing.T) {
	forbidden := []string{"github.com/nros-go/nros/internal/idl/gen", "github.com/nros-go/nros/internal/idl",
		"github.com/nros-go/nros/internal/idl/typehash", "github.com/nros-go/nros/internal/idl/interfaces", "go/parser", "go/format"}
	pkgs := []string{".", "./rmw/...", "./bag", "./simtest", "./examples/..."}
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps gave %d packages", len(deps))
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("%s links %s", strings.Join(pkgs, " "), d)
			}
		}
	}
	// The command that generates code and decodes unknown types does.
	cmd = exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/nros")
	cmd.Dir = repoRoot
	if out, err = cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "github.com/nros-go/nros/internal/idl/gen\n") {
		t.Errorf("cmd/nros does not link the generator (%v)", err)
	}
}
