package msg

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field is one named member of a message, in .msg order, for YAML
// rendering. Value may be a bool, any Go integer or float type, a string,
// a []byte (rendered as a list of integers, as rclpy does for uint8[]), a
// nested YAMLer or []Field, or a slice or array of any of these.
type Field struct {
	Name  string
	Value any
}

// YAMLer is implemented by message types that list their fields for YAML
// rendering (every hand-written type does; generated code should too).
// Messages that do not implement it are rendered by reflection over their
// exported struct fields, with names converted to snake_case.
type YAMLer interface {
	YAMLFields() []Field
}

// DefaultTruncateLength is the `ros2 topic echo` default: strings and
// arrays longer than this are cut and marked with "...".
const DefaultTruncateLength = 128

// YAMLOptions adjusts FormatYAML.
type YAMLOptions struct {
	// TruncateLength cuts strings and arrays after this many characters or
	// elements (as `ros2 topic echo --truncate-length`); 0 or less means
	// full length (`--full-length`).
	TruncateLength int
}

// ToYAML renders m the way `ros2 topic echo` prints it by default (block
// style YAML as PyYAML emits it, strings and arrays truncated after 128),
// ending in a newline and without the "---" separator.
func ToYAML(m Message) string {
	return FormatYAML(m, YAMLOptions{TruncateLength: DefaultTruncateLength})
}

// FormatYAML renders a message (or any YAMLer, []Field or struct) as block
// style YAML.
func FormatYAML(v any, opts YAMLOptions) string {
	n := toNode(v, opts.TruncateLength)
	var b strings.Builder
	switch {
	case n.kind == nodeMap && len(n.keys) > 0:
		writeMap(&b, n, 0, false)
	case n.kind == nodeList && len(n.items) > 0:
		writeList(&b, n, 0, false)
	default:
		b.WriteString(inlineValue(n, 0))
		b.WriteByte('\n')
	}
	return b.String()
}

type nodeKind int

const (
	nodeScalar nodeKind = iota
	nodeMap
	nodeList
)

type node struct {
	kind   nodeKind
	scalar string // plain value, or a string still to be quoted
	isStr  bool   // scalar is a string value that may need quoting
	keys   []string
	vals   []node
	items  []node
}

var yamlerType = reflect.TypeFor[YAMLer]()

func toNode(v any, trunc int) node {
	switch x := v.(type) {
	case nil:
		return node{scalar: "null"}
	case YAMLer:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return node{scalar: "null"}
		}
		return fieldsNode(x.YAMLFields(), trunc)
	case []Field:
		return fieldsNode(x, trunc)
	case string:
		if trunc > 0 && utf8.RuneCountInString(x) > trunc {
			i, n := 0, 0
			for i = range x {
				if n == trunc {
					break
				}
				n++
			}
			x = x[:i] + "..."
		}
		return node{scalar: x, isStr: true}
	case bool:
		if x {
			return node{scalar: "true"}
		}
		return node{scalar: "false"}
	case int:
		return node{scalar: strconv.FormatInt(int64(x), 10)}
	case int8:
		return node{scalar: strconv.FormatInt(int64(x), 10)}
	case int16:
		return node{scalar: strconv.FormatInt(int64(x), 10)}
	case int32:
		return node{scalar: strconv.FormatInt(int64(x), 10)}
	case int64:
		return node{scalar: strconv.FormatInt(x, 10)}
	case uint:
		return node{scalar: strconv.FormatUint(uint64(x), 10)}
	case uint8:
		return node{scalar: strconv.FormatUint(uint64(x), 10)}
	case uint16:
		return node{scalar: strconv.FormatUint(uint64(x), 10)}
	case uint32:
		return node{scalar: strconv.FormatUint(uint64(x), 10)}
	case uint64:
		return node{scalar: strconv.FormatUint(x, 10)}
	case float32:
		return node{scalar: FormatYAMLFloat(float64(x))}
	case float64:
		return node{scalar: FormatYAMLFloat(x)}
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return node{scalar: "null"}
		}
		return toNode(rv.Elem().Interface(), trunc)
	case reflect.Slice, reflect.Array:
		n := node{kind: nodeList}
		l := rv.Len()
		cut := trunc > 0 && l > trunc
		if cut {
			l = trunc
		}
		for i := 0; i < l; i++ {
			e := rv.Index(i)
			if e.CanAddr() && e.Addr().Type().Implements(yamlerType) {
				n.items = append(n.items, toNode(e.Addr().Interface(), trunc))
			} else {
				n.items = append(n.items, toNode(e.Interface(), trunc))
			}
		}
		if cut {
			n.items = append(n.items, node{scalar: "...", isStr: true})
		}
		return n
	case reflect.Struct:
		var fs []Field
		t := rv.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			fv := rv.Field(i)
			val := fv.Interface()
			if fv.CanAddr() && fv.Addr().Type().Implements(yamlerType) {
				val = fv.Addr().Interface()
			}
			fs = append(fs, Field{Name: SnakeCase(sf.Name), Value: val})
		}
		return fieldsNode(fs, trunc)
	}
	return node{scalar: fmt.Sprint(v), isStr: true}
}

func fieldsNode(fs []Field, trunc int) node {
	n := node{kind: nodeMap}
	for _, f := range fs {
		n.keys = append(n.keys, f.Name)
		n.vals = append(n.vals, toNode(f.Value, trunc))
	}
	return n
}

// SnakeCase turns a Go field name into a ROS field name: FrameID ->
// frame_id, StampNs -> stamp_ns, NodeEntitiesInfoSeq -> node_entities_info_seq.
// The generator, the YAML renderer and `nros topic pub` share it.
func SnakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inlineValue renders a scalar, or an empty map/list, as it appears after
// "key: " or "- ". indent is the column continuation lines use.
func inlineValue(n node, indent int) string {
	switch n.kind {
	case nodeMap:
		return "{}"
	case nodeList:
		return "[]"
	}
	if n.isStr {
		return quoteString(n.scalar, indent)
	}
	return n.scalar
}

func isBlock(n node) bool {
	return (n.kind == nodeMap && len(n.keys) > 0) || (n.kind == nodeList && len(n.items) > 0)
}

// writeMap writes a block mapping at column indent. If inline, the first key
// continues the current line (after "- ").
func writeMap(b *strings.Builder, n node, indent int, inline bool) {
	for i, k := range n.keys {
		if i > 0 || !inline {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(k)
		b.WriteByte(':')
		v := n.vals[i]
		switch {
		case v.kind == nodeMap && isBlock(v):
			b.WriteByte('\n')
			writeMap(b, v, indent+2, false)
		case v.kind == nodeList && isBlock(v):
			b.WriteByte('\n')
			writeList(b, v, indent, false) // PyYAML: sequences in mappings are not indented
		default:
			b.WriteByte(' ')
			b.WriteString(inlineValue(v, indent+2))
			b.WriteByte('\n')
		}
	}
}

func writeList(b *strings.Builder, n node, indent int, inline bool) {
	for i, v := range n.items {
		if i > 0 || !inline {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString("- ")
		switch {
		case v.kind == nodeMap && isBlock(v):
			writeMap(b, v, indent+2, true)
		case v.kind == nodeList && isBlock(v):
			writeList(b, v, indent+2, true)
		default:
			b.WriteString(inlineValue(v, indent+2))
			b.WriteByte('\n')
		}
	}
}

// FormatYAMLFloat formats a float as PyYAML does for a Python float:
// Python's repr (shortest round-trip digits, exponent form below 1e-4 and
// from 1e16), lower case, ".0" inserted before an exponent without a dot,
// and .inf/-.inf/.nan.
func FormatYAMLFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	// Shortest digits and decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.2345e+06"
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var s string
	if exp < -4 || exp >= 16 {
		s = digits[:1]
		if len(digits) > 1 {
			s += "." + digits[1:]
		} else {
			s += ".0" // PyYAML adds ".0" when repr has no dot
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		s += fmt.Sprintf("e%s%02d", sign, exp)
	} else if exp < 0 {
		s = "0." + strings.Repeat("0", -exp-1) + digits
	} else if len(digits) <= exp+1 {
		s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	} else {
		s = digits[:exp+1] + "." + digits[exp+1:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Implicit resolvers of PyYAML (YAML 1.1): a plain scalar matching one of
// these would not read back as a string, so it must be quoted.
var implicitNonString = regexp.MustCompile(`^(?:` +
	`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
	`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	`|<<|~|null|Null|NULL|=` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
	`)$`)

// printable is PyYAML's notion of a character that may appear unescaped
// (tab and CR are not: they force double quotes).
func printable(r rune) bool {
	return r == '\n' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
		(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd && r != 0xfeff) || (r >= 0x10000 && r <= 0x10ffff)
}

func isBreak(r rune) bool { return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029 }

// quoteString renders a string scalar the way PyYAML's emitter picks a
// style in block context: plain when unambiguous, else single quoted, else
// double quoted with escapes. Continuation lines of a multi-line single
// quoted scalar are indented to indent.
func quoteString(s string, indent int) string {
	if s == "" {
		return "''"
	}
	var special, lineBreaks, spaceBreak, breakSpace, blockInd bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd = true
	}
	rs := []rune(s)
	for i, r := range rs {
		if r == utf8.RuneError {
			special = true
		}
		followedBySpace := i+1 >= len(rs) || rs[i+1] == ' ' || rs[i+1] == '\t' || isBreak(rs[i+1])
		precededBySpace := i == 0 || rs[i-1] == ' ' || rs[i-1] == '\t' || isBreak(rs[i-1])
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", r) {
				blockInd = true
			}
			if (r == '?' || r == ':' || r == '-') && followedBySpace {
				blockInd = true
			}
		} else {
			if r == ':' && followedBySpace {
				blockInd = true
			}
			if r == '#' && precededBySpace {
				blockInd = true
			}
		}
		if isBreak(r) {
			lineBreaks = true
		}
		if !printable(r) {
			special = true
		}
		if r == ' ' && i+1 < len(rs) && isBreak(rs[i+1]) {
			spaceBreak = true
		}
		if isBreak(r) && i+1 < len(rs) && rs[i+1] == ' ' {
			breakSpace = true
		}
	}
	leading := rs[0] == ' ' || isBreak(rs[0])
	trailing := rs[len(rs)-1] == ' ' || isBreak(rs[len(rs)-1])
	plain := !special && !lineBreaks && !blockInd && !leading && !trailing && !spaceBreak && !breakSpace &&
		!implicitNonString.MatchString(s)
	if plain {
		return s
	}
	if !special && !spaceBreak && !breakSpace {
		return singleQuoted(rs, indent)
	}
	return doubleQuoted(rs)
}

func singleQuoted(rs []rune, indent int) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(rs); {
		r := rs[i]
		if isBreak(r) {
			j := i
			for j < len(rs) && isBreak(rs[j]) {
				j++
			}
			if r == '\n' {
				b.WriteByte('\n')
			}
			for k := i; k < j; k++ {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Repeat(" ", indent))
			i = j
			continue
		}
		if r == '\'' {
			b.WriteString("''")
		} else {
			b.WriteRune(r)
		}
		i++
	}
	b.WriteByte('\'')
	return b.String()
}

func doubleQuoted(rs []rune) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range rs {
		switch r {
		case 0:
			b.WriteString(`\0`)
		case 0x07:
			b.WriteString(`\a`)
		case 0x08:
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case 0x0b:
			b.WriteString(`\v`)
		case 0x0c:
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1b:
			b.WriteString(`\e`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case 0x85:
			b.WriteString(`\N`)
		case 0xa0:
			b.WriteString(`\_`)
		case 0x2028:
			b.WriteString(`\L`)
		case 0x2029:
			b.WriteString(`\P`)
		default:
			switch {
			case (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd && r != 0xfeff) || r >= 0x10000:
				b.WriteRune(r)
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02X`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				fmt.Fprintf(&b, `\U%08X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
