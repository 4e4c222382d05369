package clock

import (
	"slices"
	"testing"
	"time"
)

// ManualTimers call what is due, in deadline order then scheduling order,
// on Fire; Stop and Reset move or cancel a call; a call scheduled by a call
// and due already runs in the same Fire.
func TestManualTimers(t *testing.T) {
	now := int64(0)
	m := NewManualTimers(func() int64 { return now })
	var got []string
	add := func(d time.Duration, name string) Timer {
		return m.AfterFunc(d, func() { got = append(got, name) })
	}
	add(3, "c")
	add(1, "a")
	b := add(2, "b")
	add(1, "a2")
	gone := add(1, "gone")
	if !gone.Stop() || gone.Stop() {
		t.Fatal("Stop: true once, then false")
	}
	now = 1
	if n := m.Fire(); n != 2 || !slices.Equal(got, []string{"a", "a2"}) {
		t.Fatalf("at 1: %d calls, %v", n, got)
	}
	if !b.Reset(5) { // from now (1): due at 6
		t.Fatal("Reset of a pending call reports true")
	}
	m.AfterFunc(0, func() { got = append(got, "chain"); add(0, "chained") })
	now = 5
	m.Fire()
	if want := []string{"a", "a2", "chain", "c", "chained"}; !slices.Equal(got, want) {
		t.Fatalf("at 5: %v, want %v", got, want)
	}
	now = 6
	m.Fire()
	if got[len(got)-1] != "b" || m.Pending() != 0 {
		t.Fatalf("at 6: %v, %d pending", got, m.Pending())
	}
}

// An Alarm signals its channel once its time comes, and not after Stop.
func TestAlarm(t *testing.T) {
	now := int64(0)
	m := NewManualTimers(func() int64 { return now })
	s := NewSources(func() int64 { return now }, nil)
	s.Timer = m.AfterFunc
	c := make(chan struct{}, 1)
	a := s.NewAlarm(c)
	a.Set(10)
	now = 9
	m.Fire()
	if len(c) != 0 {
		t.Fatal("signalled early")
	}
	now = 10
	m.Fire()
	if len(c) != 1 {
		t.Fatal("not signalled")
	}
	<-c
	a.Set(5)
	a.Stop()
	now = 100
	m.Fire()
	if len(c) != 0 {
		t.Fatal("signalled after Stop")
	}
}
