package param

import (
	"strings"
	"testing"
)

func FuzzLoadYAML(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("/**:\n  ros__parameters:\n    a: [1, 2]\n"))
	f.Add([]byte("n:\n  ros__parameters:\n    a: &x 1\n    b: *x\n"))
	f.Add([]byte("ns:\n  node:\n    ros__parameters: {a: {b: {c: 0x10}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := LoadYAML(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		for _, e := range file.Entries {
			if !strings.HasPrefix(e.Pattern, "/") {
				t.Fatalf("pattern %q lacks '/'", e.Pattern)
			}
			if len(e.Names) != len(e.Values) {
				t.Fatalf("names/values mismatch in %q", e.Pattern)
			}
			for _, n := range e.Names {
				v := e.Values[n]
				if !v.IsSet() || !v.Type().Valid() {
					t.Fatalf("%s: bad value %v", n, v)
				}
				_ = v.String()
			}
			_ = file.ForNode(e.Pattern)
		}
		_ = file.ForNode("/a/b")
	})
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"true", "3", "1.5", `"x"`, "[1,2]", "['a','b']", "0x1F", ".inf", "[1, 2.5]", "{a: 1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c := ParseCLIValue(s); !c.IsSet() {
			t.Fatalf("ParseCLIValue(%q) returned NOT_SET", s)
		}
		v, err := ParseValue(s)
		if err != nil {
			return
		}
		if !v.IsSet() {
			t.Fatalf("ParseValue(%q) returned NOT_SET without error", s)
		}
		_ = v.String()
	})
}
