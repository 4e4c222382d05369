package bag

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

var writerTopics = []Topic{
	{Name: "/chatter", Type: "std_msgs/msg/String", SerializationFormat: "cdr",
		OfferedQoSProfiles: []QoSProfile{{History: "keep_last", Depth: 10, Reliability: "reliable", Durability: "volatile", Liveliness: "automatic"}}},
	{Name: "/clock", Type: "rosgraph_msgs/msg/Clock", SerializationFormat: "cdr",
		OfferedQoSProfiles: []QoSProfile{{History: "keep_last", Depth: 1, Reliability: "best_effort", Durability: "volatile",
			Liveliness: "automatic", Lifespan: 3 * time.Second}}},
	{Name: "/empty", Type: "std_msgs/msg/Empty", SerializationFormat: "cdr"},
}

// writeTestBag writes n messages alternating between /chatter and /clock,
// 1 ms apart from t0.
func writeTestBag(t *testing.T, dir string, opts WriterOptions, n int) []Message {
	t.Helper()
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range writerTopics {
		if err := w.AddTopic(tp); err != nil {
			t.Fatal(err)
		}
	}
	var out []Message
	const t0 = 1700000000000000000
	for i := 0; i < n; i++ {
		tp := &writerTopics[i%2]
		data := []byte(fmt.Sprintf("\x00\x01\x00\x00message %d", i))
		ts := int64(t0 + i*1e6)
		if err := w.Write(tp.Name, ts, data); err != nil {
			t.Fatal(err)
		}
		out = append(out, Message{Topic: tp, Time: ts, Data: data})
	}
	if err := w.Write("/nope", t0, nil); err == nil {
		t.Fatal("a message on an undeclared topic was written")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A written bag reads back (our reader and metadata.yaml v9) with every
// message, split where asked, in both storage formats; the MCAP files read
// with the MCAP library's own reader give the same counts.
func TestWriterRoundTrip(t *testing.T) {
	for _, c := range []struct {
		opts  WriterOptions
		files int
	}{
		{WriterOptions{}, 1},
		{WriterOptions{Storage: StorageSQLite3}, 1},
		{WriterOptions{MaxBagDuration: 999 * time.Millisecond, MCAPChunkSize: 4096}, 3},
		{WriterOptions{Storage: StorageSQLite3, MaxBagDuration: 999 * time.Millisecond}, 3},
		{WriterOptions{MaxBagSize: 20000, MCAPChunkSize: 2048}, 0},
	} {
		name := fmt.Sprintf("%s/%v/%d", c.opts.Storage, c.opts.MaxBagDuration, c.opts.MaxBagSize)
		dir := filepath.Join(t.TempDir(), "rec")
		want := writeTestBag(t, dir, c.opts, 3000)
		b := openBag(t, dir)
		if !b.HasMetadataFile() || b.Metadata().Version != MetadataVersion {
			t.Fatalf("%s: metadata %+v", name, b.Metadata())
		}
		m := b.Metadata()
		if m.MessageCount != 3000 || m.StartingTime != want[0].Time || int64(m.Duration) != want[2999].Time-want[0].Time {
			t.Fatalf("%s: metadata %+v", name, m)
		}
		if c.files > 0 && len(b.Files()) != c.files || c.files == 0 && len(b.Files()) < 2 {
			t.Fatalf("%s: %d files", name, len(b.Files()))
		}
		if len(m.Topics) != 3 || m.Topics[0].MessageCount != 1500 || m.Topics[2].MessageCount != 0 {
			t.Fatalf("%s: topics %+v", name, m.Topics)
		}
		if q := m.Topics[1].Topic.OfferedQoSProfiles; len(q) != 1 || q[0] != writerTopics[1].OfferedQoSProfiles[0] {
			t.Fatalf("%s: QoS %+v", name, q)
		}
		got, err := readAll(t, b, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sameMessages(t, name, got, want)
		st, err := b.Stats()
		if err != nil || st.MessageCount != 3000 || len(st.Topics) != 3 {
			t.Fatalf("%s: stats %+v %v", name, st, err)
		}
		// Each file alone is a bare bag with its metadata embedded.
		for _, f := range b.Files() {
			fb := openBag(t, f)
			if fb.Metadata() == nil || fb.Metadata().Version != MetadataVersion {
				t.Fatalf("%s: %s has no embedded metadata", name, f)
			}
			if len(fb.Topics()) != 3 {
				t.Fatalf("%s: %s: %d topics", name, f, len(fb.Topics()))
			}
		}
		if c.opts.Storage == StorageSQLite3 {
			continue
		}
		counts := map[string]int{}
		for _, f := range b.Files() {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := mcap.NewReader(fh)
			if err != nil {
				t.Fatal(err)
			}
			info, err := r.Info()
			if err != nil || info.Header.Profile != "ros2" || info.Statistics == nil {
				t.Fatalf("%s: mcap info %+v %v", name, info, err)
			}
			it, err := r.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.LogTimeOrder))
			if err != nil {
				t.Fatal(err)
			}
			for {
				sc, ch, _, err := it.NextInto(nil)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: mcap reader: %v", name, err)
				}
				if sc.Encoding != "ros2msg" || ch.MessageEncoding != "cdr" {
					t.Fatalf("%s: schema %q channel %q", name, sc.Encoding, ch.MessageEncoding)
				}
				counts[ch.Topic]++
			}
			r.Close()
			fh.Close()
		}
		if counts["/chatter"] != 1500 || counts["/clock"] != 1500 {
			t.Fatalf("%s: the MCAP library counts %v", name, counts)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(dir, WriterOptions{}); err == nil {
		t.Fatal("Create into an existing directory")
	}
	if _, err := Create(filepath.Join(dir, "x"), WriterOptions{Storage: "rosbag1"}); err == nil {
		t.Fatal("unknown storage accepted")
	}
	// An empty bag closes into a bag that reads as empty.
	p := filepath.Join(dir, "empty")
	w, err := Create(p, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.AddTopic(writerTopics[0])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := openBag(t, p)
	if st, err := b.Stats(); err != nil || st.MessageCount != 0 || len(st.Topics) != 1 {
		t.Fatalf("empty bag: %+v, %v", st, err)
	}
	if err := w.Write("/chatter", 1, nil); err == nil {
		t.Fatal("write after close")
	}
}
