// Package param holds ROS 2 parameter values, descriptors, the per-node
// parameter store (with rclcpp's declare/set/callback semantics) and the
// loader for ROS 2 parameter YAML files (as rcl_yaml_param_parser reads them).
package param

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Type is a ROS 2 parameter type; the numbers are those of
// rcl_interfaces/msg/ParameterType.
type Type uint8

// The ROS 2 parameter types.
const (
	TypeNotSet       Type = 0
	TypeBool         Type = 1
	TypeInteger      Type = 2
	TypeDouble       Type = 3
	TypeString       Type = 4
	TypeByteArray    Type = 5
	TypeBoolArray    Type = 6
	TypeIntegerArray Type = 7
	TypeDoubleArray  Type = 8
	TypeStringArray  Type = 9
)

// String returns the type name as rclcpp's to_string(ParameterType) does
// ("not set", "bool", "integer", "double", "string", "byte_array", ...).
func (t Type) String() string {
	switch t {
	case TypeNotSet:
		return "not set"
	case TypeBool:
		return "bool"
	case TypeInteger:
		return "integer"
	case TypeDouble:
		return "double"
	case TypeString:
		return "string"
	case TypeByteArray:
		return "byte_array"
	case TypeBoolArray:
		return "bool_array"
	case TypeIntegerArray:
		return "integer_array"
	case TypeDoubleArray:
		return "double_array"
	case TypeStringArray:
		return "string_array"
	}
	return fmt.Sprintf("unknown type %d", uint8(t))
}

// Valid reports whether t is one of the ten ROS 2 parameter types.
func (t Type) Valid() bool { return t <= TypeStringArray }

// Value is an immutable, typed parameter value. The zero Value is NOT_SET.
// Slices passed to constructors and returned by getters are copies.
type Value struct {
	typ   Type
	b     bool
	i     int64
	d     float64
	s     string
	bytes []byte
	bools []bool
	ints  []int64
	dbls  []float64
	strs  []string
}

// NotSet returns the NOT_SET value (the zero Value).
func NotSet() Value { return Value{} }

// BoolValue returns a BOOL value.
func BoolValue(b bool) Value { return Value{typ: TypeBool, b: b} }

// IntegerValue returns an INTEGER value.
func IntegerValue(i int64) Value { return Value{typ: TypeInteger, i: i} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(d float64) Value { return Value{typ: TypeDouble, d: d} }

// StringValue returns a STRING value.
func StringValue(s string) Value { return Value{typ: TypeString, s: s} }

// ByteArrayValue returns a BYTE_ARRAY value holding a copy of b.
func ByteArrayValue(b []byte) Value {
	return Value{typ: TypeByteArray, bytes: cloneNonNil(b)}
}

// BoolArrayValue returns a BOOL_ARRAY value holding a copy of b.
func BoolArrayValue(b []bool) Value {
	return Value{typ: TypeBoolArray, bools: cloneNonNil(b)}
}

// IntegerArrayValue returns an INTEGER_ARRAY value holding a copy of v.
func IntegerArrayValue(v []int64) Value {
	return Value{typ: TypeIntegerArray, ints: cloneNonNil(v)}
}

// DoubleArrayValue returns a DOUBLE_ARRAY value holding a copy of v.
func DoubleArrayValue(v []float64) Value {
	return Value{typ: TypeDoubleArray, dbls: cloneNonNil(v)}
}

// StringArrayValue returns a STRING_ARRAY value holding a copy of v.
func StringArrayValue(v []string) Value {
	return Value{typ: TypeStringArray, strs: cloneNonNil(v)}
}

func cloneNonNil[T any](s []T) []T {
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// FromAny converts a Go value to a Value: nil → NOT_SET, bool, any signed or
// unsigned integer that fits int64, float32/float64, string, []byte, []bool,
// []int, []int64, []float64, []string, or a Value itself.
func FromAny(x any) (Value, error) {
	switch v := x.(type) {
	case nil:
		return NotSet(), nil
	case Value:
		return v, nil
	case bool:
		return BoolValue(v), nil
	case int:
		return IntegerValue(int64(v)), nil
	case int8:
		return IntegerValue(int64(v)), nil
	case int16:
		return IntegerValue(int64(v)), nil
	case int32:
		return IntegerValue(int64(v)), nil
	case int64:
		return IntegerValue(v), nil
	case uint8:
		return IntegerValue(int64(v)), nil
	case uint16:
		return IntegerValue(int64(v)), nil
	case uint32:
		return IntegerValue(int64(v)), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return Value{}, fmt.Errorf("param: %d overflows int64", v)
		}
		return IntegerValue(int64(v)), nil
	case uint64:
		if v > math.MaxInt64 {
			return Value{}, fmt.Errorf("param: %d overflows int64", v)
		}
		return IntegerValue(int64(v)), nil
	case float32:
		return DoubleValue(float64(v)), nil
	case float64:
		return DoubleValue(v), nil
	case string:
		return StringValue(v), nil
	case []byte:
		return ByteArrayValue(v), nil
	case []bool:
		return BoolArrayValue(v), nil
	case []int:
		out := make([]int64, len(v))
		for i, e := range v {
			out[i] = int64(e)
		}
		return Value{typ: TypeIntegerArray, ints: out}, nil
	case []int64:
		return IntegerArrayValue(v), nil
	case []float64:
		return DoubleArrayValue(v), nil
	case []string:
		return StringArrayValue(v), nil
	}
	return Value{}, fmt.Errorf("param: unsupported Go type %T for a parameter value", x)
}

// Type returns the value's type.
func (v Value) Type() Type { return v.typ }

// IsSet reports whether the value is not NOT_SET.
func (v Value) IsSet() bool { return v.typ != TypeNotSet }

// Bool returns the BOOL value and whether v is a BOOL.
func (v Value) Bool() (bool, bool) { return v.b, v.typ == TypeBool }

// Integer returns the INTEGER value and whether v is an INTEGER.
func (v Value) Integer() (int64, bool) { return v.i, v.typ == TypeInteger }

// Double returns the DOUBLE value and whether v is a DOUBLE.
func (v Value) Double() (float64, bool) { return v.d, v.typ == TypeDouble }

// Str returns the STRING value and whether v is a STRING. (String renders
// the value for display.)
func (v Value) Str() (string, bool) { return v.s, v.typ == TypeString }

// ByteArray returns a copy of the BYTE_ARRAY value and whether v is one.
func (v Value) ByteArray() ([]byte, bool) {
	if v.typ != TypeByteArray {
		return nil, false
	}
	return slices.Clone(v.bytes), true
}

// BoolArray returns a copy of the BOOL_ARRAY value and whether v is one.
func (v Value) BoolArray() ([]bool, bool) {
	if v.typ != TypeBoolArray {
		return nil, false
	}
	return slices.Clone(v.bools), true
}

// IntegerArray returns a copy of the INTEGER_ARRAY value and whether v is one.
func (v Value) IntegerArray() ([]int64, bool) {
	if v.typ != TypeIntegerArray {
		return nil, false
	}
	return slices.Clone(v.ints), true
}

// DoubleArray returns a copy of the DOUBLE_ARRAY value and whether v is one.
func (v Value) DoubleArray() ([]float64, bool) {
	if v.typ != TypeDoubleArray {
		return nil, false
	}
	return slices.Clone(v.dbls), true
}

// StringArray returns a copy of the STRING_ARRAY value and whether v is one.
func (v Value) StringArray() ([]string, bool) {
	if v.typ != TypeStringArray {
		return nil, false
	}
	return slices.Clone(v.strs), true
}

// Interface returns the value as a plain Go value: nil, bool, int64, float64,
// string, []byte, []bool, []int64, []float64 or []string (copies).
func (v Value) Interface() any {
	switch v.typ {
	case TypeBool:
		return v.b
	case TypeInteger:
		return v.i
	case TypeDouble:
		return v.d
	case TypeString:
		return v.s
	case TypeByteArray:
		return slices.Clone(v.bytes)
	case TypeBoolArray:
		return slices.Clone(v.bools)
	case TypeIntegerArray:
		return slices.Clone(v.ints)
	case TypeDoubleArray:
		return slices.Clone(v.dbls)
	case TypeStringArray:
		return slices.Clone(v.strs)
	}
	return nil
}

// Equal reports whether v and w have the same type and contents. Doubles
// compare by bit pattern, so NaN equals an identical NaN.
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ {
		return false
	}
	switch v.typ {
	case TypeNotSet:
		return true
	case TypeBool:
		return v.b == w.b
	case TypeInteger:
		return v.i == w.i
	case TypeDouble:
		return math.Float64bits(v.d) == math.Float64bits(w.d)
	case TypeString:
		return v.s == w.s
	case TypeByteArray:
		return slices.Equal(v.bytes, w.bytes)
	case TypeBoolArray:
		return slices.Equal(v.bools, w.bools)
	case TypeIntegerArray:
		return slices.Equal(v.ints, w.ints)
	case TypeDoubleArray:
		return slices.EqualFunc(v.dbls, w.dbls, func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b)
		})
	case TypeStringArray:
		return slices.Equal(v.strs, w.strs)
	}
	return false
}

// String renders the value as `ros2 param get` prints it, e.g.
// "Boolean value is: True", "Integer value is: 3", "Double value is: 1.5",
// "String value is: x", "Integer values are: array('q', [1, 2])",
// "Double values are: array('d', [1.0])", "Boolean values are: [True]",
// "String values are: ['a', 'b']", "Byte values are: [b'\x01']" and
// "Parameter not set.".
func (v Value) String() string {
	switch v.typ {
	case TypeBool:
		return "Boolean value is: " + pyBool(v.b)
	case TypeInteger:
		return "Integer value is: " + strconv.FormatInt(v.i, 10)
	case TypeDouble:
		return "Double value is: " + PyFloat(v.d)
	case TypeString:
		return "String value is: " + v.s
	case TypeByteArray:
		return "Byte values are: " + pyList(v.bytes, func(b byte) string { return pyBytes([]byte{b}) })
	case TypeBoolArray:
		return "Boolean values are: " + pyList(v.bools, pyBool)
	case TypeIntegerArray:
		return "Integer values are: " + pyArray("q", v.ints, func(i int64) string { return strconv.FormatInt(i, 10) })
	case TypeDoubleArray:
		return "Double values are: " + pyArray("d", v.dbls, PyFloat)
	case TypeStringArray:
		return "String values are: " + pyList(v.strs, PyStr)
	}
	return "Parameter not set."
}

// ValueString renders only the value part of String (what
// `ros2 param get --hide-type` prints); NOT_SET renders as "None".
func (v Value) ValueString() string {
	if v.typ == TypeNotSet {
		return "None"
	}
	s := v.String()
	if i := strings.Index(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// PyFloat formats f as Python's repr(float) does: shortest round-trip
// digits, ".0" for integral values, exponent form below 1e-4 or from 1e16,
// and "inf", "-inf", "nan".
func PyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// PyStr quotes s as Python's repr(str) does.
func PyStr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError) // rclpy would have failed to decode it
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0xa0 && !unicode.IsPrint(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func pyBytes(p []byte) string {
	q := byte('\'')
	if slices.Contains(p, '\'') && !slices.Contains(p, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(q)
	for _, c := range p {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func pyList[T any](s []T, f func(T) string) string {
	parts := make([]string, len(s))
	for i, e := range s {
		parts[i] = f(e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func pyArray[T any](code string, s []T, f func(T) string) string {
	if len(s) == 0 {
		return "array('" + code + "')"
	}
	return "array('" + code + "', " + pyList(s, f) + ")"
}

// Parameter is a named value.
type Parameter struct {
	Name  string
	Value Value
}
