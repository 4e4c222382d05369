package goid

import (
	"sync"
	"testing"
)

func TestSetNestedAndOthers(t *testing.T) {
	var s Set
	if s.Has() {
		t.Fatal("empty set has the caller")
	}
	a := s.Enter()
	b := s.Enter()
	if n := s.Count(); n != 2 {
		t.Fatalf("Count after two entries = %d, want 2", n)
	}
	done := make(chan bool)
	go func() { done <- s.Has() }()
	if <-done {
		t.Fatal("another goroutine sees itself in the set")
	}
	s.Leave(b)
	if n := s.Count(); n != 1 {
		t.Fatalf("Count after one Leave = %d, want 1", n)
	}
	s.Leave(a)
	if s.Has() {
		t.Fatal("caller still in after leaving")
	}
}

// More goroutines than slots: the overflow map keeps the answer exact.
func TestSetOverflow(t *testing.T) {
	var s Set
	const n = 3 * len(s.slots)
	var in, wg sync.WaitGroup
	release := make(chan struct{})
	in.Add(n)
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			tok := s.Enter()
			inner := s.Enter()
			in.Done()
			<-release
			if c := s.Count(); c != 2 {
				t.Errorf("Count = %d, want 2", c)
			}
			s.Leave(inner)
			if c := s.Count(); c != 1 {
				t.Errorf("Count after inner Leave = %d, want 1", c)
			}
			s.Leave(tok)
			if s.Has() {
				t.Error("still in after Leave")
			}
		}()
	}
	in.Wait()
	if s.Has() {
		t.Fatal("the test goroutine is in the set")
	}
	close(release)
	wg.Wait()
	if s.n.Load() != 0 || len(s.over) != 0 {
		t.Fatalf("overflow not emptied: n=%d map=%v", s.n.Load(), s.over)
	}
	for i := range s.slots {
		if s.slots[i].Load() != 0 {
			t.Fatalf("slot %d not emptied", i)
		}
	}
}

func TestSetEnterLeaveDoesNotAllocate(t *testing.T) {
	var s Set
	if n := testing.AllocsPerRun(1000, func() { s.Leave(s.Enter()) }); n != 0 {
		t.Fatalf("Enter/Leave allocates %v times", n)
	}
}

func BenchmarkSetEnterLeave(b *testing.B) {
	var s Set
	for b.Loop() {
		s.Leave(s.Enter())
	}
}
