package bag

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
)

// drain reads a stream to its end (bounded), as a player would.
func drain(s *mcapStream) {
	for i := 0; i < 1<<16; i++ {
		if _, err := s.next(); err != nil {
			return
		}
	}
}

// FuzzMCAP feeds arbitrary bytes to both MCAP reading paths (sequential,
// and indexed through the summary): errors are fine, panics and runaway
// allocation are not.
func FuzzMCAP(f *testing.F) {
	for _, p := range []string{"talker_mcap/talker.mcap", "cdr_test_iron_mcap/cdr_test_0.mcap",
		"topics_and_services_bare_mcap/topics_and_services.mcap"} {
		data, err := os.ReadFile(filepath.Join(testBags, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Small files of every layout the writer makes.
	msgs := []Message{
		{Topic: &Topic{Name: "/a", Type: "std_msgs/msg/String"}, Time: 5, Data: []byte{0, 1, 0, 0, 2, 0, 0, 0, 'x', 0}},
		{Topic: &Topic{Name: "/b", Type: "std_msgs/msg/Empty"}, Time: 3, Data: []byte{0, 1, 0, 0, 0}},
	}
	msgs = append(msgs, Message{Topic: msgs[0].Topic, Time: 9, Data: msgs[0].Data})
	for _, l := range mcapLayouts {
		p := filepath.Join(f.TempDir(), l.name+".mcap")
		opts := l.opts
		opts.ChunkSize = 40
		writeMCAP(f, p, msgs, &opts)
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Real chunks are small; a fuzzed size field must not make every run
	// decompress gigabytes.
	maxChunkSize = 8 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each channel's topic once per input, as a bag resolves them: the
		// QoS YAML of the channels (fuzzed by FuzzMetadata) took half of
		// each run, parsed again for each of the three readings.
		type key struct{ name, enc, typ, qos, hash string }
		seen := map[key]*Topic{}
		resolve := func(ch *mcap.Channel, sc *mcap.Schema) *Topic {
			k := key{ch.Topic, ch.MessageEncoding, "", ch.Metadata["offered_qos_profiles"], ch.Metadata["topic_type_hash"]}
			if sc != nil {
				k.typ = sc.Name
			}
			if tp, ok := seen[k]; ok {
				return tp
			}
			tp := mcapTopic(ch, sc)
			seen[k] = &tp
			return &tp
		}
		if s, err := newMCAPStream(bytes.NewReader(data), int64(len(data)), 0, resolve); err == nil {
			drain(s)
			s.close()
		}
		// The same bytes as a stream of unknown length (a zstd file).
		if s, err := newMCAPStream(io.MultiReader(bytes.NewReader(data)), -1, 4, resolve); err == nil {
			drain(s)
			s.close()
		}
		sum, err := readMCAPSummary(bytes.NewReader(data), int64(len(data)))
		if err == nil && sum.indexable() {
			if s, err := newIndexedMCAPStream(bytes.NewReader(data), int64(len(data)), sum, 0, resolve); err == nil {
				drain(s)
				s.close()
			}
		}
	})
}

// FuzzMetadata feeds arbitrary bytes to the metadata.yaml parser.
func FuzzMetadata(f *testing.F) {
	for _, mb := range manifest {
		if data, err := os.ReadFile(filepath.Join(testBags, mb.dir, "metadata.yaml")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("rosbag2_bagfile_information:\n  version: 9\n  topics_with_message_count:\n    - topic_metadata:\n        name: /a\n        offered_qos_profiles:\n          - history: keep_last\n            depth: 1\n            deadline: {sec: 1, nsec: 2}\n      message_count: 1\n"))
	f.Add([]byte("version: 8\nstorage_identifier: sqlite3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata(data)
		if err == nil && m == nil {
			t.Fatal("nil metadata without an error")
		}
		_, _ = ParseQoSProfiles(string(data))
		// The reader of large documents (from 64 KiB) reads what the
		// whole-document parse reads, when it reads the layout.
		if p, err := parseMetadataPiecewise(data); err == nil && p != nil {
			w, err := parseMetadataWhole(data)
			if err != nil || !reflect.DeepEqual(p, w) {
				t.Fatalf("piecewise %+v, whole %+v (%v)", p, w, err)
			}
		}
	})
}
