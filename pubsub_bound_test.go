package nros

import (
	"errors"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg/rcl_interfaces"
)

// A message with a sequence over its bound (floating_point_range is
// FloatingPointRange[<=1]) is refused by Publish and never reaches a
// subscriber; a valid one is delivered.
func TestPublishRefusesOverBound(t *testing.T) {
	ctx := quietContext()
	n, _ := NewNode("a", WithContext(ctx))
	var got []string
	if _, err := NewSubscription[rcl_interfaces.ParameterDescriptor](n, "/d", DefaultQoS(),
		func(m *rcl_interfaces.ParameterDescriptor) { got = append(got, m.Name) }); err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[rcl_interfaces.ParameterDescriptor](n, "/d", DefaultQoS())
	if err != nil {
		t.Fatal(err)
	}
	over := &rcl_interfaces.ParameterDescriptor{Name: "over", FloatingPointRange: make([]rcl_interfaces.FloatingPointRange, 2)}
	if err := pub.Publish(over); !errors.Is(err, cdr.ErrTooLong) {
		t.Fatalf("Publish over bound: %v, want ErrTooLong", err)
	}
	if err := pub.Publish(&rcl_interfaces.ParameterDescriptor{Name: "ok", FloatingPointRange: make([]rcl_interfaces.FloatingPointRange, 1)}); err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(WithExecutorContext(ctx))
	e.AddNode(n)
	e.SpinOnce(0)
	if len(got) != 1 || got[0] != "ok" {
		t.Fatalf("received %v, want only [ok]", got)
	}
}
