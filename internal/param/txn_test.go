package param

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// within runs f on its own goroutine and fails the test if it has not
// returned after d: a deadlocked transaction fails fast instead of hanging
// the test binary.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %v: the transaction deadlocked", d)
	}
}

// TestNestedChangeFromCallbackIsRefused: a callback that changes the
// store it runs in gets ErrNestedTransaction (rclcpp throws), it does not
// deadlock, and the outer transaction completes.
func TestNestedChangeFromCallbackIsRefused(t *testing.T) {
	nested := map[string]func(s *Store) error{
		"set": func(s *Store) error {
			if r := s.Set("b", IntegerValue(2)); !r.Successful {
				return errors.New(r.Reason)
			}
			return nil
		},
		"set atomically": func(s *Store) error {
			if r := s.SetAtomically([]Parameter{{"b", IntegerValue(2)}}); !r.Successful {
				return errors.New(r.Reason)
			}
			return nil
		},
		"set parameters": func(s *Store) error {
			if r := s.SetParameters([]Parameter{{"b", IntegerValue(2)}}); !r[0].Successful {
				return errors.New(r[0].Reason)
			}
			return nil
		},
		"declare": func(s *Store) error {
			_, err := s.Declare("c", IntegerValue(1), Descriptor{})
			return err
		},
		"undeclare": func(s *Store) error { return s.Undeclare("dyn") },
	}
	where := []string{"validator", "post-set"}
	for _, w := range where {
		for what, call := range nested {
			t.Run(w+"/"+what, func(t *testing.T) {
				s := NewStore(Options{})
				mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
				mustDeclare(t, s, "b", IntegerValue(1), Descriptor{})
				mustDeclare(t, s, "dyn", IntegerValue(1), Descriptor{DynamicTyping: true})
				var got error
				calls := 0
				cb := func(ps []Parameter) {
					if ps[0].Name != "a" {
						return
					}
					calls++
					got = call(s)
				}
				if w == "validator" {
					s.AddOnSetCallback(func(ps []Parameter) SetResult { cb(ps); return SetResult{Successful: true} })
				} else {
					s.AddPostSetCallback(cb)
				}
				var r SetResult
				within(t, 2*time.Second, func() { r = s.Set("a", IntegerValue(5)) })
				if !r.Successful {
					t.Fatalf("outer set = %+v", r)
				}
				if calls != 1 || got == nil || !strings.Contains(got.Error(), "cannot set parameters from inside a parameter callback") {
					t.Fatalf("nested %s from %s: calls=%d err=%v; want the nested-transaction error", what, w, calls, got)
				}
				if v, _ := s.Get("b"); !v.Equal(IntegerValue(1)) || s.Has("c") || !s.Has("dyn") {
					t.Fatal("the refused nested change changed the store")
				}
				// The store is usable afterwards, from this goroutine.
				if r := s.Set("b", IntegerValue(3)); !r.Successful {
					t.Fatalf("set after the nested refusal: %+v", r)
				}
			})
		}
	}
}

// TestConcurrentSetWaitsItsTurn: a set from another goroutine while a
// transaction's validator runs is not "nested": it waits for the running
// transaction to end, then succeeds; transactions never overlap.
func TestConcurrentSetWaitsItsTurn(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "a", IntegerValue(0), Descriptor{})
	mustDeclare(t, s, "b", IntegerValue(0), Descriptor{})
	entered := make(chan struct{})
	release := make(chan struct{})
	var inside, overlaps int // touched only inside transactions: -race checks they are serialised
	var order []string
	s.AddOnSetCallback(func(ps []Parameter) SetResult {
		inside++
		if inside > 1 {
			overlaps++
		}
		order = append(order, "validate "+ps[0].Name)
		if ps[0].Name == "a" {
			close(entered)
			<-release // a slow validator
		}
		inside--
		return SetResult{Successful: true}
	})
	s.AddPostSetCallback(func(ps []Parameter) { order = append(order, "post "+ps[0].Name) })
	resA := make(chan SetResult)
	go func() { resA <- s.Set("a", IntegerValue(1)) }()
	<-entered
	resB := make(chan SetResult)
	go func() { resB <- s.Set("b", IntegerValue(2)) }()
	// Wait (bounded) until b is queued behind a's transaction.
	deadline := time.Now().Add(2 * time.Second)
	for s.waiting.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the concurrent set never reached the transaction lock")
		}
		time.Sleep(time.Millisecond)
	}
	if v, _ := s.Get("b"); !v.Equal(IntegerValue(0)) {
		t.Fatal("b was set while a's transaction ran")
	}
	close(release)
	var ra, rb SetResult
	within(t, 2*time.Second, func() { ra, rb = <-resA, <-resB })
	if !ra.Successful || !rb.Successful {
		t.Fatalf("a=%+v b=%+v; both must succeed", ra, rb)
	}
	if overlaps != 0 {
		t.Fatalf("%d overlapping transactions", overlaps)
	}
	want := "validate a,post a,validate b,post b"
	if got := strings.Join(order, ","); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	if v, _ := s.Get("b"); !v.Equal(IntegerValue(2)) {
		t.Fatalf("b = %v", v)
	}
}

// TestGetDuringCallbacks: validators and the Apply hook see the committed
// (old) values through Get and the proposed ones in their argument; the
// Apply hook sees the proposed ones through its Txn; post-set and event
// callbacks see the new committed values.
func TestGetDuringCallbacks(t *testing.T) {
	var s *Store
	var seen []string
	get := func(where string) {
		v, _ := s.Get("a")
		seen = append(seen, where+"="+v.ValueString())
	}
	s = NewStore(Options{Apply: func(tx *Txn, ps []Parameter) error {
		get("apply")
		v, _ := tx.Get("a")
		seen = append(seen, "apply tx="+v.ValueString()+" arg="+ps[0].Value.ValueString())
		return nil
	}})
	mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
	s.AddOnSetCallback(func(ps []Parameter) SetResult {
		get("validate")
		seen = append(seen, "validate arg="+ps[0].Value.ValueString())
		return SetResult{Successful: true}
	})
	s.AddPostSetCallback(func([]Parameter) { get("post") })
	s.AddEventCallback(func(Event) { get("event") })
	seen = nil
	if r := s.Set("a", IntegerValue(2)); !r.Successful {
		t.Fatal(r.Reason)
	}
	want := "validate=1,validate arg=2,apply=1,apply tx=2 arg=2,post=2,event=2"
	if got := strings.Join(seen, ","); got != want {
		t.Fatalf("seen %s\nwant %s", got, want)
	}
}

// TestApplyPhase: the Apply hook is a phase of every transaction; its
// failure refuses the transaction with its reason and commits nothing.
func TestApplyPhase(t *testing.T) {
	errBroken := errors.New("cannot apply x=13")
	errKeep := errors.New("keep must stay")
	type rec struct {
		applied [][]Parameter
		post    [][]Parameter
		events  []Event
	}
	newStore := func(t *testing.T, r *rec) *Store {
		s := NewStore(Options{AllowUndeclared: true, Apply: func(tx *Txn, ps []Parameter) error {
			r.applied = append(r.applied, ps)
			for _, p := range ps {
				if v, _ := p.Value.Integer(); v == 13 {
					return errBroken
				}
				if p.Name == "keep" && !p.Value.IsSet() {
					return errKeep
				}
				// Applying "x" declares a read-only companion, as a node
				// declares the QoS parameters of the time source it installs.
				if p.Name == "x" && !tx.Has("x.companion") {
					if _, err := tx.Declare("x.companion", StringValue("c"), Descriptor{ReadOnly: true}); err != nil {
						return err
					}
				}
			}
			return nil
		}})
		mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
		mustDeclare(t, s, "dyn", IntegerValue(1), Descriptor{DynamicTyping: true})
		mustDeclare(t, s, "keep", IntegerValue(1), Descriptor{DynamicTyping: true})
		s.AddPostSetCallback(func(ps []Parameter) { r.post = append(r.post, ps) })
		s.AddEventCallback(func(e Event) { r.events = append(r.events, e) })
		*r = rec{}
		return s
	}
	unchanged := func(t *testing.T, s *Store, r *rec) {
		t.Helper()
		if v, _ := s.Get("a"); !v.Equal(IntegerValue(1)) {
			t.Errorf("a = %v after a refused transaction", v)
		}
		if s.Has("x") || s.Has("x.companion") || !s.Has("dyn") {
			t.Errorf("names %v after a refused transaction", s.Names())
		}
		if len(r.post)+len(r.events) != 0 {
			t.Errorf("callbacks ran for a refused transaction: post %v events %v", r.post, r.events)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s *Store, r *rec)
	}{
		{"set refused by apply", func(t *testing.T, s *Store, r *rec) {
			res := s.Set("a", IntegerValue(13))
			if res.Successful || res.Reason != errBroken.Error() {
				t.Fatalf("set = %+v, want the apply error as reason", res)
			}
			unchanged(t, s, r)
		}},
		{"atomic set all or nothing", func(t *testing.T, s *Store, r *rec) {
			res := s.SetAtomically([]Parameter{{"x", IntegerValue(1)}, {"a", IntegerValue(13)}})
			if res.Successful || res.Reason != errBroken.Error() {
				t.Fatalf("set = %+v", res)
			}
			if len(r.applied) != 1 || len(r.applied[0]) != 2 {
				t.Fatalf("apply saw %v, want the two parameters at once", r.applied)
			}
			unchanged(t, s, r) // x and the companion Apply declared are dropped
		}},
		{"set parameters one transaction each", func(t *testing.T, s *Store, r *rec) {
			res := s.SetParameters([]Parameter{{"x", IntegerValue(1)}, {"a", IntegerValue(13)}})
			if !res[0].Successful || res[1].Successful || res[1].Reason != errBroken.Error() {
				t.Fatalf("results %+v", res)
			}
			if len(r.applied) != 2 {
				t.Fatalf("apply ran %d times, want 2", len(r.applied))
			}
			if v, _ := s.Get("x"); !v.Equal(IntegerValue(1)) {
				t.Fatalf("x = %v", v)
			}
			if v, _ := s.Get("x.companion"); !v.Equal(StringValue("c")) {
				t.Fatalf("companion = %v", v)
			}
			if d, _ := s.Describe("x.companion"); !d[0].ReadOnly {
				t.Fatal("companion lost its descriptor")
			}
			if v, _ := s.Get("a"); !v.Equal(IntegerValue(1)) {
				t.Fatalf("a = %v", v)
			}
			// post-set: x's transaction, then the companion's declaration;
			// one event with both as new.
			if len(r.post) != 2 || r.post[0][0].Name != "x" || r.post[1][0].Name != "x.companion" {
				t.Fatalf("post %v", r.post)
			}
			if len(r.events) != 1 || len(r.events[0].New) != 2 {
				t.Fatalf("events %+v", r.events)
			}
		}},
		{"declare refused by apply", func(t *testing.T, s *Store, r *rec) {
			_, err := s.Declare("x", IntegerValue(13), Descriptor{})
			if !errors.Is(err, ErrInvalidValue) || !errors.Is(err, errBroken) || err.Error() != errBroken.Error() {
				t.Fatalf("declare: %v", err)
			}
			unchanged(t, s, r)
		}},
		{"undeclare refused by apply", func(t *testing.T, s *Store, r *rec) {
			if err := s.Undeclare("keep"); !errors.Is(err, errKeep) || !strings.Contains(err.Error(), "'keep'") {
				t.Fatalf("undeclare: %v", err)
			}
			if res := s.Set("keep", NotSet()); res.Successful || res.Reason != errKeep.Error() {
				t.Fatalf("set NOT_SET = %+v", res)
			}
			if !s.Has("keep") {
				t.Fatal("keep was undeclared")
			}
			unchanged(t, s, r)
		}},
		{"uninitialized declaration skips apply", func(t *testing.T, s *Store, r *rec) {
			if _, err := s.Declare("u", NotSet(), Descriptor{Type: TypeInteger}); err != nil {
				t.Fatal(err)
			}
			if len(r.applied) != 0 {
				t.Fatalf("apply ran for an uninitialized declaration: %v", r.applied)
			}
		}},
		{"undeclare goes through apply", func(t *testing.T, s *Store, r *rec) {
			if err := s.Undeclare("dyn"); err != nil {
				t.Fatal(err)
			}
			if len(r.applied) != 1 || r.applied[0][0].Name != "dyn" || r.applied[0][0].Value.IsSet() {
				t.Fatalf("apply saw %v, want dyn as NOT_SET", r.applied)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r rec
			tt.run(t, newStore(t, &r), &r)
		})
	}
}

func TestTxnDeclareOnlyInsideApply(t *testing.T) {
	var kept *Txn
	s := NewStore(Options{Apply: func(tx *Txn, _ []Parameter) error { kept = tx; return nil }})
	mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
	if _, err := kept.Declare("late", IntegerValue(1), Descriptor{}); err == nil {
		t.Fatal("a Txn kept past its Apply call still declares")
	}
}

// A panicking callback ends its transaction: later sets, from the same or
// another goroutine, run and are not taken for nested ones.
func TestPanickingCallbackEndsTheTransaction(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
	s.AddOnSetCallback(func(ps []Parameter) SetResult {
		if v, _ := ps[0].Value.Integer(); v == 13 {
			panic("unlucky")
		}
		return SetResult{Successful: true}
	})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the validator's panic was swallowed")
			}
		}()
		s.Set("a", IntegerValue(13))
	}()
	if r := s.Set("a", IntegerValue(2)); !r.Successful {
		t.Fatalf("same goroutine after the panic: %+v", r)
	}
	within(t, 2*time.Second, func() {
		if r := s.Set("a", IntegerValue(3)); !r.Successful {
			t.Errorf("other goroutine after the panic: %+v", r)
		}
	})
	if v, _ := s.Get("a"); !v.Equal(IntegerValue(3)) {
		t.Fatalf("a = %v", v)
	}
}
