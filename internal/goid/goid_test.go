package goid

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// stackID is the goroutine id from runtime.Stack, for reference.
func stackID(t testing.TB) uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, _ = bytes.CutPrefix(b, []byte("goroutine "))
	id, err := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// grow recurses deep enough to make the goroutine's stack move.
func grow(n int) uintptr {
	var pad [256]byte
	if n == 0 {
		return Current() + uintptr(pad[0])
	}
	return grow(n-1) + uintptr(pad[n%len(pad)])
}

func TestCurrentStableWithinGoroutine(t *testing.T) {
	g := Current()
	if g == 0 {
		t.Fatal("Current() = 0")
	}
	runtime.Gosched()
	if got := Current(); got != g {
		t.Fatalf("after Gosched: %#x, want %#x", got, g)
	}
	if got := grow(2000); got != g { // ~600 KiB of frames: the stack is copied
		t.Fatalf("after stack growth: %#x, want %#x", got, g)
	}
	runtime.GC()
	if got := Current(); got != g {
		t.Fatalf("after GC: %#x, want %#x", got, g)
	}
}

func TestCurrentDistinctAcrossLiveGoroutines(t *testing.T) {
	const n = 64
	ids := make([]uintptr, n)
	stack := make([]uint64, n)
	var ready, wg sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			ids[i] = Current()
			stack[i] = stackID(t)
			ready.Done()
			<-release // stay alive until every goroutine has read its value
			if got := Current(); got != ids[i] {
				t.Errorf("goroutine %d: Current changed from %#x to %#x", i, ids[i], got)
			}
		}()
	}
	ready.Wait()
	seen := map[uintptr]int{Current(): -1}
	for i, id := range ids {
		if id == 0 {
			t.Errorf("goroutine %d: Current() = 0", i)
		}
		if j, dup := seen[id]; dup {
			t.Errorf("goroutines %d and %d (ids %d, %d), both alive, share %#x", j, i, stack[j], stack[i], id)
		}
		seen[id] = i
	}
	close(release)
	wg.Wait()
}

func TestCurrentDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(1000, func() { _ = Current() }); n != 0 {
		t.Fatalf("Current allocates %v times per call", n)
	}
}

var sink uintptr

func BenchmarkCurrent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = Current()
	}
}

// BenchmarkStackID is what Current replaced: the id parsed from
// runtime.Stack.
func BenchmarkStackID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = uintptr(stackID(b))
	}
}
