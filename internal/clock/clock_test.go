package clock

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

type fixed struct{ ns int64 }

func (f *fixed) now() SystemTime { return SystemTime(f.ns) }

func TestInstallClassification(t *testing.T) {
	sys := &fixed{ns: 1_700_000_000_000_000_000}
	o := NewOverride(sys.now)
	var seen []Change
	o.AddListener(func(ch Change, before, after int64) { seen = append(seen, ch) })
	steps := []struct {
		op      string
		v       int64
		want    Change
		now     int64
		active  bool
		started bool
	}{
		{"install", 5, Ignored, sys.ns, false, false}, // no source attached
		{"attach", 0, 0, sys.ns, true, false},
		{"install", 100, Switch, 100, true, true}, // first sample replaces system time
		{"install", 100, NoChange, 100, true, true},
		{"install", 150, Forward, 150, true, true},
		{"install", 90, Backward, 90, true, true},
		{"install", -5, Rejected, 90, true, true}, // before the epoch: dropped, the clock keeps its value
		{"detach", 0, 0, 90, true, true},          // last value kept
		{"install", 500, Ignored, 90, true, true}, // nobody attached: not installed
		{"clear", 0, 0, sys.ns, false, false},
		{"attach", 0, 0, sys.ns, true, false},
		{"install", 7, Switch, 7, true, true},
		{"clear", 0, 0, sys.ns, true, false}, // source still attached
		{"install", 8, Switch, 8, true, true},
		{"detach", 0, 0, 8, true, true},
	}
	for i, s := range steps {
		var got Change
		switch s.op {
		case "install":
			got = o.Install(RosTime(s.v))
			if got != s.want {
				t.Fatalf("step %d: install %d = %v, want %v", i, s.v, got, s.want)
			}
		case "attach":
			o.Attach()
		case "detach":
			o.Detach()
		case "clear":
			o.Clear()
		}
		if o.Now() != RosTime(s.now) || o.Active() != s.active || o.Started() != s.started {
			t.Fatalf("step %d (%s): now=%d active=%v started=%v; want %d %v %v", i, s.op, o.Now(), o.Active(), o.Started(), s.now, s.active, s.started)
		}
	}
	if o.Rejected() != 1 {
		t.Fatalf("rejected %d, want 1", o.Rejected())
	}
	want := []Change{Switch, Forward, Backward, Detached, Cleared, Switch, Cleared, Switch, Detached}
	if !slices.Equal(seen, want) {
		t.Fatalf("listener saw %v", seen)
	}
	// A detach with no source attached is harmless, and a source that never
	// delivered leaves the override inactive.
	o2 := NewOverride(sys.now)
	o2.Detach()
	o2.Attach()
	o2.Detach()
	if o2.Active() || o2.Sources() != 0 {
		t.Fatal("a source with no sample must leave the override inactive")
	}
}

func TestRestartEpochs(t *testing.T) {
	o := NewOverride((&fixed{ns: 1e18}).now)
	o.Attach()
	r0 := o.LastRestart()
	o.Install(10)
	r1 := o.LastRestart()
	o.Install(20) // forward: no restart
	if o.LastRestart() != r1 || r1.Epoch != r0.Epoch+1 || r1.At != 10 {
		t.Fatalf("restarts %+v %+v", r0, r1)
	}
	o.Install(15)
	if r := o.LastRestart(); r.Epoch != r1.Epoch+1 || r.At != 15 {
		t.Fatalf("backward restart %+v", r)
	}
	o.Clear()
	if r := o.LastRestart(); r.At != 1e18 {
		t.Fatalf("clear restarts at system time, got %+v", r)
	}
}

func TestWaitersWakeOnDeadlineOrRestart(t *testing.T) {
	o := NewOverride((&fixed{ns: 1e18}).now)
	o.Attach()
	o.Install(100)
	w := NewWaiter(nil)
	o.AddWaiter(w)
	w.Deadline.Store(200)
	pending := func() bool {
		select {
		case <-w.C:
			return true
		default:
			return false
		}
	}
	o.Install(150)
	o.Install(150)
	if pending() {
		t.Fatal("woken before the deadline")
	}
	o.Install(200)
	if !pending() {
		t.Fatal("not woken at the deadline")
	}
	o.Install(120) // backward: every waiter, whatever its deadline
	if !pending() {
		t.Fatal("not woken by a backward jump")
	}
	o.RemoveWaiter(w)
	o.Install(1000)
	if pending() {
		t.Fatal("removed waiter woken")
	}
}

// TestConcurrentReadersAndWriters: four writers install their own values
// (writer g installs g*10000+1 … g*10000+2000) while four readers read. A
// reader that saw Started before reading Now must read a value some writer
// installed (never system time, never a torn or invented value); Started
// never goes back; restart epochs never go back for one reader; at the end
// every install is counted and ROS time is some writer's last value.
func TestConcurrentReadersAndWriters(t *testing.T) {
	const writers, perWriter = 4, 2000
	o := NewOverride(nil)
	o.Attach()
	installed := func(v RosTime) bool {
		i := int64(v) % 10000
		return v > 0 && int64(v)/10000 < writers && i >= 1 && i <= perWriter
	}
	var wg sync.WaitGroup
	errs := make(chan string, writers)
	for g := 0; g < writers; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := int64(1); i <= perWriter; i++ {
				o.Install(RosTime(int64(g)*10000 + i))
			}
		}()
		go func() {
			defer wg.Done()
			started := false
			var epoch uint64
			for i := 0; i < perWriter; i++ {
				s := o.Started()
				if started && !s {
					errs <- "Started went back to false"
					return
				}
				started = s
				if v := o.Now(); s && !installed(v) {
					errs <- fmt.Sprintf("Now() = %d after Started: no writer installed it", v)
					return
				}
				r := o.LastRestart()
				if r.Epoch < epoch {
					errs <- fmt.Sprintf("restart epoch went back: %d after %d", r.Epoch, epoch)
					return
				}
				epoch = r.Epoch
				if s && r.Epoch > 0 && !installed(r.At) {
					errs <- fmt.Sprintf("restart landing point %d: no writer installed it", r.At)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := o.Samples(); got != writers*perWriter {
		t.Errorf("Samples() = %d, want %d", got, writers*perWriter)
	}
	if v := o.Now(); int64(v)%10000 != perWriter || !installed(v) {
		t.Errorf("final Now() = %d, want some writer's last value (g*10000+%d)", v, perWriter)
	}
}

func BenchmarkNowSimulated(b *testing.B) {
	o := NewOverride(nil)
	o.Attach()
	o.Install(42)
	b.ReportAllocs()
	for b.Loop() {
		_ = o.Now()
	}
}

func BenchmarkInstall(b *testing.B) {
	o := NewOverride(nil)
	o.Attach()
	w := NewWaiter(nil)
	o.AddWaiter(w)
	v := RosTime(0)
	b.ReportAllocs()
	for b.Loop() {
		v++
		o.Install(v)
	}
}

// TestSnapshotIsConsistent: a clock that keeps jumping back (a looping bag)
// must never show a reader a time from one jump with the restart of
// another. Every install here lands below the one before (each is a
// restart at its own value), so a consistent snapshot has Now == At; a torn
// read (new time, old landing point, or the reverse) does not.
func TestSnapshotIsConsistent(t *testing.T) {
	o := NewOverride(nil)
	o.Attach()
	const n = 300_000
	o.Install(n + 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for v := RosTime(n); v > 0; v-- {
			o.Install(v)
		}
	}()
	var torn atomic.Int64
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if s := o.Snapshot(); s.Now != s.At {
					torn.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if torn.Load() != 0 {
		t.Fatalf("%d torn snapshots", torn.Load())
	}
}

// A quiet waiter (its executor is installing itself) is not signalled; a
// poke follows every token sent.
func TestWaiterQuietAndPoke(t *testing.T) {
	o := NewOverride(nil)
	o.Attach()
	var quiet atomic.Bool
	pokes := 0
	w := NewWaiter(nil)
	w.Quiet, w.Poke = &quiet, func() { pokes++ }
	w.Deadline.Store(0)
	o.AddWaiter(w)
	quiet.Store(true)
	o.Install(5)
	select {
	case <-w.C:
		t.Fatal("a quiet waiter was signalled")
	default:
	}
	quiet.Store(false)
	o.Install(6)
	select {
	case <-w.C:
	default:
		t.Fatal("the waiter was not signalled")
	}
	if pokes != 1 {
		t.Fatalf("pokes = %d, want 1", pokes)
	}
}
