package access

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"*", "rt/clock", true},
		{"*", "", true},
		{"rt/*", "rt/a/b/c", true},
		{"rt/clock", "rt/clock", true},
		{"rt/clock", "rt/clocks", false},
		{"rt/c?ock", "rt/clock", true},
		{"rt/c?ock", "rt/cock", false},
		{"rq/*Request", "rq/add_two_intsRequest", true},
		{"rq/*Request", "rr/add_two_intsReply", false},
		{"*/_action/*", "rt/fib/_action/status", true},
		{"[a-c]x", "bx", true},
		{"[!a-c]x", "bx", false},
		{"[!a-c]x", "dx", true},
		{"[abc", "a", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"", "", true},
		{"", "x", false},
		{"**", "anything/at/all", true},
	}
	for _, c := range cases {
		if got := Match(c.pat, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("rt/*", "rt/clock")
	f.Add("[!a-z]*?", "Xyz")
	f.Fuzz(func(t *testing.T, pat, name string) {
		if len(pat) > 64 || len(name) > 256 {
			return
		}
		_ = Match(pat, name)
		if !Match(name, name) && !containsMeta(name) {
			t.Fatalf("a literal %q does not match itself", name)
		}
	})
}

func containsMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[':
			return true
		}
	}
	return false
}
