package param

import (
	"errors"
	"fmt"

	"github.com/nros-go/nros/internal/goid"
)

// Nested or concurrent? A transaction holds Store.txMu from its start to
// the end of its last callback, so a second transaction on another
// goroutine simply waits its turn. A callback that starts a transaction on
// the same store would wait for itself: that is the deadlock rclcpp turns
// into an exception, and so do we. Go has no goroutine-local storage and
// the public API (SetParameter and friends) carries no context to thread a
// token through, so the store records which goroutine owns the running
// transaction: Store.owner holds the identity (goid.Current) of the
// goroutine that holds txMu (0 when none). begin compares it with the
// caller's. The test is exact: the owner clears owner in end (deferred, so
// a panicking callback clears it too) before it can exit, so while a value
// is stored its goroutine is alive and no other goroutine can have the same
// identity; owner can only equal the caller's if the caller itself stored
// it, i.e. if the caller is inside its own transaction. Reading it costs a
// few nanoseconds.
//
// A callback that hands a change to another goroutine and waits for it
// still deadlocks (the helper is a concurrent transaction that waits for
// the callback); one that does not wait is fine: the change runs after the
// current transaction.

// begin starts a transaction for the calling goroutine, waiting for the
// current one to end; it refuses a transaction nested in one the caller
// already runs.
func (s *Store) begin() error {
	g := goid.Current()
	if s.owner.Load() == g {
		return ErrNestedTransaction
	}
	s.waiting.Add(1)
	s.txMu.Lock()
	s.waiting.Add(-1)
	s.owner.Store(g)
	return nil
}

// end ends the caller's transaction.
func (s *Store) end() {
	s.owner.Store(0)
	s.txMu.Unlock()
}

// change is one staged modification of a transaction.
type change struct {
	p       Parameter
	desc    Descriptor
	deleted bool
	post    bool // run post-set callbacks for it
	byApply bool // declared by the Apply hook through Txn.Declare
}

// Txn is a transaction in progress, as the Apply hook sees it: reads see
// the transaction's staged changes over the committed values, and Declare
// adds a declaration that is committed with the transaction (or dropped
// with it). A Txn is valid only during the Apply call it was given to, on
// that call's goroutine.
type Txn struct {
	s       *Store
	staged  map[string]*entry // nil entry: removed by this transaction
	changes []change
	open    bool // inside the Apply hook
}

func (s *Store) newTxn() *Txn { return &Txn{s: s, staged: map[string]*entry{}} }

func (tx *Txn) lookup(name string) (*entry, bool) {
	if e, ok := tx.staged[name]; ok {
		return e, e != nil
	}
	return tx.s.lookup(name)
}

func (tx *Txn) stage(c change) {
	if c.deleted {
		tx.staged[c.p.Name] = nil
	} else {
		tx.staged[c.p.Name] = &entry{value: c.p.Value, desc: c.desc}
	}
	tx.changes = append(tx.changes, c)
}

// Has reports whether name is declared, counting this transaction's
// changes.
func (tx *Txn) Has(name string) bool {
	_, ok := tx.lookup(name)
	return ok
}

// Get returns name's value as this transaction leaves it (see Store.Get).
func (tx *Txn) Get(name string) (Value, error) {
	e, ok := tx.lookup(name)
	return tx.s.valueOf(name, e, ok)
}

// Declare declares a parameter as part of the transaction, with the rules
// of Store.Declare (the validators run; the Apply hook does not run again).
// It is committed, and its post-set and event callbacks run, only if the
// transaction commits.
func (tx *Txn) Declare(name string, def Value, d Descriptor) (Value, error) {
	if !tx.open {
		return Value{}, errors.New("param: Txn.Declare called outside the Apply hook")
	}
	n := len(tx.changes)
	v, err := tx.declare(name, def, d)
	for i := n; i < len(tx.changes); i++ {
		tx.changes[i].byApply = true
	}
	return v, err
}

// declare checks and stages a declaration (see Store.Declare).
func (tx *Txn) declare(name string, def Value, d Descriptor) (Value, error) {
	if name == "" {
		return Value{}, fmt.Errorf("%w: parameter name must not be empty", ErrInvalidName)
	}
	if err := d.validate(); err != nil {
		return Value{}, fmt.Errorf("parameter '%s': %w: %v", name, ErrInvalidValue, err)
	}
	if tx.Has(name) {
		return Value{}, fmt.Errorf("%w: parameter '%s' has already been declared", ErrAlreadyDeclared, name)
	}
	d = d.clone()
	d.Name = name
	initial := def
	ov, hasOverride := tx.s.overrides[name]
	if hasOverride {
		initial = ov
	}
	if !d.DynamicTyping {
		if d.Type == TypeNotSet {
			d.Type = def.typ
		}
		if d.Type == TypeNotSet {
			return Value{}, fmt.Errorf("%w: cannot declare statically typed parameter '%s' without a type or a default value", ErrInvalidType, name)
		}
		if def.typ != TypeNotSet && def.typ != d.Type {
			return Value{}, fmt.Errorf("%w: parameter '%s' is of type %s but its default value is %s", ErrInvalidType, name, d.Type, def.typ)
		}
		if initial.typ != TypeNotSet && initial.typ != d.Type {
			src := "value"
			if hasOverride {
				src = "override"
			}
			return Value{}, fmt.Errorf("%w: parameter '%s' wants type %s, but its %s is %s (%s)", ErrInvalidType, name, d.Type, src, initial.typ, initial.ValueString())
		}
	} else {
		d.Type = initial.typ
	}
	if reason := d.checkRange(name, initial); reason != "" {
		return Value{}, fmt.Errorf("%w: %s", ErrInvalidValue, reason)
	}
	p := Parameter{Name: name, Value: initial}
	if initial.IsSet() {
		if r := tx.s.validate([]Parameter{p}); !r.Successful {
			return Value{}, fmt.Errorf("%w: parameter '%s' rejected: %s", ErrInvalidValue, name, r.Reason)
		}
	}
	// rclcpp runs no callbacks and reports no new parameter for an
	// uninitialized one.
	tx.stage(change{p: p, desc: d, post: initial.IsSet()})
	return initial, nil
}

// apply runs the Apply hook, if any, with the transaction's changes.
func (s *Store) apply(tx *Txn) error {
	if s.applyFn == nil || len(tx.changes) == 0 {
		return nil
	}
	changed := make([]Parameter, len(tx.changes))
	for i, c := range tx.changes {
		changed[i] = c.p
	}
	tx.open = true
	defer func() { tx.open = false }()
	return s.applyFn(tx, changed)
}

// commit stores the transaction's changes, then runs the post-set
// callbacks (once with the operation's changes, once per declaration the
// Apply hook made) and the event callbacks (once, with everything).
func (s *Store) commit(tx *Txn) {
	var ev Event
	s.mu.Lock()
	for _, c := range tx.changes {
		_, existed := s.params[c.p.Name]
		if c.deleted {
			if existed {
				delete(s.params, c.p.Name)
				ev.Deleted = append(ev.Deleted, c.p)
			}
			continue
		}
		s.params[c.p.Name] = &entry{value: c.p.Value, desc: c.desc}
		switch {
		case existed:
			ev.Changed = append(ev.Changed, c.p)
		case c.p.Value.IsSet():
			ev.New = append(ev.New, c.p)
		}
	}
	s.mu.Unlock()
	var main []Parameter
	for _, c := range tx.changes {
		if c.post && !c.byApply {
			main = append(main, c.p)
		}
	}
	if len(main) > 0 {
		s.runPost(main)
	}
	for _, c := range tx.changes {
		if c.post && c.byApply {
			s.runPost([]Parameter{c.p})
		}
	}
	s.runEvents(ev)
}

// applyError is a declaration refused by the Apply hook: the hook's error,
// which is also ErrInvalidValue.
type applyError struct{ err error }

func (e applyError) Error() string   { return e.err.Error() }
func (e applyError) Unwrap() []error { return []error{ErrInvalidValue, e.err} }
