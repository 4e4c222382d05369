package idl

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var (
	packageNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	messageNameRE  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	constantNameRE = regexp.MustCompile(`^[A-Z]([A-Z0-9_]?[A-Z0-9]+)*$`)
)

// ValidPackageName reports whether s is a valid ROS package name (also the
// rule for field names): lower case letters, digits and single underscores,
// starting with a letter and not ending with an underscore.
func ValidPackageName(s string) bool {
	return packageNameRE.MatchString(s) && !strings.Contains(s, "__") && !strings.HasSuffix(s, "_")
}

// ValidMessageName reports whether s is a valid message name (CamelCase,
// starting upper case), allowing the suffixes rosidl adds to service and
// action parts (_Request, _Response, _Goal, _Result, _Feedback, _Event...).
func ValidMessageName(s string) bool {
	// Strip up to two suffixes: Fibonacci_SendGoal_Request.
	for range 2 {
		for _, suf := range []string{"_Request", "_Response", "_Event", "_Goal", "_Result", "_Feedback",
			"_SendGoal", "_GetResult", "_FeedbackMessage"} {
			if base, ok := strings.CutSuffix(s, suf); ok {
				s = base
				break
			}
		}
	}
	return messageNameRE.MatchString(s)
}

func validConstantName(s string) bool { return constantNameRE.MatchString(s) }

var primitives = map[string]Kind{
	"bool": Bool, "byte": Byte, "char": Char, "float32": Float32, "float64": Float64,
	"int8": Int8, "uint8": Uint8, "int16": Int16, "uint16": Uint16, "int32": Int32, "uint32": Uint32,
	"int64": Int64, "uint64": Uint64, "string": String, "wstring": WString,
}

// maxSize caps array sizes and bounds so that a hostile file cannot make the
// generator or a dynamic decoder allocate absurd fixed arrays.
const maxSize = 1 << 24

// ParseType parses a type as written in an interface file of package pkg
// (used for unqualified message names).
func ParseType(s, pkg string) (Type, error) {
	var t Type
	base := s
	if strings.HasSuffix(s, "]") {
		i := strings.LastIndexByte(s, '[')
		if i < 0 {
			return t, fmt.Errorf("type %q ends with ']' but has no '['", s)
		}
		inner := s[i+1 : len(s)-1]
		base = s[:i]
		switch {
		case inner == "":
			t.Array = Unbounded
		default:
			t.Array = Fixed
			if rest, ok := strings.CutPrefix(inner, "<="); ok {
				t.Array, inner = Bounded, rest
			}
			n, err := parseSize(inner)
			if err != nil {
				return t, fmt.Errorf("type %q: array size %w", s, err)
			}
			t.Size = n
		}
	}
	if k, ok := primitives[base]; ok {
		t.Kind = k
		return t, nil
	}
	for _, sk := range []string{"string", "wstring"} {
		if rest, ok := strings.CutPrefix(base, sk+"<="); ok {
			n, err := parseSize(rest)
			if err != nil {
				return t, fmt.Errorf("type %q: string bound %w", s, err)
			}
			t.Kind, t.StringBound = primitives[sk], n
			return t, nil
		}
	}
	switch base {
	case "time":
		t.Kind, t.Package, t.Name = Message, "builtin_interfaces", "Time"
		return t, nil
	case "duration":
		t.Kind, t.Package, t.Name = Message, "builtin_interfaces", "Duration"
		return t, nil
	}
	p, name, qualified := strings.Cut(base, "/")
	if !qualified {
		p, name = pkg, base
	} else if strings.Contains(name, "/") {
		// Accept "pkg/msg/Name" as written in bag schemas.
		ns, n, _ := strings.Cut(name, "/")
		if ns != "msg" || strings.Contains(n, "/") {
			return t, fmt.Errorf("type %q: want Name or package/Name", s)
		}
		name = n
	}
	if p == "" {
		return t, fmt.Errorf("type %q: unknown type and no package to look it up in", s)
	}
	if !ValidPackageName(p) {
		return t, fmt.Errorf("type %q: %q is not a valid package name", s, p)
	}
	if !ValidMessageName(name) {
		if base == "" {
			return t, fmt.Errorf("type %q: missing element type", s)
		}
		return t, fmt.Errorf("unknown type %q (not a primitive, and %q is not a valid message name)", s, name)
	}
	t.Kind, t.Package, t.Name = Message, p, name
	return t, nil
}

func parseSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q must be an integer > 0", s)
	}
	if n > maxSize {
		return 0, fmt.Errorf("%d exceeds the supported maximum %d", n, maxSize)
	}
	return n, nil
}

// ParseMessage parses the text of a .msg file. file is used in error
// messages and, when name is "", to derive the message name.
func ParseMessage(pkg, name string, src []byte, file string) (*Msg, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	lines := splitLines(string(src))
	m, err := parseMsg(pkg, "msg", name, lines, 0, file)
	if err != nil {
		return nil, err
	}
	m.Text = string(src)
	return m, nil
}

// ParseService parses the text of a .srv file: a request and a response
// separated by a line "---". The parts are named Name_Request and
// Name_Response.
func ParseService(pkg, name string, src []byte, file string) (*Srv, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	lines := splitLines(string(src))
	parts, starts, err := splitParts(lines, 2, file, "service")
	if err != nil {
		return nil, err
	}
	if err := checkName(pkg, name, file); err != nil {
		return nil, err
	}
	s := &Srv{Package: pkg, Name: name, File: file}
	if s.Request, err = parseMsg(pkg, "srv", name+"_Request", parts[0], starts[0], file); err != nil {
		return nil, err
	}
	if s.Response, err = parseMsg(pkg, "srv", name+"_Response", parts[1], starts[1], file); err != nil {
		return nil, err
	}
	s.Comment = s.Request.Comment
	return s, nil
}

// ParseAction parses the text of a .action file: goal, result and feedback
// separated by lines "---", named Name_Goal, Name_Result and Name_Feedback.
func ParseAction(pkg, name string, src []byte, file string) (*Action, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	lines := splitLines(string(src))
	parts, starts, err := splitParts(lines, 3, file, "action")
	if err != nil {
		return nil, err
	}
	if err := checkName(pkg, name, file); err != nil {
		return nil, err
	}
	a := &Action{Package: pkg, Name: name, File: file}
	if a.Goal, err = parseMsg(pkg, "action", name+"_Goal", parts[0], starts[0], file); err != nil {
		return nil, err
	}
	if a.Result, err = parseMsg(pkg, "action", name+"_Result", parts[1], starts[1], file); err != nil {
		return nil, err
	}
	if a.Feedback, err = parseMsg(pkg, "action", name+"_Feedback", parts[2], starts[2], file); err != nil {
		return nil, err
	}
	a.Comment = a.Goal.Comment
	return a, nil
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func splitParts(lines []string, want int, file, what string) ([][]string, []int, error) {
	var parts [][]string
	starts := []int{0}
	last := 0
	for i, l := range lines {
		if strings.TrimRight(l, " \t") == "---" {
			parts = append(parts, lines[last:i])
			last = i + 1
			starts = append(starts, last)
		}
	}
	parts = append(parts, lines[last:])
	if len(parts) != want {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("a %s needs %d parts separated by \"---\" lines, found %d", what, want, len(parts))}
	}
	return parts, starts, nil
}

func checkName(pkg, name, file string) error {
	if !ValidPackageName(pkg) {
		return &Error{File: file, Msg: fmt.Sprintf("invalid package name %q", pkg)}
	}
	if !messageNameRE.MatchString(name) {
		return &Error{File: file, Msg: fmt.Sprintf("invalid interface name %q (want CamelCase)", name)}
	}
	return nil
}

// parseMsg parses the lines of one message; lineOff is the 0-based index
// of lines[0] in the file.
func parseMsg(pkg, ns, name string, lines []string, lineOff int, file string) (*Msg, error) {
	if !ValidPackageName(pkg) {
		return nil, &Error{File: file, Msg: fmt.Sprintf("invalid package name %q", pkg)}
	}
	if !ValidMessageName(name) {
		return nil, &Error{File: file, Msg: fmt.Sprintf("invalid message name %q (want CamelCase)", name)}
	}
	m := &Msg{Package: pkg, Namespace: ns, Name: name, File: file}
	i := 0
	var fileComment []string
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		fileComment = append(fileComment, strings.TrimLeft(lines[i], "#"))
	}
	m.Comment = joinComment(fileComment)

	var last *[]string // comment lines of the last field or constant
	var pending []string
	fieldComments := map[int]*[]string{}
	constComments := map[int]*[]string{}
	seen := map[string]int{}
	for ; i < len(lines); i++ {
		lineNo := lineOff + i + 1
		errf := func(format string, args ...any) error {
			return &Error{File: file, Line: lineNo, Msg: fmt.Sprintf(format, args...)}
		}
		line := strings.ReplaceAll(lines[i], "\t", " ")
		line = strings.TrimRight(line, " \r")
		if line == "" {
			continue
		}
		if !validUTF8(line) {
			return nil, errf("line is not valid UTF-8")
		}
		if idx := strings.IndexByte(line, '#'); idx >= 0 {
			comment := strings.TrimLeft(line[idx:], "#")
			line = line[:idx]
			if line != "" && strings.TrimSpace(line) == "" {
				// An indented comment line continues the previous element.
				if last != nil {
					*last = append(*last, comment)
				}
				continue
			}
			pending = append(pending, comment)
			line = strings.TrimRight(line, " ")
			if line == "" {
				continue
			}
		}
		if strings.HasPrefix(line, "@") {
			return nil, errf("annotation %q is not supported", strings.Fields(line)[0])
		}
		typ, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return nil, errf("%q: want \"TYPE name\" or \"TYPE NAME=value\"", line)
		}
		t, err := ParseType(typ, pkg)
		if err != nil {
			return nil, errf("%v", err)
		}
		comments := pending
		pending = nil
		if eq := strings.IndexByte(rest, '='); eq >= 0 {
			cname := strings.TrimRight(rest[:eq], " ")
			val := strings.TrimLeft(rest[eq+1:], " ")
			if t.Kind == Message || t.Array != Single {
				return nil, errf("constant %s: type %s is not a primitive type", cname, typ)
			}
			if !validConstantName(cname) {
				return nil, errf("invalid constant name %q (want UPPER_CASE)", cname)
			}
			if _, dup := seen["c:"+cname]; dup {
				return nil, errf("duplicate constant %s", cname)
			}
			seen["c:"+cname] = lineNo
			v, err := parsePrimitive(t, val)
			if err != nil {
				return nil, errf("constant %s: %v", cname, err)
			}
			m.Constants = append(m.Constants, Constant{Name: cname, Type: t, Value: v, Line: lineNo})
			c := comments
			constComments[len(m.Constants)-1] = &c
			last = &c
			continue
		}
		fname, def, _ := strings.Cut(rest, " ")
		def = strings.TrimLeft(def, " ")
		if !ValidPackageName(fname) {
			return nil, errf("invalid field name %q (want lower_snake_case)", fname)
		}
		if _, dup := seen["f:"+fname]; dup {
			return nil, errf("duplicate field %s", fname)
		}
		seen["f:"+fname] = lineNo
		f := Field{Name: fname, Type: t, Line: lineNo}
		if def != "" {
			v, err := ParseValue(t, def)
			if err != nil {
				return nil, errf("field %s: default %v", fname, err)
			}
			f.Default = &v
		}
		m.Fields = append(m.Fields, f)
		c := comments
		fieldComments[len(m.Fields)-1] = &c
		last = &c
	}
	for i, c := range fieldComments {
		m.Fields[i].Comment = joinComment(*c)
	}
	for i, c := range constComments {
		m.Constants[i].Comment = joinComment(*c)
	}
	return m, nil
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// joinComment trims leading and trailing empty lines, drops one leading
// space common to the lines (as "# text" is usually written) and joins
// them with newlines.
func joinComment(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(strings.TrimPrefix(l, " "), " ")
	}
	return strings.Join(out, "\n")
}

// ParseValue parses a default value of a field of type t (a primitive, a
// string, or an array or sequence of those).
func ParseValue(t Type, s string) (Value, error) {
	if t.Kind == Message {
		return Value{}, fmt.Errorf("%q: default values are only allowed for primitive and string types", s)
	}
	if t.Array == Single {
		return parsePrimitive(t, s)
	}
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || len(s) < 2 {
		return Value{}, fmt.Errorf("%q: an array value must start with '[' and end with ']'", s)
	}
	inner := s[1 : len(s)-1]
	var elems []string
	if t.Kind.IsString() {
		var err error
		if elems, err = splitStringList(inner); err != nil {
			return Value{}, fmt.Errorf("%q: %v", s, err)
		}
	} else if strings.TrimSpace(inner) != "" {
		elems = strings.Split(inner, ",")
	}
	switch {
	case t.Array == Fixed && len(elems) != t.Size:
		return Value{}, fmt.Errorf("%q: the array must have exactly %d elements, not %d", s, t.Size, len(elems))
	case t.Array == Bounded && len(elems) > t.Size:
		return Value{}, fmt.Errorf("%q: the sequence must have at most %d elements, not %d", s, t.Size, len(elems))
	}
	v := Value{Source: s, List: make([]Value, 0, len(elems))}
	et := t.Elem()
	for i, e := range elems {
		ev, err := parsePrimitive(et, strings.TrimSpace(e))
		if err != nil {
			return Value{}, fmt.Errorf("%q: element %d: %v", s, i, err)
		}
		v.List = append(v.List, ev)
	}
	return v, nil
}

// splitStringList splits the inside of a string array literal: elements
// are quoted ('...' or "..." with \' or \" escapes) or bare up to a comma.
// Quoted elements are returned with their quotes so that parsePrimitive
// unquotes them.
func splitStringList(s string) ([]string, error) {
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, nil
		}
		if s[0] == ',' {
			return nil, fmt.Errorf("unexpected ',' at %q", s)
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := -1
			for i := 1; i < len(s); i++ {
				if s[i] == '\\' {
					i++
					continue
				}
				if s[i] == q {
					end = i
					break
				}
			}
			if end < 0 {
				return nil, fmt.Errorf("unterminated quoted string %q", s)
			}
			out = append(out, s[:end+1])
			s = s[end+1:]
		} else {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				out = append(out, strings.TrimRight(s, " "))
				return out, nil
			}
			out = append(out, strings.TrimRight(s[:i], " "))
			s = s[i:]
		}
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, nil
		}
		if s[0] != ',' {
			return nil, fmt.Errorf("want ',' between elements at %q", s)
		}
		s = s[1:]
	}
}

func parsePrimitive(t Type, s string) (Value, error) {
	v := Value{Source: s}
	switch k := t.Kind; k {
	case Bool:
		switch strings.ToLower(s) {
		case "true", "1":
			v.Bool = true
		case "false", "0":
		default:
			return v, fmt.Errorf("%q: a bool must be true, false, 1 or 0", s)
		}
	case Byte, Char, Uint8, Uint16, Uint32, Uint64:
		bits := 8 * k.Size()
		u, err := parseUint(s, bits)
		if err != nil {
			return v, fmt.Errorf("%q: want an integer in [0, %d]", s, uint64(math.MaxUint64)>>(64-bits))
		}
		v.Uint = u
	case Int8, Int16, Int32, Int64:
		bits := 8 * k.Size()
		n, err := parseInt(s, bits)
		if err != nil {
			lo := int64(-1) << (bits - 1)
			return v, fmt.Errorf("%q: want an integer in [%d, %d]", s, lo, -(lo + 1))
		}
		v.Int = n
	case Float32, Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil && !isRangeErr(err) {
			return v, fmt.Errorf("%q: want a floating point number", s)
		}
		if k == Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return v, fmt.Errorf("%q: out of float32 range", s)
		}
		v.Float = f
	case String, WString:
		str, err := unquote(s)
		if err != nil {
			return v, err
		}
		if t.StringBound > 0 && len([]rune(str)) > t.StringBound {
			return v, fmt.Errorf("%q: longer than the bound %d", str, t.StringBound)
		}
		v.Str = str
	default:
		return v, fmt.Errorf("%q: no literal for type %s", s, t)
	}
	return v, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func parseUint(s string, bits int) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	u, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		u, err = strconv.ParseUint(s, 0, bits)
	}
	return u, err
}

func parseInt(s string, bits int) (int64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		n, err = strconv.ParseInt(s, 0, bits)
	}
	return n, err
}

// unquote removes one pair of matching outer quotes and their escapes (\"
// or \'), as rosidl does; an unescaped inner quote of the same kind is an
// error. Unquoted text is taken as is.
func unquote(s string) (string, error) {
	for _, q := range []string{`"`, `'`} {
		if len(s) >= 2 && strings.HasPrefix(s, q) && strings.HasSuffix(s, q) {
			inner := s[1 : len(s)-1]
			for i := 0; i < len(inner); i++ {
				if inner[i] == q[0] && (i == 0 || inner[i-1] != '\\') {
					return "", fmt.Errorf("%q: inner quotes are not escaped", s)
				}
			}
			return strings.ReplaceAll(inner, `\`+q, q), nil
		}
	}
	return s, nil
}
