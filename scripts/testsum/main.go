// Command testsum reads `go test -json` events on stdin and prints what a
// person needs from them: go test's own closing lines per package ("ok",
// "FAIL", "?"), the output of every failed test, and a count of the tests
// that ran, passed, failed and skipped, with the skipped ones listed.
//
//	go test -json ./... | go run ./scripts/testsum [-skipped FILE] [-label TEXT]
//
// -skipped FILE writes one "package<TAB>test" line per skipped top-level
// test (for a second run without the race detector). The exit status is 0;
// the caller takes go test's own status (set -o pipefail).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

type summary struct {
	run, passed, failed, skipped int
	skips                        []key
	reasons                      map[key]string
}

func main() {
	skippedFile := flag.String("skipped", "", "write the skipped top-level tests here")
	label := flag.String("label", "tests", "what the counted line calls the tests")
	flag.Parse()
	s := summarize(os.Stdin, os.Stdout)
	fmt.Printf("%s: %d run, %d passed, %d failed, %d skipped\n", *label, s.run, s.passed, s.failed, s.skipped)
	for _, k := range s.skips {
		fmt.Printf("  skipped: %s %s: %s\n", k.pkg, k.test, s.reasons[k])
	}
	if *skippedFile != "" {
		var b strings.Builder
		seen := map[key]bool{}
		for _, k := range s.skips {
			top := key{k.pkg, strings.SplitN(k.test, "/", 2)[0]}
			if !seen[top] {
				seen[top] = true
				fmt.Fprintf(&b, "%s\t%s\n", top.pkg, top.test)
			}
		}
		if err := os.WriteFile(*skippedFile, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(1)
		}
	}
}

// summarize copies package-level output (the closing lines, build errors)
// to out, and a failed test's output when it fails.
func summarize(in io.Reader, out io.Writer) summary {
	s := summary{reasons: map[key]string{}}
	buf := map[key][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // not an event: go test's own words (a build error)
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			if e.Test == "" {
				if e.Output != "PASS\n" { // the "ok" line follows
					fmt.Fprint(out, e.Output)
				}
			} else {
				buf[k] = append(buf[k], e.Output)
			}
		case "run":
			s.run++
		case "pass":
			if e.Test != "" {
				s.passed++
				delete(buf, k)
			}
		case "fail":
			if e.Test != "" {
				s.failed++
				fmt.Fprint(out, strings.Join(buf[k], ""))
				delete(buf, k)
			}
		case "skip":
			if e.Test != "" {
				s.skipped++
				s.skips = append(s.skips, k)
				s.reasons[k] = skipReason(buf[k])
				delete(buf, k)
			}
		}
	}
	sort.Slice(s.skips, func(i, j int) bool {
		a, b := s.skips[i], s.skips[j]
		return a.pkg < b.pkg || a.pkg == b.pkg && a.test < b.test
	})
	return s
}

// skipReason is the last line a skipped test logged before "--- SKIP".
func skipReason(lines []string) string {
	reason := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- SKIP") {
			reason = l
		}
	}
	return reason
}
