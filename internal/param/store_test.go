package param

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestDeclareRules(t *testing.T) {
	s := NewStore(Options{Overrides: map[string]Value{
		"ov_int":    IntegerValue(7),
		"ov_bad":    StringValue("x"),
		"ov_typed":  DoubleValue(2.5),
		"ov_range":  IntegerValue(100),
		"ov_dyn":    StringValue("dyn"),
		"ov_notype": IntegerValue(1),
	}})
	tests := []struct {
		name    string
		def     Value
		d       Descriptor
		want    Value
		wantErr error
		errHas  string
	}{
		{"plain", IntegerValue(1), Descriptor{}, IntegerValue(1), nil, ""},
		{"ov_int", IntegerValue(1), Descriptor{}, IntegerValue(7), nil, ""},
		{"ov_bad", IntegerValue(1), Descriptor{}, Value{}, ErrInvalidType, "ov_bad' wants type integer"},
		{"ov_typed", NotSet(), Descriptor{Type: TypeDouble}, DoubleValue(2.5), nil, ""},
		{"uninit", NotSet(), Descriptor{Type: TypeDouble}, NotSet(), nil, ""},
		{"ov_notype", NotSet(), Descriptor{}, Value{}, ErrInvalidType, "without a type"},
		{"mismatch_default", StringValue("s"), Descriptor{Type: TypeInteger}, Value{}, ErrInvalidType, "default value is string"},
		{"ov_range", IntegerValue(1), Descriptor{IntegerRange: &IntegerRange{From: 0, To: 10}}, Value{}, ErrInvalidValue, "integer range"},
		{"ov_dyn", IntegerValue(1), Descriptor{DynamicTyping: true}, StringValue("dyn"), nil, ""},
		{"dyn_unset", NotSet(), Descriptor{DynamicTyping: true}, NotSet(), nil, ""},
		{"", IntegerValue(1), Descriptor{}, Value{}, ErrInvalidName, ""},
		{"two_ranges", IntegerValue(1), Descriptor{IntegerRange: &IntegerRange{To: 1}, FloatingPointRange: &FloatingPointRange{To: 1}}, Value{}, ErrInvalidValue, "only one"},
		{"ro", BoolValue(true), Descriptor{ReadOnly: true}, BoolValue(true), nil, ""},
	}
	for _, tt := range tests {
		got, err := s.Declare(tt.name, tt.def, tt.d)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("Declare(%q) err = %v, want %v containing %q", tt.name, err, tt.wantErr, tt.errHas)
			}
			if tt.name != "" && s.Has(tt.name) {
				t.Errorf("%q declared despite error", tt.name)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("Declare(%q) = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := s.Declare("plain", IntegerValue(2), Descriptor{}); !errors.Is(err, ErrAlreadyDeclared) {
		t.Errorf("double declare: %v", err)
	}
	if _, err := s.Get("uninit"); !errors.Is(err, ErrUninitialized) {
		t.Errorf("Get uninit: %v", err)
	}
	if r := s.Set("uninit", DoubleValue(3)); !r.Successful {
		t.Errorf("set uninit: %v", r)
	}
	if v, err := s.Get("uninit"); err != nil || !v.Equal(DoubleValue(3)) {
		t.Errorf("Get after set = %v %v", v, err)
	}
	if v, err := s.Get("dyn_unset"); err != nil || v.IsSet() {
		t.Errorf("dyn_unset = %v %v", v, err)
	}
	if _, err := s.Get("nope"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("Get undeclared: %v", err)
	}
}

func TestSetRules(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "i", IntegerValue(0), Descriptor{IntegerRange: &IntegerRange{From: 0, To: 10, Step: 3}})
	mustDeclare(t, s, "d", DoubleValue(0), Descriptor{FloatingPointRange: &FloatingPointRange{From: 0, To: 1, Step: 0.1}})
	mustDeclare(t, s, "ro", StringValue("a"), Descriptor{ReadOnly: true})
	mustDeclare(t, s, "dyn", IntegerValue(1), Descriptor{DynamicTyping: true})
	mustDeclare(t, s, "s", StringValue("a"), Descriptor{})
	tests := []struct {
		name   string
		v      Value
		ok     bool
		reason string
	}{
		{"i", IntegerValue(3), true, ""},
		{"i", IntegerValue(10), true, ""}, // To is always allowed
		{"i", IntegerValue(4), false, "integer range"},
		{"i", IntegerValue(11), false, "integer range"},
		{"i", IntegerValue(-1), false, "integer range"},
		{"i", DoubleValue(3), false, "Wrong parameter type, parameter {i} is of type {integer}, setting it to {double} is not allowed."},
		{"d", DoubleValue(0.3), true, ""},
		{"d", DoubleValue(1), true, ""},
		{"d", DoubleValue(0.35), false, "floating point range"},
		{"d", DoubleValue(1.1), false, "floating point range"},
		{"ro", StringValue("b"), false, "read-only"},
		{"dyn", StringValue("now a string"), true, ""},
		{"s", NotSet(), false, "statically typed"},
		{"missing", IntegerValue(1), false, "not declared"},
		{"", IntegerValue(1), false, "empty"},
		{"dyn", NotSet(), true, ""},
	}
	for _, tt := range tests {
		r := s.Set(tt.name, tt.v)
		if r.Successful != tt.ok || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("Set(%q, %v) = %+v, want ok=%v reason~%q", tt.name, tt.v, r, tt.ok, tt.reason)
		}
	}
	if s.Has("dyn") {
		t.Error("setting NOT_SET on a dynamic parameter must undeclare it")
	}
	if v, _ := s.Get("i"); !v.Equal(IntegerValue(10)) {
		t.Errorf("i = %v", v)
	}
	if d, _ := s.Describe("ro"); !d[0].ReadOnly || d[0].Name != "ro" || d[0].Type != TypeString {
		t.Errorf("describe ro = %+v", d)
	}
}

func mustDeclare(t *testing.T, s *Store, name string, v Value, d Descriptor) {
	t.Helper()
	if _, err := s.Declare(name, v, d); err != nil {
		t.Fatal(err)
	}
}

func TestAtomicAndCallbacks(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
	mustDeclare(t, s, "b", IntegerValue(1), Descriptor{})
	var order []string
	var post [][]Parameter
	var events []Event
	s.AddOnSetCallback(func(ps []Parameter) SetResult {
		order = append(order, "first")
		return SetResult{Successful: true}
	})
	h := s.AddOnSetCallback(func(ps []Parameter) SetResult {
		order = append(order, "second")
		for _, p := range ps {
			if v, _ := p.Value.Integer(); v < 0 {
				return SetResult{Reason: fmt.Sprintf("%s must not be negative", p.Name)}
			}
		}
		return SetResult{Successful: true}
	})
	s.AddPostSetCallback(func(ps []Parameter) { post = append(post, ps) })
	s.AddEventCallback(func(e Event) { events = append(events, e) })

	r := s.SetAtomically([]Parameter{{"a", IntegerValue(5)}, {"b", IntegerValue(-1)}})
	if r.Successful || r.Reason != "b must not be negative" {
		t.Fatalf("atomic set = %+v", r)
	}
	if v, _ := s.Get("a"); !v.Equal(IntegerValue(1)) {
		t.Errorf("a changed by rejected atomic set: %v", v)
	}
	if !slices.Equal(order, []string{"second"}) {
		t.Errorf("validator order = %v (newest first, stop at rejection)", order)
	}
	if len(post) != 0 || len(events) != 0 {
		t.Error("callbacks ran for a rejected set")
	}
	// A descriptor failure in the batch also rejects all.
	if r := s.SetAtomically([]Parameter{{"a", IntegerValue(5)}, {"b", StringValue("x")}}); r.Successful {
		t.Error("type error in batch accepted")
	}
	if v, _ := s.Get("a"); !v.Equal(IntegerValue(1)) {
		t.Errorf("a changed: %v", v)
	}
	order = nil
	if r := s.SetAtomically([]Parameter{{"a", IntegerValue(5)}, {"b", IntegerValue(6)}}); !r.Successful {
		t.Fatalf("set = %+v", r)
	}
	if !slices.Equal(order, []string{"second", "first"}) {
		t.Errorf("order = %v", order)
	}
	if len(post) != 1 || len(post[0]) != 2 || !post[0][1].Value.Equal(IntegerValue(6)) {
		t.Errorf("post = %v", post)
	}
	if len(events) != 1 || len(events[0].Changed) != 2 {
		t.Errorf("events = %+v", events)
	}
	// Per-parameter sets: one fails, the other succeeds.
	rs := s.SetParameters([]Parameter{{"a", IntegerValue(-5)}, {"b", IntegerValue(8)}})
	if rs[0].Successful || !rs[1].Successful {
		t.Errorf("SetParameters = %+v", rs)
	}
	// Validators also vet declarations.
	if _, err := s.Declare("neg", IntegerValue(-1), Descriptor{}); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "neg must not be negative") {
		t.Errorf("declare rejected by validator: %v", err)
	}
	if !s.RemoveCallback(h) || s.RemoveCallback(h) {
		t.Error("RemoveCallback")
	}
	if r := s.Set("a", IntegerValue(-5)); !r.Successful {
		t.Errorf("removed validator still active: %+v", r)
	}
	if _, err := s.Declare("c", IntegerValue(1), Descriptor{}); err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if len(last.New) != 1 || last.New[0].Name != "c" {
		t.Errorf("declare event = %+v", last)
	}
	if !post[len(post)-1][0].Value.Equal(IntegerValue(1)) {
		t.Error("post-set callback not run on declare")
	}
}

func TestUndeclaredPolicy(t *testing.T) {
	s := NewStore(Options{AllowUndeclared: true})
	if v, err := s.Get("x"); err != nil || v.IsSet() {
		t.Errorf("Get undeclared with allow = %v, %v", v, err)
	}
	if r := s.Set("x", IntegerValue(1)); !r.Successful {
		t.Fatalf("set undeclared: %+v", r)
	}
	if r := s.Set("x", StringValue("now dynamic")); !r.Successful {
		t.Errorf("implicit params are dynamically typed: %+v", r)
	}
	if err := s.Undeclare("x"); err != nil {
		t.Errorf("undeclare implicit: %v", err)
	}
	if d, err := s.Describe("zzz"); err != nil || d[0].Name != "zzz" {
		t.Errorf("describe undeclared with allow: %v %v", d, err)
	}

	a := NewStore(Options{AutoDeclareFromOverrides: true, Overrides: map[string]Value{"o": IntegerValue(3), "p.q": StringValue("s")}})
	if v, err := a.Get("o"); err != nil || !v.Equal(IntegerValue(3)) {
		t.Errorf("auto-declared o = %v %v", v, err)
	}
	if _, err := a.Declare("o", IntegerValue(1), Descriptor{}); !errors.Is(err, ErrAlreadyDeclared) {
		t.Errorf("declare auto-declared: %v", err)
	}
	if got := a.Names(); !slices.Equal(got, []string{"o", "p.q"}) {
		t.Errorf("names = %v", got)
	}
	if _, err := a.Describe("nope"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("describe undeclared: %v", err)
	}
}

func TestUndeclare(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "st", IntegerValue(1), Descriptor{})
	mustDeclare(t, s, "ro", IntegerValue(1), Descriptor{ReadOnly: true, DynamicTyping: true})
	mustDeclare(t, s, "dy", IntegerValue(1), Descriptor{DynamicTyping: true})
	if err := s.Undeclare("st"); !errors.Is(err, ErrInvalidType) {
		t.Errorf("undeclare static: %v", err)
	}
	if err := s.Undeclare("ro"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("undeclare ro: %v", err)
	}
	if err := s.Undeclare("dy"); err != nil || s.Has("dy") {
		t.Errorf("undeclare dynamic: %v", err)
	}
	if err := s.Undeclare("dy"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("undeclare twice: %v", err)
	}
	if _, err := s.Declare("dy", StringValue("again"), Descriptor{}); err != nil {
		t.Errorf("redeclare after undeclare: %v", err)
	}
}

func TestList(t *testing.T) {
	s := NewStore(Options{})
	for _, n := range []string{"a", "b.c", "b.d.e", "b.d.f", "bb", "x.y"} {
		mustDeclare(t, s, n, IntegerValue(1), Descriptor{})
	}
	tests := []struct {
		prefixes []string
		depth    uint64
		names    string
		prefs    string
	}{
		{nil, DepthRecursive, "a b.c b.d.e b.d.f bb x.y", "b b.d x"},
		{nil, 1, "a bb", ""},
		{nil, 2, "a b.c bb x.y", "b x"},
		{[]string{"b"}, DepthRecursive, "b.c b.d.e b.d.f", "b b.d"},
		// rclcpp counts the separator right after the prefix, so depth 1
		// under a prefix lists nothing and depth 2 lists direct children.
		{[]string{"b"}, 1, "", ""},
		{[]string{"b"}, 2, "b.c", "b"},
		{[]string{"b.d"}, 2, "b.d.e b.d.f", "b.d"},
		{[]string{"bb"}, 1, "bb", ""},
		{[]string{"zz"}, 0, "", ""},
	}
	for _, tt := range tests {
		r := s.List(tt.prefixes, tt.depth)
		if g := strings.Join(r.Names, " "); g != tt.names {
			t.Errorf("List(%v,%d) names = %q, want %q", tt.prefixes, tt.depth, g, tt.names)
		}
		if g := strings.Join(r.Prefixes, " "); g != tt.prefs {
			t.Errorf("List(%v,%d) prefixes = %q, want %q", tt.prefixes, tt.depth, g, tt.prefs)
		}
	}
	if ty := s.Types("a", "zz"); ty[0] != TypeInteger || ty[1] != TypeNotSet {
		t.Errorf("Types = %v", ty)
	}
}

func TestRanges(t *testing.T) {
	ir := Descriptor{IntegerRange: &IntegerRange{From: -9223372036854775808, To: 9223372036854775807, Step: 2}}
	if r := ir.checkRange("p", IntegerValue(9223372036854775807)); r != "" {
		t.Error("To must be accepted")
	}
	if r := ir.checkRange("p", IntegerValue(0)); r != "" {
		t.Error("0 is From + k*2")
	}
	if r := ir.checkRange("p", IntegerValue(1)); r == "" {
		t.Error("1 is not on the grid")
	}
	fr := Descriptor{FloatingPointRange: &FloatingPointRange{From: -1, To: 1}}
	for _, x := range []float64{-1, 1, 0, 0.999999} {
		if r := fr.checkRange("p", DoubleValue(x)); r != "" {
			t.Errorf("%v rejected", x)
		}
	}
	if fr.checkRange("p", DoubleValue(1.0001)) == "" {
		t.Error("1.0001 accepted")
	}
	if _, err := NewStore(Options{}).Declare("bad", DoubleValue(0), Descriptor{FloatingPointRange: &FloatingPointRange{From: 1, To: 0}}); err == nil {
		t.Error("inverted range accepted")
	}
	// Ranges of another type do not apply (rclcpp ignores them).
	if fr.checkRange("p", IntegerValue(50)) != "" {
		t.Error("float range applied to integer")
	}
}

func TestConcurrentStore(t *testing.T) {
	s := NewStore(Options{})
	mustDeclare(t, s, "n", IntegerValue(0), Descriptor{})
	var seen sync.Map
	s.AddPostSetCallback(func(ps []Parameter) {
		v, _ := ps[0].Value.Integer()
		seen.Store(v, true)
	})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				s.Set("n", IntegerValue(int64(g*1000+i)))
				_, _ = s.Get("n")
				_ = s.List(nil, 0)
			}
		}(g)
	}
	wg.Wait()
	count := 0
	seen.Range(func(any, any) bool { count++; return true })
	if count != 800 {
		t.Errorf("post-set saw %d distinct values, want 800", count)
	}
}

func TestPostSetOrderAndUninitializedEvents(t *testing.T) {
	s := NewStore(Options{})
	var order []int
	s.AddPostSetCallback(func([]Parameter) { order = append(order, 1) })
	s.AddPostSetCallback(func([]Parameter) { order = append(order, 2) })
	var events int
	s.AddEventCallback(func(Event) { events++ })
	mustDeclare(t, s, "typed", NotSet(), Descriptor{Type: TypeBool})
	if len(order) != 0 || events != 0 {
		t.Errorf("uninitialized declare ran callbacks: order=%v events=%d", order, events)
	}
	if r := s.Set("typed", BoolValue(true)); !r.Successful {
		t.Fatal(r)
	}
	if !slices.Equal(order, []int{2, 1}) || events != 1 {
		t.Errorf("post-set order = %v (newest first), events = %d", order, events)
	}
	if r := s.Set("typed", IntegerValue(1)); r.Successful {
		t.Error("type change on static parameter accepted")
	}
}

func TestOverridesAccessors(t *testing.T) {
	ov := map[string]Value{"a": IntegerValue(1)}
	s := NewStore(Options{Overrides: ov})
	ov["a"] = IntegerValue(2) // the store keeps its own copy
	if v, ok := s.Override("a"); !ok || !v.Equal(IntegerValue(1)) {
		t.Errorf("Override(a) = %v %v", v, ok)
	}
	if _, ok := s.Override("b"); ok {
		t.Error("Override(b)")
	}
	m := s.Overrides()
	m["c"] = IntegerValue(3)
	if _, ok := s.Override("c"); ok {
		t.Error("Overrides() leaked the internal map")
	}
	if s.Has("a") {
		t.Error("overrides must not be declared without AutoDeclareFromOverrides")
	}
}
