package interop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// The talker bag: 20 messages over 4.53 s, no recorded /clock.
const (
	talkerBag      = "../testdata/bags/talker_sqlite3"
	talkerStart    = int64(1585866235112411371)
	talkerDuration = int64(4531096768)
)

// bagPeers are the transports the bag tests run over: DDS with each
// vendor's peer, and Zenoh (rmw_zenoh's wire) with a zenoh-pico peer
// connecting to the nros process, peer to peer.
func bagPeers() []string { return append(slices.Clone(Vendors), "zenoh-pico") }

// startNrosOver runs nros on peer's transport: DDS in domain dom, or Zenoh
// listening on ep.
func startNrosOver(t *testing.T, peer string, dom int, ep string, args ...string) *goProc {
	t.Helper()
	if peer == "zenoh-pico" {
		return startGoZenoh(t, nrosBinary(t), zenohEnv(ep, ""), args...)
	}
	return startNros(t, dom, args...)
}

// `nros bag play --clock 100 --rate 2` over DDS and over Zenoh: a Cyclone
// (a Fast DDS, a zenoh-pico) clock subscriber receives a /clock that
// advances at twice wall speed from the bag's start.
func TestBagPlayClockToPeers(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	nrosBinary(t)
	for _, peer := range bagPeers() {
		t.Run(peer, func(t *testing.T) {
			if peer == "zenoh-pico" {
				RequireZenohPeers(t)
			}
			dom, ep := Domain(t), LoopbackTCP(FreeTCPPort(t))
			const n = 150 // 1.5 s of wall time at 100 Hz
			play := startNrosOver(t, peer, dom, ep, "bag", "play", talkerBag, "--clock", "100", "--rate", "2", "--delay", "2")
			var sub *Proc
			if peer == "zenoh-pico" {
				sub = Start(t, "zclocksub", "--mode", "peer", "--connect", ep, "--domain", "0", "--count", strconv.Itoa(n), "--timeout", "30")
			} else {
				sub = Start(t, "clocksub_"+peer, "--domain", strconv.Itoa(dom), "--count", strconv.Itoa(n), "--depth", "1000", "--timeout", "30")
			}
			if code, err := sub.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("clocksub: exit %d, %v", code, err)
			}
			if code, err := play.wait(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("bag play: exit %d, %v", code, err)
			}
			type sample struct{ wall, ros int64 }
			var ss []sample
			for _, l := range sub.Lines() {
				f := strings.Fields(l)
				if peer == "zenoh-pico" && len(f) > 3 && f[0] != "summary" {
					if !strings.Contains(l, " att=33 cdr=ok ") {
						t.Fatalf("zclocksub line %q", l)
					}
					f = f[:3] // wall, sec, nanosec; then the attachment's fields
				} else if peer == "zenoh-pico" && f[0] == "summary" {
					continue
				}
				if len(f) != 3 {
					t.Fatalf("clocksub line %q", l)
				}
				w, _ := strconv.ParseInt(f[0], 10, 64)
				sec, _ := strconv.ParseInt(f[1], 10, 64)
				ns, _ := strconv.ParseInt(f[2], 10, 64)
				ss = append(ss, sample{w, sec*1e9 + ns})
			}
			if len(ss) < n {
				t.Fatalf("%d samples", len(ss))
			}
			for i, s := range ss {
				if s.ros < talkerStart || s.ros > talkerStart+talkerDuration {
					t.Fatalf("sample %d: /clock %d outside the bag", i, s.ros)
				}
				if i > 0 && s.ros < ss[i-1].ros {
					t.Fatalf("sample %d: /clock went back", i)
				}
			}
			first, last := ss[0], ss[len(ss)-1]
			ratio := float64(last.ros-first.ros) / float64(last.wall-first.wall)
			t.Logf("%d samples: /clock advanced %.3f s in %.3f s of wall time: %.3fx", len(ss),
				float64(last.ros-first.ros)/1e9, float64(last.wall-first.wall)/1e9, ratio)
			if ratio < 1.9 || ratio > 2.1 {
				t.Fatalf("/clock advanced at %.3fx wall speed, want 2x", ratio)
			}
			// Sample to sample: 20 ms of ROS time per 10 ms period.
			steps := 0
			for i := 1; i < len(ss); i++ {
				if d := ss[i].ros - ss[i-1].ros; d >= 19e6 && d <= 21e6 {
					steps++
				}
			}
			if steps < len(ss)*8/10 {
				t.Fatalf("only %d of %d steps are 20 ms of ROS time", steps, len(ss)-1)
			}
		})
	}
}

// `nros bag play --loop --clock`: at every loop ROS time jumps back to the
// bag's start, and examples/simtimer (use_sim_time, a 500 ms ROS timer)
// restarts its period there: it keeps firing in every pass instead of
// waiting for ROS time to come back to where the previous pass left it.
func TestBagPlayLoopRestartsSimTimer(t *testing.T) {
	RequireNamespace(t)
	nrosBinary(t)
	simtimerBinary(t)
	dom := Domain(t)
	const period = int64(500 * time.Millisecond)
	timer := startSimtimer(t, dom, "-p", "use_sim_time:=true", "-p", "period_ms:=500", "-p", "duration_s:=60")
	// 4.53 s of bag at 2x: a pass every 2.27 s; about 3.5 passes.
	play := startNros(t, dom, "bag", "play", talkerBag, "--clock", "100", "--rate", "2", "--loop", "--delay", "1.5")
	time.Sleep(9500 * time.Millisecond)
	if code, err := play.interrupt(5 * time.Second); err != nil || code != 0 {
		t.Fatalf("bag play: exit %d, %v", code, err)
	}
	if code, err := timer.interrupt(5 * time.Second); err != nil || code != 0 {
		t.Fatalf("simtimer: exit %d, %v", code, err)
	}
	if n := strings.Count(play.stdout(), "loop "); n < 2 {
		t.Fatalf("bag play looped %d times:\n%s", n, play.stdout())
	}
	// The ROS-timer fires on the bag's time, split into passes where ROS
	// time went back.
	var passes [][]int64
	for _, l := range strings.Split(timer.stdout(), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != "ros" {
			continue
		}
		ros, _ := strconv.ParseInt(f[2], 10, 64)
		if ros < talkerStart || ros > talkerStart+talkerDuration+period {
			continue // system time, before the first /clock sample
		}
		if len(passes) == 0 || ros < passes[len(passes)-1][len(passes[len(passes)-1])-1] {
			passes = append(passes, nil)
		}
		passes[len(passes)-1] = append(passes[len(passes)-1], ros)
	}
	if len(passes) < 3 {
		t.Fatalf("ROS timer fired in %d passes of the bag, want >= 3: %v", len(passes), passes)
	}
	// Every pass but the last (cut by SIGINT) fires through the whole bag:
	// 4.53 s of ROS time at 500 ms is 9 fires, the first within a period
	// of the start.
	for i, p := range passes[:len(passes)-1] {
		if i > 0 && p[0] > talkerStart+period+period/2 {
			t.Errorf("pass %d: first fire %.3f s after the start: the period did not restart", i, float64(p[0]-talkerStart)/1e9)
		}
		if len(p) < 8 {
			t.Errorf("pass %d: %d fires, want about 9 (%v)", i, len(p), p)
		}
	}
	t.Logf("ROS timer fires per pass: %v", func() []int {
		var n []int
		for _, p := range passes {
			n = append(n, len(p))
		}
		return n
	}())
}

// `nros bag record` of a Cyclone, a Fast DDS and (over Zenoh) a zenoh-pico
// chatter publisher: the bag holds every string, as our reader and the
// MCAP library's reader count.
func TestBagRecordFromPeers(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	nrosBinary(t)
	for _, peer := range bagPeers() {
		t.Run(peer, func(t *testing.T) {
			dom, ep := Domain(t), LoopbackTCP(FreeTCPPort(t))
			const n = 200
			dir := filepath.Join(t.TempDir(), "rec")
			rec := startNrosOver(t, peer, dom, ep, "bag", "record", "/chatter", "-o", dir)
			if peer == "zenoh-pico" {
				RequireZenohPeers(t)
				// the pico connects (retrying until the recorder listens),
				// waits for the recorder's subscriber, then publishes
				pub := Start(t, "zchatterpub", "--mode", "peer", "--connect", ep, "--domain", "0", "--count", strconv.Itoa(n),
					"--hz", "500", "--wait-subs", "1", "--wait-timeout", "20", "--settle", "0.5", "--open-timeout", "20")
				if code, err := pub.Wait(40 * time.Second); err != nil || code != 0 {
					t.Fatalf("zchatterpub: exit %d, %v\n%s", code, err, pub.Stderr())
				}
			} else {
				pub := Start(t, "chatterpub_"+peer, "--domain", strconv.Itoa(dom), "--count", strconv.Itoa(n), "--hz", "500",
					"--wait-subs", "1", "--gate")
				if err := pub.WaitStderrMatch(matchedSubs, 20*time.Second); err != nil {
					t.Fatal(err)
				}
				time.Sleep(500 * time.Millisecond) // the recorder's reader matches the writer too
				if err := pub.Send("go"); err != nil {
					t.Fatal(err)
				}
				if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
					t.Fatalf("chatterpub: exit %d, %v", code, err)
				}
			}
			time.Sleep(300 * time.Millisecond)
			if code, err := rec.interrupt(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("bag record: exit %d, %v", code, err)
			}
			info := startNros(t, dom, "bag", "info", dir)
			if code, err := info.wait(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("bag info: exit %d, %v", code, err)
			}
			want := fmt.Sprintf("Topic: /chatter | Type: std_msgs/msg/String | Count: %d | Serialization Format: cdr", n)
			if !strings.Contains(info.stdout(), want) {
				t.Fatalf("bag info:\n%s\nwant a line %q", info.stdout(), want)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.mcap"))
			if len(files) != 1 {
				t.Fatalf("%d MCAP files", len(files))
			}
			if got := mcapCount(t, files[0], "/chatter"); got != n {
				t.Fatalf("the MCAP library counts %d messages on /chatter, want %d", got, n)
			}
		})
	}
}

// mcapCount counts a topic's messages with the MCAP library's own reader.
func mcapCount(t *testing.T, path, topic string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	it, err := r.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.LogTimeOrder))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, ch, _, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if ch.Topic == topic {
			n++
		}
	}
}

// `nros bag record` keeps up with 64-byte strings at 10 kHz from a Cyclone
// publisher (reliable, keep all): 20000 in 2 s, none lost.
func TestBagRecord10kHz(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	nrosBinary(t)
	dom := Domain(t)
	const n = 20000
	dir := filepath.Join(t.TempDir(), "rec")
	rec := startNros(t, dom, "bag", "record", "/chatter", "-o", dir)
	pub := Start(t, "chatterpub_cyclone", "--domain", strconv.Itoa(dom), "--count", strconv.Itoa(n), "--hz", "10000",
		"--size", "64", "--depth", "0", "--wait-subs", "1", "--gate")
	if err := pub.WaitStderrMatch(matchedSubs, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := pub.Send("go"); err != nil {
		t.Fatal(err)
	}
	if code, err := pub.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("chatterpub: exit %d, %v", code, err)
	}
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	if code, err := rec.interrupt(10 * time.Second); err != nil || code != 0 {
		t.Fatalf("bag record: exit %d, %v", code, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.mcap"))
	if len(files) != 1 {
		t.Fatalf("%d MCAP files", len(files))
	}
	got := mcapCount(t, files[0], "/chatter")
	// The publisher prints each sample's write time (ns) first: its own
	// span is the rate it kept (took also holds its linger and exit).
	lines := pub.Lines()
	var first, last int64
	if len(lines) > 1 {
		first, _ = strconv.ParseInt(strings.Fields(lines[0])[0], 10, 64)
		last, _ = strconv.ParseInt(strings.Fields(lines[len(lines)-1])[0], 10, 64)
	}
	span := time.Duration(last - first)
	t.Logf("published %d strings of 64 B in %v (%.0f Hz by the publisher's clock; %v to its exit); the bag holds %d",
		len(lines), span.Round(time.Millisecond), float64(len(lines)-1)/span.Seconds(), took.Round(time.Millisecond), got)
	if got != n {
		t.Fatalf("the bag holds %d of %d strings", got, n)
	}
}
