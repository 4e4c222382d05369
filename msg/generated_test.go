package msg_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/interfaces"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/dynamic"

	_ "github.com/nros-go/nros/internal/fixture/testmsgs/example_interfaces"
	_ "github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	_ "github.com/nros-go/nros/msg/action_msgs"
	_ "github.com/nros-go/nros/msg/builtin_interfaces"
	_ "github.com/nros-go/nros/msg/diagnostic_msgs"
	_ "github.com/nros-go/nros/msg/geometry_msgs"
	_ "github.com/nros-go/nros/msg/nav_msgs"
	_ "github.com/nros-go/nros/msg/nros_bench"
	_ "github.com/nros-go/nros/msg/rcl_interfaces"
	_ "github.com/nros-go/nros/msg/rosbag2_interfaces"
	_ "github.com/nros-go/nros/msg/rosgraph_msgs"
	_ "github.com/nros-go/nros/msg/sensor_msgs"
	_ "github.com/nros-go/nros/msg/service_msgs"
	_ "github.com/nros-go/nros/msg/shape_msgs"
	_ "github.com/nros-go/nros/msg/statistics_msgs"
	_ "github.com/nros-go/nros/msg/std_msgs"
	_ "github.com/nros-go/nros/msg/std_srvs"
	_ "github.com/nros-go/nros/msg/tf2_msgs"
	_ "github.com/nros-go/nros/msg/trajectory_msgs"
	_ "github.com/nros-go/nros/msg/unique_identifier_msgs"
	_ "github.com/nros-go/nros/msg/visualization_msgs"
)

// definitions loads the definitions of every generated type: the shipped
// packages and test_msgs.
func definitions(t testing.TB) (*interfaces.Set, []*idl.Msg) {
	t.Helper()
	set := interfaces.NewSet()
	if err := set.Load("../internal/idl/gen/testdata/interfaces"); err != nil {
		t.Fatal(err)
	}
	if err := set.LoadBundled(); err != nil {
		t.Fatal(err)
	}
	var all []*idl.Msg
	for _, p := range set.Packages {
		all = append(all, set.AllMsgs(p)...)
	}
	return set, all
}

// filler puts random values that respect the definition's bounds into
// generated structs, walking the Go value and its definition together
// (generated fields are in definition order).
type filler struct {
	set  *interfaces.Set
	rng  *rand.Rand
	defs map[string]*idl.Msg
	// over makes the first bounded field it meets one element or
	// character too long.
	over bool
}

func (f *filler) msg(v reflect.Value, m *idl.Msg) {
	for i, fd := range m.Fields {
		f.field(v.Field(i), fd.Type)
	}
}

var runes = []rune("aZ09 _-/:'\"é✓ハ😀\t")

func (f *filler) str(bound int, wide bool) string {
	n := f.rng.IntN(7)
	if bound > 0 {
		n = min(n, bound)
		if f.over {
			n, f.over = bound+1, false
			return strings.Repeat("x", n)
		}
	}
	var b strings.Builder
	for range n {
		r := runes[f.rng.IntN(len(runes))]
		if wide || r < 0x80 {
			b.WriteRune(r)
		} else {
			b.WriteByte('y') // keep bounded byte strings within their bound
		}
	}
	return b.String()
}

func (f *filler) elem(v reflect.Value, t idl.Type) {
	switch t.Kind {
	case idl.Bool:
		v.SetBool(f.rng.IntN(2) == 1)
	case idl.Byte, idl.Char, idl.Uint8, idl.Uint16, idl.Uint32, idl.Uint64:
		v.SetUint(f.rng.Uint64() >> (64 - 8*t.Kind.Size()))
	case idl.Int8, idl.Int16, idl.Int32, idl.Int64:
		v.SetInt(int64(f.rng.Uint64()) >> (64 - 8*t.Kind.Size()))
	case idl.Float32, idl.Float64:
		v.SetFloat(float64(float32(f.rng.NormFloat64() * 1e3)))
	case idl.String:
		v.SetString(f.str(t.StringBound, t.StringBound == 0))
	case idl.WString:
		v.SetString(f.str(t.StringBound, true))
	case idl.Message:
		f.msg(v, f.def(t))
	}
}

func (f *filler) def(t idl.Type) *idl.Msg {
	key := t.Package + "/" + t.Name
	if m, ok := f.defs[key]; ok {
		return m
	}
	for _, m := range f.set.AllMsgs(f.set.Packages[t.Package]) {
		if m.Name == t.Name {
			f.defs[key] = m
			return m
		}
	}
	panic("no definition of " + key)
}

func (f *filler) field(v reflect.Value, t idl.Type) {
	switch t.Array {
	case idl.Single:
		f.elem(v, t)
	case idl.Fixed:
		for i := range v.Len() {
			f.elem(v.Index(i), t.Elem())
		}
	default:
		n := f.rng.IntN(4)
		if t.Array == idl.Bounded {
			n = min(n, t.Size)
			if f.over {
				n, f.over = t.Size+1, false
			}
		}
		if n == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			f.elem(v.Index(i), t.Elem())
		}
	}
}

// TestGeneratedRoundTrip fills every generated type with random values and
// checks that both byte orders decode to the same value and re-encode to
// the same bytes.
func TestGeneratedRoundTrip(t *testing.T) {
	set, all := definitions(t)
	if len(all) < 200 {
		t.Fatalf("only %d definitions", len(all))
	}
	f := &filler{set: set, rng: rand.New(rand.NewPCG(1, 2)), defs: map[string]*idl.Msg{}}
	t.Logf("%d generated types, 20 random values each", len(all))
	dyn := dynamic.NewRegistry()
	for _, p := range set.Packages {
		if !p.Bundled {
			for _, m := range set.AllMsgs(p) {
				if err := dyn.AddMessage(m.FullName(), []byte(msgText(m))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, def := range all {
		name := def.FullName()
		for iter := range 20 {
			m, ok := msg.New(name)
			if !ok {
				t.Fatalf("%s is not registered", name)
			}
			f.msg(reflect.ValueOf(m).Elem(), def)
			for _, le := range []bool{true, false} {
				data, err := msg.MarshalChecked(m, le, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				back, _ := msg.New(name)
				if err := msg.Unmarshal(data, back); err != nil {
					t.Fatalf("%s (iteration %d): %v\n% x", name, iter, err, data)
				}
				if emptyToNil(reflect.ValueOf(back)); !reflect.DeepEqual(m, back) {
					t.Fatalf("%s: round trip changed the value\n%+v\n%+v", name, m, back)
				}
				if again := msg.Marshal(back, le, nil); !bytes.Equal(again, data) {
					t.Fatalf("%s: re-encoding differs", name)
				}
				// The dynamic decoder, driven by the definition, agrees.
				dt, err := dyn.Type(name)
				if err != nil {
					t.Fatal(err)
				}
				dm := dt.New()
				if err := msg.Unmarshal(data, dm); err != nil {
					t.Fatalf("%s: dynamic decoding: %v", name, err)
				}
				if a, b := msg.FormatYAML(m, msg.YAMLOptions{}), msg.FormatYAML(dm, msg.YAMLOptions{}); a != b {
					t.Fatalf("%s: dynamic YAML differs\n%s\n%s", name, a, b)
				}
				if b := msg.Marshal(dm, le, nil); !bytes.Equal(b, data) {
					t.Fatalf("%s: dynamic re-encoding differs", name)
				}
				// Every shorter prefix is an error, never a panic.
				if len(data) > cdr.HeaderSize+1 {
					cut := cdr.HeaderSize + f.rng.IntN(len(data)-cdr.HeaderSize)
					if err := msg.Unmarshal(data[:cut], back); err == nil {
						t.Fatalf("%s: a sample cut to %d of %d bytes decodes", name, cut, len(data))
					}
				}
			}
		}
	}
}

// msgText renders a parsed definition back as .msg text (fields only,
// with package-qualified types), to feed the dynamic registry.
func msgText(m *idl.Msg) string {
	var b strings.Builder
	for _, f := range m.Fields {
		b.WriteString(f.Type.String() + " " + f.Name + "\n")
	}
	return b.String()
}

// emptyToNil sets empty slices to nil: a decoder that reuses storage (here
// the default values of a New message) returns empty non-nil slices.
func emptyToNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		emptyToNil(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			emptyToNil(v.Field(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			emptyToNil(v.Index(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		for i := range v.Len() {
			emptyToNil(v.Index(i))
		}
	}
}

// TestGeneratedBounds checks that a value over a bound is reported by
// MarshalChecked and that its bytes are refused by Unmarshal.
func TestGeneratedBounds(t *testing.T) {
	set, all := definitions(t)
	f := &filler{set: set, rng: rand.New(rand.NewPCG(3, 4)), defs: map[string]*idl.Msg{}}
	checked := 0
	for _, def := range all {
		if !hasBound(def) {
			continue
		}
		m, _ := msg.New(def.FullName())
		f.over = true
		f.msg(reflect.ValueOf(m).Elem(), def)
		if f.over {
			continue // the bound sits in a nested message this walk did not reach
		}
		checked++
		data, err := msg.MarshalChecked(m, true, nil)
		if !errors.Is(err, cdr.ErrTooLong) {
			t.Errorf("%s: over-bound value: MarshalChecked error %v", def.FullName(), err)
		}
		back, _ := msg.New(def.FullName())
		if err := msg.Unmarshal(data, back); !errors.Is(err, cdr.ErrTooLong) {
			t.Errorf("%s: over-bound sample decodes with %v", def.FullName(), err)
		}
	}
	t.Logf("%d types with bounds checked", checked)
	if checked < 5 {
		t.Errorf("only %d types with bounds checked", checked)
	}
}

func hasBound(m *idl.Msg) bool {
	for _, f := range m.Fields {
		if f.Type.Array == idl.Bounded || f.Type.StringBound > 0 {
			return true
		}
	}
	return false
}

// TestBagSamples decodes real samples taken from the bags of
// the rosbag2 bags in testdata/bags (see testdata/bags/NOTICE) and checks that they
// re-encode to the same bytes.
func TestBagSamples(t *testing.T) {
	files, err := filepath.Glob("testdata/bags/*.cdr")
	if err != nil || len(files) < 30 {
		t.Fatalf("bag samples: %v, %d files", err, len(files))
	}
	paddingDiffs := 0
	defer func() { t.Logf("%d samples; %d recorded padding bytes were not zero", len(files), paddingDiffs) }()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		typ := bagSampleType(f)
		m, ok := msg.New(typ)
		if !ok {
			t.Fatalf("%s: type %s not registered", f, typ)
		}
		if err := msg.Unmarshal(data, m); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out := msg.Marshal(m, data[1] == 1, nil)
		if len(out) != len(data) {
			t.Errorf("%s: re-encoded %d bytes, recorded %d\n% x\n% x", f, len(out), len(data), out, data)
			continue
		}
		// The recording's serializer left uninitialised bytes in some
		// alignment padding; a differing byte is accepted only if it is
		// padding: ours is zero and the recorded value there changes nothing.
		for i := range out {
			if out[i] == data[i] {
				continue
			}
			probe := bytes.Clone(out)
			probe[i] = data[i]
			again, _ := msg.New(typ)
			if out[i] != 0 || msg.Unmarshal(probe, again) != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("%s: byte %d is %#x, recorded %#x\n% x\n% x", f, i, out[i], data[i], out, data)
				break
			}
			paddingDiffs++
		}
	}
}

// bagSampleType maps "walker_sensor_msgs.Imu_0.cdr" to "sensor_msgs/msg/Imu".
func bagSampleType(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".cdr")
	base = base[strings.IndexByte(base, '_')+1:] // drop the bag prefix
	if strings.HasPrefix(base, "test_") {        // cdr_test_...
		base = base[strings.IndexByte(base, '_')+1:]
	}
	base = base[:strings.LastIndexByte(base, '_')]
	if parts := strings.Split(base, "."); len(parts) == 3 { // pkg.srv.Name
		return strings.Join(parts, "/")
	}
	pkg, name, _ := strings.Cut(base, ".")
	return pkg + "/msg/" + name
}
