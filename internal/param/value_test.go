package param

import (
	"math"
	"testing"
)

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{NotSet(), "Parameter not set."},
		{BoolValue(true), "Boolean value is: True"},
		{BoolValue(false), "Boolean value is: False"},
		{IntegerValue(3), "Integer value is: 3"},
		{IntegerValue(-9223372036854775808), "Integer value is: -9223372036854775808"},
		{DoubleValue(1.5), "Double value is: 1.5"},
		{DoubleValue(1), "Double value is: 1.0"},
		{DoubleValue(0), "Double value is: 0.0"},
		{DoubleValue(-0.25), "Double value is: -0.25"},
		{DoubleValue(1e16), "Double value is: 1e+16"},
		{DoubleValue(1e15), "Double value is: 1000000000000000.0"},
		{DoubleValue(1e-5), "Double value is: 1e-05"},
		{DoubleValue(0.0001), "Double value is: 0.0001"},
		{DoubleValue(0.1), "Double value is: 0.1"},
		{DoubleValue(math.Inf(1)), "Double value is: inf"},
		{DoubleValue(math.Inf(-1)), "Double value is: -inf"},
		{DoubleValue(math.NaN()), "Double value is: nan"},
		{StringValue("x"), "String value is: x"},
		{StringValue(""), "String value is: "},
		{ByteArrayValue([]byte{1, 'A', '\''}), `Byte values are: [b'\x01', b'A', b"'"]`},
		{BoolArrayValue([]bool{true, false}), "Boolean values are: [True, False]"},
		{BoolArrayValue(nil), "Boolean values are: []"},
		{IntegerArrayValue([]int64{1, 2, 3}), "Integer values are: array('q', [1, 2, 3])"},
		{IntegerArrayValue(nil), "Integer values are: array('q')"},
		{DoubleArrayValue([]float64{1, 2.5}), "Double values are: array('d', [1.0, 2.5])"},
		{StringArrayValue([]string{"a", "b'c", "d\n"}), `String values are: ['a', "b'c", 'd\n']`},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%v: String() = %q, want %q", tt.v.Type(), got, tt.want)
		}
	}
	if got := IntegerValue(7).ValueString(); got != "7" {
		t.Errorf("ValueString = %q", got)
	}
	if got := NotSet().ValueString(); got != "None" {
		t.Errorf("ValueString(not set) = %q", got)
	}
}

func TestTypeString(t *testing.T) {
	want := []string{"not set", "bool", "integer", "double", "string", "byte_array", "bool_array", "integer_array", "double_array", "string_array"}
	for i, w := range want {
		if got := Type(i).String(); got != w {
			t.Errorf("Type(%d) = %q, want %q", i, got, w)
		}
		if !Type(i).Valid() {
			t.Errorf("Type(%d) not valid", i)
		}
	}
	if Type(10).Valid() {
		t.Error("Type(10) valid")
	}
}

func TestGettersAndImmutability(t *testing.T) {
	in := []int64{1, 2}
	v := IntegerArrayValue(in)
	in[0] = 99
	got, ok := v.IntegerArray()
	if !ok || got[0] != 1 {
		t.Fatalf("constructor did not copy: %v", got)
	}
	got[1] = 42
	again, _ := v.IntegerArray()
	if again[1] != 2 {
		t.Fatal("getter did not copy")
	}
	if _, ok := v.Bool(); ok {
		t.Error("Bool ok on integer array")
	}
	if b, ok := BoolValue(true).Bool(); !ok || !b {
		t.Error("Bool")
	}
	if i, ok := IntegerValue(5).Integer(); !ok || i != 5 {
		t.Error("Integer")
	}
	if d, ok := DoubleValue(2.5).Double(); !ok || d != 2.5 {
		t.Error("Double")
	}
	if s, ok := StringValue("s").Str(); !ok || s != "s" {
		t.Error("Str")
	}
	if b, ok := ByteArrayValue([]byte{7}).ByteArray(); !ok || b[0] != 7 {
		t.Error("ByteArray")
	}
	if b, ok := BoolArrayValue([]bool{true}).BoolArray(); !ok || !b[0] {
		t.Error("BoolArray")
	}
	if d, ok := DoubleArrayValue([]float64{1}).DoubleArray(); !ok || d[0] != 1 {
		t.Error("DoubleArray")
	}
	if s, ok := StringArrayValue([]string{"a"}).StringArray(); !ok || s[0] != "a" {
		t.Error("StringArray")
	}
	if NotSet().IsSet() || (Value{}).Type() != TypeNotSet {
		t.Error("zero value must be NOT_SET")
	}
}

func TestEqualAndFromAny(t *testing.T) {
	cases := []struct {
		in   any
		want Value
	}{
		{nil, NotSet()},
		{true, BoolValue(true)},
		{3, IntegerValue(3)},
		{int32(-3), IntegerValue(-3)},
		{uint8(200), IntegerValue(200)},
		{float32(0.5), DoubleValue(0.5)},
		{2.5, DoubleValue(2.5)},
		{"s", StringValue("s")},
		{[]byte{1}, ByteArrayValue([]byte{1})},
		{[]bool{true}, BoolArrayValue([]bool{true})},
		{[]int{1, 2}, IntegerArrayValue([]int64{1, 2})},
		{[]int64{1}, IntegerArrayValue([]int64{1})},
		{[]float64{1}, DoubleArrayValue([]float64{1})},
		{[]string{"a"}, StringArrayValue([]string{"a"})},
		{IntegerValue(9), IntegerValue(9)},
	}
	for _, c := range cases {
		got, err := FromAny(c.in)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("FromAny(%#v) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if c.in != nil {
			if _, isV := c.in.(Value); !isV {
				back, _ := FromAny(got.Interface())
				if !back.Equal(got) {
					t.Errorf("Interface round trip of %v", got)
				}
			}
		}
	}
	if _, err := FromAny(uint64(math.MaxUint64)); err == nil {
		t.Error("uint64 overflow accepted")
	}
	if _, err := FromAny(struct{}{}); err == nil {
		t.Error("struct accepted")
	}
	if IntegerValue(1).Equal(DoubleValue(1)) {
		t.Error("int equals double")
	}
	if !DoubleValue(math.NaN()).Equal(DoubleValue(math.NaN())) {
		t.Error("NaN must equal itself")
	}
	if IntegerArrayValue([]int64{1}).Equal(IntegerArrayValue([]int64{1, 2})) {
		t.Error("arrays of different length equal")
	}
}

func TestPythonReprs(t *testing.T) {
	strs := []struct{ in, want string }{
		{"a", `'a'`},
		{"it's", `"it's"`},
		{`both'"`, `'both\'"'`},
		{"tab\tcr\rback\\", `'tab\tcr\rback\\'`},
		{"\x01\x7f", `'\x01\x7f'`},
		{"é€", `'é€'`},
		{"\u00a0", `'\xa0'`},
		{"\u2028", `'\u2028'`},
		{"", `''`},
	}
	for _, s := range strs {
		if got := PyStr(s.in); got != s.want {
			t.Errorf("PyStr(%q) = %s, want %s", s.in, got, s.want)
		}
	}
	bs := []struct {
		in   []byte
		want string
	}{
		{[]byte{'a'}, `b'a'`},
		{[]byte{'\\'}, `b'\\'`},
		{[]byte{'"'}, `b'"'`},
		{[]byte{'\'', '"'}, `b'\'"'`},
		{[]byte{'\n'}, `b'\n'`},
		{[]byte{'\t'}, `b'\t'`},
		{[]byte{'\r'}, `b'\r'`},
		{[]byte{0xff}, `b'\xff'`},
	}
	for _, b := range bs {
		if got := pyBytes(b.in); got != b.want {
			t.Errorf("pyBytes(%v) = %s, want %s", b.in, got, b.want)
		}
	}
}

func TestWrongTypeGetters(t *testing.T) {
	v := StringValue("x")
	if _, ok := v.ByteArray(); ok {
		t.Error("ByteArray")
	}
	if _, ok := v.BoolArray(); ok {
		t.Error("BoolArray")
	}
	if _, ok := v.IntegerArray(); ok {
		t.Error("IntegerArray")
	}
	if _, ok := v.DoubleArray(); ok {
		t.Error("DoubleArray")
	}
	if _, ok := v.StringArray(); ok {
		t.Error("StringArray")
	}
	if _, ok := v.Integer(); ok {
		t.Error("Integer")
	}
	if NotSet().Interface() != nil {
		t.Error("Interface of NOT_SET")
	}
	if Type(42).String() != "unknown type 42" {
		t.Error(Type(42).String())
	}
}
