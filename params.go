package nros

import (
	"github.com/nros-go/nros/internal/param"
)

// The parameter types of the public API are real types of this package:
// their documentation and methods are here. Each wraps (or has the layout
// of) its counterpart in internal/param, which holds the one
// implementation that the node's parameter store, the params-file loader
// and the command line share; the conversions below cost a copy of a
// parameter list at most.

// ParameterType is a ROS 2 parameter type; the numbers are those of
// rcl_interfaces/msg/ParameterType.
type ParameterType uint8

// The ROS 2 parameter types.
const (
	ParameterNotSet       ParameterType = 0
	ParameterBool         ParameterType = 1
	ParameterInteger      ParameterType = 2
	ParameterDouble       ParameterType = 3
	ParameterString       ParameterType = 4
	ParameterByteArray    ParameterType = 5
	ParameterBoolArray    ParameterType = 6
	ParameterIntegerArray ParameterType = 7
	ParameterDoubleArray  ParameterType = 8
	ParameterStringArray  ParameterType = 9
)

// String returns the type name as rclcpp's to_string(ParameterType) does
// ("not set", "bool", "integer", "double", "string", "byte_array", ...).
func (t ParameterType) String() string { return param.Type(t).String() }

// Valid reports whether t is one of the ten ROS 2 parameter types.
func (t ParameterType) Valid() bool { return param.Type(t).Valid() }

// ParameterValue is an immutable, typed ROS 2 parameter value. The zero
// ParameterValue is NOT_SET. Slices passed to the constructors and
// returned by the getters are copies.
type ParameterValue struct{ v param.Value }

// BoolValue returns a BOOL value.
func BoolValue(b bool) ParameterValue { return ParameterValue{param.BoolValue(b)} }

// IntegerValue returns an INTEGER value.
func IntegerValue(i int64) ParameterValue { return ParameterValue{param.IntegerValue(i)} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(d float64) ParameterValue { return ParameterValue{param.DoubleValue(d)} }

// StringValue returns a STRING value.
func StringValue(s string) ParameterValue { return ParameterValue{param.StringValue(s)} }

// ByteArrayValue returns a BYTE_ARRAY value holding a copy of b.
func ByteArrayValue(b []byte) ParameterValue { return ParameterValue{param.ByteArrayValue(b)} }

// BoolArrayValue returns a BOOL_ARRAY value holding a copy of b.
func BoolArrayValue(b []bool) ParameterValue { return ParameterValue{param.BoolArrayValue(b)} }

// IntegerArrayValue returns an INTEGER_ARRAY value holding a copy of v.
func IntegerArrayValue(v []int64) ParameterValue { return ParameterValue{param.IntegerArrayValue(v)} }

// DoubleArrayValue returns a DOUBLE_ARRAY value holding a copy of v.
func DoubleArrayValue(v []float64) ParameterValue { return ParameterValue{param.DoubleArrayValue(v)} }

// StringArrayValue returns a STRING_ARRAY value holding a copy of v.
func StringArrayValue(v []string) ParameterValue { return ParameterValue{param.StringArrayValue(v)} }

// ParameterValueOf converts a Go value to a ParameterValue: nil → NOT_SET,
// bool, any signed or unsigned integer that fits int64, float32/float64,
// string, []byte, []bool, []int, []int64, []float64, []string, or a
// ParameterValue itself.
func ParameterValueOf(x any) (ParameterValue, error) {
	if v, ok := x.(ParameterValue); ok {
		return v, nil
	}
	v, err := param.FromAny(x)
	return ParameterValue{v}, err
}

// ParseParameterValue reads a value as `ros2 param set` and `-p` do
// (YAML-typed: true, 3, 1.5, "x", [1, 2]).
func ParseParameterValue(text string) (ParameterValue, error) {
	v, err := param.ParseValue(text)
	return ParameterValue{v}, err
}

// Type returns the value's type.
func (v ParameterValue) Type() ParameterType { return ParameterType(v.v.Type()) }

// IsSet reports whether the value is not NOT_SET.
func (v ParameterValue) IsSet() bool { return v.v.IsSet() }

// Bool returns the BOOL value and whether v is a BOOL.
func (v ParameterValue) Bool() (bool, bool) { return v.v.Bool() }

// Integer returns the INTEGER value and whether v is an INTEGER.
func (v ParameterValue) Integer() (int64, bool) { return v.v.Integer() }

// Double returns the DOUBLE value and whether v is a DOUBLE.
func (v ParameterValue) Double() (float64, bool) { return v.v.Double() }

// Str returns the STRING value and whether v is a STRING. (String renders
// the value for display.)
func (v ParameterValue) Str() (string, bool) { return v.v.Str() }

// ByteArray returns a copy of the BYTE_ARRAY value and whether v is one.
func (v ParameterValue) ByteArray() ([]byte, bool) { return v.v.ByteArray() }

// BoolArray returns a copy of the BOOL_ARRAY value and whether v is one.
func (v ParameterValue) BoolArray() ([]bool, bool) { return v.v.BoolArray() }

// IntegerArray returns a copy of the INTEGER_ARRAY value and whether v is
// one.
func (v ParameterValue) IntegerArray() ([]int64, bool) { return v.v.IntegerArray() }

// DoubleArray returns a copy of the DOUBLE_ARRAY value and whether v is one.
func (v ParameterValue) DoubleArray() ([]float64, bool) { return v.v.DoubleArray() }

// StringArray returns a copy of the STRING_ARRAY value and whether v is one.
func (v ParameterValue) StringArray() ([]string, bool) { return v.v.StringArray() }

// Interface returns the value as a plain Go value: nil, bool, int64,
// float64, string, []byte, []bool, []int64, []float64 or []string (copies).
func (v ParameterValue) Interface() any { return v.v.Interface() }

// Equal reports whether v and w have the same type and contents. Doubles
// compare by bit pattern, so NaN equals an identical NaN.
func (v ParameterValue) Equal(w ParameterValue) bool { return v.v.Equal(w.v) }

// String renders the value as `ros2 param get` prints it, e.g.
// "Boolean value is: True", "Integer value is: 3", "Double value is: 1.5",
// "String value is: x", "Integer values are: array('q', [1, 2])",
// "Double values are: array('d', [1.0])", "Boolean values are: [True]",
// "String values are: ['a', 'b']", "Byte values are: [b'\x01']" and
// "Parameter not set.".
func (v ParameterValue) String() string { return v.v.String() }

// ValueString renders only the value part of String (what
// `ros2 param get --hide-type` prints); NOT_SET renders as "None".
func (v ParameterValue) ValueString() string { return v.v.ValueString() }

// Parameter is a named parameter value.
type Parameter struct {
	Name  string
	Value ParameterValue
}

// IntegerRange constrains an INTEGER parameter to From..To (inclusive); a
// Step > 0 additionally requires (value-From) to be a multiple of Step,
// except that To itself is always allowed (rclcpp's rule).
type IntegerRange struct {
	From, To int64
	Step     uint64
}

// FloatingPointRange constrains a DOUBLE parameter to From..To (inclusive,
// with a small tolerance); a Step > 0 additionally requires the value to
// be From plus a whole number of Steps, except that To is always allowed.
type FloatingPointRange struct {
	From, To, Step float64
}

// ParameterDescriptor describes a parameter as
// rcl_interfaces/msg/ParameterDescriptor does.
type ParameterDescriptor struct {
	// Name is filled in by the node.
	Name string
	// Type is the declared type; when it is ParameterNotSet,
	// DeclareParameter takes it from the default (or override) value.
	Type                  ParameterType
	Description           string
	AdditionalConstraints string
	// ReadOnly parameters can only get their value at declaration
	// (default or override); sets and UndeclareParameter refuse them
	// afterwards.
	ReadOnly bool
	// DynamicTyping allows the value's type to change with a set.
	DynamicTyping bool
	// At most one of IntegerRange and FloatingPointRange may be set.
	IntegerRange       *IntegerRange
	FloatingPointRange *FloatingPointRange
}

// SetParametersResult is the outcome of a set: success, or the reason it
// was refused (rcl_interfaces/msg/SetParametersResult).
type SetParametersResult struct {
	Successful bool
	Reason     string
}

// ListParametersResult is the answer of ListParameters: the names, and the
// distinct prefixes of the listed names (rcl_interfaces/msg/
// ListParametersResult).
type ListParametersResult struct {
	Names    []string
	Prefixes []string
}

// ParameterCallbackHandle identifies a registered parameter callback; pass
// it to RemoveParametersCallback.
type ParameterCallbackHandle struct{ h *param.CallbackHandle }

// Conversions to and from internal/param.

func internalParameters(ps []Parameter) []param.Parameter {
	out := make([]param.Parameter, len(ps))
	for i, p := range ps {
		out[i] = param.Parameter{Name: p.Name, Value: p.Value.v}
	}
	return out
}

func publicParameters(ps []param.Parameter) []Parameter {
	out := make([]Parameter, len(ps))
	for i, p := range ps {
		out[i] = Parameter{Name: p.Name, Value: ParameterValue{p.Value}}
	}
	return out
}

func (d ParameterDescriptor) internal() param.Descriptor {
	out := param.Descriptor{Name: d.Name, Type: param.Type(d.Type), Description: d.Description,
		AdditionalConstraints: d.AdditionalConstraints, ReadOnly: d.ReadOnly, DynamicTyping: d.DynamicTyping}
	if r := d.IntegerRange; r != nil {
		out.IntegerRange = &param.IntegerRange{From: r.From, To: r.To, Step: r.Step}
	}
	if r := d.FloatingPointRange; r != nil {
		out.FloatingPointRange = &param.FloatingPointRange{From: r.From, To: r.To, Step: r.Step}
	}
	return out
}

func publicDescriptor(d param.Descriptor) ParameterDescriptor {
	out := ParameterDescriptor{Name: d.Name, Type: ParameterType(d.Type), Description: d.Description,
		AdditionalConstraints: d.AdditionalConstraints, ReadOnly: d.ReadOnly, DynamicTyping: d.DynamicTyping}
	if r := d.IntegerRange; r != nil {
		out.IntegerRange = &IntegerRange{From: r.From, To: r.To, Step: r.Step}
	}
	if r := d.FloatingPointRange; r != nil {
		out.FloatingPointRange = &FloatingPointRange{From: r.From, To: r.To, Step: r.Step}
	}
	return out
}

// DeclareParameter declares a parameter with a default value and returns
// its initial value: a command-line or params-file override wins over the
// default. An override of the wrong type is an error naming the parameter
// and the type it wants. Declaring is a transaction like a set (see
// SetParameter): validators vet the initial value, and declaring
// use_sim_time true installs the time source.
func (n *Node) DeclareParameter(name string, def ParameterValue, desc ...ParameterDescriptor) (ParameterValue, error) {
	var d param.Descriptor
	if len(desc) > 0 {
		d = desc[0].internal()
	}
	v, err := n.live().params.Declare(name, def.v, d)
	return ParameterValue{v}, err
}

// UndeclareParameter removes a parameter (not a read-only or statically
// typed one, as in rclcpp).
func (n *Node) UndeclareParameter(name string) error { return n.live().params.Undeclare(name) }

// HasParameter reports whether a parameter is declared.
func (n *Node) HasParameter(name string) bool { return n.live().params.Has(name) }

// GetParameter returns a parameter's value.
func (n *Node) GetParameter(name string) (ParameterValue, error) {
	v, err := n.live().params.Get(name)
	return ParameterValue{v}, err
}

// SetParameter sets one parameter, in one transaction: the descriptor's
// checks, the validators (AddOnSetParametersCallback) on the proposed value,
// applying a reserved parameter (use_sim_time installs or removes the /clock
// time source), commit, then the post-set callbacks on the committed value.
// A refusal (undeclared, read-only, wrong type, out of range, rejected by a
// callback, a time source that cannot be installed) comes back with its
// reason and changes nothing. Sets run one at a time: a set from another
// goroutine waits for the running one. A parameter callback of this node
// cannot set, declare or undeclare the node's parameters: the set is refused
// with "cannot set parameters from inside a parameter callback" (rclcpp
// throws); make the change after the set returns.
func (n *Node) SetParameter(p Parameter) SetParametersResult {
	return SetParametersResult(n.live().params.Set(p.Name, p.Value.v))
}

// SetParameters sets parameters one by one, each in its own transaction
// (as rclcpp), and returns one result each.
func (n *Node) SetParameters(ps []Parameter) []SetParametersResult {
	rs := n.live().params.SetParameters(internalParameters(ps))
	out := make([]SetParametersResult, len(rs))
	for i, r := range rs {
		out[i] = SetParametersResult(r)
	}
	return out
}

// SetParametersAtomically sets all the parameters or none, in one
// transaction: the validators see the whole list, and a refusal by any
// check, validator or use_sim_time's time source changes nothing.
func (n *Node) SetParametersAtomically(ps []Parameter) SetParametersResult {
	return SetParametersResult(n.live().params.SetAtomically(internalParameters(ps)))
}

// ListParameters lists parameter names under the prefixes, to depth
// separator levels (0: any depth).
func (n *Node) ListParameters(prefixes []string, depth uint64) ListParametersResult {
	return ListParametersResult(n.live().params.List(prefixes, depth))
}

// DescribeParameters returns the descriptors of the named parameters.
func (n *Node) DescribeParameters(names ...string) ([]ParameterDescriptor, error) {
	ds, err := n.live().params.Describe(names...)
	if err != nil {
		return nil, err
	}
	out := make([]ParameterDescriptor, len(ds))
	for i, d := range ds {
		out[i] = publicDescriptor(d)
	}
	return out, nil
}

// AddOnSetParametersCallback registers a validator that runs before a set
// and may reject it with a reason (rclcpp's on-set-parameters callback). It
// gets the proposed values; GetParameter still returns the old ones.
func (n *Node) AddOnSetParametersCallback(fn func([]Parameter) SetParametersResult) *ParameterCallbackHandle {
	return &ParameterCallbackHandle{n.live().params.AddOnSetCallback(func(ps []param.Parameter) param.SetResult {
		return param.SetResult(fn(publicParameters(ps)))
	})}
}

// AddPostSetParametersCallback registers a function that runs after a
// successful set, once the values are committed (GetParameter returns the
// new ones) and use_sim_time is applied.
func (n *Node) AddPostSetParametersCallback(fn func([]Parameter)) *ParameterCallbackHandle {
	return &ParameterCallbackHandle{n.live().params.AddPostSetCallback(func(ps []param.Parameter) {
		fn(publicParameters(ps))
	})}
}

// RemoveParametersCallback unregisters a callback; it reports whether the
// callback was registered.
func (n *Node) RemoveParametersCallback(h *ParameterCallbackHandle) bool {
	if h == nil {
		return false
	}
	return n.live().params.RemoveCallback(h.h)
}
