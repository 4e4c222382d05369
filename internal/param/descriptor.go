package param

import (
	"errors"
	"fmt"
	"math"
)

// IntegerRange constrains an INTEGER parameter to From..To (inclusive); a
// Step > 0 additionally requires (value-From) to be a multiple of Step,
// except that To itself is always allowed (rclcpp's rule).
type IntegerRange struct {
	From, To int64
	Step     uint64
}

// FloatingPointRange constrains a DOUBLE parameter to From..To (inclusive,
// with a small tolerance); a Step > 0 additionally requires the value to be
// From plus a whole number of Steps, except that To is always allowed.
type FloatingPointRange struct {
	From, To, Step float64
}

// Descriptor describes a parameter as rcl_interfaces/msg/ParameterDescriptor.
type Descriptor struct {
	// Name is filled in by the store.
	Name string
	// Type is the declared type; when it is TypeNotSet, Declare takes it
	// from the default (or override) value.
	Type                  Type
	Description           string
	AdditionalConstraints string
	// ReadOnly parameters can only get their value at declaration (default
	// or override); Set and Undeclare refuse them afterwards.
	ReadOnly bool
	// DynamicTyping allows the value's type to change with Set.
	DynamicTyping bool
	// At most one of IntegerRange and FloatingPointRange may be set.
	IntegerRange       *IntegerRange
	FloatingPointRange *FloatingPointRange
}

// clone returns a deep copy (ranges are pointers).
func (d Descriptor) clone() Descriptor {
	if d.IntegerRange != nil {
		r := *d.IntegerRange
		d.IntegerRange = &r
	}
	if d.FloatingPointRange != nil {
		r := *d.FloatingPointRange
		d.FloatingPointRange = &r
	}
	return d
}

func (d Descriptor) validate() error {
	if !d.Type.Valid() {
		return fmt.Errorf("invalid parameter type %d", uint8(d.Type))
	}
	if d.IntegerRange != nil && d.FloatingPointRange != nil {
		return errors.New("only one of integer range or floating point range may be set")
	}
	if r := d.IntegerRange; r != nil && r.From > r.To {
		return fmt.Errorf("integer range from %d is above to %d", r.From, r.To)
	}
	if r := d.FloatingPointRange; r != nil {
		if math.IsNaN(r.From) || math.IsNaN(r.To) || math.IsNaN(r.Step) || r.Step < 0 || r.From > r.To {
			return fmt.Errorf("invalid floating point range [%g, %g] step %g", r.From, r.To, r.Step)
		}
	}
	return nil
}

// checkRange returns "" or the reason v breaks d's range.
func (d Descriptor) checkRange(name string, v Value) string {
	if r := d.IntegerRange; r != nil && v.typ == TypeInteger {
		x := v.i
		if x < r.From || x > r.To {
			return fmt.Sprintf("Parameter {%s} doesn't comply with integer range.", name)
		}
		if r.Step == 0 || x == r.To {
			return ""
		}
		// x-From fits uint64 because From <= x.
		if (uint64(x)-uint64(r.From))%r.Step == 0 {
			return ""
		}
		return fmt.Sprintf("Parameter {%s} doesn't comply with integer range.", name)
	}
	if r := d.FloatingPointRange; r != nil && v.typ == TypeDouble {
		x := v.d
		if math.IsNaN(x) {
			return fmt.Sprintf("Parameter {%s} doesn't comply with floating point range.", name)
		}
		if doublesEqual(x, r.From) || doublesEqual(x, r.To) {
			return ""
		}
		if x < r.From || x > r.To {
			return fmt.Sprintf("Parameter {%s} doesn't comply with floating point range.", name)
		}
		if r.Step == 0 {
			return ""
		}
		k := math.Round((x - r.From) / r.Step)
		if doublesEqual(x, r.From+k*r.Step) {
			return ""
		}
		return fmt.Sprintf("Parameter {%s} doesn't comply with floating point range.", name)
	}
	return ""
}

// doublesEqual compares with a relative tolerance of 100 ULPs, like rclcpp.
func doublesEqual(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 2.220446049250313e-16*math.Abs(a+b)*100
}
