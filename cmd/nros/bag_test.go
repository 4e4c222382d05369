package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testBags = "../../testdata/bags"

// manifestBag is a bag's section of testdata/bags/MANIFEST.md.
type manifestBag struct {
	dir         string
	total       uint64
	first, last int64
	topics      map[string]manifestTopic
	order       []string
}

type manifestTopic struct {
	typ   string
	count uint64
}

// readManifest parses MANIFEST.md: per bag, the total and time span and
// the per-topic table.
func readManifest(t *testing.T) []manifestBag {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testBags, "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	span := regexp.MustCompile("first `(\\d+)` ns, last `(\\d+)` ns")
	total := regexp.MustCompile(`total (\d+) messages`)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]+)` \\| (\\d+) \\|")
	var out []manifestBag
	for _, sec := range strings.Split(string(data), "\n### `")[1:] {
		mb := manifestBag{dir: sec[:strings.Index(sec, "/`")], topics: map[string]manifestTopic{}}
		if m := span.FindStringSubmatch(sec); m != nil {
			mb.first, _ = strconv.ParseInt(m[1], 10, 64)
			mb.last, _ = strconv.ParseInt(m[2], 10, 64)
		}
		if m := total.FindStringSubmatch(sec); m != nil {
			mb.total, _ = strconv.ParseUint(m[1], 10, 64)
		}
		for _, m := range row.FindAllStringSubmatch(sec, -1) {
			n, _ := strconv.ParseUint(m[3], 10, 64)
			mb.topics[m[1]] = manifestTopic{m[2], n}
			mb.order = append(mb.order, m[1])
		}
		out = append(out, mb)
	}
	if len(out) < 11 {
		t.Fatalf("MANIFEST.md: %d bags parsed", len(out))
	}
	return out
}

// manifestPath is where a MANIFEST bag opens: its directory, or its bare
// file for the *_bare_* bags.
func manifestPath(t *testing.T, dir string) string {
	p := filepath.Join(testBags, dir)
	if strings.Contains(dir, "_bare_") {
		ents, err := os.ReadDir(p)
		if err != nil || len(ents) != 1 {
			t.Fatalf("%s: %v", p, err)
		}
		return filepath.Join(p, ents[0].Name())
	}
	return p
}

// bag info prints the MANIFEST's figures for every shared bag, in the
// format of ros2 bag info.
func TestBagInfoMatchesManifest(t *testing.T) {
	bagInfoLocation = time.UTC
	topicLine := regexp.MustCompile(`(?m)^(?:Topic information: |\s{19})Topic: (\S+) \| Type: (\S+) \| Count: (\d+) \| Serialization Format: cdr$`)
	for _, mb := range readManifest(t) {
		t.Run(mb.dir, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &cliEnv{stdout: &out, stderr: &errb, clock: realClock{}}
			if code := e.bagCmd(context.Background(), []string{"info", manifestPath(t, mb.dir)}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			s := out.String()
			if !strings.Contains(s, fmt.Sprintf("\nMessages:          %d\n", mb.total)) {
				t.Errorf("no 'Messages: %d' in\n%s", mb.total, s)
			}
			if mb.total > 0 {
				for _, want := range []string{
					fmt.Sprintf("Duration:          %ss\n", formatSeconds(mb.last-mb.first)),
					fmt.Sprintf("Start:             %s\n", formatTimePoint(mb.first, time.UTC)),
					fmt.Sprintf("End:               %s\n", formatTimePoint(mb.last, time.UTC)),
				} {
					if !strings.Contains(s, want) {
						t.Errorf("no %q in\n%s", want, s)
					}
				}
			}
			lines := topicLine.FindAllStringSubmatch(s, -1)
			if len(lines) != len(mb.topics) {
				t.Errorf("%d topic lines, want %d:\n%s", len(lines), len(mb.topics), s)
			}
			for _, l := range lines {
				want, ok := mb.topics[l[1]]
				if !ok || want.typ != l[2] || strconv.FormatUint(want.count, 10) != l[3] {
					t.Errorf("line %q: MANIFEST has %+v", l[0], want)
				}
			}
		})
	}
	bagInfoLocation = time.Local
}

func TestBagInfoFormat(t *testing.T) {
	bagInfoLocation = time.UTC
	defer func() { bagInfoLocation = time.Local }()
	var out, errb bytes.Buffer
	e := &cliEnv{stdout: &out, stderr: &errb, clock: realClock{}}
	if code := e.bagCmd(context.Background(), []string{"info", filepath.Join(testBags, "talker_sqlite3")}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := `
Files:             talker.db3
Bag size:          28.0 KiB
Storage id:        sqlite3
Duration:          4.531096768s
Start:             Apr  2 2020 22:23:55.112411371 (1585866235.112411371)
End:               Apr  2 2020 22:23:59.643508139 (1585866239.643508139)
Messages:          20
Topic information: Topic: /topic | Type: std_msgs/msg/String | Count: 10 | Serialization Format: cdr
                   Topic: /rosout | Type: rcl_interfaces/msg/Log | Count: 10 | Serialization Format: cdr
                   Topic: /parameter_events | Type: rcl_interfaces/msg/ParameterEvent | Count: 0 | Serialization Format: cdr
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	if errb.Len() != 0 {
		t.Fatalf("stderr: %s", errb.String())
	}
	// A metadata.yaml that is wrong about time gets a note.
	out.Reset()
	if code := e.bagCmd(context.Background(), []string{"info", filepath.Join(testBags, "wbag_split_sqlite3")}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "starting_time 2623 (first message at 1000)") {
		t.Fatalf("no note on the wrong starting_time: %q", errb.String())
	}
}

func TestBagBadArguments(t *testing.T) {
	for _, args := range [][]string{{}, {"frob"}, {"info"}, {"info", "a", "b"}} {
		var out, errb bytes.Buffer
		e := &cliEnv{stdout: &out, stderr: &errb, clock: realClock{}}
		if code := e.bagCmd(context.Background(), args); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	var out, errb bytes.Buffer
	e := &cliEnv{stdout: &out, stderr: &errb, clock: realClock{}}
	if code := e.bagCmd(context.Background(), []string{"info", "/nonexistent/bag"}); code != 1 || errb.Len() == 0 {
		t.Errorf("missing bag: exit %d, stderr %q", code, errb.String())
	}
}
