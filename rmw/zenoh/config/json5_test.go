package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSON5Values(t *testing.T) {
	doc := `// rmw_zenoh-like
{
  mode: 'peer', /* block
  comment */ "quoted key": "a\"b\\c\n\u00e9\x41\
continued",
  $id_1: [1, -2, +3, 0x1F, -0xa, .5, 5., 1e3, 2.5E-1, Infinity, -Infinity, NaN,],
  nested: { t: true, f: false, n: null, },
  'single': "it's",
  emoji: "\ud83d\ude00",
  ünïcode: 1,
}
`
	v, err := ParseJSON5([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != Object || len(v.Obj) != 7 {
		t.Fatalf("top: %v with %d members", v.Kind, len(v.Obj))
	}
	if s := v.Get("mode"); s == nil || s.Str != "peer" || s.Line != 3 || s.Col != 9 {
		t.Errorf("mode = %+v", s)
	}
	if s := v.Get("quoted key"); s == nil || s.Str != "a\"b\\c\né"+"Acontinued" {
		t.Errorf("escapes: %q", s.Str)
	}
	nums := v.Get("$id_1").Arr
	wantF := []float64{1, -2, 3, 31, -10, 0.5, 5, 1000, 0.25, math.Inf(1), math.Inf(-1)}
	for i, w := range wantF {
		f, err := nums[i].Float()
		if err != nil || f != w {
			t.Errorf("number %d (%s) = %v, %v; want %v", i, nums[i].Num, f, err, w)
		}
	}
	if f, _ := nums[11].Float(); !math.IsNaN(f) {
		t.Error("NaN")
	}
	if n, err := nums[4].Int(); err != nil || n != -10 {
		t.Error("hex int", n, err)
	}
	if _, err := nums[1].Uint(); err == nil {
		t.Error("Uint of -2")
	}
	if n, err := nums[7].Uint(); err != nil || n != 1000 {
		t.Error("1e3 as an integer", n, err)
	}
	if _, err := nums[5].Int(); err == nil {
		t.Error(".5 as an integer")
	}
	if _, err := nums[9].Int(); err == nil {
		t.Error("Infinity as an integer")
	}
	n := v.Get("nested")
	if n.Get("t").Bool != true || n.Get("f").Kind != Bool || n.Get("f").Bool || n.Get("n").Kind != Null {
		t.Error("literals")
	}
	if v.Get("single").Str != "it's" || v.Get("emoji").Str != "😀" || v.Get("ünïcode") == nil {
		t.Error("strings and keys")
	}
	// CRLF counts one line; columns count characters
	v, err = ParseJSON5([]byte("{\r\n  é: 1,\r\n  x: [1, }"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || se.Col != 10 {
		t.Errorf("CRLF position: %v", err)
	}
	_ = v
	for _, big := range []string{"18446744073709551615", "0xffffffffffffffff"} {
		v, _ := ParseJSON5([]byte(big))
		if u, err := v.Uint(); err != nil || u != math.MaxUint64 {
			t.Errorf("%s: %d %v", big, u, err)
		}
		if _, err := v.Int(); err == nil {
			t.Errorf("%s fits no int64", big)
		}
	}
	v, _ = ParseJSON5([]byte("-9223372036854775808"))
	if i, err := v.Int(); err != nil || i != math.MinInt64 {
		t.Error("min int64", i, err)
	}
}

func TestJSON5Errors(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
		msg       string
	}{
		{"", 1, 1, "empty document"},
		{"  // only a comment\n", 2, 1, "empty document"},
		{"{", 1, 2, "want a key"},
		{"{a 1}", 1, 4, "want ':'"},
		{"{a: 1 b: 2}", 1, 7, "want ',' or '}'"},
		{"[1 2]", 1, 4, "want ',' or ']'"},
		{"{a: 1, a: 2}", 1, 8, `duplicate key "a"`},
		{"{\n  mode: peer\n}", 2, 9, `unexpected word "peer"`},
		{"'abc", 1, 1, "unterminated string"},
		{"\"a\nb\"", 1, 1, "line break in a string"},
		{"/* never closed", 1, 1, "unterminated /* comment"},
		{"01", 1, 1, "leading zero"},
		{"0x", 1, 3, "without digits"},
		{"1e", 1, 3, "exponent without digits"},
		{"-", 1, 2, "without digits"},
		{"12abc", 1, 3, "after a number"},
		{"Infinit", 1, 1, "want a number"},
		{`"\1"`, 1, 2, "invalid escape"},
		{`"\x4"`, 1, 2, `\x wants 2 hex digits`},
		{`"\u12"`, 1, 2, `\u wants 4 hex digits`},
		{"1 2", 1, 3, "after the value"},
		{"{\"k\": [1,]]}", 1, 11, "want ',' or '}'"},
		{"\xff", 1, 1, "invalid UTF-8"},
		{"{ok: 1,\n bad: \"\xc3\"}", 2, 8, "invalid UTF-8"},
		{"{1: 2}", 1, 2, "want a key"},
		{"@", 1, 1, "want a value"},
		{strings.Repeat("[", maxDepth+2), 1, maxDepth + 2, "nesting deeper"},
	} {
		_, err := ParseJSON5([]byte(tc.doc))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: %v, want a SyntaxError", tc.doc, err)
			continue
		}
		if se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: %v, want line %d, column %d, %q", tc.doc, err, tc.line, tc.col, tc.msg)
		}
	}
}

// encodeJSON5 writes v back as JSON5 text (for the round trip of the
// fuzz target).
func encodeJSON5(b *strings.Builder, v *Value) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Number:
		b.WriteString(v.Num)
	case String:
		quoteJSON5(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i, e := range v.Arr {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeJSON5(b, e)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Obj {
			if i > 0 {
				b.WriteByte(',')
			}
			quoteJSON5(b, m.Key)
			b.WriteByte(':')
			encodeJSON5(b, m.Value)
		}
		b.WriteByte('}')
	}
}

func quoteJSON5(b *strings.Builder, s string) {
	const hexd = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029 || r == 0x7f:
			b.WriteString(`\u`)
			for sh := 12; sh >= 0; sh -= 4 {
				b.WriteByte(hexd[(r>>sh)&15])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func equalValues(a, b *Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Bool:
		return a.Bool == b.Bool
	case Number:
		return a.Num == b.Num
	case String:
		return a.Str == b.Str
	case Array:
		if len(a.Arr) != len(b.Arr) {
			return false
		}
		for i := range a.Arr {
			if !equalValues(a.Arr[i], b.Arr[i]) {
				return false
			}
		}
	case Object:
		if len(a.Obj) != len(b.Obj) {
			return false
		}
		for i := range a.Obj {
			if a.Obj[i].Key != b.Obj[i].Key || !equalValues(a.Obj[i].Value, b.Obj[i].Value) {
				return false
			}
		}
	}
	return true
}

func FuzzParseJSON5(f *testing.F) {
	f.Add(`{mode: "peer", connect: {endpoints: ["tcp/localhost:7447"]}}`)
	f.Add(`// c
	{a: [1, .5, 0x10, -Infinity, NaN, 'x\'y', "\u00e9\
z"], /* b */ b: null, c: {d: true,},}`)
	f.Add(`[`)
	f.Add(`"\ud800"`)
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := ParseJSON5([]byte(doc))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("%q: error %v without a position", doc, err)
			}
			return
		}
		if !utf8.ValidString(doc) {
			t.Fatalf("%q: invalid UTF-8 accepted", doc)
		}
		var b strings.Builder
		encodeJSON5(&b, v)
		v2, err := ParseJSON5([]byte(b.String()))
		if err != nil {
			t.Fatalf("%q: re-encoded %q does not parse: %v", doc, b.String(), err)
		}
		if !equalValues(v, v2) {
			t.Fatalf("%q: round trip differs: %q", doc, b.String())
		}
	})
}
