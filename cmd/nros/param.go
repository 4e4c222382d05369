package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/msg/rcl_interfaces"
)

const paramUsage = `usage: nros param <verb> NODE ... [--timeout S] [--ros-args ...]

verbs (as ros2 param):
  list [NODE [PREFIX...]]        the node's parameter names (without NODE: every node's)
  get NODE NAME                  "Boolean value is: True" and so on
  set NODE NAME VALUE            VALUE is YAML (true, 3, 1.5, [1, 2], text);
                                 exit 1 with the node's reason when refused
  describe NODE NAME...          descriptors
  dump NODE                      the parameters as a params file
  load NODE FILE                 set the parameters a params file gives NODE
  delete NODE NAME               undeclare a dynamically typed parameter
`

func runParam(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).paramCmd(ctx, args)
}

// paramCmd is `nros param`: a client of a node's rcl_interfaces parameter
// services.
func (e *cliEnv) paramCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, paramUsage)
		return 2
	}
	verb := args[0]
	switch verb {
	case "list", "get", "set", "describe", "dump", "load", "delete":
		return exitCode(e.stderr, "nros param "+verb, e.param(ctx, verb, args[1:]))
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, paramUsage)
		return 0
	}
	fmt.Fprintf(e.stderr, "nros param: unknown verb %q\n\n%s", verb, paramUsage)
	return 2
}

// paramArgs is how many positional arguments each verb takes (min, max; -1
// any).
var paramArgs = map[string][2]int{
	"list": {0, -1}, "get": {2, 2}, "set": {3, 3}, "describe": {2, -1}, "dump": {1, 1}, "load": {2, 2}, "delete": {2, 2},
}

func (e *cliEnv) param(ctx context.Context, verb string, args []string) error {
	prog := "nros param " + verb
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, strings.TrimSpace(strings.SplitN(paramUsage, "\n", 2)[0][len("usage: "):]))
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the node's parameter services")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	n := paramArgs[verb]
	if len(pos) < n[0] || (n[1] >= 0 && len(pos) > n[1]) {
		return usagef("wrong number of arguments\n\n%s", paramUsage)
	}
	node, err := nros.NewNode("_nros_param_client", nros.WithContext(c), nros.WithoutParameterServices())
	if err != nil {
		return nodeError(err)
	}
	defer node.Close()
	if len(pos) == 0 { // list: every node that serves list_parameters
		return e.paramListAll(ctx, node, *timeout)
	}
	target := pos[0]
	if !strings.HasPrefix(target, "/") {
		target = "/" + target
	}
	pc := &paramClient{node: node, target: target, timeout: *timeout}
	switch verb {
	case "list":
		return e.paramList(ctx, pc, pos[1:])
	case "get":
		return e.paramGet(ctx, pc, pos[1])
	case "set":
		v := publicValue(param.ParseCLIValue(pos[2]))
		return e.paramSet(ctx, pc, pos[1], v, "Set parameter successful", "Setting parameter failed")
	case "delete":
		return e.paramSet(ctx, pc, pos[1], nros.ParameterValue{}, "Deleted parameter successfully", "Deleting parameter failed")
	case "describe":
		return e.paramDescribe(ctx, pc, pos[1:])
	case "dump":
		return e.paramDump(ctx, pc)
	case "load":
		return e.paramLoad(ctx, pc, pos[1])
	}
	return nil
}

// paramClient calls one node's parameter services.
type paramClient struct {
	node    *nros.Node
	target  string
	timeout time.Duration
}

// nodeNotFound is what ros2 param says when the services do not answer.
const nodeNotFound = "Node not found"

// callParam calls target's service with req.
func callParam[Req, Resp any, PReq nros.MessagePtr[Req], PResp nros.MessagePtr[Resp]](ctx context.Context, pc *paramClient, service string, req *Req) (*Resp, error) {
	cl, err := nros.NewClient[Req, Resp, PReq, PResp](pc.node, pc.target+"/"+service, nros.WithServiceQoS(nros.ParametersQoS()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, pc.timeout)
	defer cancel()
	if err := cl.WaitForService(cctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fatalError{nodeNotFound + ": " + pc.target}
	}
	resp, err := cl.Call(cctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s/%s: no response: %w", pc.target, service, err)
	}
	return resp, nil
}

func (e *cliEnv) paramList(ctx context.Context, pc *paramClient, prefixes []string) error {
	resp, err := callParam[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](ctx, pc, "list_parameters",
		&rcl_interfaces.ListParameters_Request{Prefixes: prefixes})
	if err != nil {
		return err
	}
	names := append([]string(nil), resp.Result.Names...)
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(e.stdout, "  %s\n", n)
	}
	return nil
}

// paramListAll is `nros param list` without NODE: "/node:" and its
// parameters for every node of the graph that serves list_parameters, as
// ros2 param list prints them.
func (e *cliEnv) paramListAll(ctx context.Context, node *nros.Node, timeout time.Duration) error {
	tr := node.Context().Transport()
	e.spinTime(ctx, tr, time.Second)
	var targets []string
	for _, s := range tr.Services() {
		if n, ok := strings.CutSuffix(s.Name, "/list_parameters"); ok && n != "" && len(s.ServerNodes) > 0 &&
			s.Type == "rcl_interfaces/srv/ListParameters" && !slices.Contains(targets, n) {
			targets = append(targets, n)
		}
	}
	slices.Sort(targets)
	for _, target := range targets {
		pc := &paramClient{node: node, target: target, timeout: timeout}
		resp, err := callParam[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](ctx, pc, "list_parameters",
			&rcl_interfaces.ListParameters_Request{})
		if err != nil {
			fmt.Fprintf(e.stderr, "nros param list: %s: %v\n", target, err)
			continue
		}
		names := append([]string(nil), resp.Result.Names...)
		sort.Strings(names)
		fmt.Fprintf(e.stdout, "%s:\n", target)
		for _, n := range names {
			fmt.Fprintf(e.stdout, "  %s\n", n)
		}
	}
	return nil
}

func (e *cliEnv) paramGet(ctx context.Context, pc *paramClient, name string) error {
	resp, err := callParam[rcl_interfaces.GetParameters_Request, rcl_interfaces.GetParameters_Response](ctx, pc, "get_parameters",
		&rcl_interfaces.GetParameters_Request{Names: []string{name}})
	if err != nil {
		return err
	}
	if len(resp.Values) != 1 {
		fmt.Fprintln(e.stdout, "Parameter not set.")
		return nil
	}
	v, err := nros.ParameterValueFromMsg(&resp.Values[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, v.String())
	return nil
}

func (e *cliEnv) paramSet(ctx context.Context, pc *paramClient, name string, v nros.ParameterValue, ok, failed string) error {
	resp, err := callParam[rcl_interfaces.SetParameters_Request, rcl_interfaces.SetParameters_Response](ctx, pc, "set_parameters",
		&rcl_interfaces.SetParameters_Request{Parameters: []rcl_interfaces.Parameter{{Name: name, Value: nros.ParameterValueMsg(v)}}})
	if err != nil {
		return err
	}
	if len(resp.Results) != 1 {
		return fmt.Errorf("%d results for one parameter", len(resp.Results))
	}
	if r := resp.Results[0]; !r.Successful {
		if r.Reason != "" {
			return errors.New(failed + ": " + r.Reason)
		}
		return errors.New(failed)
	}
	fmt.Fprintln(e.stdout, ok)
	return nil
}

func (e *cliEnv) paramDescribe(ctx context.Context, pc *paramClient, names []string) error {
	resp, err := callParam[rcl_interfaces.DescribeParameters_Request, rcl_interfaces.DescribeParameters_Response](ctx, pc, "describe_parameters",
		&rcl_interfaces.DescribeParameters_Request{Names: names})
	if err != nil {
		return err
	}
	if len(resp.Descriptors) != len(names) {
		return fmt.Errorf("parameter not declared: %s", strings.Join(names, ", "))
	}
	for _, d := range resp.Descriptors {
		fmt.Fprintf(e.stdout, "Parameter name: %s\n", d.Name)
		fmt.Fprintf(e.stdout, "  Type: %s\n", typeWord(d.Type))
		if d.Description != "" {
			fmt.Fprintf(e.stdout, "  Description: %s\n", d.Description)
		}
		fmt.Fprintln(e.stdout, "  Constraints:")
		if d.ReadOnly {
			fmt.Fprintln(e.stdout, "    Read only: true")
		}
		if d.DynamicTyping {
			fmt.Fprintln(e.stdout, "    Dynamic typing: true")
		}
		if d.AdditionalConstraints != "" {
			fmt.Fprintf(e.stdout, "    Additional constraints: %s\n", d.AdditionalConstraints)
		}
		for _, r := range d.IntegerRange {
			fmt.Fprintf(e.stdout, "    Min value: %d\n    Max value: %d\n", r.FromValue, r.ToValue)
			if r.Step != 0 {
				fmt.Fprintf(e.stdout, "    Step: %d\n", r.Step)
			}
		}
		for _, r := range d.FloatingPointRange {
			fmt.Fprintf(e.stdout, "    Min value: %s\n    Max value: %s\n", param.PyFloat(r.FromValue), param.PyFloat(r.ToValue))
			if r.Step != 0 {
				fmt.Fprintf(e.stdout, "    Step: %s\n", param.PyFloat(r.Step))
			}
		}
	}
	return nil
}

// typeWord names a parameter type as ros2 param describe does.
func typeWord(t uint8) string {
	switch param.Type(t) {
	case param.TypeBool:
		return "boolean"
	case param.TypeInteger:
		return "integer"
	case param.TypeDouble:
		return "double"
	case param.TypeString:
		return "string"
	case param.TypeByteArray:
		return "byte array"
	case param.TypeBoolArray:
		return "boolean array"
	case param.TypeIntegerArray:
		return "integer array"
	case param.TypeDoubleArray:
		return "double array"
	case param.TypeStringArray:
		return "string array"
	}
	return "not set"
}

func (e *cliEnv) paramDump(ctx context.Context, pc *paramClient) error {
	list, err := callParam[rcl_interfaces.ListParameters_Request, rcl_interfaces.ListParameters_Response](ctx, pc, "list_parameters",
		&rcl_interfaces.ListParameters_Request{})
	if err != nil {
		return err
	}
	names := append([]string(nil), list.Result.Names...)
	sort.Strings(names)
	get, err := callParam[rcl_interfaces.GetParameters_Request, rcl_interfaces.GetParameters_Response](ctx, pc, "get_parameters",
		&rcl_interfaces.GetParameters_Request{Names: names})
	if err != nil {
		return err
	}
	if len(get.Values) != len(names) {
		return fmt.Errorf("%d values for %d parameters", len(get.Values), len(names))
	}
	params := &yaml.Node{Kind: yaml.MappingNode}
	for i, name := range names {
		v, err := nros.ParameterValueFromMsg(&get.Values[i])
		if err != nil {
			return err
		}
		insertParam(params, strings.Split(name, "."), valueNode(v))
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: pc.target},
		{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "ros__parameters"}, params}},
	}}
	// As Python's yaml.dump (ros2 param dump): two-space indentation,
	// block sequences at their key's indentation.
	enc := yaml.NewEncoder(e.stdout)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}

// insertParam puts a dotted name into nested mappings (a.b: 1 is a: {b: 1}).
func insertParam(m *yaml.Node, path []string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == path[0] && len(path) > 1 && m.Content[i+1].Kind == yaml.MappingNode {
			insertParam(m.Content[i+1], path[1:], v)
			return
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Value: path[0]}
	if len(path) == 1 {
		m.Content = append(m.Content, key, v)
		return
	}
	sub := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, key, sub)
	insertParam(sub, path[1:], v)
}

// valueNode is a parameter value as YAML that reads back as the same type.
func valueNode(v nros.ParameterValue) *yaml.Node {
	scalar := func(s string, tag string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s, Tag: tag} }
	seq := func(items []*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
	}
	switch v.Type() {
	case nros.ParameterBool:
		b, _ := v.Bool()
		return scalar(fmt.Sprint(b), "!!bool")
	case nros.ParameterInteger:
		i, _ := v.Integer()
		return scalar(fmt.Sprint(i), "!!int")
	case nros.ParameterDouble:
		d, _ := v.Double()
		return scalar(param.PyFloat(d), "!!float")
	case nros.ParameterString:
		s, _ := v.Str()
		return scalar(s, "!!str")
	case nros.ParameterByteArray:
		bs, _ := v.ByteArray()
		var items []*yaml.Node
		for _, b := range bs {
			items = append(items, scalar(fmt.Sprint(b), "!!int"))
		}
		return seq(items)
	case nros.ParameterBoolArray:
		bs, _ := v.BoolArray()
		var items []*yaml.Node
		for _, b := range bs {
			items = append(items, scalar(fmt.Sprint(b), "!!bool"))
		}
		return seq(items)
	case nros.ParameterIntegerArray:
		is, _ := v.IntegerArray()
		var items []*yaml.Node
		for _, i := range is {
			items = append(items, scalar(fmt.Sprint(i), "!!int"))
		}
		return seq(items)
	case nros.ParameterDoubleArray:
		ds, _ := v.DoubleArray()
		var items []*yaml.Node
		for _, d := range ds {
			items = append(items, scalar(param.PyFloat(d), "!!float"))
		}
		return seq(items)
	case nros.ParameterStringArray:
		ss, _ := v.StringArray()
		var items []*yaml.Node
		for _, s := range ss {
			items = append(items, scalar(s, "!!str"))
		}
		return seq(items)
	}
	return scalar("null", "!!null")
}

// publicValue converts a value of the CLI's parser (internal/param) to the
// library's public type through its plain Go value, which converts back
// exactly for every parameter type.
func publicValue(v param.Value) nros.ParameterValue {
	pv, err := nros.ParameterValueOf(v.Interface())
	if err != nil {
		panic(fmt.Sprintf("nros param: %v does not convert: %v", v, err)) // cannot happen: Interface returns only convertible types
	}
	return pv
}

func (e *cliEnv) paramLoad(ctx context.Context, pc *paramClient, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	f, err := param.LoadYAML(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	values := f.ForNode(pc.target)
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	req := &rcl_interfaces.SetParameters_Request{}
	for _, n := range names {
		req.Parameters = append(req.Parameters, rcl_interfaces.Parameter{Name: n, Value: nros.ParameterValueMsg(publicValue(values[n]))})
	}
	resp, err := callParam[rcl_interfaces.SetParameters_Request, rcl_interfaces.SetParameters_Response](ctx, pc, "set_parameters", req)
	if err != nil {
		return err
	}
	var failed []string
	for i, r := range resp.Results {
		if i >= len(names) {
			break
		}
		if r.Successful {
			fmt.Fprintf(e.stdout, "Set parameter %s successful\n", names[i])
			continue
		}
		msg := fmt.Sprintf("Set parameter %s failed", names[i])
		if r.Reason != "" {
			msg += ": " + r.Reason
		}
		fmt.Fprintln(e.stdout, msg)
		failed = append(failed, names[i])
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d parameter(s) not set: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}
