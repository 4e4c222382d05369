package play_test

import (
	"errors"
	"io"
	"testing"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

func testNode(t *testing.T, ns string) *nros.Node {
	t.Helper()
	tr := intra.New()
	t.Cleanup(func() { tr.Close() })
	ctx := nros.NewContext(nros.WithTransport(tr), nros.WithLogOutput(io.Discard))
	t.Cleanup(func() { ctx.Shutdown() })
	n, err := nros.NewNode("rosbag2_player", nros.WithContext(ctx), nros.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func openBag(t *testing.T, name string) *bag.Bag {
	t.Helper()
	b, err := bag.Open("../../testdata/bags/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// New chooses the topics as ros2 bag play does: filters by recorded or
// resolved name, the recorded /clock left out when the player publishes
// its own, names resolved against the node's namespace and remapped, and
// the recorded QoS.
func TestNewTopics(t *testing.T) {
	b := openBag(t, "walker_galactic_clock_sqlite3")
	p, err := play.New(testNode(t, "/replay"), b, play.Options{
		ClockRate: 40,
		Topics:    []string{"imu", "/clock", "odom", "/tf", "/replay/scan"},
		Exclude:   []string{"/tf"},
		Remap:     map[string]string{"/odom": "odometry"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := map[string]play.Topic{}
	for _, tp := range p.Topics() {
		got[tp.Recorded.Name] = tp
	}
	// Recorded names are absolute: the namespace does not move them, but a
	// relative remap target resolves in it.
	if len(got) != 2 || got["/imu"].Name != "/imu" || got["/odom"].Name != "/replay/odometry" {
		t.Fatalf("topics %+v", p.Topics())
	}
	if q := got["/imu"].QoS; q.Reliability != rmw.BestEffort || q.Durability != rmw.Volatile || q.Depth != 5 {
		t.Fatalf("/imu QoS %+v", q)
	}
	if s := p.Skipped(); len(s) != 1 || s[0].Topic.Name != "/clock" || !errors.Is(s[0].Err, play.ErrClockReplaced) {
		t.Fatalf("skipped %+v", s)
	}

	// Without ClockRate the recorded /clock plays like any topic.
	p2, err := play.New(testNode(t, "/"), b, play.Options{Topics: []string{"/clock"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if len(p2.Topics()) != 1 || len(p2.Skipped()) != 0 {
		t.Fatalf("topics %+v, skipped %+v", p2.Topics(), p2.Skipped())
	}
}

// Bad options and a bad remap target are errors; an empty bag plays
// nothing and ends at once.
func TestNewErrorsAndEmptyBag(t *testing.T) {
	b := openBag(t, "talker_mcap")
	for _, o := range []play.Options{{Rate: -1}, {ClockRate: 1e7}, {Remap: map[string]string{"/topic": "bad name!"}}} {
		if p, err := play.New(testNode(t, "/"), b, o); err == nil {
			p.Close()
			t.Errorf("%+v accepted", o)
		}
	}
	p, err := play.New(testNode(t, "/"), openBag(t, "empty_bag_sqlite3"), play.Options{ClockRate: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if next, done, err := p.PlayDue(); !done || err != nil || !next.IsZero() || p.Status().Published != 0 {
		t.Fatalf("empty bag: %v %v %v", next, done, err)
	}
}
