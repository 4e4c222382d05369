package param

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"true", BoolValue(true)},
		{"True", BoolValue(true)},
		{"TRUE", BoolValue(true)},
		{"yes", BoolValue(true)},
		{"on", BoolValue(true)},
		{"y", BoolValue(true)},
		{"false", BoolValue(false)},
		{"Off", BoolValue(false)},
		{"NO", BoolValue(false)},
		{"tRUE", StringValue("tRUE")},
		{"3", IntegerValue(3)},
		{"-3", IntegerValue(-3)},
		{"+7", IntegerValue(7)},
		{"0x1F", IntegerValue(31)},
		{"0x1.8", DoubleValue(1.5)},
		{"0x1p4", DoubleValue(16)},
		{"010", IntegerValue(8)},
		{"0", IntegerValue(0)},
		{"9223372036854775807", IntegerValue(math.MaxInt64)},
		{"-9223372036854775808", IntegerValue(math.MinInt64)},
		{"9223372036854775808", DoubleValue(9223372036854775808)},
		{"1_000", StringValue("1_000")},
		{"1.5", DoubleValue(1.5)},
		{"-0.5", DoubleValue(-0.5)},
		{"1e3", DoubleValue(1000)},
		{"1.", DoubleValue(1)},
		{".5", DoubleValue(0.5)},
		{".inf", DoubleValue(math.Inf(1))},
		{"-.inf", DoubleValue(math.Inf(-1))},
		{"1e999", StringValue("1e999")},
		{"x", StringValue("x")},
		{"hello world", StringValue("hello world")},
		{`"x"`, StringValue("x")},
		{`"3"`, StringValue("3")},
		{`'true'`, StringValue("true")},
		{`!!str 5`, StringValue("5")},
		{`""`, StringValue("")},
		{"null", StringValue("null")},
		{"[1,2]", IntegerArrayValue([]int64{1, 2})},
		{"[1.0, 2.5]", DoubleArrayValue([]float64{1, 2.5})},
		{"[true, false]", BoolArrayValue([]bool{true, false})},
		{"['a','b']", StringArrayValue([]string{"a", "b"})},
		{"[a, '1']", StringArrayValue([]string{"a", "1"})},
	}
	for _, tt := range tests {
		got, err := ParseValue(tt.in)
		if err != nil {
			t.Errorf("ParseValue(%q) error %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseValue(%q) = %v (%v), want %v", tt.in, got, got.Type(), tt.want)
		}
	}
	if v, err := ParseValue(".nan"); err != nil {
		t.Error(err)
	} else if d, ok := v.Double(); !ok || !math.IsNaN(d) {
		t.Errorf(".nan = %v", v)
	}
	for _, bad := range []string{"", "  ", "[]", "[1, 2.0]", "[1, a]", "[[1]]", "{a: 1}", "[1", "a: b", "&x 1", "*x", "--- 1\n--- 2"} {
		if v, err := ParseValue(bad); err == nil {
			t.Errorf("ParseValue(%q) = %v, want error", bad, v)
		}
	}
}

const sample = `
/**:
  ros__parameters:
    use_sim_time: true
    shared: 1
my_node:
  ros__parameters:
    rate: 10.0
    shared: 2
    nested:
      a: 1
      b:
        c: "s"
    list: [1, 2, 3]
    names: [a, b]
    flags:
      - true
      - false
ns1:
  talker:
    ros__parameters:
      x: 1
/ns2/listener:
  ros__parameters:
    y: 2
/ns1/*:
  ros__parameters:
    star: true
/**/talker:
  ros__parameters:
    any_talker: yes
`

func TestLoadYAMLForNode(t *testing.T) {
	f, err := LoadYAML([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var pats, keys []string
	for _, e := range f.Entries {
		pats = append(pats, e.Pattern)
		keys = append(keys, e.Key)
	}
	if got := strings.Join(pats, " "); got != "/** /my_node /ns1/talker /ns2/listener /ns1/* /**/talker" {
		t.Fatalf("patterns = %s", got)
	}
	if got := strings.Join(keys, " "); got != "/** my_node ns1/talker /ns2/listener /ns1/* /**/talker" {
		t.Fatalf("keys = %s", got)
	}
	m := f.ForNode("/my_node")
	want := map[string]Value{
		"use_sim_time": BoolValue(true),
		"shared":       IntegerValue(2),
		"rate":         DoubleValue(10),
		"nested.a":     IntegerValue(1),
		"nested.b.c":   StringValue("s"),
		"list":         IntegerArrayValue([]int64{1, 2, 3}),
		"names":        StringArrayValue([]string{"a", "b"}),
		"flags":        BoolArrayValue([]bool{true, false}),
	}
	checkMap(t, "/my_node", m, want)
	checkMap(t, "/ns1/talker", f.ForNode("/ns1/talker"), map[string]Value{
		"use_sim_time": BoolValue(true), "shared": IntegerValue(1),
		"x": IntegerValue(1), "star": BoolValue(true), "any_talker": BoolValue(true),
	})
	checkMap(t, "/talker", f.ForNode("/talker"), map[string]Value{
		"use_sim_time": BoolValue(true), "shared": IntegerValue(1), "any_talker": BoolValue(true),
	})
	checkMap(t, "/ns2/listener", f.ForNode("/ns2/listener"), map[string]Value{
		"use_sim_time": BoolValue(true), "shared": IntegerValue(1), "y": IntegerValue(2),
	})
	checkMap(t, "/ns1/a/b", f.ForNode("/ns1/a/b"), map[string]Value{
		"use_sim_time": BoolValue(true), "shared": IntegerValue(1),
	})
}

func checkMap(t *testing.T, node string, got, want map[string]Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d params %v, want %d", node, len(got), got, len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !g.Equal(w) {
			t.Errorf("%s: %s = %v, want %v", node, k, g, w)
		}
	}
}

func TestLoadYAMLPrecedence(t *testing.T) {
	// Document order decides: a later wildcard entry overrides an earlier
	// specific one (rclcpp parameter_map_from behaviour).
	f, err := LoadYAML([]byte(`
/node:
  ros__parameters: {p: 1, q: 1}
/**:
  ros__parameters: {p: 2}
/node:
  ros__parameters: {q: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	// A repeated key merges into its first entry (libyaml does not reject
	// duplicates and rcl merges them), so /node is applied before /**.
	checkMap(t, "/node (dup)", f.ForNode("/node"), map[string]Value{"p": IntegerValue(2), "q": IntegerValue(3)})
	f, err = LoadYAML([]byte(`
/node:
  ros__parameters: {p: 1, q: 1}
/**:
  ros__parameters: {p: 2}
node:
  ros__parameters: {q: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	// "node" and "/node" are different keys for rcl (three entries), both
	// matching /node: /node(p1,q1), then /**(p2), then node(q3).
	checkMap(t, "/node", f.ForNode("/node"), map[string]Value{"p": IntegerValue(2), "q": IntegerValue(3)})
	if len(f.Entries) != 3 {
		t.Errorf("entries = %d, want 3", len(f.Entries))
	}
	// Merge keeps first-appearance order: a later "/**" value lands in the
	// existing "/**" entry, which still precedes "/node".
	g := &File{}
	g.Set("", "x", IntegerValue(1))
	g.Set("/node", "x", IntegerValue(2))
	h := &File{}
	h.Set("", "x", IntegerValue(5))
	g.Merge(h)
	checkMap(t, "/node merged", g.ForNode("/node"), map[string]Value{"x": IntegerValue(2)})
	checkMap(t, "/other merged", g.ForNode("/other"), map[string]Value{"x": IntegerValue(5)})
	if g.Entries[0].Key != "/**" || g.Entries[1].Pattern != "/node" {
		t.Errorf("merged entries = %+v", g.Entries)
	}
	g.Merge(nil)
	var nilFile *File
	if len(nilFile.ForNode("/x")) != 0 {
		t.Error("nil file ForNode")
	}
}

func TestLoadYAMLErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not a map", "- a\n- b\n", "mapping of node names"},
		{"no ros__parameters", "node:\n  x: 1\n", "expected a mapping holding ros__parameters"},
		{"empty node", "node: {}\n", "has no ros__parameters"},
		{"top ros__parameters", "ros__parameters:\n  x: 1\n", "must be under a node name"},
		{"params scalar", "node:\n  ros__parameters: 3\n", "must be a mapping"},
		{"mixed seq", "node:\n  ros__parameters:\n    a: [1, 2.5]\n", "line 3"},
		{"empty seq", "node:\n  ros__parameters:\n    a: []\n", "empty sequence"},
		{"nested seq", "node:\n  ros__parameters:\n    a: [[1]]\n", "scalars"},
		{"map in seq", "node:\n  ros__parameters:\n    a:\n      - {b: 1}\n", "scalars"},
		{"alias", "node:\n  ros__parameters:\n    a: &x 1\n    b: *x\n", "not supported"},
		{"empty value", "node:\n  ros__parameters:\n    a:\n", "no value"},
		{"bad yaml", "node: [\n", "invalid YAML"},
		{"bad node char", "no-de:\n  ros__parameters: {a: 1}\n", "not a valid name"},
		{"digit node", "ns/1node:\n  ros__parameters: {a: 1}\n", "must not start with a number"},
		{"empty token", "ns//node:\n  ros__parameters: {a: 1}\n", "empty token"},
		{"nested slash", "ns:\n  /node:\n    ros__parameters: {a: 1}\n", "empty token"},
		{"trailing slash", "node/:\n  ros__parameters: {a: 1}\n", "empty token"},
		{"bad second doc", "a:\n  ros__parameters: {x: 1}\n---\nb: 1\n", "line 4"},
	}
	for _, tt := range tests {
		_, err := LoadYAML([]byte(tt.doc))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not contain %q", tt.name, err, tt.want)
		}
	}
	f, err := LoadYAML([]byte("a:\n  ros__parameters: {x: 1}\n---\n---\na:\n  ros__parameters: {y: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkMap(t, "/a (two docs)", f.ForNode("/a"), map[string]Value{"x": IntegerValue(1), "y": IntegerValue(2)})
	if f, err := LoadYAML(nil); err != nil || len(f.Entries) != 0 {
		t.Errorf("empty file: %v %v", f, err)
	}
	if f, err := LoadYAML([]byte("n:\n  ros__parameters:\n")); err != nil || len(f.ForNode("/n")) != 0 {
		t.Errorf("empty ros__parameters: %v", err)
	}
}

func TestMatchNodeName(t *testing.T) {
	tests := []struct {
		pat, fqn string
		want     bool
	}{
		{"/**", "/a", true},
		{"/**", "/a/b/c", true},
		{"**", "/a", true},
		{"/*", "/a", true},
		{"/*", "/a/b", false},
		{"/ns/*", "/ns/a", true},
		{"/ns/*", "/ns", false},
		{"/ns/**", "/ns/a/b", true},
		{"/ns/**", "/ns", true},
		{"/**/node", "/node", true},
		{"/**/node", "/x/y/node", true},
		{"/**/node", "/x/y/node2", false},
		{"node", "/node", true},
		{"/node", "/ns/node", false},
		{"/a/**/b/**/c", "/a/x/b/y/z/c", true},
		{"/a/**/b/**/c", "/a/x/c", false},
		{"/*/*", "/a/b", true},
	}
	for _, tt := range tests {
		if got := MatchNodeName(tt.pat, tt.fqn); got != tt.want {
			t.Errorf("MatchNodeName(%q, %q) = %v, want %v", tt.pat, tt.fqn, got, tt.want)
		}
	}
}

func TestParseCLIValue(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"true", BoolValue(true)},
		{"5", IntegerValue(5)},
		{"2.5", DoubleValue(2.5)},
		{"hello", StringValue("hello")},
		{"[1, 2]", IntegerArrayValue([]int64{1, 2})},
		{"[]", BoolArrayValue(nil)},
		{"[1, 2.5]", StringValue("[1, 2.5]")},
		{"a: b", StringValue("a: b")},
		{"", StringValue("")},
		{"[1", StringValue("[1")},
	}
	for _, tt := range tests {
		if got := ParseCLIValue(tt.in); !got.Equal(tt.want) {
			t.Errorf("ParseCLIValue(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// A params file of many small parameters is refused before the YAML
// decoder builds its tree (which costs several hundred bytes per item),
// with the limit named; one under the limit costs memory in proportion.
func TestLoadYAMLBoundsMemory(t *testing.T) {
	gen := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("/**:\n  ros__parameters:\n")
		for i := range n {
			fmt.Fprintf(&b, "    p%d: 1\n", i)
		}
		return b.Bytes()
	}
	allocated := func(f func()) uint64 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}

	big := gen(300_000) // ~4 MB: 3x the item limit
	var err error
	cost := allocated(func() { _, err = LoadYAML(big) })
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(MaxYAMLItems)) {
		t.Fatalf("%d bytes of parameters: %v, want an error naming the limit %d", len(big), err, MaxYAMLItems)
	}
	if cost > 1<<20 {
		t.Errorf("refusing %d bytes allocated %d bytes", len(big), cost)
	}

	const n = 50_000
	ok := gen(n)
	var f *File
	cost = allocated(func() { f, err = LoadYAML(ok) })
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.ForNode("/x")); got != n {
		t.Fatalf("%d parameters, want %d", got, n)
	}
	if per := cost / n; per > 2048 {
		t.Errorf("%d bytes allocated per parameter (%d in all for %d bytes of YAML), want at most 2048", per, cost, len(ok))
	}
}

func TestCountItemsIgnoresComments(t *testing.T) {
	if n := countItems([]byte("# a, b, c, [d] {e}\nx: [1, 2]  # f, g\n")); n != 5 {
		t.Fatalf("countItems = %d, want 5 (1, 2 newlines, '[' and ',')", n)
	}
}
