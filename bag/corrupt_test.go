package bag

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
)

// tryRead opens and reads a bag the way bag info and bag play do. It
// returns the messages read and the first error; a panic fails the test.
func tryRead(t *testing.T, path string) (int, error) {
	t.Helper()
	b, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	if _, err := b.Stats(); err != nil {
		// Reading goes on: it must stop cleanly at the same place.
		_ = err
	}
	msgs, err := readAll(t, b, ReadOptions{})
	return len(msgs), err
}

// Every cut of an MCAP file reads what comes before the cut and then
// reports it; nothing panics, and the input is never written.
func TestTruncatedMCAP(t *testing.T) {
	for _, l := range []string{"shared", "zstd", "lz4", "nosummary", "unchunked"} {
		var data []byte
		if l == "shared" {
			var err error
			if data, err = os.ReadFile(filepath.Join(testBags, "talker_mcap", "talker.mcap")); err != nil {
				t.Fatal(err)
			}
		} else {
			p := filepath.Join(t.TempDir(), "x.mcap")
			for _, lay := range mcapLayouts {
				if lay.name == l {
					opts := lay.opts
					writeMCAP(t, p, talkerMessages(t), &opts)
				}
			}
			var err error
			if data, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "cut.mcap")
		prev := -1
		for cut := 0; cut < len(data); cut += 1 + len(data)/100 {
			if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			n, err := tryRead(t, p)
			// Without an error only when the cut is past the data
			// section (in the summary): every message was there.
			if err == nil && n != 20 {
				t.Fatalf("%s cut at %d of %d: read %d messages and no error", l, cut, len(data), n)
			}
			if n > 20 {
				t.Fatalf("%s cut at %d: %d messages", l, cut, n)
			}
			if l != "shared" && n < prev-20 {
				t.Fatalf("%s cut at %d: %d messages, fewer than before", l, cut, n)
			}
			prev = n
			after := snapshot(t, dir)
			if len(after) != 1 || after[p] != before[p] {
				t.Fatalf("%s cut at %d: reading wrote", l, cut)
			}
		}
		// The last cut that removes only the footer still gives every
		// message whose chunk is whole.
		if err := os.WriteFile(p, data[:len(data)-1], 0o644); err != nil {
			t.Fatal(err)
		}
		if n, _ := tryRead(t, p); n != 20 {
			t.Fatalf("%s without its last byte: %d messages", l, n)
		}
	}
}

// A truncated .db3 gives an error or fewer messages, never a panic or a
// write.
func TestTruncatedSQLite(t *testing.T) {
	for _, src := range []string{"talker_sqlite3/talker.db3", "walker_galactic_clock_sqlite3/rosbag_recording_0.db3"} {
		data, err := os.ReadFile(filepath.Join(testBags, src))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "cut.db3")
		for _, cut := range []int{0, 10, 100, 1024, 4096, 4097, len(data) / 3, len(data) / 2, len(data) - 4096, len(data) - 1} {
			if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			n, err := tryRead(t, p)
			if err == nil && n == 0 && cut > 4096 {
				t.Logf("%s cut at %d: no messages, no error", src, cut)
			}
			after := snapshot(t, dir)
			if len(after) != 1 || after[p] != before[p] {
				t.Fatalf("%s cut at %d: reading wrote (%d files)", src, cut, len(after))
			}
			if cut < 100 && err == nil {
				t.Fatalf("%s cut at %d: no error", src, cut)
			}
		}
	}
}

// A chunk whose CRC does not match its data is reported as such, by the
// sequential and by the indexed reader.
func TestMCAPChunkCRC(t *testing.T) {
	for _, l := range []string{"zstd", "nosummary"} {
		p := filepath.Join(t.TempDir(), "x.mcap")
		for _, lay := range mcapLayouts {
			if lay.name == l {
				opts := lay.opts
				writeMCAP(t, p, talkerMessages(t), &opts)
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Corrupt the CRC of the second chunk: records are opcode, u64
		// length; a chunk's body starts with start, end, size (u64), crc.
		off, chunks := 8, 0
		for off+9 <= len(data) {
			op, l := data[off], binary.LittleEndian.Uint64(data[off+1:])
			if op == opChunk {
				chunks++
				if chunks == 2 {
					data[off+9+24] ^= 0xff
					break
				}
			}
			off += 9 + int(l)
		}
		if chunks != 2 {
			t.Fatalf("%s: %d chunks", l, chunks)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := tryRead(t, p)
		if err == nil || !strings.Contains(err.Error(), "CRC") {
			t.Fatalf("%s: %d messages, error %v; want a CRC error", l, n, err)
		}
		if n == 0 || n >= 20 {
			t.Fatalf("%s: %d messages before the bad chunk", l, n)
		}
	}
}

// A metadata.yaml that lists a file that is not there is an error naming
// it; one that is wrong about counts and times does not change what is
// read (the storage is the truth).
func TestLyingMetadata(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join(testBags, "talker_sqlite3"), dir)
	meta, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	missing := bytes.Replace(meta, []byte("- talker.db3"), []byte("- talker.db3\n    - talker_1.db3"), 1)
	os.WriteFile(filepath.Join(dir, "metadata.yaml"), missing, 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "talker_1.db3") {
		t.Fatalf("missing file: %v", err)
	}
	lying := bytes.Replace(meta, []byte("message_count: 10"), []byte("message_count: 99999"), -1)
	lying = bytes.Replace(lying, []byte("message_count: 20"), []byte("message_count: 3"), 1)
	lying = bytes.Replace(lying, []byte("nanoseconds: 4531096768"), []byte("nanoseconds: 1"), 1)
	os.WriteFile(filepath.Join(dir, "metadata.yaml"), lying, 0o644)
	b := openBag(t, dir)
	st, err := b.Stats()
	if err != nil || st.MessageCount != 20 || st.Duration() != 4531096768 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	if b.Metadata().MessageCount != 3 {
		t.Fatalf("metadata not as written: %d", b.Metadata().MessageCount)
	}
	if msgs, err := readAll(t, b, ReadOptions{}); err != nil || len(msgs) != 20 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	// A metadata.yaml that is not YAML, or not rosbag2's: a clear error.
	for _, bad := range []string{"{{{", "hello: world\n", "rosbag2_bagfile_information:\n  duration:\n    nanoseconds: -5\n  version: 4\n"} {
		os.WriteFile(filepath.Join(dir, "metadata.yaml"), []byte(bad), 0o644)
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "metadata") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	// A storage file that is neither format.
	os.WriteFile(filepath.Join(dir, "metadata.yaml"), meta, 0o644)
	os.WriteFile(filepath.Join(dir, "talker.db3"), []byte("not a database at all"), 0o644)
	if _, err := Open(dir); err == nil {
		t.Fatal("garbage storage file opened")
	}
}

// An empty bag (declared topics, no messages) reads cleanly: no messages,
// no error; so do an MCAP file with no messages and an empty split file.
func TestEmptyBags(t *testing.T) {
	n, err := tryRead(t, filepath.Join(testBags, "empty_bag_sqlite3"))
	if err != nil || n != 0 {
		t.Fatalf("empty_bag: %d messages, %v", n, err)
	}
	b := openBag(t, filepath.Join(testBags, "empty_bag_sqlite3"))
	st, err := b.Stats()
	if err != nil || st.MessageCount != 0 || st.Start != 0 || len(st.Topics) != 2 {
		t.Fatalf("empty_bag stats %+v, %v", st, err)
	}
	p := filepath.Join(t.TempDir(), "empty.mcap")
	f, _ := os.Create(p)
	w, _ := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true, Compression: mcap.CompressionZSTD})
	w.WriteHeader(&mcap.Header{Profile: "ros2"})
	w.Close()
	f.Close()
	if n, err := tryRead(t, p); err != nil || n != 0 {
		t.Fatalf("empty MCAP: %d, %v", n, err)
	}
	// Zero-byte files are not bags.
	z := filepath.Join(t.TempDir(), "zero.mcap")
	os.WriteFile(z, nil, 0o644)
	if _, err := Open(z); err == nil {
		t.Fatal("zero-byte file opened")
	}
}
