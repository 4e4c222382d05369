package nros

import (
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/internal/timer"
	"github.com/nros-go/nros/rmw/intra"
)

// The public enumerations have the numbers of their internal
// counterparts (conversions between them are plain casts).
func TestPublicEnumsMatchInternal(t *testing.T) {
	for i, c := range []struct {
		pub ParameterType
		in  param.Type
	}{
		{ParameterNotSet, param.TypeNotSet}, {ParameterBool, param.TypeBool}, {ParameterInteger, param.TypeInteger},
		{ParameterDouble, param.TypeDouble}, {ParameterString, param.TypeString}, {ParameterByteArray, param.TypeByteArray},
		{ParameterBoolArray, param.TypeBoolArray}, {ParameterIntegerArray, param.TypeIntegerArray},
		{ParameterDoubleArray, param.TypeDoubleArray}, {ParameterStringArray, param.TypeStringArray},
	} {
		if uint8(c.pub) != uint8(c.in) || c.pub.String() != c.in.String() || !c.pub.Valid() || int(c.pub) != i {
			t.Errorf("%v (%d) vs %v (%d)", c.pub, c.pub, c.in, c.in)
		}
	}
	if ParameterType(10).Valid() {
		t.Error("type 10 valid")
	}
	if timer.Policy(OverrunSkip) != timer.Skip || timer.Policy(OverrunCatchUp) != timer.CatchUp ||
		OverrunCatchUp.String() != "catch_up" || OverrunSkip.String() != "skip" {
		t.Error("overrun policies differ from the timer's")
	}
}

// Every value survives Interface and ParameterValueOf (what the CLI
// relies on), and the getters answer for their own type only.
func TestParameterValueRoundTrip(t *testing.T) {
	for _, v := range []ParameterValue{
		{}, BoolValue(true), IntegerValue(-3), DoubleValue(math.NaN()), StringValue("x"),
		ByteArrayValue([]byte{0, 255}), BoolArrayValue([]bool{true}), IntegerArrayValue([]int64{1, 2}),
		DoubleArrayValue([]float64{1.5}), StringArrayValue([]string{"a", "b"}), ByteArrayValue(nil),
	} {
		back, err := ParameterValueOf(v.Interface())
		if err != nil || !back.Equal(v) || back.Type() != v.Type() {
			t.Errorf("%v: back %v %v", v, back, err)
		}
		if same, err := ParameterValueOf(v); err != nil || !same.Equal(v) {
			t.Errorf("%v: ParameterValueOf of itself %v %v", v, same, err)
		}
		if _, ok := v.Bool(); ok != (v.Type() == ParameterBool) {
			t.Errorf("%v: Bool says %v", v, ok)
		}
		if v.IsSet() != (v.Type() != ParameterNotSet) {
			t.Errorf("%v: IsSet %v", v, v.IsSet())
		}
	}
	if _, err := ParameterValueOf(struct{}{}); err == nil {
		t.Error("a struct converted")
	}
	v, err := ParseParameterValue("[1, 2]")
	if got, _ := v.IntegerArray(); err != nil || !reflect.DeepEqual(got, []int64{1, 2}) || v.String() != "Integer values are: array('q', [1, 2])" {
		t.Errorf("parsed %v %v", v, err)
	}
}

// Descriptors, results and callbacks cross into the node's store and back
// unchanged.
func TestParameterAPIThroughTheStore(t *testing.T) {
	ctx := NewContext(WithTransport(intra.New()), WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	n, err := NewNode("p", WithContext(ctx), WithoutParameterServices())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	d := ParameterDescriptor{Description: "gain", AdditionalConstraints: "even", IntegerRange: &IntegerRange{From: 0, To: 10, Step: 2}}
	if v, err := n.DeclareParameter("gain", IntegerValue(4), d); err != nil || !v.Equal(IntegerValue(4)) {
		t.Fatalf("declare %v %v", v, err)
	}
	if _, err := n.DeclareParameter("ratio", DoubleValue(0.5), ParameterDescriptor{FloatingPointRange: &FloatingPointRange{From: 0, To: 1}, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	ds, err := n.DescribeParameters("gain", "ratio")
	if err != nil || len(ds) != 2 {
		t.Fatalf("describe %+v %v", ds, err)
	}
	want := d
	want.Name, want.Type = "gain", ParameterInteger
	if !reflect.DeepEqual(ds[0], want) {
		t.Errorf("descriptor %+v, want %+v", ds[0], want)
	}
	if r := ds[1].FloatingPointRange; r == nil || r.To != 1 || !ds[1].ReadOnly || ds[1].Type != ParameterDouble {
		t.Errorf("descriptor %+v", ds[1])
	}
	if r := n.SetParameter(Parameter{Name: "gain", Value: IntegerValue(3)}); r.Successful || r.Reason == "" {
		t.Errorf("off-step value set: %+v", r)
	}
	var seen []Parameter
	h := n.AddOnSetParametersCallback(func(ps []Parameter) SetParametersResult {
		seen = append(seen, ps...)
		if v, _ := ps[0].Value.Integer(); v == 8 {
			return SetParametersResult{Reason: "no eights"}
		}
		return SetParametersResult{Successful: true}
	})
	var post []Parameter
	n.AddPostSetParametersCallback(func(ps []Parameter) { post = append(post, ps...) })
	rs := n.SetParameters([]Parameter{{Name: "gain", Value: IntegerValue(6)}, {Name: "gain", Value: IntegerValue(8)}})
	if len(rs) != 2 || !rs[0].Successful || rs[1] != (SetParametersResult{Reason: "no eights"}) {
		t.Errorf("results %+v", rs)
	}
	if len(seen) != 2 || !seen[1].Value.Equal(IntegerValue(8)) || len(post) != 1 || post[0].Name != "gain" || !post[0].Value.Equal(IntegerValue(6)) {
		t.Errorf("validator saw %+v, post-set %+v", seen, post)
	}
	if !n.RemoveParametersCallback(h) || n.RemoveParametersCallback(h) || n.RemoveParametersCallback(nil) {
		t.Error("remove")
	}
	if r := n.SetParametersAtomically([]Parameter{{Name: "gain", Value: IntegerValue(8)}}); !r.Successful {
		t.Errorf("atomically %+v", r)
	}
	if v, err := n.GetParameter("gain"); err != nil || !v.Equal(IntegerValue(8)) {
		t.Errorf("get %v %v", v, err)
	}
	if l := n.ListParameters(nil, 0); !reflect.DeepEqual(l.Names, []string{"gain", "ratio", "use_sim_time"}) {
		t.Errorf("list %+v", l)
	}
}
