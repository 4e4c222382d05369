package dynamic

import (
	"fmt"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/msg"
)

// Message is a message of a dynamic Type. Values holds one value per
// field, in definition order:
//
//   - bool, uint8 (byte, char, uint8), int8, int16, uint16, int32, uint32,
//     int64, uint64, float32, float64 or string (string, wstring) for a
//     single value;
//   - *Message for a nested message;
//   - a slice of those ([]float64, []uint8, []string, []*Message, ...) for
//     fixed arrays (length N) and sequences (nil when empty).
//
// It implements msg.Message, so msg.Marshal and msg.Unmarshal work on it,
// and msg.YAMLer, so msg.ToYAML prints it as `ros2 topic echo` does.
type Message struct {
	Type   *Type
	Values []any
}

// TypeName returns the ROS type name.
func (m *Message) TypeName() string { return m.Type.Name() }

// Get returns the value of the named field.
func (m *Message) Get(field string) (any, bool) {
	for i, f := range m.Type.Fields {
		if f.Name == field {
			return m.Values[i], true
		}
	}
	return nil, false
}

// YAMLFields lists the fields in definition order.
func (m *Message) YAMLFields() []msg.Field {
	out := make([]msg.Field, len(m.Type.Fields))
	for i, f := range m.Type.Fields {
		out[i] = msg.Field{Name: f.Name, Value: m.Values[i]}
	}
	return out
}

func zeroElem(f FieldType) any {
	switch f.Type.Kind {
	case idl.Bool:
		return false
	case idl.Byte, idl.Char, idl.Uint8:
		return uint8(0)
	case idl.Int8:
		return int8(0)
	case idl.Int16:
		return int16(0)
	case idl.Uint16:
		return uint16(0)
	case idl.Int32:
		return int32(0)
	case idl.Uint32:
		return uint32(0)
	case idl.Int64:
		return int64(0)
	case idl.Uint64:
		return uint64(0)
	case idl.Float32:
		return float32(0)
	case idl.Float64:
		return float64(0)
	case idl.String, idl.WString:
		return ""
	}
	return f.Msg.New()
}

// makeSlice returns a slice of n zero elements of the field's element type
// (nil when n is 0 and the field is a sequence).
func makeSlice(f FieldType, n int) any {
	switch f.Type.Kind {
	case idl.Bool:
		return mk[bool](n)
	case idl.Byte, idl.Char, idl.Uint8:
		return mk[uint8](n)
	case idl.Int8:
		return mk[int8](n)
	case idl.Int16:
		return mk[int16](n)
	case idl.Uint16:
		return mk[uint16](n)
	case idl.Int32:
		return mk[int32](n)
	case idl.Uint32:
		return mk[uint32](n)
	case idl.Int64:
		return mk[int64](n)
	case idl.Uint64:
		return mk[uint64](n)
	case idl.Float32:
		return mk[float32](n)
	case idl.Float64:
		return mk[float64](n)
	case idl.String, idl.WString:
		return mk[string](n)
	}
	s := mk[*Message](n)
	for i := range s {
		s[i] = f.Msg.New()
	}
	return s
}

func mk[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
}

func zero(f FieldType) any {
	switch f.Type.Array {
	case idl.Single:
		return zeroElem(f)
	case idl.Fixed:
		return makeSlice(f, f.Type.Size)
	}
	return makeSlice(f, 0)
}

// UnmarshalCDR decodes the message body.
func (m *Message) UnmarshalCDR(d *cdr.Decoder) error {
	if len(m.Values) != len(m.Type.Fields) {
		m.Values = make([]any, len(m.Type.Fields))
	}
	if len(m.Type.Fields) == 0 {
		d.ReadUint8() // structure_needs_at_least_one_member
	}
	for i, f := range m.Type.Fields {
		if d.Err() != nil {
			m.Values[i] = zero(f)
			continue
		}
		m.Values[i] = decodeField(d, f)
	}
	return d.Err()
}

func decodeField(d *cdr.Decoder, f FieldType) any {
	t := f.Type
	switch t.Array {
	case idl.Single:
		return decodeElem(d, f)
	case idl.Fixed:
		if t.Kind.IsPrimitive() {
			s := makeSlice(f, t.Size)
			readPrims(d, s)
			return s
		}
		s := makeSlice(f, t.Size)
		fill(d, f, s)
		return s
	}
	bound := -1
	if t.Array == idl.Bounded {
		bound = t.Size
	}
	if t.Kind.IsPrimitive() {
		return readPrimSeq(d, f, bound)
	}
	min := 4
	if t.Kind == idl.Message {
		min = f.Msg.minSize
	}
	n := d.ReadBoundedSequenceLen(min, bound)
	if d.Err() != nil {
		return makeSlice(f, 0)
	}
	s := makeSlice(f, n)
	fill(d, f, s)
	return s
}

func fill(d *cdr.Decoder, f FieldType, s any) {
	switch s := s.(type) {
	case []string:
		for i := range s {
			s[i], _ = decodeElem(d, f).(string)
		}
	case []*Message:
		for i := range s {
			s[i].UnmarshalCDR(d)
		}
	}
}

func decodeElem(d *cdr.Decoder, f FieldType) any {
	t := f.Type
	bound := -1
	if t.StringBound > 0 {
		bound = t.StringBound
	}
	switch t.Kind {
	case idl.Bool:
		return d.ReadBool()
	case idl.Byte, idl.Char, idl.Uint8:
		return d.ReadUint8()
	case idl.Int8:
		return d.ReadInt8()
	case idl.Int16:
		return d.ReadInt16()
	case idl.Uint16:
		return d.ReadUint16()
	case idl.Int32:
		return d.ReadInt32()
	case idl.Uint32:
		return d.ReadUint32()
	case idl.Int64:
		return d.ReadInt64()
	case idl.Uint64:
		return d.ReadUint64()
	case idl.Float32:
		return d.ReadFloat32()
	case idl.Float64:
		return d.ReadFloat64()
	case idl.String:
		return d.ReadBoundedString(bound)
	case idl.WString:
		return d.ReadWString(bound)
	}
	n := f.Msg.New()
	n.UnmarshalCDR(d)
	return n
}

func readPrims(d *cdr.Decoder, s any) {
	switch s := s.(type) {
	case []bool:
		cdr.ReadArray(d, s)
	case []uint8:
		cdr.ReadArray(d, s)
	case []int8:
		cdr.ReadArray(d, s)
	case []int16:
		cdr.ReadArray(d, s)
	case []uint16:
		cdr.ReadArray(d, s)
	case []int32:
		cdr.ReadArray(d, s)
	case []uint32:
		cdr.ReadArray(d, s)
	case []int64:
		cdr.ReadArray(d, s)
	case []uint64:
		cdr.ReadArray(d, s)
	case []float32:
		cdr.ReadArray(d, s)
	case []float64:
		cdr.ReadArray(d, s)
	}
}

func readPrimSeq(d *cdr.Decoder, f FieldType, bound int) any {
	switch f.Type.Kind {
	case idl.Bool:
		return nilIfEmpty(cdr.ReadBoundedSequence[bool](d, nil, bound))
	case idl.Byte, idl.Char, idl.Uint8:
		return nilIfEmpty(cdr.ReadBoundedSequence[uint8](d, nil, bound))
	case idl.Int8:
		return nilIfEmpty(cdr.ReadBoundedSequence[int8](d, nil, bound))
	case idl.Int16:
		return nilIfEmpty(cdr.ReadBoundedSequence[int16](d, nil, bound))
	case idl.Uint16:
		return nilIfEmpty(cdr.ReadBoundedSequence[uint16](d, nil, bound))
	case idl.Int32:
		return nilIfEmpty(cdr.ReadBoundedSequence[int32](d, nil, bound))
	case idl.Uint32:
		return nilIfEmpty(cdr.ReadBoundedSequence[uint32](d, nil, bound))
	case idl.Int64:
		return nilIfEmpty(cdr.ReadBoundedSequence[int64](d, nil, bound))
	case idl.Uint64:
		return nilIfEmpty(cdr.ReadBoundedSequence[uint64](d, nil, bound))
	case idl.Float32:
		return nilIfEmpty(cdr.ReadBoundedSequence[float32](d, nil, bound))
	}
	return nilIfEmpty(cdr.ReadBoundedSequence[float64](d, nil, bound))
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// MarshalCDR appends the message body. A value over a bound, or of a Go
// type other than the field's (see Message), is reported through e.Err.
func (m *Message) MarshalCDR(e *cdr.Encoder) {
	if len(m.Type.Fields) == 0 {
		e.WriteUint8(0)
		return
	}
	if len(m.Values) != len(m.Type.Fields) {
		e.Invalid(m.Type.Name(), fmt.Sprintf("%d values for %d fields", len(m.Values), len(m.Type.Fields)))
		return
	}
	for i, f := range m.Type.Fields {
		encodeField(e, m.Type, f, m.Values[i])
	}
}

func encodeField(e *cdr.Encoder, owner *Type, f FieldType, v any) {
	t := f.Type
	where := owner.Name() + "." + f.Name
	if t.Array == idl.Single {
		encodeElem(e, where, f, v)
		return
	}
	n, ok := sliceLen(v)
	if !ok {
		e.Invalid(where, fmt.Sprintf("value of Go type %T is not a slice", v))
		return
	}
	switch t.Array {
	case idl.Fixed:
		if n != t.Size {
			e.Invalid(where, fmt.Sprintf("array of %d elements, want %d", n, t.Size))
			return
		}
	case idl.Bounded:
		if n > t.Size {
			e.Fail(where, fmt.Sprintf("sequence longer than its bound %d", t.Size))
		}
	}
	if t.Array != idl.Fixed {
		e.WriteSequenceLen(n)
	}
	if t.Kind.IsPrimitive() {
		if !writePrims(e, f, v) {
			e.Invalid(where, fmt.Sprintf("value of Go type %T for %s", v, t))
		}
		return
	}
	switch s := v.(type) {
	case []string:
		for _, x := range s {
			encodeElem(e, where, f, x)
		}
	case []*Message:
		for _, x := range s {
			encodeElem(e, where, f, x)
		}
	default:
		e.Invalid(where, fmt.Sprintf("value of Go type %T for %s", v, t))
	}
}

func sliceLen(v any) (int, bool) {
	switch s := v.(type) {
	case []bool:
		return len(s), true
	case []uint8:
		return len(s), true
	case []int8:
		return len(s), true
	case []int16:
		return len(s), true
	case []uint16:
		return len(s), true
	case []int32:
		return len(s), true
	case []uint32:
		return len(s), true
	case []int64:
		return len(s), true
	case []uint64:
		return len(s), true
	case []float32:
		return len(s), true
	case []float64:
		return len(s), true
	case []string:
		return len(s), true
	case []*Message:
		return len(s), true
	}
	return 0, false
}

// writePrims writes the elements of a primitive slice whose Go type
// matches the field's kind.
func writePrims(e *cdr.Encoder, f FieldType, v any) bool {
	switch k := f.Type.Kind; k {
	case idl.Bool:
		return wr[bool](e, v)
	case idl.Byte, idl.Char, idl.Uint8:
		return wr[uint8](e, v)
	case idl.Int8:
		return wr[int8](e, v)
	case idl.Int16:
		return wr[int16](e, v)
	case idl.Uint16:
		return wr[uint16](e, v)
	case idl.Int32:
		return wr[int32](e, v)
	case idl.Uint32:
		return wr[uint32](e, v)
	case idl.Int64:
		return wr[int64](e, v)
	case idl.Uint64:
		return wr[uint64](e, v)
	case idl.Float32:
		return wr[float32](e, v)
	}
	return wr[float64](e, v)
}

func wr[T cdr.Primitive](e *cdr.Encoder, v any) bool {
	s, ok := v.([]T)
	if ok {
		cdr.WriteArray(e, s)
	}
	return ok
}

func encodeElem(e *cdr.Encoder, where string, f FieldType, v any) {
	t := f.Type
	ok := true
	switch t.Kind {
	case idl.Bool:
		var x bool
		x, ok = v.(bool)
		e.WriteBool(x)
	case idl.Byte, idl.Char, idl.Uint8:
		var x uint8
		x, ok = v.(uint8)
		e.WriteUint8(x)
	case idl.Int8:
		var x int8
		x, ok = v.(int8)
		e.WriteInt8(x)
	case idl.Int16:
		var x int16
		x, ok = v.(int16)
		e.WriteInt16(x)
	case idl.Uint16:
		var x uint16
		x, ok = v.(uint16)
		e.WriteUint16(x)
	case idl.Int32:
		var x int32
		x, ok = v.(int32)
		e.WriteInt32(x)
	case idl.Uint32:
		var x uint32
		x, ok = v.(uint32)
		e.WriteUint32(x)
	case idl.Int64:
		var x int64
		x, ok = v.(int64)
		e.WriteInt64(x)
	case idl.Uint64:
		var x uint64
		x, ok = v.(uint64)
		e.WriteUint64(x)
	case idl.Float32:
		var x float32
		x, ok = v.(float32)
		e.WriteFloat32(x)
	case idl.Float64:
		var x float64
		x, ok = v.(float64)
		e.WriteFloat64(x)
	case idl.String:
		var x string
		x, ok = v.(string)
		if t.StringBound > 0 && len(x) > t.StringBound {
			e.Fail(where, fmt.Sprintf("string longer than its bound %d", t.StringBound))
		}
		e.WriteString(x)
	case idl.WString:
		var x string
		x, ok = v.(string)
		if t.StringBound > 0 && cdr.WStringLen(x) > t.StringBound {
			e.Fail(where, fmt.Sprintf("wstring longer than its bound %d", t.StringBound))
		}
		e.WriteWString(x)
	case idl.Message:
		var x *Message
		x, ok = v.(*Message)
		if ok && x != nil && x.Type.Name() == f.Msg.Name() {
			x.MarshalCDR(e)
			return
		}
		ok = false
	}
	if !ok {
		e.Invalid(where, fmt.Sprintf("value of Go type %T for %s", v, t.Elem()))
	}
}
