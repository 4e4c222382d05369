package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of a JSON5 value.
type Kind uint8

// The JSON5 value kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{Null: "null", Bool: "boolean", Number: "number", String: "string", Array: "array", Object: "object"}

// String returns "null", "boolean", "number", "string", "array" or
// "object".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one parsed JSON5 value with the position (1-based line and
// column, in characters) where it starts.
type Value struct {
	Kind Kind
	Bool bool
	// Num is the number's source text, normalized: sign and digits, hex
	// digits after "0x", or "Infinity"/"NaN" (Int, Uint and Float read it).
	Num     string
	Str     string
	Arr     []*Value
	Obj     []Member // in source order, keys unique
	Line    int
	Col     int
	numNeg  bool
	numHex  bool
	numSpec bool // Infinity or NaN
}

// Member is one key of an object.
type Member struct {
	Key       string
	Value     *Value
	Line, Col int
}

// Get returns the member named key of an object, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for _, m := range v.Obj {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// Pos returns "line L, column C".
func (v *Value) Pos() string { return fmt.Sprintf("line %d, column %d", v.Line, v.Col) }

// Int returns an integer number's value.
func (v *Value) Int() (int64, error) {
	u, neg, err := v.integer()
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, fmt.Errorf("%s out of range", v.Num)
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("%s out of range", v.Num)
	}
	return int64(u), nil
}

// Uint returns a non-negative integer number's value.
func (v *Value) Uint() (uint64, error) {
	u, neg, err := v.integer()
	if err != nil {
		return 0, err
	}
	if neg && u != 0 {
		return 0, fmt.Errorf("%s is negative", v.Num)
	}
	return u, nil
}

func (v *Value) integer() (u uint64, neg bool, err error) {
	if v.Kind != Number {
		return 0, false, fmt.Errorf("a %v, not a number", v.Kind)
	}
	if v.numSpec {
		return 0, false, fmt.Errorf("%s is not an integer", v.Num)
	}
	digits := strings.TrimLeft(v.Num, "+-")
	if v.numHex {
		u, err = strconv.ParseUint(digits[2:], 16, 64)
	} else {
		if strings.ContainsAny(digits, ".eE") {
			f, ferr := strconv.ParseFloat(digits, 64)
			if ferr != nil || f != math.Trunc(f) || f >= 1<<64 {
				return 0, false, fmt.Errorf("%s is not an integer", v.Num)
			}
			return uint64(f), v.numNeg, nil
		}
		u, err = strconv.ParseUint(digits, 10, 64)
	}
	if err != nil {
		return 0, false, fmt.Errorf("%s out of range", v.Num)
	}
	return u, v.numNeg, nil
}

// Float returns a number's value.
func (v *Value) Float() (float64, error) {
	if v.Kind != Number {
		return 0, fmt.Errorf("a %v, not a number", v.Kind)
	}
	digits := strings.TrimLeft(v.Num, "+-")
	var f float64
	switch {
	case digits == "Infinity":
		f = math.Inf(1)
	case digits == "NaN":
		f = math.NaN()
	case v.numHex:
		u, err := strconv.ParseUint(digits[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%s out of range", v.Num)
		}
		f = float64(u)
	default:
		var err error
		f, err = strconv.ParseFloat(digits, 64)
		if err != nil {
			return 0, fmt.Errorf("%s out of range", v.Num)
		}
	}
	if v.numNeg {
		f = -f
	}
	return f, nil
}

// SyntaxError is a JSON5 syntax error at a position of the input.
type SyntaxError struct {
	Line, Col int // 1-based; Col counts characters
	Msg       string
}

// Error implements the error interface.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("json5: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// maxDepth bounds the nesting of arrays and objects.
const maxDepth = 512

// ParseJSON5 parses one JSON5 value (https://spec.json5.org): comments,
// unquoted identifier keys, single-quoted strings, escaped line breaks,
// hexadecimal numbers, leading or trailing decimal points, '+' signs,
// Infinity and NaN, trailing commas. A key repeated in one object is an
// error (zenoh's config loader rejects it too).
func ParseJSON5(data []byte) (*Value, error) {
	p := &parser{src: data, line: 1, col: 1}
	if !utf8.Valid(data) {
		for p.off < len(data) {
			r, n := utf8.DecodeRune(data[p.off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			p.advance(n, r)
		}
		p.errf("invalid UTF-8")
		return nil, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	if p.eof() {
		p.errf("empty document: want a value")
		return nil, p.err
	}
	v := p.value(0)
	if p.err != nil {
		return nil, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	if !p.eof() {
		p.errf("unexpected %s after the value", p.describe())
		return nil, p.err
	}
	return v, nil
}

type parser struct {
	src       []byte
	off       int
	line, col int
	err       *SyntaxError
}

func (p *parser) eof() bool { return p.off >= len(p.src) }

func (p *parser) peek() (rune, int) {
	if p.eof() {
		return -1, 0
	}
	return utf8.DecodeRune(p.src[p.off:])
}

func isLineTerm(r rune) bool { return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 }

func (p *parser) advance(n int, r rune) {
	p.off += n
	switch {
	case r == '\r' && p.off < len(p.src) && p.src[p.off] == '\n':
		p.col++ // the CR of a CR LF: the LF ends the line
	case isLineTerm(r):
		p.line++
		p.col = 1
	default:
		p.col++
	}
}

// next consumes and returns one character.
func (p *parser) next() rune {
	r, n := p.peek()
	if n > 0 {
		p.advance(n, r)
	}
	return r
}

func (p *parser) errf(format string, args ...any) *Value {
	if p.err == nil {
		p.err = &SyntaxError{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
	}
	return nil
}

func (p *parser) describe() string {
	r, _ := p.peek()
	switch {
	case r < 0:
		return "end of input"
	case r < ' ' || r == 0x7f:
		return fmt.Sprintf("control character %U", r)
	}
	return strconv.QuoteRune(r)
}

func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x2028, 0x2029, 0xfeff:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// skip skips white space and comments.
func (p *parser) skip() {
	for !p.eof() {
		r, _ := p.peek()
		if isSpace(r) {
			p.next()
			continue
		}
		if r != '/' || p.off+1 >= len(p.src) {
			return
		}
		switch p.src[p.off+1] {
		case '/':
			for !p.eof() {
				if r, _ := p.peek(); isLineTerm(r) {
					break
				}
				p.next()
			}
		case '*':
			line, col := p.line, p.col
			p.next()
			p.next()
			for {
				if p.eof() {
					p.err = &SyntaxError{Line: line, Col: col, Msg: "unterminated /* comment"}
					return
				}
				if p.src[p.off] == '*' && p.off+1 < len(p.src) && p.src[p.off+1] == '/' {
					p.next()
					p.next()
					break
				}
				p.next()
			}
		default:
			return
		}
	}
}

func (p *parser) value(depth int) *Value {
	if depth > maxDepth {
		return p.errf("nesting deeper than %d", maxDepth)
	}
	v := &Value{Line: p.line, Col: p.col}
	r, _ := p.peek()
	switch {
	case r == '{':
		v.Kind = Object
		p.object(v, depth)
	case r == '[':
		v.Kind = Array
		p.array(v, depth)
	case r == '"' || r == '\'':
		v.Kind = String
		v.Str = p.str()
	case r == '-' || r == '+' || r == '.' || r >= '0' && r <= '9' || r == 'I' || r == 'N':
		p.number(v)
	case isIDStart(r):
		w := p.word()
		switch w {
		case "true", "false":
			v.Kind, v.Bool = Bool, w == "true"
		case "null":
			v.Kind = Null
		default:
			p.err = &SyntaxError{Line: v.Line, Col: v.Col, Msg: fmt.Sprintf("unexpected word %q: want a value (strings take quotes)", w)}
		}
	default:
		return p.errf("unexpected %s: want a value", p.describe())
	}
	if p.err != nil {
		return nil
	}
	return v
}

// word reads a run of identifier characters (for literals).
func (p *parser) word() string {
	start := p.off
	for !p.eof() {
		r, _ := p.peek()
		if !isIDPart(r) {
			break
		}
		p.next()
	}
	return string(p.src[start:p.off])
}

func (p *parser) number(v *Value) {
	v.Kind = Number
	var b strings.Builder
	if r, _ := p.peek(); r == '+' || r == '-' {
		v.numNeg = r == '-'
		b.WriteRune(p.next())
	}
	r, _ := p.peek()
	if r == 'I' || r == 'N' {
		line, col := p.line, p.col
		w := p.word()
		if w != "Infinity" && w != "NaN" {
			p.err = &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("unexpected word %q: want a number", w)}
			return
		}
		v.numSpec = true
		b.WriteString(w)
		v.Num = b.String()
		return
	}
	digits := func(hex bool) int {
		n := 0
		for !p.eof() {
			c := p.src[p.off]
			if c >= '0' && c <= '9' || hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				b.WriteByte(c)
				p.next()
				n++
				continue
			}
			break
		}
		return n
	}
	if r == '0' && p.off+1 < len(p.src) && (p.src[p.off+1] == 'x' || p.src[p.off+1] == 'X') {
		p.next()
		p.next()
		b.WriteString("0x")
		if digits(true) == 0 {
			p.errf("hexadecimal number without digits")
			return
		}
		v.numHex = true
	} else {
		intDigits := digits(false)
		if intDigits > 1 && strings.TrimLeft(b.String(), "+-")[0] == '0' {
			p.err = &SyntaxError{Line: v.Line, Col: v.Col, Msg: "number with a leading zero"}
			return
		}
		frac := 0
		if r, _ := p.peek(); r == '.' {
			b.WriteRune(p.next())
			frac = digits(false)
		}
		if intDigits == 0 && frac == 0 {
			p.errf("number without digits")
			return
		}
		if r, _ := p.peek(); r == 'e' || r == 'E' {
			b.WriteRune(p.next())
			if r, _ := p.peek(); r == '+' || r == '-' {
				b.WriteRune(p.next())
			}
			if digits(false) == 0 {
				p.errf("exponent without digits")
				return
			}
		}
	}
	if r, _ := p.peek(); isIDPart(r) {
		p.errf("unexpected %s after a number", p.describe())
		return
	}
	v.Num = b.String()
}

func (p *parser) str() string {
	q := p.next()
	line, col := p.line, p.col-1
	var b strings.Builder
	for {
		if p.eof() {
			p.err = &SyntaxError{Line: line, Col: col, Msg: "unterminated string"}
			return ""
		}
		r := p.next()
		switch {
		case r == q:
			return b.String()
		case r == '\\':
			p.escape(&b, p.line, p.col-1)
			if p.err != nil {
				return ""
			}
		case r == '\n' || r == '\r':
			p.err = &SyntaxError{Line: line, Col: col, Msg: "line break in a string (escape it with '\\')"}
			return ""
		default:
			b.WriteRune(r)
		}
	}
}

func (p *parser) hexN(n int) (rune, bool) {
	var v rune
	for i := 0; i < n; i++ {
		if p.eof() {
			return 0, false
		}
		c := p.src[p.off]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		p.next()
		v = v<<4 | rune(d)
	}
	return v, true
}

// escape reads an escape sequence after its backslash (at line, col).
func (p *parser) escape(b *strings.Builder, line, col int) {
	fail := func(format string, args ...any) {
		if p.err == nil {
			p.err = &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
		}
	}
	if p.eof() {
		p.errf("unterminated string")
		return
	}
	r := p.next()
	switch r {
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '0':
		if c, _ := p.peek(); c >= '0' && c <= '9' {
			fail("octal escape")
			return
		}
		b.WriteByte(0)
	case 'x':
		v, ok := p.hexN(2)
		if !ok {
			fail("\\x wants 2 hex digits")
			return
		}
		b.WriteRune(v)
	case 'u':
		v, ok := p.hexN(4)
		if !ok {
			fail("\\u wants 4 hex digits")
			return
		}
		if utf16IsHigh(v) && p.off+1 < len(p.src) && p.src[p.off] == '\\' && p.src[p.off+1] == 'u' {
			save := *p
			p.next()
			p.next()
			if lo, ok := p.hexN(4); ok && utf16IsLow(lo) {
				b.WriteRune((v-0xd800)<<10 + (lo - 0xdc00) + 0x10000)
				return
			}
			*p = save
		}
		if utf16IsHigh(v) || utf16IsLow(v) {
			b.WriteRune(utf8.RuneError)
			return
		}
		b.WriteRune(v)
	case '\n', 0x2028, 0x2029:
		// line continuation
	case '\r':
		if !p.eof() && p.src[p.off] == '\n' {
			p.next()
		}
	default:
		if r >= '1' && r <= '9' {
			fail("invalid escape \\%c", r)
			return
		}
		b.WriteRune(r)
	}
}

func utf16IsHigh(r rune) bool { return r >= 0xd800 && r < 0xdc00 }
func utf16IsLow(r rune) bool  { return r >= 0xdc00 && r < 0xe000 }

func isIDStart(r rune) bool {
	return r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

func isIDPart(r rune) bool {
	return isIDStart(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc) || r == 0x200c || r == 0x200d
}

func (p *parser) key() string {
	r, _ := p.peek()
	if r == '"' || r == '\'' {
		return p.str()
	}
	if !isIDStart(r) && r != '\\' {
		p.errf("unexpected %s: want a key (a string or an identifier)", p.describe())
		return ""
	}
	var b strings.Builder
	for !p.eof() {
		r, _ := p.peek()
		if r == '\\' {
			p.next()
			if c := p.next(); c != 'u' {
				p.errf("invalid escape in a key")
				return ""
			}
			v, ok := p.hexN(4)
			if !ok || !(b.Len() == 0 && isIDStart(v) || b.Len() > 0 && isIDPart(v)) {
				p.errf("invalid \\u escape in a key")
				return ""
			}
			b.WriteRune(v)
			continue
		}
		if !isIDPart(r) {
			break
		}
		b.WriteRune(p.next())
	}
	return b.String()
}

func (p *parser) object(v *Value, depth int) {
	p.next() // {
	seen := map[string]bool{}
	for {
		p.skip()
		if p.err != nil {
			return
		}
		if r, _ := p.peek(); r == '}' {
			p.next()
			return
		}
		line, col := p.line, p.col
		k := p.key()
		if p.err != nil {
			return
		}
		if seen[k] {
			p.err = &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("duplicate key %q", k)}
			return
		}
		seen[k] = true
		p.skip()
		if p.err != nil {
			return
		}
		if r, _ := p.peek(); r != ':' {
			p.errf("unexpected %s after key %q: want ':'", p.describe(), k)
			return
		}
		p.next()
		p.skip()
		if p.err != nil {
			return
		}
		val := p.value(depth + 1)
		if p.err != nil {
			return
		}
		v.Obj = append(v.Obj, Member{Key: k, Value: val, Line: line, Col: col})
		p.skip()
		if p.err != nil {
			return
		}
		switch r, _ := p.peek(); r {
		case ',':
			p.next()
		case '}':
			p.next()
			return
		default:
			p.errf("unexpected %s in an object: want ',' or '}'", p.describe())
			return
		}
	}
}

func (p *parser) array(v *Value, depth int) {
	p.next() // [
	for {
		p.skip()
		if p.err != nil {
			return
		}
		if r, _ := p.peek(); r == ']' {
			p.next()
			return
		}
		val := p.value(depth + 1)
		if p.err != nil {
			return
		}
		v.Arr = append(v.Arr, val)
		p.skip()
		if p.err != nil {
			return
		}
		switch r, _ := p.peek(); r {
		case ',':
			p.next()
		case ']':
			p.next()
			return
		default:
			p.errf("unexpected %s in an array: want ',' or ']'", p.describe())
			return
		}
	}
}
