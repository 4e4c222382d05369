package rosargs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/nros-go/nros/internal/param"
)

func TestParseBlocks(t *testing.T) {
	a, err := Parse([]string{"prog_arg", "--ros-args", "-r", "a:=b", "--", "x", "--", "--ros-args", "-p", "k:=1", "--ros-args", "--log-level", "WARN", "--", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Unparsed, []string{"prog_arg", "x", "--", "y"}) {
		t.Errorf("unparsed = %q", a.Unparsed)
	}
	if len(a.Remaps) != 1 || len(a.Params) != 1 || a.LogLevel != "warn" {
		t.Errorf("args = %+v", a)
	}
	// Block running to the end, no "--".
	a, err = Parse([]string{"--ros-args", "-p", "x:=2"})
	if err != nil || len(a.Params) != 1 || len(a.Unparsed) != 0 {
		t.Errorf("%+v %v", a, err)
	}
	// Defaults.
	a, _ = Parse(nil)
	if !a.RosoutLogs || !a.StdoutLogs || !a.ExternalLibLogs || a.LogLevel != "" {
		t.Errorf("defaults = %+v", a)
	}
}

func TestParseForms(t *testing.T) {
	tests := []struct {
		args  []string
		check func(*Args) bool
	}{
		{[]string{"-p", "a:=true"}, func(a *Args) bool { return a.Params[0].Name == "a" && a.Params[0].Value.Equal(param.BoolValue(true)) }},
		{[]string{"--param", "a:=3"}, func(a *Args) bool { return a.Params[0].Value.Equal(param.IntegerValue(3)) }},
		{[]string{"-p", "a:=1.5"}, func(a *Args) bool { return a.Params[0].Value.Equal(param.DoubleValue(1.5)) }},
		{[]string{"-p", `a:="x"`}, func(a *Args) bool { return a.Params[0].Value.Equal(param.StringValue("x")) }},
		{[]string{"-p", "a:=hello"}, func(a *Args) bool { return a.Params[0].Value.Equal(param.StringValue("hello")) }},
		{[]string{"-p", "a:=[1,2]"}, func(a *Args) bool { return a.Params[0].Value.Equal(param.IntegerArrayValue([]int64{1, 2})) }},
		{[]string{"-p", "a:=['a','b']"}, func(a *Args) bool {
			return a.Params[0].Value.Equal(param.StringArrayValue([]string{"a", "b"}))
		}},
		{[]string{"-p", "a:=x:=y"}, func(a *Args) bool { return a.Params[0].Value.Equal(param.StringValue("x:=y")) }},
		{[]string{"-p", "talker:a.b:=1"}, func(a *Args) bool { return a.Params[0].Node == "talker" && a.Params[0].Name == "a.b" }},
		{[]string{"-p", "a/b.c_1:=1"}, func(a *Args) bool { return a.Params[0].Name == "a/b.c_1" }},
		{[]string{"-p", "a__b:=1"}, func(a *Args) bool { return a.Params[0].Name == "a__b" }},
		{[]string{"-p", "qos_overrides./clock.subscription.depth:=5"}, func(a *Args) bool {
			return a.Params[0].Name == "qos_overrides./clock.subscription.depth"
		}},
		{[]string{"--params-file", "f.yaml", "--params-file", "g.yaml"}, func(a *Args) bool { return slices.Equal(a.ParamsFiles, []string{"f.yaml", "g.yaml"}) }},
		{[]string{"-r", "chatter:=talk"}, func(a *Args) bool {
			r := a.Remaps[0]
			return r.Kind == RemapName && r.From == "chatter" && r.To == "talk" && r.Node == ""
		}},
		{[]string{"--remap", "talker:/chatter:=~/talk"}, func(a *Args) bool { return a.Remaps[0].Node == "talker" && a.Remaps[0].To == "~/talk" }},
		{[]string{"-r", "rostopic://a:=b"}, func(a *Args) bool { return a.Remaps[0].Kind == RemapTopicOnly && a.Remaps[0].From == "a" }},
		{[]string{"-r", "n:rosservice://a:=b"}, func(a *Args) bool { return a.Remaps[0].Kind == RemapServiceOnly && a.Remaps[0].Node == "n" }},
		{[]string{"-r", "__node:=new"}, func(a *Args) bool { return a.Remaps[0].Kind == RemapNodeName && a.NodeName("old") == "new" }},
		{[]string{"-r", "__name:=new"}, func(a *Args) bool { return a.NodeName("old") == "new" }},
		{[]string{"-r", "__ns:=/x/y"}, func(a *Args) bool { return a.Remaps[0].Kind == RemapNamespace && a.Namespace("/") == "/x/y" }},
		{[]string{"-r", "/a/b_1:=~/c"}, func(a *Args) bool { return a.Remaps[0].From == "/a/b_1" }},
		{[]string{"--log-level", "DeBuG"}, func(a *Args) bool { return a.LogLevel == "debug" }},
		{[]string{"--log-level", "info", "--log-level", "error"}, func(a *Args) bool { return a.LogLevel == "error" }},
		{[]string{"--log-level", "rcl:=Fatal"}, func(a *Args) bool {
			return a.LogLevel == "" && a.LoggerLevels[0] == LoggerLevel{"rcl", "fatal"}
		}},
		{[]string{"-e", "/my/enclave"}, func(a *Args) bool { return a.Enclave == "/my/enclave" }},
		{[]string{"--enclave", "/"}, func(a *Args) bool { return a.Enclave == "/" }},
		{[]string{"--disable-rosout-logs", "--disable-stdout-logs", "--disable-external-lib-logs"}, func(a *Args) bool {
			return !a.RosoutLogs && !a.StdoutLogs && !a.ExternalLibLogs
		}},
		{[]string{"--disable-rosout-logs", "--enable-rosout-logs", "--enable-stdout-logs", "--disable-external-lib-logs", "--enable-external-lib-logs"}, func(a *Args) bool {
			return a.RosoutLogs && a.StdoutLogs && a.ExternalLibLogs
		}},
		{[]string{"--log-config-file", "log.cfg", "--log-file-name", "out"}, func(a *Args) bool {
			return a.LogConfigFile == "log.cfg" && a.LogFileName == "out"
		}},
	}
	for _, tt := range tests {
		a, err := Parse(append([]string{"--ros-args"}, tt.args...))
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !tt.check(a) {
			t.Errorf("%q: unexpected %+v", tt.args, a)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantArg string
		reason  string
	}{
		{[]string{"--bogus"}, "--bogus", "unknown"},
		{[]string{"stray"}, "stray", "unknown"},
		{[]string{"-p"}, "-p", "missing value"},
		{[]string{"-p", "--"}, "-p", "missing value"},
		{[]string{"-r"}, "-r", "missing value"},
		{[]string{"--params-file"}, "--params-file", "missing value"},
		{[]string{"--log-level"}, "--log-level", "missing value"},
		{[]string{"-e"}, "-e", "missing value"},
		{[]string{"--log-config-file"}, "--log-config-file", "missing value"},
		{[]string{"--log-file-name"}, "--log-file-name", "missing value"},
		{[]string{"-p", "novalue"}, "novalue", "name:=value"},
		{[]string{"-p", "a:="}, "a:=", "no value"},
		{[]string{"-p", ":=1"}, ":=1", "empty parameter name"},
		{[]string{"-p", "a b:=1"}, "a b:=1", "must not contain"},
		{[]string{"-p", ".a:=1"}, ".a:=1", "empty part"},
		{[]string{"-p", "1node:a:=1"}, "1node:a:=1", "bad node name"},
		{[]string{"-p", "/ns/talker:a:=1"}, "/ns/talker:a:=1", "bad node name"},
		{[]string{"-p", "/**:a:=1"}, "/**:a:=1", "bad node name"},
		{[]string{"-p", "a.1b:=1"}, "a.1b:=1", "number"},
		{[]string{"-p", "a..b:=1"}, "a..b:=1", "empty part"},
		{[]string{"-p", "a.:=1"}, "a.:=1", "empty part"},
		{[]string{"-p", "a:=[1, 2.5]"}, "a:=[1, 2.5]", "sequence"},
		{[]string{"-r", "a"}, "a", "from:=to"},
		{[]string{"-r", "a:="}, "a:=", "'to'"},
		{[]string{"-r", ":=b"}, ":=b", "'from'"},
		{[]string{"-r", "1a:=b"}, "1a:=b", "'from'"},
		{[]string{"-r", "a:=b//c"}, "a:=b//c", "'to'"},
		{[]string{"-r", "{node}/a:=b"}, "{node}/a:=b", "'from'"},
		{[]string{"-r", "a:=~"}, "a:=~", "'to'"},
		{[]string{"-r", "a/*:=b"}, "a/*:=b", "'from'"},
		{[]string{"-r", "a__b:=c"}, "a__b:=c", "'from'"},
		{[]string{"-r", "a:=b/"}, "a:=b/", "'to'"},
		{[]string{"-r", "__node:=1bad"}, "__node:=1bad", "number"},
		{[]string{"-r", "__node:="}, "__node:=", "empty"},
		{[]string{"-r", "__ns:=relative"}, "__ns:=relative", "absolute"},
		{[]string{"-r", "__ns:=/a/"}, "__ns:=/a/", "end with"},
		{[]string{"-r", "__bogus:=x"}, "__bogus:=x", "special name"},
		{[]string{"-r", "bad-node:a:=b"}, "bad-node:a:=b", "node name"},
		{[]string{"-r", "rostopic://__ns:=/x"}, "rostopic://__ns:=/x", "prefix"},
		{[]string{"--log-level", "verbose"}, "verbose", "unknown log level"},
		{[]string{"--log-level", ":=info"}, ":=info", "empty logger"},
		{[]string{"-e", "relative"}, "relative", "absolute"},
	}
	for _, tt := range tests {
		_, err := Parse(append([]string{"--ros-args"}, tt.args...))
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%q: err = %v, want *ArgError", tt.args, err)
			continue
		}
		if ae.Arg != tt.wantArg || !strings.Contains(ae.Reason, tt.reason) {
			t.Errorf("%q: got Arg=%q Reason=%q, want Arg=%q reason~%q", tt.args, ae.Arg, ae.Reason, tt.wantArg, tt.reason)
		}
		if !strings.Contains(err.Error(), tt.wantArg) {
			t.Errorf("%q: message %q does not name the argument", tt.args, err)
		}
	}
	// Outside a block anything goes.
	if a, err := Parse([]string{"--bogus", "-p"}); err != nil || len(a.Unparsed) != 2 {
		t.Errorf("outside block: %v %v", a, err)
	}
}

func TestRemapPrecedence(t *testing.T) {
	a, err := Parse([]string{"--ros-args",
		"-r", "other:chatter:=for_other",
		"-r", "talker:chatter:=for_talker",
		"-r", "chatter:=global",
		"-r", "/ns/chatter:=second_rule_never",
		"-r", "~/private:=/abs_private",
		"-r", "rosservice://srv:=srv2",
		"-r", "rostopic://tp:=tp2",
		"-r", "/ns/x:=~/y",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		fq, node, ns, want string
		service            bool
	}{
		{"/ns/chatter", "talker", "/ns", "/ns/for_talker", false},
		{"/ns/chatter", "other", "/ns", "/ns/for_other", false},
		{"/ns/chatter", "listener", "/ns", "/ns/global", false},
		{"/chatter", "listener", "/", "/global", false},
		{"/ns/talker/private", "talker", "/ns", "/abs_private", false},
		{"/ns/srv", "n", "/ns", "/ns/srv2", true},
		{"/ns/srv", "n", "/ns", "/ns/srv", false},
		{"/ns/tp", "n", "/ns", "/ns/tp2", false},
		{"/ns/tp", "n", "/ns", "/ns/tp", true},
		{"/ns/x", "n", "/ns", "/ns/n/y", false},
		{"/unrelated", "n", "/ns", "/unrelated", false},
		{"/ns/chatter", "listener", "/ns", "/ns/global", true},
	}
	for _, tt := range tests {
		var got string
		var err error
		if tt.service {
			got, err = a.RemapService(tt.fq, tt.node, tt.ns)
		} else {
			got, err = a.RemapTopic(tt.fq, tt.node, tt.ns)
		}
		if err != nil || got != tt.want {
			t.Errorf("remap(%q, node %q, ns %q, service=%v) = %q, want %q", tt.fq, tt.node, tt.ns, tt.service, got, tt.want)
		}
	}
}

func TestNodeNameAndNamespaceRemap(t *testing.T) {
	a, err := Parse([]string{"--ros-args",
		"-r", "other:__node:=renamed_other",
		"-r", "talker:__ns:=/talker_ns",
		"-r", "__node:=global_name",
		"-r", "__node:=second_ignored",
		"-r", "__ns:=/global_ns",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.NodeName("other"); got != "renamed_other" {
		t.Errorf("NodeName(other) = %q", got)
	}
	if got := a.NodeName("talker"); got != "global_name" {
		t.Errorf("NodeName(talker) = %q", got)
	}
	if got := a.NamespaceFor("talker", "/"); got != "/talker_ns" {
		t.Errorf("NamespaceFor(talker) = %q", got)
	}
	if got := a.NamespaceFor("x", "/"); got != "/global_ns" {
		t.Errorf("NamespaceFor(x) = %q", got)
	}
	if got := a.Namespace("/def"); got != "/global_ns" {
		t.Errorf("Namespace = %q", got)
	}
	b, _ := Parse(nil)
	if b.NodeName("n") != "n" || b.Namespace("/d") != "/d" || b.NamespaceFor("n", "/d") != "/d" {
		t.Error("defaults not returned")
	}
}

func TestParamOverrides(t *testing.T) {
	dir := t.TempDir()
	f1 := filepath.Join(dir, "a.yaml")
	os.WriteFile(f1, []byte("/**:\n  ros__parameters:\n    x: 1\n    y: 1\n/ns/talker:\n  ros__parameters:\n    z: file\n"), 0o644)
	f2 := filepath.Join(dir, "b.yaml")
	os.WriteFile(f2, []byte("talker:\n  ros__parameters:\n    y: 2\n"), 0o644)
	a, err := Parse([]string{"--ros-args", "-p", "x:=0", "--params-file", f1, "-p", "y:=3", "-p", "talker:w:=only_root_talker", "--params-file", f2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.ParamOverrides("/ns/talker", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]param.Value{
		"x": param.IntegerValue(1), // file after -p x:=0
		"y": param.IntegerValue(3), // -p after file; b.yaml is for /talker only
		"z": param.StringValue("file"),
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, w := range want {
		if !got[k].Equal(w) {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	root, _ := a.ParamOverrides("/talker", nil)
	if !root["y"].Equal(param.IntegerValue(2)) || !root["w"].Equal(param.StringValue("only_root_talker")) {
		t.Errorf("/talker overrides = %v", root)
	}
	// rcl's merge order: the file's "/**" entry exists before "/talker",
	// so a later global -p value does not beat the file's /talker value.
	f3 := filepath.Join(dir, "c.yaml")
	os.WriteFile(f3, []byte("/**:\n  ros__parameters: {x: 1}\n/talker:\n  ros__parameters: {x: 2}\n"), 0o644)
	c, _ := Parse([]string{"--ros-args", "--params-file", f3, "-p", "x:=5"})
	if m, err := c.ParamOverrides("/talker", nil); err != nil || !m["x"].Equal(param.IntegerValue(2)) {
		t.Errorf("/talker x = %v (%v), want 2", m["x"], err)
	}
	if m, _ := c.ParamOverrides("/other", nil); !m["x"].Equal(param.IntegerValue(5)) {
		t.Errorf("/other x = %v, want 5", m["x"])
	}
	bad, _ := Parse([]string{"--ros-args", "--params-file", filepath.Join(dir, "missing.yaml")})
	if _, err := bad.ParamOverrides("/n", nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(f2, []byte("n:\n  x: 1\n"), 0o644)
	bad, _ = Parse([]string{"--ros-args", "--params-file", f2})
	if _, err := bad.ParamOverrides("/n", nil); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
}

func TestParseDomainID(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"", 0, true}, {"  ", 0, true}, {"0", 0, true}, {"42", 42, true}, {"232", 232, true},
		{" 7 ", 7, true}, {"233", 0, false}, {"-1", 0, false}, {"abc", 0, false},
		{"1.5", 0, false}, {"99999999999999999999", 0, false}, {"+3", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDomainID(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDomainID(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestNilArgs(t *testing.T) {
	var a *Args
	if a.NodeName("n") != "n" || a.Namespace("/d") != "/d" || a.NamespaceFor("n", "/d") != "/d" {
		t.Error("nil Args names")
	}
	if tp, err := a.RemapTopic("/x", "n", "/"); tp != "/x" || err != nil {
		t.Error("nil Args remap")
	}
	if sv, err := a.RemapService("/x", "n", "/"); sv != "/x" || err != nil {
		t.Error("nil Args remap")
	}
	if m, err := a.ParamOverrides("/n", nil); err != nil || len(m) != 0 {
		t.Error("nil Args overrides")
	}
}

// --params-file /dev/zero (or any huge file) fails at the size limit while
// reading, naming the limit, instead of reading until memory runs out.
func TestParamsFileSizeCheckedWhileReading(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err := ReadParamsFile("/dev/zero")
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "16 MiB") {
		t.Fatalf("/dev/zero: %v, want an error naming the 16 MiB limit", err)
	}
	// Bounded by a few times the limit (buffer growth; more under -race),
	// where reading it whole would never end.
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 8*param.MaxYAMLSize {
		t.Fatalf("reading /dev/zero allocated %d bytes", got)
	}
	a, err := Parse([]string{"--ros-args", "--params-file", "/dev/zero"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParamOverrides("/n", nil)
	var pf *ParamsFileError
	if !errors.As(err, &pf) || pf.Path != "/dev/zero" {
		t.Fatalf("ParamOverrides: %v, want a *ParamsFileError for /dev/zero", err)
	}
	// At the limit exactly it is read.
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, make([]byte, param.MaxYAMLSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadParamsFile(path); err != nil || len(data) != param.MaxYAMLSize {
		t.Fatalf("a file of exactly the limit: %d bytes, %v", len(data), err)
	}
}

// A rule whose target only becomes too long once ~ is expanded is an error
// naming the rule, not a silent fall back to the original name.
func TestRemapTargetTooLongOnceExpanded(t *testing.T) {
	node := strings.Repeat("n", 200)
	a, err := Parse([]string{"--ros-args", "-r", "chatter:=~/" + strings.Repeat("x", 100)})
	if err != nil {
		t.Fatal(err) // fine as written: it is the expansion that overflows
	}
	got, err := a.RemapTopic("/chatter", node, "/")
	if err == nil || !strings.Contains(err.Error(), "chatter:=~/") {
		t.Fatalf("RemapTopic = %q, %v; want an error naming the rule", got, err)
	}
}
