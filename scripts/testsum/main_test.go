package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"run","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"run","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: needs a peer\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"q","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`# p [build failed]`,
	}, "\n")
	var out bytes.Buffer
	s := summarize(strings.NewReader(in), &out)
	if s.run != 3 || s.passed != 1 || s.failed != 1 || s.skipped != 1 {
		t.Fatalf("counts %+v", s)
	}
	if len(s.skips) != 1 || s.skips[0] != (key{"p", "TestC"}) || s.reasons[s.skips[0]] != "c_test.go:3: needs a peer" {
		t.Fatalf("skips %v %v", s.skips, s.reasons)
	}
	want := "    b_test.go:9: boom\nFAIL\tp\t0.01s\n# p [build failed]\n"
	if out.String() != want {
		t.Fatalf("printed %q, want %q (the failed test's output, go test's own lines)", out.String(), want)
	}
}
