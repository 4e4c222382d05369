// Package idl parses ROS 2 interface files: messages (.msg), services
// (.srv) and actions (.action), following the rules of rosidl_adapter.
//
// A line holds a field ("TYPE name [default]"), a constant
// ("TYPE NAME=value") or only a comment ("# ..."). Types are the
// primitives (bool, byte, char, float32, float64, int8 ... uint64, string,
// wstring), bounded strings ("string<=N"), other messages ("Name" in the same
// package, "pkg/Name" elsewhere; the legacy "time" and "duration" mean
// builtin_interfaces/Time and Duration), each optionally followed by "[N]"
// (fixed array), "[<=N]" (bounded sequence) or "[]" (unbounded sequence).
// ROS 2 has no implicit "Header" rule: a bare Header is looked up in the
// message's own package, as rosidl does.
//
// Services hold a request and a response separated by a line "---";
// actions a goal, a result and a feedback separated by two such lines.
package idl

import (
	"fmt"
	"strings"
)

// Kind is the base kind of a type.
type Kind int

// The kinds. Message is a nested message type (Type.Package/Type.Name).
const (
	Invalid Kind = iota
	Bool
	Byte
	Char
	Float32
	Float64
	Int8
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	String
	WString
	Message
)

var kindNames = [...]string{
	Invalid: "invalid", Bool: "bool", Byte: "byte", Char: "char", Float32: "float32", Float64: "float64",
	Int8: "int8", Uint8: "uint8", Int16: "int16", Uint16: "uint16", Int32: "int32", Uint32: "uint32",
	Int64: "int64", Uint64: "uint64", String: "string", WString: "wstring", Message: "message",
}

// String returns the .msg spelling of a primitive kind ("message" for
// nested types).
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// IsPrimitive reports whether k is a primitive other than a string.
func (k Kind) IsPrimitive() bool { return k >= Bool && k <= Uint64 }

// IsString reports whether k is string or wstring.
func (k Kind) IsString() bool { return k == String || k == WString }

// Size returns the wire size (equal to the XCDR1 alignment) of a primitive
// kind, 0 for strings and messages.
func (k Kind) Size() int {
	switch k {
	case Bool, Byte, Char, Int8, Uint8:
		return 1
	case Int16, Uint16:
		return 2
	case Float32, Int32, Uint32:
		return 4
	case Float64, Int64, Uint64:
		return 8
	}
	return 0
}

// ArrayKind says whether a type is a single value or a collection.
type ArrayKind int

// The array kinds.
const (
	Single    ArrayKind = iota // T
	Fixed                      // T[N]
	Bounded                    // T[<=N]
	Unbounded                  // T[]
)

// Type is the type of a field or constant.
type Type struct {
	Kind        Kind
	StringBound int    // for string<=N / wstring<=N; 0 means unbounded
	Package     string // for Message
	Name        string // for Message
	Array       ArrayKind
	Size        int // N of T[N] or T[<=N]
}

// Elem returns the element type of an array or sequence (t itself when
// t.Array is Single).
func (t Type) Elem() Type {
	t.Array, t.Size = Single, 0
	return t
}

// FullName returns "pkg/Name" for a message type, "" otherwise.
func (t Type) FullName() string {
	if t.Kind != Message {
		return ""
	}
	return t.Package + "/" + t.Name
}

// String renders t in .msg syntax with a package-qualified message name,
// e.g. "string<=10[<=3]" or "geometry_msgs/Point[]".
func (t Type) String() string {
	var b strings.Builder
	if t.Kind == Message {
		b.WriteString(t.FullName())
	} else {
		b.WriteString(t.Kind.String())
		if t.StringBound > 0 {
			fmt.Fprintf(&b, "<=%d", t.StringBound)
		}
	}
	switch t.Array {
	case Fixed:
		fmt.Fprintf(&b, "[%d]", t.Size)
	case Bounded:
		fmt.Fprintf(&b, "[<=%d]", t.Size)
	case Unbounded:
		b.WriteString("[]")
	}
	return b.String()
}

// Field is a member of a message.
type Field struct {
	Name    string
	Type    Type
	Default *Value // nil when the field has no default
	Comment string // the comment lines before and after the field, joined by '\n'
	Line    int
}

// Constant is a named constant of a message.
type Constant struct {
	Name    string
	Type    Type // a primitive or string kind, Array is Single
	Value   Value
	Comment string
	Line    int
}

// Value is a literal: a default value or a constant. Exactly one of the
// fields matching the type's kind is meaningful; for arrays List holds the
// elements.
type Value struct {
	Bool   bool
	Int    int64  // signed integers
	Uint   uint64 // unsigned integers, byte, char
	Float  float64
	Str    string
	List   []Value // array and sequence defaults
	Source string  // the literal as written
}

// Msg is a parsed message: a .msg file, or one part of a service or action.
type Msg struct {
	Package   string // ROS package, e.g. "std_msgs"
	Namespace string // "msg", "srv" or "action"
	Name      string // e.g. "Header", "SetBool_Request"
	Comment   string // the file-level comment (leading "#" lines)
	Fields    []Field
	Constants []Constant
	File      string // file name for error messages
	// Text is the text of the .msg file a message was parsed from
	// (ParseMessage); empty for the parts of services and actions.
	Text string
}

// FullName returns the ROS type name, e.g. "std_msgs/msg/Header".
func (m *Msg) FullName() string { return m.Package + "/" + m.Namespace + "/" + m.Name }

// Srv is a parsed service.
type Srv struct {
	Package, Name     string
	Comment           string
	Request, Response *Msg
	File              string
}

// FullName returns the ROS service type name, e.g. "std_srvs/srv/SetBool".
func (s *Srv) FullName() string { return s.Package + "/srv/" + s.Name }

// Action is a parsed action.
type Action struct {
	Package, Name          string
	Comment                string
	Goal, Result, Feedback *Msg
	File                   string
}

// FullName returns the ROS action type name, e.g.
// "example_interfaces/action/Fibonacci".
func (a *Action) FullName() string { return a.Package + "/action/" + a.Name }

// Error is a parse error at a line of an interface file.
type Error struct {
	File string
	Line int // 1-based; 0 when the error concerns the whole file
	Msg  string
}

// Error renders "file:line: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}
