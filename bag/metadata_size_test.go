package bag

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigMetadata writes a valid metadata.yaml, as rosbag2 (yaml-cpp) lays it
// out, listing n topics and one storage file, and returns its text.
func bigMetadata(n int) []byte {
	var b strings.Builder
	b.WriteString("rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: sqlite3\n")
	b.WriteString("  duration:\n    nanoseconds: 10\n  starting_time:\n    nanoseconds_since_epoch: 5\n")
	b.WriteString("  message_count: 0\n  topics_with_message_count:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - topic_metadata:\n        name: /t%d\n        type: std_msgs/msg/String\n"+
			"        serialization_format: cdr\n        offered_qos_profiles: \"\"\n      message_count: %d\n", i, i%7)
	}
	b.WriteString("  compression_format: \"\"\n  compression_mode: \"\"\n  relative_file_paths:\n    - b_0.db3\n")
	b.WriteString("  files:\n    - path: b_0.db3\n      starting_time:\n        nanoseconds_since_epoch: 5\n")
	b.WriteString("      duration:\n        nanoseconds: 10\n      message_count: 0\n")
	return []byte(b.String())
}

// peakHeap runs f and returns the largest heap (live and not yet collected)
// seen above what it was before, sampling every millisecond, with the
// collector made eager so that the figure is close to what f keeps alive.
func peakHeap(f func()) (peak uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
				peak = ms.HeapAlloc - base
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak
}

// A big but valid metadata.yaml (many topics, under the size limit) is read
// in time and memory bounded by its size: at most 10x the file at the peak
// (the whole-document YAML tree took ~38x: 2.26 GB for 59 MB).
func TestMetadataMemoryBoundedBySize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and parses a 10 MB document")
	}
	data := bigMetadata(85_000)
	if len(data) < 10<<20 || len(data) > maxMetadataSize {
		t.Fatalf("document of %d bytes, want 10 MiB to the limit", len(data))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b_0.db3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var m *Metadata
	var err error
	start := time.Now()
	peak := peakHeap(func() { m, err = readMetadataFile(filepath.Join(dir, MetadataFile)) })
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Topics) != 85_000 || m.Topics[84_999].Topic.Name != "/t84999" || m.Topics[13].MessageCount != 6 ||
		len(m.Files) != 1 || m.Files[0].Duration != 10 || m.RelativeFilePaths[0] != "b_0.db3" {
		t.Fatalf("parsed %d topics, files %+v, paths %v", len(m.Topics), m.Files, m.RelativeFilePaths)
	}
	t.Logf("%d bytes: peak heap %d bytes (%.1fx), %v", len(data), peak, float64(peak)/float64(len(data)), took)
	if peak > 10*uint64(len(data)) {
		t.Errorf("peak heap %d bytes for a %d-byte metadata.yaml: over 10x", peak, len(data))
	}
	// 44 s for a 59 MB document before; under -race, on a machine shared
	// with the other packages' tests, the parse alone takes 20 s or more.
	limit := 20 * time.Second
	if raceDetector {
		limit = 120 * time.Second
	}
	if took > limit {
		t.Errorf("took %v, over %v", took, limit)
	}
}

// A metadata.yaml over the limit is refused before it is read: a sparse
// 1.5 GB file made the reader hold 1.55 GB before refusing it.
func TestMetadataOverLimitRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, MetadataFile)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1536 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "b_0.db3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	peak := peakHeap(func() { _, err = Open(dir) })
	if err == nil {
		t.Fatal("a 1.5 GB metadata.yaml opened")
	}
	if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("error %q does not name the file and the limit", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusal took %v", took)
	}
	if peak > 4<<20 {
		t.Errorf("peak heap %d bytes to refuse", peak)
	}
}

// The limit holds on what is read, not only on what the size says (a file
// growing while it is read, or a special file).
func TestMetadataReadThroughLimit(t *testing.T) {
	r := strings.NewReader("version: 5\n" + strings.Repeat("#", maxMetadataSize))
	_, err := readMetadata(r, "x/metadata.yaml")
	if err == nil || !strings.Contains(err.Error(), "x/metadata.yaml") || !strings.Contains(err.Error(), "16 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// The piecewise reader of large documents gives what the whole-document
// parse gives, on every metadata.yaml of the test bags and on layouts other
// writers use.
func TestMetadataPiecewiseSameAsWhole(t *testing.T) {
	docs := map[string][]byte{"big": bigMetadata(50)}
	for _, mb := range manifest {
		if data, err := os.ReadFile(filepath.Join(testBags, mb.dir, MetadataFile)); err == nil {
			docs[mb.dir] = data
		}
	}
	// Sequences at the key's indentation (as PyYAML writes), no root key,
	// comments and blank lines between items, a v9 QoS list.
	docs["pyyaml"] = []byte("version: 9\nstorage_identifier: mcap\nrelative_file_paths:\n- a.mcap\n\n- 'b.mcap' # two\n" +
		"topics_with_message_count:\n- topic_metadata:\n    name: /x\n    type: a/msg/B\n    offered_qos_profiles:\n" +
		"    - history: keep_last\n      depth: 3\n      deadline: {sec: 1, nsec: 2}\n  message_count: 4\n# c\n" +
		"- topic_metadata: {name: /y, type: a/msg/C, offered_qos_profiles: []}\n  message_count: 1\n" +
		"files:\n- {path: a.mcap, message_count: 2}\n- path: b.mcap\n  duration: {nanoseconds: 3}\ncustom_data:\n  k: v\n")
	old := piecewiseMin
	defer func() { piecewiseMin = old }()
	for name, data := range docs {
		piecewiseMin = 1 << 30
		whole, werr := ParseMetadata(data)
		piecewiseMin = 0
		piece, perr := ParseMetadata(data)
		if (werr == nil) != (perr == nil) || !reflect.DeepEqual(whole, piece) {
			t.Errorf("%s: whole %+v (%v), piecewise %+v (%v)", name, whole, werr, piece, perr)
		}
	}
}
