package bag

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// testBags is the project's copy of the shared test bags.
const testBags = "../testdata/bags"

// bagPath is where a MANIFEST bag opens: its directory, or the bare file.
func bagPath(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(testBags, dir)
	ents, err := os.ReadDir(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) == 1 { // a bare file
		return filepath.Join(p, ents[0].Name())
	}
	return p
}

func openBag(t testing.TB, path string) *Bag {
	t.Helper()
	b, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// readAll reads every message, checking the time order.
func readAll(t testing.TB, b *Bag, opts ReadOptions) ([]Message, error) {
	t.Helper()
	r, err := b.Messages(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Message
	for {
		m, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(out) > 0 && m.Time < out[len(out)-1].Time {
			t.Fatalf("message %d at %d comes after one at %d", len(out), m.Time, out[len(out)-1].Time)
		}
		out = append(out, m)
	}
}

// Stats match the MANIFEST exactly for every shared bag.
func TestStatsMatchManifest(t *testing.T) {
	for _, mb := range manifest {
		t.Run(mb.dir, func(t *testing.T) {
			b := openBag(t, bagPath(t, mb.dir))
			st, err := b.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.MessageCount != mb.count || st.Start != mb.first || st.End != mb.last {
				t.Errorf("stats: %d messages %d..%d, want %d %d..%d", st.MessageCount, st.Start, st.End, mb.count, mb.first, mb.last)
			}
			got := map[string]TopicStats{}
			for _, ts := range st.Topics {
				got[ts.Topic.Name] = ts
			}
			if len(st.Topics) != len(mb.topics) {
				t.Errorf("%d topics, want %d", len(st.Topics), len(mb.topics))
			}
			for _, mt := range mb.topics {
				ts, ok := got[mt.name]
				if !ok {
					t.Errorf("topic %s missing", mt.name)
					continue
				}
				if ts.Topic.Type != mt.typ || ts.MessageCount != mt.count {
					t.Errorf("topic %s: %s %d, want %s %d", mt.name, ts.Topic.Type, ts.MessageCount, mt.typ, mt.count)
				}
				if ts.Topic.SerializationFormat != "cdr" {
					t.Errorf("topic %s: serialization format %q", mt.name, ts.Topic.SerializationFormat)
				}
			}
		})
	}
}

// Every message streams once, in time order, with each topic's first and
// last times as the MANIFEST has them.
func TestMessagesMatchManifest(t *testing.T) {
	for _, mb := range manifest {
		t.Run(mb.dir, func(t *testing.T) {
			b := openBag(t, bagPath(t, mb.dir))
			msgs, err := readAll(t, b, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(msgs)) != mb.count {
				t.Fatalf("%d messages, want %d", len(msgs), mb.count)
			}
			type span struct {
				n           uint64
				first, last int64
			}
			got := map[string]*span{}
			for _, m := range msgs {
				if len(m.Data) < 4 {
					t.Fatalf("message on %s of %d bytes", m.Topic.Name, len(m.Data))
				}
				s := got[m.Topic.Name]
				if s == nil {
					s = &span{first: m.Time}
					got[m.Topic.Name] = s
				}
				s.n++
				s.last = m.Time
			}
			for _, mt := range mb.topics {
				s := got[mt.name]
				if s == nil {
					s = &span{}
				}
				if s.n != mt.count || s.first != mt.first || s.last != mt.last {
					t.Errorf("%s: %d messages %d..%d, want %d %d..%d", mt.name, s.n, s.first, s.last, mt.count, mt.first, mt.last)
				}
			}
		})
	}
}

// The sqlite and MCAP twins give the same messages.
func TestTwinsAgree(t *testing.T) {
	for _, pair := range [][2]string{{"talker_sqlite3", "talker_mcap"}, {"cdr_test_iron_sqlite3", "cdr_test_iron_mcap"}} {
		a, err := readAll(t, openBag(t, bagPath(t, pair[0])), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := readAll(t, openBag(t, bagPath(t, pair[1])), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("%v: %d vs %d messages", pair, len(a), len(b))
		}
		for i := range a {
			if a[i].Time != b[i].Time || a[i].Topic.Name != b[i].Topic.Name || string(a[i].Data) != string(b[i].Data) {
				t.Fatalf("%v: message %d differs", pair, i)
			}
		}
	}
}

func TestReadOptions(t *testing.T) {
	b := openBag(t, bagPath(t, "walker_galactic_clock_sqlite3"))
	msgs, err := readAll(t, b, ReadOptions{Topics: func(tp *Topic) bool { return tp.Name == "/clock" }, Start: 1670475170000000000})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || len(msgs) >= 277 {
		t.Fatalf("%d /clock messages after the start", len(msgs))
	}
	for _, m := range msgs {
		if m.Topic.Name != "/clock" || m.Time < 1670475170000000000 {
			t.Fatalf("unwanted message on %s at %d", m.Topic.Name, m.Time)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, p := range []string{filepath.Join(testBags, "nonexistent"), t.TempDir()} {
		if _, err := Open(p); err == nil {
			t.Errorf("Open(%s) succeeded", p)
		}
	}
	_, err := Open(filepath.Join(testBags, "nonexistent"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v is not ErrNotExist", err)
	}
}
