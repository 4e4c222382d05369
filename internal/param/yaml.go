package param

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseValue types a parameter value the way rcl types a command-line
// `-p name:=value` (rcl_parse_yaml_value) and a value in a params file: the
// text is read as one YAML node. Quoted scalars are strings; plain scalars
// become BOOL (true/false/yes/no/on/off/y/n in rcl's spellings), INTEGER
// (C strtol base 0: decimal, 0x hex, leading-0 octal), DOUBLE (decimal or
// exponent form, .inf/.nan, inf/nan) or else STRING. A flow or block
// sequence of scalars of one type becomes the matching array type; an empty
// sequence, a mixed sequence, a mapping, an alias or an empty value is an
// error.
func ParseValue(text string) (Value, error) {
	if strings.TrimSpace(text) == "" {
		return Value{}, errors.New("no value")
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		return Value{}, fmt.Errorf("invalid YAML value %q: %v", text, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return Value{}, fmt.Errorf("invalid YAML value %q: more than one document", text)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return Value{}, fmt.Errorf("invalid YAML value %q", text)
	}
	return nodeValue(doc.Content[0])
}

// posError is an error at a line/column of a YAML file.
type posError struct {
	line, col int
	msg       string
}

func (e *posError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d column %d: %s", e.line, e.col, e.msg)
	}
	return e.msg
}

func errAt(n *yaml.Node, format string, args ...any) error {
	return &posError{line: n.Line, col: n.Column, msg: fmt.Sprintf(format, args...)}
}

func quoted(n *yaml.Node) bool {
	return n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0
}

// explicitStr reports whether the scalar carries an explicit !!str tag.
func explicitStr(n *yaml.Node) bool {
	return n.Style&yaml.TaggedStyle != 0 && (n.Tag == "!!str" || n.Tag == "tag:yaml.org,2002:str")
}

// nodeValue converts a scalar or a sequence of scalars.
func nodeValue(n *yaml.Node) (Value, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		return sequenceValue(n)
	case yaml.AliasNode:
		return Value{}, errAt(n, "aliases are not supported")
	case yaml.MappingNode:
		return Value{}, errAt(n, "a mapping is not a parameter value")
	}
	return Value{}, errAt(n, "unsupported YAML node")
}

func scalarValue(n *yaml.Node) (Value, error) {
	if n.Anchor != "" {
		return Value{}, errAt(n, "anchors are not supported")
	}
	if quoted(n) || explicitStr(n) {
		return StringValue(n.Value), nil
	}
	if n.Value == "" {
		return Value{}, errAt(n, "no value")
	}
	return typePlain(n.Value), nil
}

// typePlain applies rcl_yaml_param_parser's typing of an unquoted scalar.
func typePlain(s string) Value {
	switch s {
	case "Y", "y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return BoolValue(true)
	case "N", "n", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return BoolValue(false)
	}
	if i, ok := parseCInt(s); ok {
		return IntegerValue(i)
	}
	if f, ok := parseCDouble(s); ok {
		return DoubleValue(f)
	}
	return StringValue(s)
}

// parseCInt accepts what strtoll(s, &end, 0) consumes entirely without
// overflow: optional sign, then 0x/0X hex, leading-0 octal or decimal.
func parseCInt(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" || strings.ContainsAny(t, "_+-") {
		return 0, false
	}
	u, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// parseCDouble accepts YAML's .inf/.nan spellings and what strtod consumes
// entirely without overflow (decimal and exponent forms, inf, infinity, nan).
func parseCDouble(s string) (float64, bool) {
	switch s {
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" || strings.ContainsAny(t, "_") {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, false
	}
	lb := strings.ToLower(body)
	if strings.HasPrefix(lb, "0x") && !strings.ContainsAny(lb, "p") {
		// strtod takes hex floats without an exponent; Go needs one.
		t += "p0"
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

func typeName(t Type) string {
	switch t {
	case TypeBool:
		return "bool"
	case TypeInteger:
		return "integer"
	case TypeDouble:
		return "double"
	case TypeString:
		return "string"
	}
	return t.String()
}

func sequenceValue(n *yaml.Node) (Value, error) {
	if n.Anchor != "" {
		return Value{}, errAt(n, "anchors are not supported")
	}
	if len(n.Content) == 0 {
		return Value{}, errAt(n, "empty sequence: its type cannot be inferred")
	}
	var elemType Type
	var bools []bool
	var ints []int64
	var dbls []float64
	var strs []string
	for _, e := range n.Content {
		if e.Kind != yaml.ScalarNode {
			return Value{}, errAt(e, "sequence elements must be scalars")
		}
		v, err := scalarValue(e)
		if err != nil {
			return Value{}, err
		}
		if elemType == TypeNotSet {
			elemType = v.typ
		} else if v.typ != elemType {
			return Value{}, errAt(e, "sequence should be of same type: value type '%s' does not belong in a %s sequence", typeName(v.typ), typeName(elemType))
		}
		switch v.typ {
		case TypeBool:
			bools = append(bools, v.b)
		case TypeInteger:
			ints = append(ints, v.i)
		case TypeDouble:
			dbls = append(dbls, v.d)
		case TypeString:
			strs = append(strs, v.s)
		}
	}
	switch elemType {
	case TypeBool:
		return Value{typ: TypeBoolArray, bools: bools}, nil
	case TypeInteger:
		return Value{typ: TypeIntegerArray, ints: ints}, nil
	case TypeDouble:
		return Value{typ: TypeDoubleArray, dbls: dbls}, nil
	default:
		return Value{typ: TypeStringArray, strs: strs}, nil
	}
}

// ParamsKey is the key under a node entry that holds its parameters.
const ParamsKey = "ros__parameters"

// NodeEntry is the parameters one node-name key carries in a file.
type NodeEntry struct {
	// Key is the node name as rcl stores it: the nested keys joined with
	// '/', without adding a leading '/' ("ns/node", "/ns/node", "/**").
	// Entries are merged by Key, so "node" and "/node" stay two entries.
	Key string
	// Pattern is Key with a leading '/', possibly with `*` (one name
	// token) and `**` (any number of tokens) wildcards.
	Pattern string
	// Names lists the parameter names in first-seen order.
	Names []string
	// Values maps parameter name to value.
	Values map[string]Value
}

// File is a parsed ROS 2 parameters YAML file.
type File struct {
	// Entries are the node entries in order of first appearance; entries
	// with the same Key are merged (later values replace earlier ones),
	// as rcl_yaml_param_parser does.
	Entries []*NodeEntry
}

func (f *File) entry(key, pattern string) *NodeEntry {
	for _, e := range f.Entries {
		if e.Key == key {
			return e
		}
	}
	e := &NodeEntry{Key: key, Pattern: pattern, Values: map[string]Value{}}
	f.Entries = append(f.Entries, e)
	return e
}

func (e *NodeEntry) set(name string, v Value) {
	if _, seen := e.Values[name]; !seen {
		e.Names = append(e.Names, name)
	}
	e.Values[name] = v
}

// Set adds one parameter for the node key node ("" means "/**"), as rcl
// does for a `-p [node:]name:=value` rule: into the existing entry with
// that key, or a new last entry.
func (f *File) Set(node, name string, v Value) {
	if node == "" {
		node = "/**"
	}
	pattern := node
	if !strings.HasPrefix(pattern, "/") {
		pattern = "/" + pattern
	}
	f.entry(node, pattern).set(name, v)
}

// Merge adds g's entries to f in g's order, as rcl does when it parses
// several params files (and -p rules) into one set: an entry whose Key f
// already has is merged into it (g's values win), others are appended.
func (f *File) Merge(g *File) {
	if g == nil {
		return
	}
	for _, ge := range g.Entries {
		e := f.entry(ge.Key, ge.Pattern)
		for _, n := range ge.Names {
			e.set(n, ge.Values[n])
		}
	}
}

// MaxYAMLSize bounds the size of what LoadYAML accepts, in bytes.
const MaxYAMLSize = 16 << 20

// MaxYAMLItems bounds the number of YAML items (keys, values, sequence
// elements) LoadYAML accepts, counted before parsing as an upper bound:
// lines plus ',' '[' '{' outside comments. The YAML decoder spends several
// hundred bytes per item, so this, not the size, bounds the memory a
// params file costs (about 100 MB at worst, most of it garbage).
const MaxYAMLItems = 100_000

// countItems is an upper bound on the YAML items in data: every item
// starts a line or follows a ',', '[' or '{' (a '#' comment to the end
// of its line is not counted; quotes are ignored, so a string full of
// commas counts too: a safe over-estimate).
func countItems(data []byte) int {
	n := 1
	comment := false
	for i, c := range data {
		switch c {
		case '\n':
			n++
			comment = false
		case '#':
			if i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n' {
				comment = true
			}
		case ',', '[', '{':
			if !comment {
				n++
			}
		}
	}
	return n
}

// LoadYAML parses a ROS 2 parameters file as rcl_yaml_param_parser does:
//
//   - The top level is a mapping of node names. A node name is either one
//     key ("/ns/node", "ns/node", "node", "/**", "/ns/*") or nested keys
//     (namespace: {node: ...}), joined with '/'. A leading '/' is optional.
//   - Under a node, the key "ros__parameters" holds its parameters; it is
//     required: a node key whose subtree has no ros__parameters is an error.
//   - Nested mappings under ros__parameters are flattened with '.'.
//   - Values: see ParseValue. Sequences must hold scalars of one type;
//     mixed (including int and double) and empty sequences are errors.
//   - Anchors and aliases are errors, as in rcl.
//
// Errors name the line and column. Several YAML documents in one file
// are read in order into one result.
func LoadYAML(data []byte) (*File, error) {
	if len(data) > MaxYAMLSize {
		return nil, fmt.Errorf("params file too large: %d bytes, the limit is %d (%d MiB)", len(data), MaxYAMLSize, MaxYAMLSize>>20)
	}
	if n := countItems(data); n > MaxYAMLItems {
		return nil, fmt.Errorf("params file too large: up to %d YAML items (lines, list and map entries), the limit is %d", n, MaxYAMLItems)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	f := &File{}
	// Several documents are read one after the other into the same
	// result, as rcl's event loop does.
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			return f, nil
		} else if err != nil {
			return nil, fmt.Errorf("invalid YAML: %v", err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document
		}
		if root.Kind != yaml.MappingNode {
			return nil, errAt(root, "the top level of a params file must be a mapping of node names")
		}
		if err := f.walkNodes(root, "", 0); err != nil {
			return nil, err
		}
	}
}

const maxNesting = 64

func keyString(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode {
		return "", errAt(k, "keys must be scalars")
	}
	if k.Anchor != "" {
		return "", errAt(k, "anchors are not supported")
	}
	if k.Value == "" {
		return "", errAt(k, "empty key")
	}
	return k.Value, nil
}

// walkNodes walks a mapping at node-name level; raw is the node name
// built so far from the keys above it, joined as rcl joins them.
func (f *File) walkNodes(m *yaml.Node, raw string, depth int) error {
	if depth > maxNesting {
		return errAt(m, "node names nested too deeply")
	}
	if m.Anchor != "" {
		return errAt(m, "anchors are not supported")
	}
	if len(m.Content) == 0 {
		return errAt(m, "node %q has no %s", raw, ParamsKey)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key, err := keyString(k)
		if err != nil {
			return err
		}
		if key == ParamsKey {
			if raw == "" {
				return errAt(k, "%s must be under a node name", ParamsKey)
			}
			pattern, err := nodePattern(k, raw)
			if err != nil {
				return err
			}
			e := f.entry(raw, pattern)
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && !quoted(v) {
				continue // "ros__parameters:" with nothing under it
			}
			if v.Kind != yaml.MappingNode {
				return errAt(v, "%s of node %q must be a mapping", ParamsKey, pattern)
			}
			if err := e.walkParams(v, "", 0); err != nil {
				return err
			}
			continue
		}
		if v.Kind != yaml.MappingNode {
			return errAt(v, "%q: expected a mapping holding %s (or nested node names)", key, ParamsKey)
		}
		child := key
		if raw != "" {
			if strings.HasSuffix(raw, "/") {
				child = raw + key
			} else {
				child = raw + "/" + key
			}
		}
		if err := f.walkNodes(v, child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// nodePattern validates a joined node name as rcl does (namespace and
// node tokens valid ROS names, or the wildcards "*" and "**") and returns
// it with a leading '/'.
func nodePattern(at *yaml.Node, raw string) (string, error) {
	name := raw
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	for _, t := range strings.Split(name[1:], "/") {
		if t == "*" || t == "**" {
			continue
		}
		if t == "" {
			return "", errAt(at, "node name %q has an empty token (repeated or trailing '/')", name)
		}
		if !isNameToken(t) {
			return "", errAt(at, "node name %q: %q is not a valid name (letters, digits and '_' only)", name, t)
		}
		if t[0] >= '0' && t[0] <= '9' {
			return "", errAt(at, "node name %q: %q must not start with a number", name, t)
		}
	}
	return name, nil
}

func (e *NodeEntry) walkParams(m *yaml.Node, prefix string, depth int) error {
	if depth > maxNesting {
		return errAt(m, "parameters nested too deeply")
	}
	if m.Anchor != "" {
		return errAt(m, "anchors are not supported")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key, err := keyString(k)
		if err != nil {
			return err
		}
		name := key
		if prefix != "" {
			name = prefix + "." + key
		}
		if v.Kind == yaml.MappingNode {
			if err := e.walkParams(v, name, depth+1); err != nil {
				return err
			}
			continue
		}
		val, err := nodeValue(v)
		if err != nil {
			var pe *posError
			if errors.As(err, &pe) {
				pe.msg = fmt.Sprintf("parameter %q of node %q: %s", name, e.Pattern, pe.msg)
				return pe
			}
			return err
		}
		e.set(name, val)
	}
	return nil
}

// MatchNodeName reports whether a node-name pattern from a params file (or
// a node-targeted -p rule) matches the fully qualified node name fqn.
// A missing leading '/' is added to the pattern. Tokens are compared one
// by one: "*" matches exactly one token, "**" any number (also zero), and
// anything else must be equal, as rclcpp's regex translation
// ("/*" → "(/\w+)", "/**" → "(/\w+)*") does.
func MatchNodeName(pattern, fqn string) bool {
	if !strings.HasPrefix(pattern, "/") {
		pattern = "/" + pattern
	}
	return matchTokens(splitName(pattern), splitName(fqn))
}

func splitName(s string) []string {
	s = strings.Trim(s, "/")
	if s == "" {
		return nil
	}
	return strings.Split(s, "/")
}

func matchTokens(p, n []string) bool {
	// ok[j] reports whether p[i:] matches n[j:], computed for i from the end.
	ok := make([]bool, len(n)+1)
	ok[len(n)] = true
	for i := len(p) - 1; i >= 0; i-- {
		next := make([]bool, len(n)+1)
		for j := len(n); j >= 0; j-- {
			switch p[i] {
			case "**":
				next[j] = ok[j] || (j < len(n) && next[j+1])
			case "*":
				next[j] = j < len(n) && isNameToken(n[j]) && ok[j+1]
			default:
				next[j] = j < len(n) && p[i] == n[j] && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}

func isNameToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ForNode returns the parameters that apply to the node with fully
// qualified name fqn. Precedence: entries are applied in order (order of
// first appearance of each node key), each matching entry replacing
// values of earlier ones — so a later "/**" entry overrides an earlier
// "/my_node" entry, exactly as rclcpp's parameter_map_from merges them.
// Within one entry, the last value given for a parameter wins.
func (f *File) ForNode(fqn string) map[string]Value {
	out := map[string]Value{}
	if f == nil {
		return out
	}
	for _, e := range f.Entries {
		if !MatchNodeName(e.Pattern, fqn) {
			continue
		}
		for _, name := range e.Names {
			out[name] = e.Values[name]
		}
	}
	return out
}

// ParseCLIValue guesses the type of a value typed on a command line such
// as `nros param set NODE NAME VALUE`, following rclpy's
// get_parameter_value used by `ros2 param set`: the text is read as YAML;
// a scalar or a sequence of one scalar type becomes that type (see
// ParseValue); an empty sequence is an empty BOOL_ARRAY (Python's all()
// of nothing is true); anything else (mixed or nested sequences,
// mappings, empty text, invalid YAML) is the text itself as a STRING.
// It never fails.
func ParseCLIValue(text string) Value {
	if v, err := ParseValue(text); err == nil {
		return v
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err == nil && len(doc.Content) == 1 {
		if n := doc.Content[0]; n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
			return BoolArrayValue(nil)
		}
	}
	return StringValue(text)
}
