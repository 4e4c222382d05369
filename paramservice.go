package nros

import (
	"context"
	"fmt"

	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/rmw"
)

// ParameterEventsTopic is where nodes publish their parameter changes.
const ParameterEventsTopic = "/parameter_events"

// StartParameterServicesParameter, set false by a parameter override
// (-p start_parameter_services:=false), keeps a node from serving its
// parameter services and publishing parameter events, like rclcpp's
// NodeOptions::start_parameter_services(false).
const StartParameterServicesParameter = "start_parameter_services"

// ParametersQoS is rclcpp's QoS of the parameter services and of
// /parameter_events: reliable, volatile, keep last 1000.
func ParametersQoS() QoS { return rmw.ParametersQoS }

// WithoutParameterServices keeps the node from serving the six
// rcl_interfaces parameter services and from publishing on
// /parameter_events.
func WithoutParameterServices() NodeOption {
	return func(c *nodeConfig) { c.noParamServices = true }
}

// startParameterServices serves <fqn>/describe_parameters and the five
// others with ParametersQoS, and publishes every committed change on
// /parameter_events.
func (n *Node) startParameterServices() error {
	if n.cfg.noParamServices {
		return nil
	}
	if v, ok := n.params.Override(StartParameterServicesParameter); ok {
		if on, isBool := v.Bool(); isBool && !on {
			return nil
		}
	}
	var closers []interface{ Close() error }
	fail := func(err error) error {
		for _, c := range closers {
			c.Close()
		}
		return fmt.Errorf("nros: node %s: parameter services: %w", n.FullyQualifiedName(), err)
	}
	base := n.FullyQualifiedName()
	if base == "/" {
		base = ""
	}
	qos := WithServiceQoS(ParametersQoS())
	add := func(c interface{ Close() error }, err error) error {
		if err != nil {
			return err
		}
		closers = append(closers, c)
		return nil
	}
	if err := add(NewService[rcl_interfaces.DescribeParameters_Request, rcl_interfaces.DescribeParameters_Response](n, base+"/describe_parameters", n.describeParametersService, qos)); err != nil {
		return fail(err)
	}
	if err := add(NewService[rcl_interfaces.GetParameters_Request, rcl_interfaces.GetParameters_Response](n, base+"/get_parameters", n.getParametersService, qos)); err != nil {
		return fail(err)
	}
	if err := add(NewService[rcl_interfaces.GetParameterTypes_Request, rcl_interfaces.GetParameterTypes_Response](n, base+"/get_parameter_types", n.getParameterTypesService, qos)); err != nil {
		return fail(err)
	}
	if err := add(NewService[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](n, base+"/list_parameters", n.listParametersService, qos)); err != nil {
		return fail(err)
	}
	if err := add(NewService[rcl_interfaces.SetParameters_Request, rcl_interfaces.SetParameters_Response](n, base+"/set_parameters", n.setParametersService, qos)); err != nil {
		return fail(err)
	}
	if err := add(NewService[rcl_interfaces.SetParametersAtomically_Request, rcl_interfaces.SetParametersAtomically_Response](n, base+"/set_parameters_atomically", n.setParametersAtomicallyService, qos)); err != nil {
		return fail(err)
	}
	pub, err := NewPublisher[rcl_interfaces.ParameterEvent](n, ParameterEventsTopic, ParametersQoS())
	if err != nil {
		return fail(err)
	}
	n.params.AddEventCallback(func(ev param.Event) {
		m := rcl_interfaces.ParameterEvent{Node: n.FullyQualifiedName()}
		if sec, nsec, err := n.ctx.Clock().Now().SecNanosec(); err == nil {
			m.Stamp = builtin_interfaces.Time{Sec: sec, Nanosec: nsec}
		}
		m.NewParameters = parametersMsg(ev.New)
		m.ChangedParameters = parametersMsg(ev.Changed)
		m.DeletedParameters = parametersMsg(ev.Deleted)
		if err := pub.Publish(&m); err != nil {
			n.log.Debug("parameter event not published", "error", err)
		}
	})
	return nil
}

func parametersMsg(ps []param.Parameter) []rcl_interfaces.Parameter {
	if len(ps) == 0 {
		return nil
	}
	out := make([]rcl_interfaces.Parameter, len(ps))
	for i, p := range ps {
		out[i] = rcl_interfaces.Parameter{Name: p.Name, Value: valueMsg(p.Value)}
	}
	return out
}

// ParameterValueMsg converts a parameter value to its rcl_interfaces message.
func ParameterValueMsg(v ParameterValue) rcl_interfaces.ParameterValue { return valueMsg(v.v) }

func valueMsg(v param.Value) rcl_interfaces.ParameterValue {
	m := rcl_interfaces.ParameterValue{Type: uint8(v.Type())}
	switch v.Type() {
	case param.TypeBool:
		m.BoolValue, _ = v.Bool()
	case param.TypeInteger:
		m.IntegerValue, _ = v.Integer()
	case param.TypeDouble:
		m.DoubleValue, _ = v.Double()
	case param.TypeString:
		m.StringValue, _ = v.Str()
	case param.TypeByteArray:
		m.ByteArrayValue, _ = v.ByteArray()
	case param.TypeBoolArray:
		m.BoolArrayValue, _ = v.BoolArray()
	case param.TypeIntegerArray:
		m.IntegerArrayValue, _ = v.IntegerArray()
	case param.TypeDoubleArray:
		m.DoubleArrayValue, _ = v.DoubleArray()
	case param.TypeStringArray:
		m.StringArrayValue, _ = v.StringArray()
	}
	return m
}

// ParameterValueFromMsg converts an rcl_interfaces/ParameterValue; an
// unknown type is an error.
func ParameterValueFromMsg(m *rcl_interfaces.ParameterValue) (ParameterValue, error) {
	v, err := valueFromMsg(m)
	return ParameterValue{v}, err
}

func valueFromMsg(m *rcl_interfaces.ParameterValue) (param.Value, error) {
	switch param.Type(m.Type) {
	case param.TypeNotSet:
		return param.NotSet(), nil
	case param.TypeBool:
		return param.BoolValue(m.BoolValue), nil
	case param.TypeInteger:
		return param.IntegerValue(m.IntegerValue), nil
	case param.TypeDouble:
		return param.DoubleValue(m.DoubleValue), nil
	case param.TypeString:
		return param.StringValue(m.StringValue), nil
	case param.TypeByteArray:
		return param.ByteArrayValue(m.ByteArrayValue), nil
	case param.TypeBoolArray:
		return param.BoolArrayValue(m.BoolArrayValue), nil
	case param.TypeIntegerArray:
		return param.IntegerArrayValue(m.IntegerArrayValue), nil
	case param.TypeDoubleArray:
		return param.DoubleArrayValue(m.DoubleArrayValue), nil
	case param.TypeStringArray:
		return param.StringArrayValue(m.StringArrayValue), nil
	}
	return param.NotSet(), fmt.Errorf("unknown parameter type %d", m.Type)
}

// ParameterDescriptorMsg converts a descriptor to its rcl_interfaces message.
func ParameterDescriptorMsg(d ParameterDescriptor) rcl_interfaces.ParameterDescriptor {
	return descriptorMsg(d.internal())
}

func descriptorMsg(d param.Descriptor) rcl_interfaces.ParameterDescriptor {
	m := rcl_interfaces.ParameterDescriptor{Name: d.Name, Type: uint8(d.Type), Description: d.Description,
		AdditionalConstraints: d.AdditionalConstraints, ReadOnly: d.ReadOnly, DynamicTyping: d.DynamicTyping}
	if r := d.IntegerRange; r != nil {
		m.IntegerRange = []rcl_interfaces.IntegerRange{{FromValue: r.From, ToValue: r.To, Step: r.Step}}
	}
	if r := d.FloatingPointRange; r != nil {
		m.FloatingPointRange = []rcl_interfaces.FloatingPointRange{{FromValue: r.From, ToValue: r.To, Step: r.Step}}
	}
	return m
}

// The handlers run on the executor goroutine. Like rclcpp's
// ParameterService, a request naming an undeclared parameter (without
// allow_undeclared_parameters) gets an empty list back.

func (n *Node) describeParametersService(_ context.Context, req *rcl_interfaces.DescribeParameters_Request) (*rcl_interfaces.DescribeParameters_Response, error) {
	resp := &rcl_interfaces.DescribeParameters_Response{}
	ds, err := n.params.Describe(req.Names...)
	if err != nil {
		n.log.Debug("describe_parameters", "error", err)
		return resp, nil
	}
	for i, d := range ds {
		if v, err := n.params.Get(req.Names[i]); err == nil && d.DynamicTyping {
			d.Type = v.Type()
		}
		resp.Descriptors = append(resp.Descriptors, descriptorMsg(d))
	}
	return resp, nil
}

func (n *Node) getParametersService(_ context.Context, req *rcl_interfaces.GetParameters_Request) (*rcl_interfaces.GetParameters_Response, error) {
	resp := &rcl_interfaces.GetParameters_Response{}
	values := make([]rcl_interfaces.ParameterValue, 0, len(req.Names))
	for _, name := range req.Names {
		v, err := n.params.Get(name)
		if err != nil {
			n.log.Debug("get_parameters", "error", err)
			return resp, nil
		}
		values = append(values, valueMsg(v))
	}
	resp.Values = values
	return resp, nil
}

func (n *Node) getParameterTypesService(_ context.Context, req *rcl_interfaces.GetParameterTypes_Request) (*rcl_interfaces.GetParameterTypes_Response, error) {
	resp := &rcl_interfaces.GetParameterTypes_Response{}
	for _, t := range n.params.Types(req.Names...) {
		resp.Types = append(resp.Types, uint8(t))
	}
	return resp, nil
}

func (n *Node) listParametersService(_ context.Context, req *rcl_interfaces.ListParameters_Request) (*rcl_interfaces.ListParameters_Response, error) {
	r := n.params.List(req.Prefixes, req.Depth)
	return &rcl_interfaces.ListParameters_Response{Result: rcl_interfaces.ListParametersResult{Names: r.Names, Prefixes: r.Prefixes}}, nil
}

// parametersFromMsg converts a request's parameters; a bad one yields its
// index and the reason.
func parametersFromMsg(ms []rcl_interfaces.Parameter) ([]param.Parameter, int, error) {
	ps := make([]param.Parameter, len(ms))
	for i := range ms {
		v, err := valueFromMsg(&ms[i].Value)
		if err != nil {
			return nil, i, fmt.Errorf("parameter '%s': %w", ms[i].Name, err)
		}
		ps[i] = param.Parameter{Name: ms[i].Name, Value: v}
	}
	return ps, -1, nil
}

func (n *Node) setParametersService(_ context.Context, req *rcl_interfaces.SetParameters_Request) (*rcl_interfaces.SetParameters_Response, error) {
	resp := &rcl_interfaces.SetParameters_Response{Results: make([]rcl_interfaces.SetParametersResult, len(req.Parameters))}
	for i := range req.Parameters {
		v, err := valueFromMsg(&req.Parameters[i].Value)
		if err != nil {
			resp.Results[i] = rcl_interfaces.SetParametersResult{Reason: err.Error()}
			continue
		}
		r := n.params.Set(req.Parameters[i].Name, v)
		resp.Results[i] = rcl_interfaces.SetParametersResult{Successful: r.Successful, Reason: r.Reason}
	}
	return resp, nil
}

func (n *Node) setParametersAtomicallyService(_ context.Context, req *rcl_interfaces.SetParametersAtomically_Request) (*rcl_interfaces.SetParametersAtomically_Response, error) {
	ps, _, err := parametersFromMsg(req.Parameters)
	if err != nil {
		return &rcl_interfaces.SetParametersAtomically_Response{Result: rcl_interfaces.SetParametersResult{Reason: err.Error()}}, nil
	}
	r := n.params.SetAtomically(ps)
	return &rcl_interfaces.SetParametersAtomically_Response{Result: rcl_interfaces.SetParametersResult{Successful: r.Successful, Reason: r.Reason}}, nil
}
