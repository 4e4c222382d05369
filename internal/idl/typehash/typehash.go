// Package typehash computes the RIHS01 type hashes of ROS 2 interfaces
// (REP-2011), which Iron and later announce in endpoint USER_DATA as
// "typehash=RIHS01_<64 hex>;".
//
// The hash is the SHA-256 of the type's description
// (type_description_interfaces/msg/TypeDescription: the type and every
// type it uses, directly or not, sorted by name; each a name and its
// fields; a field a name and a type: type id, capacity, string capacity,
// nested type name) written as JSON without default values, members in
// the messages' order, ", " and ": " as separators, on one line, non-ASCII
// escaped.
//
// A service is described as a type pkg/srv/Name with the fields
// request_message, response_message and event_message (its Name_Request,
// Name_Response and Name_Event); an action as pkg/action/Name with goal,
// result, feedback, send_goal_service, get_result_service and
// feedback_message, its two services described as services
// (pkg/action/Name_SendGoal, pkg/action/Name_GetResult), each with its
// event.
//
// The generator (nros gen) computes the hashes once and writes them into
// the generated types (their TypeHash and ServiceTypeHash methods); this
// package is not linked into programs.
package typehash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nros-go/nros/internal/idl"
)

// Field type ids of type_description_interfaces/msg/FieldType. Arrays add
// 48, bounded sequences 96, unbounded sequences 144.
const (
	nestedType     = 1
	typeInt8       = 2
	typeUint8      = 3
	typeInt16      = 4
	typeUint16     = 5
	typeInt32      = 6
	typeUint32     = 7
	typeInt64      = 8
	typeUint64     = 9
	typeFloat      = 10
	typeDouble     = 11
	typeBoolean    = 15
	typeByte       = 16
	typeString     = 17
	typeWString    = 18
	boundedString  = 21
	boundedWString = 22

	arrayOffset     = 48
	boundedOffset   = 96
	unboundedOffset = 144
)

// Lookup finds a message definition by package and name (the name within
// the package: "Header", "SetBool_Request").
type Lookup func(pkg, name string) *idl.Msg

func typeID(t idl.Type) (int, error) {
	var id int
	switch t.Kind {
	case idl.Message:
		id = nestedType
	case idl.Bool:
		id = typeBoolean
	case idl.Byte:
		id = typeByte
	case idl.Char, idl.Uint8: // .msg char is uint8
		id = typeUint8
	case idl.Int8:
		id = typeInt8
	case idl.Int16:
		id = typeInt16
	case idl.Uint16:
		id = typeUint16
	case idl.Int32:
		id = typeInt32
	case idl.Uint32:
		id = typeUint32
	case idl.Int64:
		id = typeInt64
	case idl.Uint64:
		id = typeUint64
	case idl.Float32:
		id = typeFloat
	case idl.Float64:
		id = typeDouble
	case idl.String:
		id = typeString
		if t.StringBound > 0 {
			id = boundedString
		}
	case idl.WString:
		id = typeWString
		if t.StringBound > 0 {
			id = boundedWString
		}
	default:
		return 0, fmt.Errorf("typehash: kind %v has no field type", t.Kind)
	}
	switch t.Array {
	case idl.Fixed:
		id += arrayOffset
	case idl.Bounded:
		id += boundedOffset
	case idl.Unbounded:
		id += unboundedOffset
	}
	return id, nil
}

// describe appends one individual type description to b and returns the
// nested types it names.
func describe(b *strings.Builder, m *idl.Msg, lookup Lookup) ([]*idl.Msg, error) {
	var nested []*idl.Msg
	fmt.Fprintf(b, `{"type_name": %s, "fields": [`, strconv.QuoteToASCII(m.FullName()))
	fields := m.Fields
	if len(fields) == 0 { // rosidl gives empty structures one dummy member
		fields = []idl.Field{{Name: "structure_needs_at_least_one_member", Type: idl.Type{Kind: idl.Uint8}}}
	}
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		id, err := typeID(f.Type)
		if err != nil {
			return nil, err
		}
		capacity := 0
		if f.Type.Array == idl.Fixed || f.Type.Array == idl.Bounded {
			capacity = f.Type.Size
		}
		nestedName := ""
		if f.Type.Kind == idl.Message {
			n := lookup(f.Type.Package, f.Type.Name)
			if n == nil {
				return nil, fmt.Errorf("typehash: %s: unknown type %s", m.FullName(), f.Type.FullName())
			}
			nested = append(nested, n)
			nestedName = n.FullName()
		}
		fmt.Fprintf(b, `{"name": %s, "type": {"type_id": %d, "capacity": %d, "string_capacity": %d, "nested_type_name": %s}}`,
			strconv.QuoteToASCII(f.Name), id, capacity, f.Type.StringBound, strconv.QuoteToASCII(nestedName))
	}
	b.WriteString("]}")
	return nested, nil
}

// Message returns the RIHS01 hash ("RIHS01_<64 hex>") of message m; lookup
// resolves the types of its fields, and theirs.
func Message(m *idl.Msg, lookup Lookup) (string, error) {
	var top strings.Builder
	nested, err := describe(&top, m, lookup)
	if err != nil {
		return "", err
	}
	// Every type used, directly or not, once, sorted by name.
	refs := map[string]*idl.Msg{}
	for len(nested) > 0 {
		n := nested[0]
		nested = nested[1:]
		if _, seen := refs[n.FullName()]; seen {
			continue
		}
		refs[n.FullName()] = n
		var discard strings.Builder
		more, err := describe(&discard, n, lookup)
		if err != nil {
			return "", err
		}
		nested = append(nested, more...)
	}
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(`{"type_description": `)
	b.WriteString(top.String())
	b.WriteString(`, "referenced_type_descriptions": [`)
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		if _, err := describe(&b, refs[name], lookup); err != nil {
			return "", err
		}
	}
	b.WriteString("]}")
	sum := sha256.Sum256([]byte(b.String()))
	return "RIHS01_" + hex.EncodeToString(sum[:]), nil
}

// overlay resolves the messages ms first, then through lookup.
func overlay(lookup Lookup, ms ...*idl.Msg) Lookup {
	return func(pkg, name string) *idl.Msg {
		for _, m := range ms {
			if m.Package == pkg && m.Name == name {
				return m
			}
		}
		if lookup == nil {
			return nil
		}
		return lookup(pkg, name)
	}
}

// service hashes the service whose request and response are req and resp
// (Name_Request, Name_Response, in the namespace of the service).
func service(req, resp *idl.Msg, lookup Lookup) (string, *idl.Msg, error) {
	event := idl.Event(req, resp)
	name := strings.TrimSuffix(req.Name, "_Request")
	srv := &idl.Msg{Package: req.Package, Namespace: req.Namespace, Name: name, Fields: []idl.Field{
		{Name: "request_message", Type: idl.MsgType(req.Package, req.Name)},
		{Name: "response_message", Type: idl.MsgType(resp.Package, resp.Name)},
		{Name: "event_message", Type: idl.MsgType(event.Package, event.Name)},
	}}
	lookup = overlay(lookup, req, resp, event, srv)
	h, err := Message(srv, lookup)
	return h, srv, err
}

// Service returns the RIHS01 hash of service sv (pkg/srv/Name), which
// Iron and later announce on both of its endpoints.
func Service(sv *idl.Srv, lookup Lookup) (string, error) {
	h, _, err := service(sv.Request, sv.Response, lookup)
	return h, err
}

// ActionServices returns the RIHS01 hashes of the send_goal and get_result
// services of action a (pkg/action/Name_SendGoal, pkg/action/Name_GetResult).
func ActionServices(a *idl.Action, lookup Lookup) (sendGoal, getResult string, err error) {
	ms := idl.ActionMsgs(a)
	lookup = overlay(lookup, ms...)
	if sendGoal, _, err = service(ms[3], ms[4], lookup); err != nil {
		return "", "", err
	}
	if getResult, _, err = service(ms[5], ms[6], lookup); err != nil {
		return "", "", err
	}
	return sendGoal, getResult, nil
}

// Action returns the RIHS01 hash of action a itself (pkg/action/Name).
func Action(a *idl.Action, lookup Lookup) (string, error) {
	ms := idl.ActionMsgs(a)
	lookup = overlay(lookup, ms...)
	_, sendGoal, err := service(ms[3], ms[4], lookup)
	if err != nil {
		return "", err
	}
	_, getResult, err := service(ms[5], ms[6], lookup)
	if err != nil {
		return "", err
	}
	sgEvent, grEvent := idl.Event(ms[3], ms[4]), idl.Event(ms[5], ms[6])
	field := func(name string, m *idl.Msg) idl.Field {
		return idl.Field{Name: name, Type: idl.MsgType(m.Package, m.Name)}
	}
	act := &idl.Msg{Package: a.Package, Namespace: "action", Name: a.Name, Fields: []idl.Field{
		field("goal", ms[0]), field("result", ms[1]), field("feedback", ms[2]),
		field("send_goal_service", sendGoal), field("get_result_service", getResult),
		field("feedback_message", ms[7]),
	}}
	return Message(act, overlay(lookup, sendGoal, getResult, sgEvent, grEvent, act))
}
