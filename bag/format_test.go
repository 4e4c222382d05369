package bag

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
)

// sameMessages fails unless a and b hold the same messages in the same order.
func sameMessages(t *testing.T, what string, a, b []Message) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d messages, want %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Time != b[i].Time || a[i].Topic.Name != b[i].Topic.Name || a[i].Topic.Type != b[i].Topic.Type || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("%s: message %d differs: %s@%d vs %s@%d", what, i, a[i].Topic.Name, a[i].Time, b[i].Topic.Name, b[i].Time)
		}
	}
}

func zstdBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

func talkerMessages(t *testing.T) []Message {
	msgs, err := readAll(t, openBag(t, filepath.Join(testBags, "talker_sqlite3")), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// metadataWith rewrites a metadata.yaml's file list and compression.
func metadataWith(t *testing.T, src string, files []string, format, mode string) []byte {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	skip := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "  relative_file_paths:"):
			out = append(out, l)
			for _, f := range files {
				out = append(out, "    - "+f)
			}
			skip = true
			continue
		case strings.HasPrefix(l, "  compression_format:"):
			l = fmt.Sprintf("  compression_format: %q", format)
		case strings.HasPrefix(l, "  compression_mode:"):
			l = fmt.Sprintf("  compression_mode: %q", mode)
		}
		if skip && (strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "  - ")) {
			continue
		}
		skip = false
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// zstd file compression (the storage file compressed whole) of both
// storage formats, and zstd message compression, read as the original.
func TestZstdCompressedBags(t *testing.T) {
	want := talkerMessages(t)
	for _, c := range []struct{ dir, file string }{{"talker_sqlite3", "talker.db3"}, {"talker_mcap", "talker.mcap"}} {
		dir := t.TempDir()
		data, err := os.ReadFile(filepath.Join(testBags, c.dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.file+".zstd"), zstdBytes(t, data), 0o644); err != nil {
			t.Fatal(err)
		}
		meta := metadataWith(t, filepath.Join(testBags, c.dir, "metadata.yaml"), []string{c.file + ".zstd"}, "zstd", "file")
		if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		b := openBag(t, dir)
		got, err := readAll(t, b, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sameMessages(t, c.file+".zstd", got, want)
		st, err := b.Stats()
		if err != nil || st.MessageCount != 20 {
			t.Fatalf("%s.zstd stats: %v %v", c.file, st, err)
		}
		b.Close()
		if after := snapshot(t, dir); len(after) != len(before) {
			t.Fatalf("reading wrote into the bag: %v", after)
		}
	}

	// Message compression: every message's bytes compressed on its own.
	dir := t.TempDir()
	copyTree(t, filepath.Join(testBags, "talker_sqlite3"), dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "talker.db3"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, data FROM messages")
	if err != nil {
		t.Fatal(err)
	}
	upd := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var d []byte
		if err := rows.Scan(&id, &d); err != nil {
			t.Fatal(err)
		}
		upd[id] = zstdBytes(t, d)
	}
	rows.Close()
	for id, d := range upd {
		if _, err := db.Exec("UPDATE messages SET data = ? WHERE id = ?", d, id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	meta := metadataWith(t, filepath.Join(dir, "metadata.yaml"), []string{"talker.db3"}, "zstd", "message")
	if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, openBag(t, dir), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, "message compression", got, want)
}

// writeMCAP writes msgs with the MCAP library, as rosbag2 would lay them
// out, with the given chunking, compression and summary.
func writeMCAP(t testing.TB, path string, msgs []Message, opts *mcap.WriterOptions) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := mcap.NewWriter(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&mcap.Header{Profile: "ros2", Library: "test"}); err != nil {
		t.Fatal(err)
	}
	ids := map[*Topic]uint16{}
	for _, m := range msgs {
		id, ok := ids[m.Topic]
		if !ok {
			id = uint16(len(ids) + 1)
			ids[m.Topic] = id
			if err := w.WriteSchema(&mcap.Schema{ID: id, Name: m.Topic.Type, Encoding: "ros2msg"}); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteChannel(&mcap.Channel{ID: id, SchemaID: id, Topic: m.Topic.Name, MessageEncoding: "cdr",
				Metadata: map[string]string{"offered_qos_profiles": ""}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteMessage(&mcap.Message{ChannelID: id, LogTime: uint64(m.Time), PublishTime: uint64(m.Time), Data: m.Data}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

var mcapLayouts = []struct {
	name string
	opts mcap.WriterOptions
}{
	{"zstd", mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionZSTD, IncludeCRC: true}},
	{"lz4", mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionLZ4, IncludeCRC: true}},
	{"none", mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionNone}},
	{"unchunked", mcap.WriterOptions{}},
	{"nosummary", mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionZSTD, IncludeCRC: true,
		SkipMessageIndexing: true, SkipStatistics: true, SkipRepeatedSchemas: true, SkipRepeatedChannelInfos: true,
		SkipAttachmentIndex: true, SkipMetadataIndex: true, SkipChunkIndex: true, SkipSummaryOffsets: true}},
}

// MCAP files with zstd, lz4 and uncompressed chunks, without chunks, and
// without a summary section all read as the original, and count right.
func TestMCAPLayouts(t *testing.T) {
	want := talkerMessages(t)
	for _, l := range mcapLayouts {
		path := filepath.Join(t.TempDir(), "talker.mcap")
		opts := l.opts
		writeMCAP(t, path, want, &opts)
		b := openBag(t, path)
		got, err := readAll(t, b, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		sameMessages(t, l.name, got, want)
		st, err := b.Stats()
		if err != nil || st.MessageCount != 20 || st.Start != want[0].Time || st.End != want[19].Time {
			t.Fatalf("%s: stats %+v, %v", l.name, st, err)
		}
	}
}

// Chunks that overlap in time (a writer that flushed out of order) still
// read in time order.
func TestMCAPOverlappingChunks(t *testing.T) {
	want := talkerMessages(t)
	// Interleave: the odd messages first, then the even ones, in chunks
	// of a few messages each.
	var shuffled []Message
	for i := 1; i < len(want); i += 2 {
		shuffled = append(shuffled, want[i])
	}
	for i := 0; i < len(want); i += 2 {
		shuffled = append(shuffled, want[i])
	}
	path := filepath.Join(t.TempDir(), "x.mcap")
	writeMCAP(t, path, shuffled, &mcap.WriterOptions{Chunked: true, ChunkSize: 300, Compression: mcap.CompressionZSTD})
	got, err := readAll(t, openBag(t, path), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Time != want[i].Time {
			t.Fatalf("message %d at %d, want %d", i, got[i].Time, want[i].Time)
		}
	}
}

// metadata.yaml version 9 spells QoS as a list of maps with names;
// versions up to 8 as a YAML string with numbers. Both read the same.
func TestMetadataVersions(t *testing.T) {
	v9 := `rosbag2_bagfile_information:
  version: 9
  storage_identifier: mcap
  duration:
    nanoseconds: 5
  starting_time:
    nanoseconds_since_epoch: 10
  message_count: 2
  topics_with_message_count:
    - topic_metadata:
        name: /clock
        type: rosgraph_msgs/msg/Clock
        serialization_format: cdr
        offered_qos_profiles:
          - history: keep_last
            depth: 1
            reliability: best_effort
            durability: transient_local
            deadline:
              sec: 9223372036
              nsec: 854775807
            lifespan:
              sec: 10
              nsec: 0
            liveliness: automatic
            liveliness_lease_duration:
              sec: 9223372036
              nsec: 854775807
            avoid_ros_namespace_conventions: false
        type_description_hash: RIHS01_abc
      message_count: 2
    - topic_metadata:
        name: /empty
        type: std_msgs/msg/Empty
        serialization_format: cdr
        offered_qos_profiles: []
        type_description_hash: ""
      message_count: 0
  compression_format: ""
  compression_mode: ""
  relative_file_paths:
    - b_0.mcap
  files:
    - path: b_0.mcap
      starting_time:
        nanoseconds_since_epoch: 10
      duration:
        nanoseconds: 5
      message_count: 2
  custom_data: ~
  ros_distro: jazzy
`
	v8 := strings.Replace(strings.Replace(v9, "version: 9", "version: 8", 1),
		`offered_qos_profiles:
          - history: keep_last
            depth: 1
            reliability: best_effort
            durability: transient_local
            deadline:
              sec: 9223372036
              nsec: 854775807
            lifespan:
              sec: 10
              nsec: 0
            liveliness: automatic
            liveliness_lease_duration:
              sec: 9223372036
              nsec: 854775807
            avoid_ros_namespace_conventions: false`,
		`offered_qos_profiles: "- history: 1\n  depth: 1\n  reliability: 2\n  durability: 1\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 10\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false"`, 1)
	v8 = strings.Replace(v8, "offered_qos_profiles: []", `offered_qos_profiles: ""`, 1)
	want := QoSProfile{History: "keep_last", Depth: 1, Reliability: "best_effort", Durability: "transient_local",
		Lifespan: 10 * time.Second, Liveliness: "automatic"}
	for _, doc := range []string{v9, v8} {
		m, err := ParseMetadata([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if m.StorageIdentifier != "mcap" || m.MessageCount != 2 || m.StartingTime != 10 || m.Duration != 5 ||
			len(m.Files) != 1 || m.Files[0].Path != "b_0.mcap" || m.ROSDistro != "jazzy" || len(m.Topics) != 2 {
			t.Fatalf("v%d: %+v", m.Version, m)
		}
		q := m.Topics[0].Topic.OfferedQoSProfiles
		if len(q) != 1 || q[0] != want {
			t.Fatalf("v%d: QoS %+v, want %+v", m.Version, q, want)
		}
		if len(m.Topics[1].Topic.OfferedQoSProfiles) != 0 || m.Topics[0].Topic.TypeDescriptionHash != "RIHS01_abc" {
			t.Fatalf("v%d: topics %+v", m.Version, m.Topics)
		}
	}
	// The shared bags: every version 4-8 in the wild parses, and the
	// Foxy-era QoS (history 3 = unknown, infinite as 2147483647 s) reads.
	for _, mb := range manifest {
		p := filepath.Join(testBags, mb.dir, "metadata.yaml")
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		m, err := ParseMetadata(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if m.Version < 4 || m.Version > 8 || len(m.Topics) != len(mb.topics) {
			t.Fatalf("%s: version %d, %d topics", p, m.Version, len(m.Topics))
		}
	}
	b := openBag(t, filepath.Join(testBags, "walker_galactic_clock_sqlite3"))
	for _, tp := range b.Topics() {
		switch tp.Name {
		case "/imu":
			q := tp.OfferedQoSProfiles
			if len(q) != 1 || q[0].Reliability != "best_effort" || q[0].Durability != "volatile" || q[0].History != "keep_last" || q[0].Depth != 5 || q[0].Deadline != 0 {
				t.Fatalf("/imu QoS %+v", q)
			}
		case "/clock":
			if len(tp.OfferedQoSProfiles) != 0 {
				t.Fatalf("/clock QoS %+v (recorded as empty)", tp.OfferedQoSProfiles)
			}
		case "/rosout":
			if q := tp.OfferedQoSProfiles; len(q) != 2 || q[0].Lifespan != 10*time.Second {
				t.Fatalf("/rosout QoS %+v", q)
			}
		}
	}
}

// Paths some writers left in metadata.yaml: the bag directory's own name
// in front of the file (early Foxy), or an absolute path from the machine
// that recorded; and a version-5+ files: list without relative_file_paths.
func TestKnownWrongFilePaths(t *testing.T) {
	want := talkerMessages(t)
	for _, rel := range []string{"talker_sqlite3/talker.db3", "/home/someone/bags/talker_sqlite3/talker.db3"} {
		dir := filepath.Join(t.TempDir(), "talker_sqlite3")
		copyTree(t, filepath.Join(testBags, "talker_sqlite3"), dir)
		meta := metadataWith(t, filepath.Join(dir, "metadata.yaml"), []string{rel}, "", "")
		if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, openBag(t, dir), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		sameMessages(t, rel, got, want)
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join(testBags, "cdr_test_iron_mcap"), dir)
	data, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "  relative_file_paths:\n    - cdr_test_0.mcap\n", "", 1))
	if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	b := openBag(t, dir)
	if len(b.Files()) != 1 || filepath.Base(b.Files()[0]) != "cdr_test_0.mcap" {
		t.Fatalf("files %v", b.Files())
	}
}
