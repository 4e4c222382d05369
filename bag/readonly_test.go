package bag

import (
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type fileState struct {
	sum   [32]byte
	mtime time.Time
	size  int64
}

// snapshot records every file under dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fileState{sha256.Sum256(data), st.ModTime(), st.Size()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies src into dst with writable files and directories, so
// that a reader that wanted to write (a -wal or -shm beside a WAL-mode
// database, a journal) could.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, in); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Reading a bag (stats, every message) leaves its files byte for byte and
// mtime for mtime as they were, and creates no file (no -wal, -shm or
// journal beside a WAL-mode database).
func TestReadingNeverWrites(t *testing.T) {
	root := t.TempDir()
	copyTree(t, testBags, root)
	// Back-date the files, so that a write within the test's second shows.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	before := snapshot(t, root)
	for _, mb := range manifest {
		dir := filepath.Join(root, mb.dir)
		p := dir
		if ents, _ := os.ReadDir(dir); len(ents) == 1 {
			p = filepath.Join(dir, ents[0].Name())
		}
		b, err := Open(p)
		if err != nil {
			t.Fatalf("%s: %v", mb.dir, err)
		}
		if _, err := b.Stats(); err != nil {
			t.Fatalf("%s: %v", mb.dir, err)
		}
		if _, err := readAll(t, b, ReadOptions{}); err != nil {
			t.Fatalf("%s: %v", mb.dir, err)
		}
		b.Close()
	}
	after := snapshot(t, root)
	for p, s := range after {
		b, ok := before[p]
		switch {
		case !ok:
			t.Errorf("reading created %s", p)
		case b != s:
			t.Errorf("reading changed %s", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("reading removed %s", p)
		}
	}
	// The WAL-mode bags are among those read.
	for _, p := range []string{"talker_sqlite3/talker.db3", "empty_bag_sqlite3/empty_bag_0.db3"} {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if data[18] != 2 || data[19] != 2 {
			t.Errorf("%s is not in WAL mode (bytes 18-19: %d %d)", p, data[18], data[19])
		}
	}
}
