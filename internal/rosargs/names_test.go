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
