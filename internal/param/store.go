package param

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Errors returned by Store methods; test with errors.Is.
var (
	ErrNotDeclared     = errors.New("parameter not declared")
	ErrAlreadyDeclared = errors.New("parameter already declared")
	ErrUninitialized   = errors.New("parameter uninitialized")
	ErrInvalidType     = errors.New("invalid parameter type")
	ErrInvalidValue    = errors.New("invalid parameter value")
	ErrReadOnly        = errors.New("parameter is read-only")
	ErrInvalidName     = errors.New("invalid parameter name")
	// ErrNestedTransaction is returned by Declare, Undeclare and (as the
	// reason of a refused SetResult) the Set methods when they are called
	// from inside a callback of a transaction of the same store: a
	// validator, a post-set or event callback, or the Apply hook. rclcpp
	// throws in that case; the change must be made after the set returns.
	ErrNestedTransaction = errors.New("cannot set parameters from inside a parameter callback")
)

// SetResult is the outcome of a set, as rcl_interfaces/msg/SetParametersResult.
type SetResult struct {
	Successful bool
	Reason     string
}

// Event describes one successful change, as the content of a
// rcl_interfaces/msg/ParameterEvent (without node name and stamp).
type Event struct {
	New, Changed, Deleted []Parameter
}

// ListResult is the answer of List, as rcl_interfaces/msg/ListParametersResult.
type ListResult struct {
	Names    []string
	Prefixes []string
}

// DepthRecursive is the List depth meaning "any depth".
const DepthRecursive uint64 = 0

// Options mirror the parameter-related rclcpp NodeOptions.
type Options struct {
	// Overrides are initial values (from -p and params files, already
	// resolved for this node); they win over declared defaults.
	Overrides map[string]Value
	// AllowUndeclared lets Set create parameters that were never declared
	// (with dynamic typing) and lets Get return NOT_SET for unknown names.
	AllowUndeclared bool
	// AutoDeclareFromOverrides declares every override at construction,
	// with dynamic typing.
	AutoDeclareFromOverrides bool
	// Apply, when set, is a phase of every transaction that changes values
	// (a set, a declaration with a value, an undeclaration): it runs after
	// the validators accepted and before anything is committed, with the
	// parameters being changed (NOT_SET for removed ones), and carries
	// their effect out of the store (a node installs or removes its /clock
	// time source for use_sim_time). An error refuses the whole
	// transaction with the error's text as the reason and nothing is
	// committed, so Apply must leave the world as it found it when it
	// fails. The error's text should name the parameter: it is the reason
	// of a refused set, and the error of a refused Declare (which is also
	// ErrInvalidValue), as it is. Apply runs with the transaction held:
	// Get returns the committed (old) values, and tx declares further
	// parameters as part of the same transaction.
	Apply func(tx *Txn, changed []Parameter) error
}

// CallbackHandle identifies a registered callback; pass it to RemoveCallback.
type CallbackHandle struct{ id uint64 }

type entry struct {
	value Value
	desc  Descriptor
}

type onSetCB struct {
	id uint64
	fn func([]Parameter) SetResult
}

type postSetCB struct {
	id uint64
	fn func([]Parameter)
}

type eventCB struct {
	id uint64
	fn func(Event)
}

// Store is one node's parameters. It is safe for concurrent use.
//
// Every modification (Declare, Set, SetParameters — one transaction per
// parameter —, SetAtomically, Undeclare) is one transaction, and
// transactions run one at a time: check the request against the
// descriptors, run the validators on the proposed values, run the Apply
// hook, commit, then run the post-set and event callbacks on the committed
// values. Callbacks run on the modifying goroutine with no store lock held:
// they may call Get, Has, List, Describe and Add*/RemoveCallback (a
// callback added or removed takes effect with the next transaction). Get
// returns the committed values, so the old ones during validation and
// Apply and the new ones in post-set and event callbacks. A callback that
// tries to change the store itself gets ErrNestedTransaction; another
// goroutine that changes the store meanwhile waits for the transaction to
// end and then runs its own.
type Store struct {
	allowUndeclared bool
	overrides       map[string]Value
	applyFn         func(*Txn, []Parameter) error

	// txMu is held for a whole transaction, callbacks included: it
	// serialises transactions. owner is the identity (goid.Current) of the
	// goroutine holding txMu, 0 when none does.
	txMu    sync.Mutex
	owner   atomic.Uintptr
	waiting atomic.Int32 // goroutines in begin, for tests that need a waiter in place

	mu     sync.RWMutex // guards the fields below; never held while user code runs
	params map[string]*entry
	nextID uint64
	onSet  []onSetCB
	post   []postSetCB
	events []eventCB
}

// NewStore returns a store with the given options. With
// AutoDeclareFromOverrides, every override is declared (dynamically typed);
// Apply is not run for them.
func NewStore(opts Options) *Store {
	s := &Store{
		allowUndeclared: opts.AllowUndeclared,
		overrides:       maps.Clone(opts.Overrides),
		applyFn:         opts.Apply,
		params:          map[string]*entry{},
	}
	if s.overrides == nil {
		s.overrides = map[string]Value{}
	}
	if opts.AutoDeclareFromOverrides {
		for _, name := range slices.Sorted(maps.Keys(s.overrides)) {
			v := s.overrides[name]
			s.params[name] = &entry{value: v, desc: Descriptor{Name: name, Type: v.typ, DynamicTyping: true}}
		}
	}
	return s
}

// Overrides returns a copy of the override values the store was built with.
func (s *Store) Overrides() map[string]Value { return maps.Clone(s.overrides) }

// Override returns the override for name, if any.
func (s *Store) Override(name string) (Value, bool) {
	v, ok := s.overrides[name]
	return v, ok
}

// Declare declares a parameter and returns its initial value: the override
// for name if there is one, else def. Rules (rclcpp's):
//   - the name must be non-empty and not yet declared (ErrAlreadyDeclared);
//   - unless d.DynamicTyping, the parameter gets a fixed type: d.Type, or
//     def's type when d.Type is NOT_SET; a statically typed parameter with
//     neither is an error; a default or override of another type is an
//     error naming the parameter and the wanted type (ErrInvalidType);
//   - a statically typed parameter with no default and no override is
//     declared uninitialized: Get reports ErrUninitialized until it is set;
//   - the initial value must satisfy the descriptor's range and be
//     accepted by the on-set validators and the Apply hook
//     (ErrInvalidValue);
//   - on success with a value, the post-set and event callbacks run.
//
// Read-only does not stop the initial value, only later Sets. Called from
// a callback of this store, it returns ErrNestedTransaction.
func (s *Store) Declare(name string, def Value, d Descriptor) (Value, error) {
	if err := s.begin(); err != nil {
		return Value{}, fmt.Errorf("%w (declaring '%s')", err, name)
	}
	defer s.end()
	tx := s.newTxn()
	initial, err := tx.declare(name, def, d)
	if err != nil || !initial.IsSet() {
		if err == nil {
			s.commit(tx)
		}
		return initial, err
	}
	if err := s.apply(tx); err != nil {
		return Value{}, applyError{err}
	}
	s.commit(tx)
	return initial, nil
}

func (s *Store) lookup(name string) (*entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.params[name]
	return e, ok
}

// Has reports whether name is declared.
func (s *Store) Has(name string) bool {
	_, ok := s.lookup(name)
	return ok
}

// Get returns the (committed) value of a declared parameter. An undeclared
// name is ErrNotDeclared (or NOT_SET and no error with AllowUndeclared); a
// statically typed parameter without a value is ErrUninitialized.
func (s *Store) Get(name string) (Value, error) {
	e, ok := s.lookup(name)
	return s.valueOf(name, e, ok)
}

func (s *Store) valueOf(name string, e *entry, ok bool) (Value, error) {
	if !ok {
		if s.allowUndeclared {
			return Value{}, nil
		}
		return Value{}, fmt.Errorf("%w: parameter '%s' has not been declared", ErrNotDeclared, name)
	}
	if !e.value.IsSet() && !e.desc.DynamicTyping {
		return Value{}, fmt.Errorf("%w: statically typed parameter '%s' has no value", ErrUninitialized, name)
	}
	return e.value, nil
}

// Names returns the declared parameter names, sorted.
func (s *Store) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.params))
}

// Set sets one parameter; see SetAtomically for the rules.
func (s *Store) Set(name string, v Value) SetResult {
	return s.SetAtomically([]Parameter{{Name: name, Value: v}})
}

// SetParameters sets each parameter in its own transaction (as the
// set_parameters service and rclcpp do) and returns one result per
// parameter.
func (s *Store) SetParameters(ps []Parameter) []SetResult {
	out := make([]SetResult, len(ps))
	for i, p := range ps {
		out[i] = s.SetAtomically([]Parameter{p})
	}
	return out
}

// SetAtomically sets all parameters or none, in one transaction. For each
// parameter, in order: the name must be non-empty; an undeclared name is
// refused unless AllowUndeclared (then it is declared with dynamic typing);
// a read-only parameter is refused; NOT_SET undeclares a dynamically typed
// parameter and is refused for a statically typed one; a value of another
// type is refused unless dynamic typing; ranges are enforced. Then the
// on-set validators run (newest first) with the whole list; the first
// rejection rejects the set with its reason. Then the Apply hook runs with
// the changes; its error rejects the set with the error as the reason. On
// success the values are committed, then post-set callbacks and event
// callbacks run. Called from a callback of this store, it is refused with
// ErrNestedTransaction's text as the reason.
func (s *Store) SetAtomically(ps []Parameter) SetResult {
	if err := s.begin(); err != nil {
		return SetResult{Reason: err.Error()}
	}
	defer s.end()
	tx := s.newTxn()
	for _, p := range ps {
		if p.Name == "" {
			return SetResult{Reason: "parameter name must not be empty"}
		}
		cur, declared := tx.lookup(p.Name)
		if !declared {
			if !s.allowUndeclared {
				return SetResult{Reason: fmt.Sprintf("parameter '%s' cannot be set because it was not declared", p.Name)}
			}
			if !p.Value.IsSet() {
				continue
			}
			tx.stage(change{p: p, desc: Descriptor{Name: p.Name, Type: p.Value.typ, DynamicTyping: true}, post: true})
			continue
		}
		if cur.desc.ReadOnly {
			return SetResult{Reason: fmt.Sprintf("parameter '%s' cannot be set because it is read-only", p.Name)}
		}
		if !p.Value.IsSet() {
			if !cur.desc.DynamicTyping {
				return SetResult{Reason: fmt.Sprintf("parameter '%s' cannot be undeclared because it is statically typed", p.Name)}
			}
			tx.stage(change{p: p, deleted: true, post: true})
			continue
		}
		if !cur.desc.DynamicTyping && p.Value.typ != cur.desc.Type {
			return SetResult{Reason: fmt.Sprintf("Wrong parameter type, parameter {%s} is of type {%s}, setting it to {%s} is not allowed.", p.Name, cur.desc.Type, p.Value.typ)}
		}
		if reason := cur.desc.checkRange(p.Name, p.Value); reason != "" {
			return SetResult{Reason: reason}
		}
		d := cur.desc
		if d.DynamicTyping {
			d.Type = p.Value.typ
		}
		tx.stage(change{p: p, desc: d, post: true})
	}
	if len(tx.changes) == 0 {
		return SetResult{Successful: true}
	}
	if r := s.validate(ps); !r.Successful {
		return r
	}
	if err := s.apply(tx); err != nil {
		return SetResult{Reason: err.Error()}
	}
	s.commit(tx)
	return SetResult{Successful: true}
}

// Undeclare removes a declared parameter. Read-only and statically typed
// parameters cannot be undeclared (as in rclcpp). The Apply hook sees the
// parameter as NOT_SET and may refuse; event callbacks see it as deleted;
// validators and post-set callbacks are not run. Called from a callback of
// this store, it returns ErrNestedTransaction.
func (s *Store) Undeclare(name string) error {
	if err := s.begin(); err != nil {
		return fmt.Errorf("%w (undeclaring '%s')", err, name)
	}
	defer s.end()
	e, ok := s.lookup(name)
	if !ok {
		return fmt.Errorf("%w: parameter '%s' has not been declared", ErrNotDeclared, name)
	}
	if e.desc.ReadOnly {
		return fmt.Errorf("%w: cannot undeclare read-only parameter '%s'", ErrReadOnly, name)
	}
	if !e.desc.DynamicTyping {
		return fmt.Errorf("%w: cannot undeclare statically typed parameter '%s'", ErrInvalidType, name)
	}
	tx := s.newTxn()
	tx.stage(change{p: Parameter{Name: name}, deleted: true})
	if err := s.apply(tx); err != nil {
		return fmt.Errorf("parameter '%s' cannot be undeclared: %w", name, err)
	}
	s.commit(tx)
	return nil
}

// Describe returns the descriptors of the named parameters. For a
// dynamically typed parameter, Type is the current value's type. An
// undeclared name is ErrNotDeclared, unless AllowUndeclared (then a
// descriptor with only the name, dynamically typed, is returned).
func (s *Store) Describe(names ...string) ([]Descriptor, error) {
	out := make([]Descriptor, 0, len(names))
	for _, n := range names {
		e, ok := s.lookup(n)
		if !ok {
			if s.allowUndeclared {
				out = append(out, Descriptor{Name: n, DynamicTyping: true})
				continue
			}
			return nil, fmt.Errorf("%w: parameter '%s' has not been declared", ErrNotDeclared, n)
		}
		out = append(out, e.desc.clone())
	}
	return out, nil
}

// Types returns the current types of the named parameters (NOT_SET for
// unknown names), as the get_parameter_types service does.
func (s *Store) Types(names ...string) []Type {
	out := make([]Type, len(names))
	for i, n := range names {
		if e, ok := s.lookup(n); ok {
			out[i] = e.value.typ
		}
	}
	return out
}

// List lists declared parameters as rclcpp's list_parameters does, with
// '.' as separator: with no prefixes, all names with fewer than depth
// separators (any with DepthRecursive); with prefixes, the names equal to
// a prefix or below it with fewer than depth separators counted from the
// end of the prefix (so, as in rclcpp, depth 2 lists a prefix's direct
// children and depth 1 nothing below it). Names are sorted; Prefixes
// holds the distinct parents (name up to its last '.') of listed names.
func (s *Store) List(prefixes []string, depth uint64) ListResult {
	var res ListResult
	for _, name := range s.Names() {
		getAll := len(prefixes) == 0 && (depth == DepthRecursive || uint64(strings.Count(name, ".")) < depth)
		match := false
		for _, p := range prefixes {
			if name == p {
				match = true
				break
			}
			if strings.HasPrefix(name, p+".") {
				rest := name[len(p):]
				if depth == DepthRecursive || uint64(strings.Count(rest, ".")) < depth {
					match = true
					break
				}
			}
		}
		if !getAll && !match {
			continue
		}
		res.Names = append(res.Names, name)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			if pre := name[:i]; !slices.Contains(res.Prefixes, pre) {
				res.Prefixes = append(res.Prefixes, pre)
			}
		}
	}
	return res
}

// AddOnSetCallback registers a validator run before every change (set or
// declaration with a value) with the parameters being set. It returns
// SetResult{Successful: false, Reason: ...} to reject the change.
// Validators run newest first; the first rejection stops the others.
func (s *Store) AddOnSetCallback(fn func([]Parameter) SetResult) *CallbackHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.onSet = append(s.onSet, onSetCB{id: s.nextID, fn: fn})
	return &CallbackHandle{id: s.nextID}
}

// AddPostSetCallback registers a callback run after every successful change
// (set or declaration with a value) with the parameters that changed
// (NOT_SET for deleted ones). Like validators, newest runs first (rclcpp
// keeps both lists front-inserted).
func (s *Store) AddPostSetCallback(fn func([]Parameter)) *CallbackHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.post = append(s.post, postSetCB{id: s.nextID, fn: fn})
	return &CallbackHandle{id: s.nextID}
}

// AddEventCallback registers a callback run after every successful
// declaration, change or removal, with new/changed/deleted parameters (what
// a node publishes on /parameter_events).
func (s *Store) AddEventCallback(fn func(Event)) *CallbackHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.events = append(s.events, eventCB{id: s.nextID, fn: fn})
	return &CallbackHandle{id: s.nextID}
}

// RemoveCallback unregisters a callback; it reports whether it was found.
func (s *Store) RemoveCallback(h *CallbackHandle) bool {
	if h == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.onSet) + len(s.post) + len(s.events)
	s.onSet = slices.DeleteFunc(s.onSet, func(c onSetCB) bool { return c.id == h.id })
	s.post = slices.DeleteFunc(s.post, func(c postSetCB) bool { return c.id == h.id })
	s.events = slices.DeleteFunc(s.events, func(c eventCB) bool { return c.id == h.id })
	return n != len(s.onSet)+len(s.post)+len(s.events)
}

func (s *Store) validate(ps []Parameter) SetResult {
	s.mu.RLock()
	cbs := slices.Clone(s.onSet)
	s.mu.RUnlock()
	arg := slices.Clone(ps)
	for i := len(cbs) - 1; i >= 0; i-- {
		r := cbs[i].fn(arg)
		if !r.Successful {
			if r.Reason == "" {
				r.Reason = "rejected by a set-parameters callback"
			}
			return r
		}
	}
	return SetResult{Successful: true}
}

func (s *Store) runPost(ps []Parameter) {
	s.mu.RLock()
	cbs := slices.Clone(s.post)
	s.mu.RUnlock()
	for i := len(cbs) - 1; i >= 0; i-- {
		cbs[i].fn(slices.Clone(ps))
	}
}

func (s *Store) runEvents(ev Event) {
	if len(ev.New)+len(ev.Changed)+len(ev.Deleted) == 0 {
		return
	}
	s.mu.RLock()
	cbs := slices.Clone(s.events)
	s.mu.RUnlock()
	for _, c := range cbs {
		c.fn(ev)
	}
}
