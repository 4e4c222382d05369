package rosargs

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds newline-separated argument lists to Parse and exercises
// the result; params files read the fuzz input itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--ros-args\n-p\na:=1\n--\nx",
		"a\n--ros-args\n-r\ntalker:chatter:=~/x\n-r\n__ns:=/n\n-r\n__node:=m",
		"--ros-args\n--params-file\nf\n-p\n/**:b:=[1,2]\n--log-level\nrcl:=WARN",
		"--ros-args\n-r\nrostopic://{node}/a:=b\n-e\n/enc\n--disable-rosout-logs",
		"--ros-args\n-p",
		"--ros-args\n-p\nx:=[1, 2.5]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\n")
		a, err := Parse(args)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Reason == "" {
				t.Fatalf("error %v is not a useful *ArgError", err)
			}
			return
		}
		if len(a.Unparsed) > len(args) {
			t.Fatal("more unparsed than given")
		}
		for _, p := range a.Params {
			if !p.Value.IsSet() || ValidateParamName(p.Name) != nil {
				t.Fatalf("bad param rule %+v", p)
			}
		}
		name := a.NodeName("node")
		if ValidateNodeName(name) != nil {
			t.Fatalf("bad remapped node name %q", name)
		}
		ns := a.NamespaceFor("node", "/")
		if ValidateNamespace(ns) != nil {
			t.Fatalf("bad remapped namespace %q", ns)
		}
		for _, r := range a.Remaps {
			if fq, err := ExpandTopicName(r.From, name, ns); err == nil {
				if out, err := a.RemapTopic(fq, name, ns); err == nil && ValidateFullTopicName(out) != nil {
					t.Fatalf("remap produced invalid %q", out)
				}
				_, _ = a.RemapService(fq, name, ns)
			}
		}
		_, _ = a.ParamOverrides("/"+name, func(string) ([]byte, error) { return []byte(s), nil })
	})
}
