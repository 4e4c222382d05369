package keyexpr

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	valid := []string{
		"a", "a/b", "*", "**", "a/*", "a/**", "*/**", "**/a", "a/**/b", "ab$*", "$*ab", "a$*b$*c",
		"@ros2_lv/0/**", "0/clock/rosgraph_msgs::msg::dds_::Clock_/RIHS01_692f7a66",
		"0/chatter/std_msgs::msg::dds_::String_/*", "a/*/*/b", "x/a$*d$*e", "demo/%/x", "a b", "é/ü",
	}
	for _, s := range valid {
		if err := Validate(s); err != nil {
			t.Errorf("Validate(%q) = %v", s, err)
		}
	}
	invalid := map[string]string{
		"":            "empty",
		"/a":          "empty",
		"a/":          "empty",
		"a//b":        "empty",
		"a/b/":        "empty",
		"a*":          "'*'",
		"*a":          "'*'",
		"a/***":       "'*'",
		"**a":         "'*'",
		"**/*":        "'**/*'",
		"a/**/*/b":    "'**/*'",
		"**/**":       "'**/**'",
		"a/**/**/b":   "'**/**'",
		"**/*a":       "'*'",
		"$":           "'$'",
		"a$b":         "'$'",
		"$*":          "lone",
		"a/$*":        "lone",
		"$*/a":        "lone",
		"a$*$*":       "after '$*'",
		"a#b":         "forbidden",
		"a?b":         "forbidden",
		"a/b/*$*":     "'*'",
		"a/b/$**":     "'*'",
		"a/b/**$*":    "'*'",
		"a/b/*\x00":   "'*'",
		"hello/$*/ab": "lone",
	}
	for s, why := range invalid {
		err := Validate(s)
		if err == nil {
			t.Errorf("Validate(%q) accepted", s)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), why) {
			t.Errorf("Validate(%q) = %v, want an ErrInvalid about %s", s, err, why)
		}
	}
}

// The intersection and inclusion vectors of zenoh's own key expression
// tests (commons/zenoh-keyexpr/src/key_expr/tests.rs, zenoh 1.7.2).
var intersections = []struct {
	a, b string
	want bool
}{
	{"a", "a", true},
	{"a/b", "a/b", true},
	{"*", "abc", true},
	{"*", "xxx", true},
	{"ab$*", "abcd", true},
	{"ab$*d", "abcd", true},
	{"ab$*", "ab", true},
	{"ab/*", "ab", false},
	{"a/*/c/*/e", "a/b/c/d/e", true},
	{"a/$*b/c/$*d/e", "a/xb/c/xd/e", true},
	{"a/*/c/*/e", "a/c/e", false},
	{"a/*/c/*/e", "a/b/c/d/x/e", false},
	{"ab$*cd", "abxxcxxd", false},
	{"ab$*cd", "abxxcxxcd", true},
	{"ab$*cd", "abxxcxxcdx", false},
	{"**", "abc", true},
	{"**", "a/b/c", true},
	{"ab/**", "ab", true},
	{"**/xyz", "a/b/xyz/d/e/f/xyz", true},
	{"**/xyz$*xyz", "a/b/xyz/d/e/f/xyz", false},
	{"**/xyz$*xyz", "a/b/xyzdefxyz", true},
	{"a/**/c/**/e", "a/b/b/b/c/d/d/d/e", true},
	{"a/**/c/**/e", "a/c/e", true},
	{"a/**/c/*/e/*", "a/b/b/b/c/d/d/c/d/e/f", true},
	{"a/**/c/*/e/*", "a/b/b/b/c/d/d/c/d/d/e/f", false},
	{"x/abc", "x/abc", true},
	{"x/abc", "abc", false},
	{"x/*", "x/abc", true},
	{"x/*", "abc", false},
	{"*", "x/abc", false},
	{"x/*", "x/abc$*", true},
	{"x/$*abc", "x/abc$*", true},
	{"x/a$*", "x/abc$*", true},
	{"x/a$*de", "x/abc$*de", true},
	{"x/a$*d$*e", "x/a$*e", true},
	{"x/a$*d$*e", "x/a$*c$*e", true},
	{"x/a$*d$*e", "x/ade", true},
	{"x/c$*", "x/abc$*", false},
	{"x/$*d", "x/$*e", false},
	{"@a", "@a", true},
	{"@a", "@ab", false},
	{"@a", "@a/b", false},
	{"@a", "@a/*", false},
	{"@a", "@a/*/**", false},
	{"@a", "@a$*/**", false},
	{"@a", "@a/**", true},
	{"**/xyz$*xyz", "@a/b/xyzdefxyz", false},
	{"@a/**/c/**/e", "@a/b/b/b/c/d/d/d/e", true},
	{"@a/**/c/**/e", "@a/@b/b/b/c/d/d/d/e", false},
	{"@a/**/@c/**/e", "@a/b/b/b/@c/d/d/d/e", true},
	{"@a/**/e", "@a/b/b/d/d/d/e", true},
	{"@a/**/e", "@a/b/b/b/d/d/d/e", true},
	{"@a/**/e", "@a/b/b/c/d/d/d/e", true},
	{"@a/**/e", "@a/b/b/@c/b/d/d/d/e", false},
	{"@a/*", "@a/@b", false},
	{"@a/**", "@a/@b", false},
	{"@a/**/@b", "@a/@b", true},
	{"@a/@b/**", "@a/@b", true},
	{"@a/**/@c/**/@b", "@a/**/@c/@b", true},
	{"@a/**/@c/**/@b", "@a/@c/**/@b", true},
	{"@a/**/@c/@b", "@a/@c/**/@b", true},
	{"@a/**/@b", "@a/**/@c/**/@b", false},
	{"@a", "**/@a", true},
	// ROS 2 over zenoh: the data keys and liveliness tokens this project uses.
	{"0/chatter/std_msgs::msg::dds_::String_/*", "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66", true},
	{"0/clock/rosgraph_msgs::msg::dds_::Clock_/*", "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66", false},
	{"@ros2_lv/0/**", "@ros2_lv/0/aeed2eeb/0/0/NN/%/%/zlivewatch", true},
	{"@ros2_lv/1/**", "@ros2_lv/0/aeed2eeb/0/0/NN/%/%/zlivewatch", false},
	{"**", "@ros2_lv/0/x", false},
}

var inclusions = []struct {
	a, b string
	want bool
}{
	{"a", "a", true},
	{"a/b", "a/b", true},
	{"*", "abc", true},
	{"*", "xxx", true},
	{"ab$*", "abcd", true},
	{"ab$*d", "abcd", true},
	{"ab$*", "ab", true},
	{"ab/*", "ab", false},
	{"a/*/c/*/e", "a/b/c/d/e", true},
	{"a/$*b/c/$*d/e", "a/xb/c/xd/e", true},
	{"a/*/c/*/e", "a/c/e", false},
	{"a/*/c/*/e", "a/b/c/d/x/e", false},
	{"ab$*cd", "abxxcxxd", false},
	{"ab$*c$*d", "abxxcxxd", true},
	{"ab$*cd", "abxxcxxcd", true},
	{"ab$*cd", "abxxcxxcdx", false},
	{"**", "abc", true},
	{"**", "a/b/c", true},
	{"ab/**", "ab", true},
	{"**/xyz", "a/b/xyz/d/e/f/xyz", true},
	{"**/xyz$*xyz", "a/b/xyz/d/e/f/xyz", false},
	{"**/xyz$*xyz", "a/b/xyzdefxyz", true},
	{"a/**/c/**/e", "a/b/b/b/c/d/d/d/e", true},
	{"a/**/c/**/e", "a/c/e", true},
	{"a/**/c/*/e/*", "a/b/b/b/c/d/d/c/d/e/f", true},
	{"a/**/c/*/e/*", "a/b/b/b/c/d/d/c/d/d/e/f", false},
	{"ab$*cd", "abxxcxxcdx", false},
	{"x/abc", "x/abc", true},
	{"x/abc", "abc", false},
	{"x/*", "x/abc", true},
	{"x/*", "abc", false},
	{"*", "x/abc", false},
	{"x/*", "x/abc$*", true},
	{"x/$*abc", "x/abc$*", false},
	{"x/a$*", "x/abc$*", true},
	{"x/abc$*", "x/a$*", false},
	{"x/a$*de", "x/abc$*de", true},
	{"x/a$*e", "x/a$*d$*e", true},
	{"x/a$*d$*e", "x/a$*e", false},
	{"x/a$*d$*e", "x/a$*c$*e", false},
	{"x/a$*d$*e", "x/ade", true},
	{"x/c$*", "x/abc$*", false},
	{"x/$*c$*", "x/abc$*", true},
	{"x/$*d", "x/$*e", false},
	{"@a", "@a", true},
	{"@a", "@ab", false},
	{"@a", "@a/b", false},
	{"@a", "@a/*", false},
	{"@a", "@a/*/**", false},
	{"@a$*/**", "@a", false},
	{"@a", "@a/**", false},
	{"@a/**", "@a", true},
	{"**/xyz$*xyz", "@a/b/xyzdefxyz", false},
	{"@a/**/c/**/e", "@a/b/b/b/c/d/d/d/e", true},
	{"@a/*", "@a/@b", false},
	{"@a/**", "@a/@b", false},
	{"@a/**/@b", "@a/@b", true},
	{"@a/@b/**", "@a/@b", true},
	// and a few of this project's
	{"0/chatter/std_msgs::msg::dds_::String_/*", "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66", true},
	{"@ros2_lv/0/**", "@ros2_lv/0/*/0/0/NN/**", true},
	{"@ros2_lv/0/*/0/0/NN/**", "@ros2_lv/0/**", false},
}

func TestIntersects(t *testing.T) {
	for _, c := range intersections {
		for _, k := range []string{c.a, c.b} {
			if err := Validate(k); err != nil {
				t.Fatalf("vector key %q: %v", k, err)
			}
		}
		if got := Intersects(c.a, c.b); got != c.want {
			t.Errorf("Intersects(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Intersects(c.b, c.a); got != c.want {
			t.Errorf("Intersects(%q, %q) = %v, want %v (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestIncludes(t *testing.T) {
	for _, c := range inclusions {
		if got := Includes(c.a, c.b); got != c.want {
			t.Errorf("Includes(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if c.want && !Intersects(c.a, c.b) {
			t.Errorf("Includes(%q, %q) but they do not intersect", c.a, c.b)
		}
	}
}

// TestPathological: nested '**' and '$*' against long keys stay fast (the
// recursion is memoized).
func TestPathological(t *testing.T) {
	wild := strings.Repeat("**/a/", 40) + "b"
	key := strings.Repeat("a/", 200) + "c"
	dsl := strings.Repeat("a$*", 60) + "b"
	long := strings.Repeat("a", 400)
	start := time.Now()
	if Intersects(wild, key) || Includes(wild, key) || Intersects(dsl, long) || Includes(dsl, long) {
		t.Error("pathological inputs matched")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
