package nros

import (
	"github.com/nros-go/nros/internal/param"
)

// ParameterValue is an immutable, typed ROS 2 parameter value.
type ParameterValue = param.Value

// ParameterType is a ROS 2 parameter type.
type ParameterType = param.Type

// Parameter is a named parameter value.
type Parameter = param.Parameter

// ParameterDescriptor describes a parameter (type, read-only, ranges, ...).
type ParameterDescriptor = param.Descriptor

// IntegerRange and FloatingPointRange constrain numeric parameters.
type (
	IntegerRange       = param.IntegerRange
	FloatingPointRange = param.FloatingPointRange
)

// SetParametersResult is the outcome of a set: success, or the reason it
// was refused.
type SetParametersResult = param.SetResult

// ListParametersResult is the answer of ListParameters.
type ListParametersResult = param.ListResult

// ParameterCallbackHandle identifies a registered parameter callback.
type ParameterCallbackHandle = param.CallbackHandle

// Parameter types.
const (
	ParameterNotSet       = param.TypeNotSet
	ParameterBool         = param.TypeBool
	ParameterInteger      = param.TypeInteger
	ParameterDouble       = param.TypeDouble
	ParameterString       = param.TypeString
	ParameterByteArray    = param.TypeByteArray
	ParameterBoolArray    = param.TypeBoolArray
	ParameterIntegerArray = param.TypeIntegerArray
	ParameterDoubleArray  = param.TypeDoubleArray
	ParameterStringArray  = param.TypeStringArray
)

// Parameter value constructors.
var (
	BoolValue         = param.BoolValue
	IntegerValue      = param.IntegerValue
	DoubleValue       = param.DoubleValue
	StringValue       = param.StringValue
	ByteArrayValue    = param.ByteArrayValue
	BoolArrayValue    = param.BoolArrayValue
	IntegerArrayValue = param.IntegerArrayValue
	DoubleArrayValue  = param.DoubleArrayValue
	StringArrayValue  = param.StringArrayValue
	// ParameterValueOf converts a Go value (bool, ints, floats, string, and
	// slices of those or []byte) to a ParameterValue.
	ParameterValueOf = param.FromAny
	// ParseParameterValue reads a value as `ros2 param set` and `-p` do
	// (YAML-typed: true, 3, 1.5, "x", [1, 2]).
	ParseParameterValue = param.ParseValue
)

// DeclareParameter declares a parameter with a default value and returns
// its initial value: a command-line or params-file override wins over the
// default. An override of the wrong type is an error naming the parameter
// and the type it wants. Declaring is a transaction like a set (see
// SetParameter): validators vet the initial value, and declaring
// use_sim_time true installs the time source.
func (n *Node) DeclareParameter(name string, def ParameterValue, desc ...ParameterDescriptor) (ParameterValue, error) {
	var d ParameterDescriptor
	if len(desc) > 0 {
		d = desc[0]
	}
	return n.live().params.Declare(name, def, d)
}

// UndeclareParameter removes a parameter (not a read-only or statically
// typed one, as in rclcpp).
func (n *Node) UndeclareParameter(name string) error { return n.live().params.Undeclare(name) }

// HasParameter reports whether a parameter is declared.
func (n *Node) HasParameter(name string) bool { return n.live().params.Has(name) }

// GetParameter returns a parameter's value.
func (n *Node) GetParameter(name string) (ParameterValue, error) { return n.live().params.Get(name) }

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
	return n.live().params.Set(p.Name, p.Value)
}

// SetParameters sets parameters one by one, each in its own transaction
// (as rclcpp), and returns one result each.
func (n *Node) SetParameters(ps []Parameter) []SetParametersResult {
	return n.live().params.SetParameters(ps)
}

// SetParametersAtomically sets all the parameters or none, in one
// transaction: the validators see the whole list, and a refusal by any
// check, validator or use_sim_time's time source changes nothing.
func (n *Node) SetParametersAtomically(ps []Parameter) SetParametersResult {
	return n.live().params.SetAtomically(ps)
}

// ListParameters lists parameter names under the prefixes, to depth
// separator levels (0: any depth).
func (n *Node) ListParameters(prefixes []string, depth uint64) ListParametersResult {
	return n.live().params.List(prefixes, depth)
}

// DescribeParameters returns the descriptors of the named parameters.
func (n *Node) DescribeParameters(names ...string) ([]ParameterDescriptor, error) {
	return n.live().params.Describe(names...)
}

// AddOnSetParametersCallback registers a validator that runs before a set
// and may reject it with a reason (rclcpp's on-set-parameters callback). It
// gets the proposed values; GetParameter still returns the old ones.
func (n *Node) AddOnSetParametersCallback(fn func([]Parameter) SetParametersResult) *ParameterCallbackHandle {
	return n.live().params.AddOnSetCallback(fn)
}

// AddPostSetParametersCallback registers a function that runs after a
// successful set, once the values are committed (GetParameter returns the
// new ones) and use_sim_time is applied.
func (n *Node) AddPostSetParametersCallback(fn func([]Parameter)) *ParameterCallbackHandle {
	return n.live().params.AddPostSetCallback(fn)
}

// RemoveParametersCallback unregisters a callback.
func (n *Node) RemoveParametersCallback(h *ParameterCallbackHandle) bool {
	return n.live().params.RemoveCallback(h)
}
