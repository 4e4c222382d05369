package nros

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestTimeSecNanosec(t *testing.T) {
	tests := []struct {
		ns      int64
		sec     int32
		nanosec uint32
		err     bool
	}{
		{0, 0, 0, false},
		{1, 0, 1, false},
		{1_500_000_000, 1, 500_000_000, false},
		{-1, -1, 999_999_999, false},
		{-500_000_000, -1, 500_000_000, false},
		{-1_000_000_000, -1, 0, false},
		{int64(math.MaxInt32)*1e9 + 999_999_999, math.MaxInt32, 999_999_999, false},
		{int64(math.MaxInt32+1) * 1e9, 0, 0, true},
		{int64(math.MinInt32) * 1e9, math.MinInt32, 0, false},
		{int64(math.MinInt32)*1e9 - 1, 0, 0, true},
		{math.MaxInt64, 0, 0, true},
		{math.MinInt64, 0, 0, true},
	}
	for _, tt := range tests {
		sec, nsec, err := TimeFromNanoseconds(tt.ns).SecNanosec()
		if (err != nil) != tt.err {
			t.Fatalf("%d: err %v", tt.ns, err)
		}
		if err != nil {
			if !errors.Is(err, ErrTimeRange) {
				t.Fatalf("%d: error %v is not ErrTimeRange", tt.ns, err)
			}
			continue
		}
		if sec != tt.sec || nsec != tt.nanosec {
			t.Fatalf("%d: {%d %d}, want {%d %d}", tt.ns, sec, nsec, tt.sec, tt.nanosec)
		}
		if back := NewTime(sec, nsec).Nanoseconds(); back != tt.ns {
			t.Fatalf("%d: round trip gave %d", tt.ns, back)
		}
		dsec, dnsec, _ := Duration(tt.ns).SecNanosec()
		if dsec != sec || dnsec != nsec || NewDuration(dsec, dnsec) != Duration(tt.ns) {
			t.Fatalf("duration %d differs", tt.ns)
		}
	}
	// nanosec beyond a second is accepted and added, as ROS does.
	if got := NewTime(1, 2_000_000_000).Nanoseconds(); got != 3e9 {
		t.Fatalf("NewTime(1, 2e9) = %d", got)
	}
}

func TestTimeFromSeconds(t *testing.T) {
	good := map[float64]int64{0: 0, 1.5: 1_500_000_000, -0.25: -250_000_000, 1e-9: 1, 9.2e9: 9_200_000_000_000_000_000}
	for s, want := range good {
		got, err := TimeFromSeconds(s)
		if err != nil || got.Nanoseconds() != want {
			t.Fatalf("TimeFromSeconds(%v) = %d, %v; want %d", s, got.Nanoseconds(), err, want)
		}
	}
	for _, s := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 9.3e9, -9.3e9, 1e300} {
		if _, err := TimeFromSeconds(s); !errors.Is(err, ErrTimeRange) {
			t.Fatalf("TimeFromSeconds(%v) accepted", s)
		}
		if _, err := DurationFromSeconds(s); !errors.Is(err, ErrTimeRange) {
			t.Fatalf("DurationFromSeconds(%v) accepted", s)
		}
	}
}

func TestTimeArithmeticOverflow(t *testing.T) {
	max := TimeFromNanoseconds(math.MaxInt64)
	if _, err := max.Add(1); !errors.Is(err, ErrTimeRange) {
		t.Fatal("Add overflow not reported")
	}
	min := TimeFromNanoseconds(math.MinInt64)
	if _, err := min.Add(-1); !errors.Is(err, ErrTimeRange) {
		t.Fatal("Add underflow not reported")
	}
	if _, err := max.Sub(min); !errors.Is(err, ErrTimeRange) {
		t.Fatal("Sub overflow not reported")
	}
	a := TimeFromNanoseconds(5 * sec)
	b, err := a.Add(Duration(-7 * sec))
	if err != nil || b.Nanoseconds() != -2*sec || !b.Before(a) || !a.After(b) {
		t.Fatalf("Add: %v %v", b, err)
	}
	d, err := a.Sub(b)
	if err != nil || d.Std() != 7*time.Second {
		t.Fatalf("Sub: %v %v", d, err)
	}
	if s := TimeFromNanoseconds(-1_500_000_000).String(); s != "-1.500000000" {
		t.Fatalf("String %q", s)
	}
	if s := TimeFromNanoseconds(math.MinInt64).String(); s != "-9223372036.854775808" {
		t.Fatalf("String %q", s)
	}
}

func TestReadingTheTime(t *testing.T) {
	type state struct {
		now     string // "system" or "sim"
		active  bool
		started bool
	}
	sys := &fakeSystem{}
	ctx := sys.context()
	c := ctx.Clock()
	check := func(step string, want state, sim int64) {
		t.Helper()
		before := time.Now().UnixNano()
		got := c.Now().Nanoseconds()
		after := time.Now().UnixNano()
		switch want.now {
		case "system":
			if got < before || got > after {
				t.Fatalf("%s: Now = %d, want system time", step, got)
			}
		case "sim":
			if got != sim {
				t.Fatalf("%s: Now = %d, want sim %d", step, got, sim)
			}
		}
		if c.RosTimeIsActive() != want.active || c.Started() != want.started {
			t.Fatalf("%s: active=%v started=%v, want %v %v", step, c.RosTimeIsActive(), c.Started(), want.active, want.started)
		}
	}
	check("no source", state{"system", false, false}, 0)
	src := ctx.AttachTimeSource()
	check("source, no sample", state{"system", true, false}, 0)
	src.Install(TimeFromNanoseconds(42 * sec))
	check("first sample", state{"sim", true, true}, 42*sec)
	src.Install(TimeFromNanoseconds(40 * sec))
	check("backward", state{"sim", true, true}, 40*sec)
	src.Detach()
	check("detached", state{"sim", true, true}, 40*sec)
	c.ClearRosTimeOverride()
	check("cleared", state{"system", false, false}, 0)
	c.ClearRosTimeOverride() // twice is harmless
	check("cleared twice", state{"system", false, false}, 0)

	// A second source; clear while it is attached: back to "no sample yet".
	src2 := ctx.AttachTimeSource()
	src2.Install(TimeFromNanoseconds(7 * sec))
	c.ClearRosTimeOverride()
	check("cleared with a source attached", state{"system", true, false}, 0)
	src2.Install(TimeFromNanoseconds(8 * sec))
	check("sample after clear", state{"sim", true, true}, 8*sec)

	// Another context has its own simulated time.
	other := NewContext().Clock()
	if other.RosTimeIsActive() || other.Started() {
		t.Fatal("contexts share their simulated time")
	}

	// System and steady clocks never follow a source.
	for _, typ := range []ClockType{SystemTime, SteadyTime} {
		k := ctx.clockFor(typ)
		if k.RosTimeIsActive() || !k.Started() || k.Type() != typ {
			t.Fatalf("%v: active=%v started=%v", typ, k.RosTimeIsActive(), k.Started())
		}
		k.ClearRosTimeOverride() // no effect
	}
	if got := ctx.clockFor(SystemTime).Now().Nanoseconds(); got == 8*sec {
		t.Fatal("system clock followed the simulation")
	}
	a := NewClock(SteadyTime).Now()
	b := NewClock(SteadyTime).Now()
	if b.Before(a) {
		t.Fatal("steady clock went backwards")
	}
	if NewClock(ROSTime) != DefaultContext().Clock() {
		t.Fatal("NewClock(ROSTime) is not the default context's clock")
	}
}
