package rosargs

import (
	"strings"
	"testing"
)

func TestValidateNodeName(t *testing.T) {
	for _, ok := range []string{"a", "talker", "_x", "Node_1"} {
		if err := ValidateNodeName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1a", "a-b", "a/b", "a.b", "~", strings.Repeat("a", 256)} {
		if ValidateNodeName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidateNamespace(t *testing.T) {
	for _, ok := range []string{"/", "/a", "/a/b_c", "/_1"} {
		if err := ValidateNamespace(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "/a/", "//a", "/a//b", "/1a", "/a/2b", "/a-b", "/a~", "/" + strings.Repeat("a", 245)} {
		if ValidateNamespace(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidateTopicName(t *testing.T) {
	for _, ok := range []string{"a", "/a", "~", "~/a", "a/b", "{node}", "/{ns}/x", "a_{node}_b", "_a"} {
		if err := ValidateTopicName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, ok := range []string{"a//b", "{}"} { // caught at expansion
		if err := ValidateTopicName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
		if _, err := ExpandTopicName(ok, "n", "/"); err == nil {
			t.Errorf("Expand(%q) accepted", ok)
		}
	}
	for _, bad := range []string{"", "a/", "1a", "/1a", "a/2", "a~", "~a", "/~", "{", "}", "{a", "a}", "{1x}", "{a/b}", "{{a}}", "a b", "a.b", "a-b"} {
		if ValidateTopicName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if ValidateFullTopicName("/") == nil || ValidateFullTopicName("a") == nil || ValidateFullTopicName("/a/b") != nil {
		t.Error("ValidateFullTopicName")
	}
}

func TestExpandTopicName(t *testing.T) {
	tests := []struct {
		name, node, ns, want string
	}{
		{"chatter", "talker", "/", "/chatter"},
		{"chatter", "talker", "/ns", "/ns/chatter"},
		{"/chatter", "talker", "/ns", "/chatter"},
		{"~", "talker", "/ns", "/ns/talker"},
		{"~", "talker", "/", "/talker"},
		{"~/x", "talker", "/ns", "/ns/talker/x"},
		{"~/x", "talker", "/", "/talker/x"},
		{"{node}", "talker", "/ns", "/ns/talker"},
		{"{node}/x", "talker", "/", "/talker/x"},
		{"/{node}/x", "talker", "/ns", "/talker/x"},
		{"{ns}/x", "talker", "/ns", "/ns/x"},
		{"{namespace}/x", "talker", "/a/b", "/a/b/x"},
		{"{ns}/x", "talker", "/", "/x"},
		{"a_{node}_b", "t", "/ns", "/ns/a_t_b"},
		{"x/{node}/{ns}", "t", "/", "/x/t/"}, // invalid result below
	}
	for _, tt := range tests[:len(tests)-1] {
		got, err := ExpandTopicName(tt.name, tt.node, tt.ns)
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q, %q, %q) = %q, %v; want %q", tt.name, tt.node, tt.ns, got, err, tt.want)
		}
	}
	for _, bad := range [][3]string{
		{"{unknown}", "n", "/"},
		{"x/{node}/{ns}", "t", "/"},
		{"a", "1n", "/"},
		{"a", "n", "ns"},
		{"a//b", "n", "/"},
		{"", "n", "/"},
		{"{ns}", "n", "/"},
	} {
		if got, err := ExpandTopicName(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Expand%q = %q, want error", bad, got)
		}
	}
	if NormalizeNamespace("") != "/" || NormalizeNamespace("a") != "/a" || NormalizeNamespace("/b") != "/b" {
		t.Error("NormalizeNamespace")
	}
}

// Names longer than rmw allows are refused with the limit named: a topic
// or service name when it is expanded, a remap target as it is parsed.
func TestNameLengthLimits(t *testing.T) {
	long := strings.Repeat("a", 300)
	if _, err := ExpandTopicName(long, "n", "/"); err == nil || !strings.Contains(err.Error(), "limit of 247") {
		t.Fatalf("300-character topic: %v", err)
	}
	if _, err := ExpandTopicName(strings.Repeat("b", 246), "n", "/"); err != nil {
		t.Fatalf("247 characters fully qualified: %v", err)
	}
	if _, err := ExpandTopicName(strings.Repeat("b", 247), "n", "/"); err == nil {
		t.Fatal("248 characters fully qualified accepted")
	}
	// A relative name under a namespace: the expanded name counts.
	if _, err := ExpandTopicName(strings.Repeat("c", 200), "n", "/"+strings.Repeat("d", 50)); err == nil ||
		!strings.Contains(err.Error(), "252 characters") {
		t.Fatalf("expanded to 252: %v", err)
	}
	for _, rule := range []string{"chatter:=/" + long, "chatter:=" + long} {
		_, err := Parse([]string{"--ros-args", "-r", rule})
		if err == nil || !strings.Contains(err.Error(), "limit of 247") {
			t.Fatalf("-r %.20s...: %v", rule, err)
		}
		if len(err.Error()) > 300 {
			t.Errorf("message repeats the name: %d characters", len(err.Error()))
		}
	}
	if _, err := Parse([]string{"--ros-args", "-r", "chatter:=/" + strings.Repeat("e", 246)}); err != nil {
		t.Fatalf("a 247-character remap target: %v", err)
	}
}
