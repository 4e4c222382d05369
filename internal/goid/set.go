package goid

import (
	"sync"
	"sync/atomic"
)

// Set records which goroutines are inside some piece of work (a callback, a
// pass), for the question "is the caller inside it?": a goroutine calls
// Enter when it starts the work and Leave with Enter's token when the work
// ends (deferred, so a panic leaves too), and Has asks whether the caller
// is in. A goroutine may enter several times (nested callbacks); Count says
// how many of the entries are its own. Entry and exit cost an atomic
// compare-and-swap and a store while at most len(slots) goroutines are in;
// more overflow to a map under a mutex. The zero Set is empty and ready.
//
// Because a goroutine removes its entry before it can exit, an entry equal
// to the caller's Current is always the caller's own (package comment).
type Set struct {
	slots [8]atomic.Uintptr
	n     atomic.Int32 // entries in over
	mu    sync.Mutex
	over  map[uintptr]int
}

// Token is what Enter returns for Leave.
type Token struct {
	g    uintptr
	slot int // index in slots, or -1 for the overflow map
}

// Enter adds the calling goroutine to the set (once more if it is in).
func (s *Set) Enter() Token {
	g := Current()
	for i := range s.slots {
		if s.slots[i].Load() == 0 && s.slots[i].CompareAndSwap(0, g) {
			return Token{g, i}
		}
	}
	s.mu.Lock()
	if s.over == nil {
		s.over = make(map[uintptr]int)
	}
	s.over[g]++
	s.n.Add(1)
	s.mu.Unlock()
	return Token{g, -1}
}

// Leave removes the entry that Enter returned tok for; it must be called on
// the goroutine that entered.
func (s *Set) Leave(tok Token) {
	if tok.slot >= 0 {
		s.slots[tok.slot].Store(0)
		return
	}
	s.mu.Lock()
	if s.over[tok.g]--; s.over[tok.g] == 0 {
		delete(s.over, tok.g)
	}
	s.n.Add(-1)
	s.mu.Unlock()
}

// Count returns how many entries the calling goroutine holds.
func (s *Set) Count() int {
	g := Current()
	n := 0
	for i := range s.slots {
		if s.slots[i].Load() == g {
			n++
		}
	}
	if s.n.Load() > 0 {
		s.mu.Lock()
		n += s.over[g]
		s.mu.Unlock()
	}
	return n
}

// Has reports whether the calling goroutine is in the set.
func (s *Set) Has() bool { return s.Count() > 0 }
