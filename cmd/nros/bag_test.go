package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
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

// recorded reads a bag's messages in order.
func recorded(t *testing.T, path string) []bag.Message {
	t.Helper()
	b, err := bag.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := b.Messages(bag.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []bag.Message
	for {
		m, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

type heard struct {
	topic string
	data  []byte
	wall  time.Time
}

// listenAll subscribes to every topic of the bag (and /clock) on tr and
// records what arrives, in arrival order.
func listenAll(t *testing.T, tr rmw.Transport, topics []*bag.Topic, got *[]heard, mu *sync.Mutex) {
	t.Helper()
	seen := map[string]bool{}
	add := func(name, typ string) {
		full := "/" + strings.TrimPrefix(name, "/")
		if seen[full] {
			return
		}
		seen[full] = true
		q := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1000}
		sub, err := tr.NewSubscription(rmw.NodeInfo{Name: "probe", Namespace: "/"}, full, typ, q, func(s rmw.Sample) {
			mu.Lock()
			*got = append(*got, heard{full, append([]byte(nil), s.Data...), time.Now()})
			mu.Unlock()
		}, rmw.EndpointOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Close() })
	}
	add("/clock", "rosgraph_msgs/msg/Clock")
	for _, tp := range topics {
		add(tp.Name, tp.Type)
	}
}

// bag play --clock 100 --rate 2 of the bag with a recorded /clock
// publishes every other message once, in recorded order, and a /clock of
// its own (not the recorded one) that advances at twice wall speed.
func TestBagPlayClockRate(t *testing.T) {
	path := filepath.Join(testBags, "walker_galactic_clock_sqlite3")
	want := recorded(t, path)
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		var mu sync.Mutex
		var got []heard
		listenAll(t, tr, bagTopics(t, path), &got, &mu)
		e, out, errb := testEnv(tr, realClock{})
		w0 := time.Now()
		if code := e.bagCmd(context.Background(), []string{"play", path, "--clock", "100", "--rate", "2"}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb)
		}
		if !strings.Contains(out.String(), "not replaying the recorded /clock") {
			t.Errorf("no word on the recorded /clock: %s", out)
		}
		var msgs []heard
		var clocks []heard
		for _, h := range got {
			if h.topic == "/clock" {
				clocks = append(clocks, h)
			} else {
				msgs = append(msgs, h)
			}
		}
		var wantMsgs []bag.Message
		for _, m := range want {
			if m.Topic.Name != "/clock" {
				wantMsgs = append(wantMsgs, m)
			}
		}
		if len(msgs) != len(wantMsgs) {
			t.Fatalf("%d messages heard, want %d", len(msgs), len(wantMsgs))
		}
		start := want[0].Time
		for i, m := range wantMsgs {
			if msgs[i].topic != m.Topic.Name || !bytes.Equal(msgs[i].data, m.Data) {
				t.Fatalf("message %d: %s, want %s at %d", i, msgs[i].topic, m.Topic.Name, m.Time)
			}
			if d, want := msgs[i].wall.Sub(w0), time.Duration((m.Time-start+1)/2); d != want { // rounded up to the ns
				t.Fatalf("message %d at wall %v, want %v", i, d, want)
			}
		}
		// 29.6 s of bag at 2x: 14.8 s of wall at 100 Hz.
		if len(clocks) < 1470 || len(clocks) > 1490 {
			t.Fatalf("%d /clock samples", len(clocks))
		}
		for _, c := range clocks[:len(clocks)-1] {
			var m rosgraph_msgs.Clock
			if err := msg.Unmarshal(c.data, &m); err != nil {
				t.Fatal(err)
			}
			ros := int64(m.Clock.Sec)*1e9 + int64(m.Clock.Nanosec)
			if ros-start != 2*int64(c.wall.Sub(w0)) {
				t.Fatalf("/clock %d at wall %v: not 2x", ros-start, c.wall.Sub(w0))
			}
		}
	})
}

func bagTopics(t *testing.T, path string) []*bag.Topic {
	b, err := bag.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return b.Topics()
}

// --topics, --exclude-topics and --remap choose and rename what plays.
func TestBagPlayTopicsRemap(t *testing.T) {
	path := filepath.Join(testBags, "wbag_split_sqlite3")
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		var mu sync.Mutex
		var got []heard
		topics := bagTopics(t, path)
		topics = append(topics, &bag.Topic{Name: "/renamed", Type: "std_msgs/msg/String"})
		listenAll(t, tr, topics, &got, &mu)
		e, _, errb := testEnv(tr, realClock{})
		if code := e.bagCmd(context.Background(), []string{"play", "--topics", "AAA", "/BBB", "CCC", "--exclude-topics", "CCC",
			"--remap", "AAA:=/renamed", "--rate", "1000", path}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb)
		}
		n := map[string]int{}
		for _, h := range got {
			n[h.topic]++
		}
		if len(n) != 2 || n["/renamed"] != 804 || n["/BBB"] != 742 {
			t.Fatalf("heard %v", n)
		}
	})
}

// Bad play arguments are usage errors; an empty bag plays nothing.
func TestBagPlayArguments(t *testing.T) {
	for _, args := range [][]string{{"play"}, {"play", "a", "b"}, {"play", "x", "--rate", "0"}, {"play", "x", "--remap", "nope"},
		{"play", "x", "--read-ahead-queue-size", "0"}, {"play", "x", "--delay", "-1"}} {
		e, _, errb := testEnv(intra.New(), realClock{})
		if code := e.bagCmd(context.Background(), args); code != 2 {
			t.Errorf("%q: exit %d (%s)", args, code, errb)
		}
	}
	pa := splitPlayArgs([]string{"--clock", "BAG", "--topics", "/a", "/b", "--clock=7", "--remap", "x:=y"})
	if strings.Join(pa.flags, " ") != "--clock=40 BAG --clock=7" || len(pa.topics) != 2 || len(pa.remaps) != 1 {
		t.Fatalf("%+v", pa)
	}
	if pa := splitPlayArgs([]string{"--clock", "100", "BAG"}); strings.Join(pa.flags, " ") != "--clock=100 BAG" {
		t.Fatalf("%+v", pa)
	}
	e, out, errb := testEnv(intra.New(), realClock{})
	if code := e.bagCmd(context.Background(), []string{"play", filepath.Join(testBags, "empty_bag_sqlite3"), "--clock"}); code != 0 {
		t.Fatalf("empty bag: exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "no messages") {
		t.Fatalf("empty bag: %s", out)
	}
}

// playAndRecord plays src (at a high rate, after a delay that lets the
// recorder subscribe) while `bag record -a` records into dst, all over
// one in-process transport; it returns when the recorder has closed dst.
func playAndRecord(t *testing.T, src, dst string, recArgs ...string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		rec, recOut, recErr := testEnv(tr, realClock{})
		ctx, cancel := context.WithCancel(context.Background())
		done := runAsync(func() int {
			return rec.bagCmd(ctx, append([]string{"record", "-a", "-o", dst}, recArgs...))
		})
		play, _, playErr := testEnv(tr, realClock{})
		if code := play.bagCmd(context.Background(), []string{"play", src, "--rate", "20", "--delay", "1"}); code != 0 {
			t.Fatalf("play: exit %d: %s", code, playErr)
		}
		time.Sleep(time.Second)
		cancel() // SIGINT
		if code := <-done; code != 0 {
			t.Fatalf("record: exit %d: %s", code, recErr)
		}
		if !strings.Contains(recOut.String(), "recorded ") {
			t.Fatalf("record printed %q", recOut)
		}
	})
}

// sameSequence fails unless got has want's messages (topic and bytes), in
// order.
func sameSequence(t *testing.T, what string, got, want []bag.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, want %d", what, len(got), len(want))
	}
	for i := range want {
		if "/"+strings.TrimPrefix(want[i].Topic.Name, "/") != got[i].Topic.Name || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("%s: message %d is %s, want %s", what, i, got[i].Topic.Name, want[i].Topic.Name)
		}
	}
}

// bag record -a of a played bag holds every message once, in order, with
// the topics' types; record -> play -> record gives the same messages, in
// both storage formats.
func TestBagRecordPlayRecord(t *testing.T) {
	src := filepath.Join(testBags, "walker_galactic_clock_sqlite3")
	want := recorded(t, src)
	a := filepath.Join(t.TempDir(), "a")
	playAndRecord(t, src, a)
	gotA := recorded(t, a)
	sameSequence(t, "first recording", gotA, want)
	for _, tp := range bagTopics(t, a) {
		if !strings.Contains(tp.Type, "/msg/") || tp.SerializationFormat != "cdr" || len(tp.OfferedQoSProfiles) != 1 {
			t.Fatalf("recorded topic %+v", tp)
		}
	}
	b := filepath.Join(t.TempDir(), "b")
	playAndRecord(t, a, b, "-s", "sqlite3", "--max-bag-duration", "0.02")
	gotB := recorded(t, b)
	sameSequence(t, "second recording", gotB, gotA)
	bb, err := bag.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	if bb.StorageIdentifier() != bag.StorageSQLite3 || len(bb.Files()) < 2 || bb.Metadata().Version != bag.MetadataVersion {
		t.Fatalf("second recording: %s, %d files, metadata v%d", bb.StorageIdentifier(), len(bb.Files()), bb.Metadata().Version)
	}
	// The recorded QoS replays: /imu was best effort, /tf_static transient local.
	for _, tp := range bb.Topics() {
		q := tp.OfferedQoSProfiles[0]
		switch tp.Name {
		case "/imu":
			if q.Reliability != "best_effort" {
				t.Fatalf("/imu recorded as %+v", q)
			}
		case "/tf_static":
			if q.Durability != "transient_local" {
				t.Fatalf("/tf_static recorded as %+v", q)
			}
		}
	}
}

func TestBagRecordArguments(t *testing.T) {
	for _, args := range [][]string{{"record"}, {"record", "-a", "/x"}, {"record", "-s", "rosbag1", "-a"},
		{"record", "-a", "--max-bag-size", "-1"}} {
		e, _, errb := testEnv(intra.New(), realClock{})
		if code := e.bagCmd(context.Background(), args); code != 2 {
			t.Errorf("%q: exit %d (%s)", args, code, errb)
		}
	}
}

// --use-sim-time stamps recorded messages with ROS time from /clock: a bag
// played with --clock records with its own times (to within a clock
// period), whatever the wall clock says.
func TestBagRecordSimTime(t *testing.T) {
	src := filepath.Join(testBags, "talker_sqlite3")
	want := recorded(t, src)
	dst := filepath.Join(t.TempDir(), "sim")
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		rec, _, recErr := testEnv(tr, realClock{})
		ctx, cancel := context.WithCancel(context.Background())
		done := runAsync(func() int {
			return rec.bagCmd(ctx, []string{"record", "/topic", "/rosout", "-o", dst, "--use-sim-time"})
		})
		play, _, playErr := testEnv(tr, realClock{})
		if code := play.bagCmd(context.Background(), []string{"play", src, "--clock", "1000", "--rate", "5", "--delay", "1"}); code != 0 {
			t.Fatalf("play: exit %d: %s", code, playErr)
		}
		time.Sleep(time.Second)
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("record: exit %d: %s", code, recErr)
		}
	})
	got := recorded(t, dst)
	sameSequence(t, "sim-time recording", got, want)
	for i := range got {
		// 1 ms of wall at 1 kHz is 5 ms of ROS time at rate 5.
		if d := got[i].Time - want[i].Time; d < -5e6 || d > 5e6 {
			t.Fatalf("message %d stamped %d, recorded at %d: %d ns apart", i, got[i].Time, want[i].Time, d)
		}
	}
}
