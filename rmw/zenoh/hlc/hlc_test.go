package hlc

import (
	"errors"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

func TestNTP64(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want uint64
	}{
		{0, 0},
		{time.Second, 1 << 32},
		{500 * time.Millisecond, 1 << 31},
		{1500 * time.Millisecond, 1<<32 + 1<<31},
		{time.Nanosecond, 4}, // 2^32/1e9 = 4.29...
	} {
		if got := FromDuration(tc.d); got != tc.want {
			t.Errorf("%v: %#x, want %#x", tc.d, got, tc.want)
		}
	}
	now := time.Unix(1700000000, 123456789)
	if back := Time(NTP64(now)); back.Sub(now).Abs() > time.Nanosecond {
		t.Errorf("round trip %v -> %v", now, back)
	}
}

func TestClock(t *testing.T) {
	id, _ := wire.NewZenohID([]byte{1, 2})
	now := time.Unix(1700000000, 0)
	c := New(id, func() time.Time { return now }, 0)
	a := c.Now()
	b := c.Now()
	if a.Time != NTP64(now) || b.Time != a.Time+1 || a.ID != id {
		t.Errorf("same instant: %#x then %#x", a.Time, b.Time)
	}
	now = now.Add(time.Millisecond)
	if d := c.Now(); d.Time != NTP64(now)&^counterMask {
		t.Errorf("a millisecond later: %#x", d.Time)
	}
	// a timestamp from a clock a little ahead: followed
	ahead := wire.Timestamp{Time: NTP64(now.Add(100 * time.Millisecond)), ID: id}
	if err := c.Update(ahead); err != nil {
		t.Fatal(err)
	}
	if n := c.Now(); n.Time <= ahead.Time {
		t.Errorf("after update %#x, not after %#x", n.Time, ahead.Time)
	}
	// too far ahead: refused, clock unchanged
	far := wire.Timestamp{Time: NTP64(now.Add(time.Second)), ID: id}
	before := c.Now()
	var ed *ErrDelta
	if err := c.Update(far); !errors.As(err, &ed) || ed.Max != DefaultMaxDelta {
		t.Errorf("far future accepted: %v", err)
	}
	if n := c.Now(); n.Time != before.Time+1 {
		t.Errorf("clock moved by a refused timestamp: %#x after %#x", n.Time, before.Time)
	}
	// from the past: the clock keeps going
	past := wire.Timestamp{Time: NTP64(now.Add(-time.Hour))}
	last := c.Now()
	if err := c.Update(past); err != nil || c.Now().Time != last.Time+2 {
		t.Errorf("past timestamp: %v", err)
	}
}
