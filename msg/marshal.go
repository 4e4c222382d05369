package msg

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nros-go/nros/cdr"
)

var encoders = sync.Pool{New: func() any { return new(cdr.Encoder) }}
var decoders = sync.Pool{New: func() any { return new(cdr.Decoder) }}

// Marshal appends the serialized sample of m (encapsulation header, then
// the XCDR1 body) to buf and returns the extended slice. With a buffer of
// sufficient capacity it allocates nothing.
func Marshal(m Message, littleEndian bool, buf []byte) []byte {
	e := encoders.Get().(*cdr.Encoder)
	e.Reset(buf, littleEndian)
	m.MarshalCDR(e)
	out := e.Bytes()
	e.ResetBody(nil, true) // do not keep the caller's buffer alive in the pool
	encoders.Put(e)
	return out
}

// MarshalChecked is Marshal that also reports a value the type cannot
// carry: a string or sequence longer than the bound of its field. The
// returned bytes are then not a valid sample of the type.
func MarshalChecked(m Message, littleEndian bool, buf []byte) ([]byte, error) {
	e := encoders.Get().(*cdr.Encoder)
	e.Reset(buf, littleEndian)
	m.MarshalCDR(e)
	out, err := e.Bytes(), e.Err()
	e.ResetBody(nil, true)
	encoders.Put(e)
	if err != nil {
		return out, fmt.Errorf("%s: %w", m.TypeName(), err)
	}
	return out, nil
}

// Unmarshal decodes a serialized sample (encapsulation header included)
// into m. Only plain XCDR1 (CDR_LE, CDR_BE) is accepted; PL_CDR and XCDR2
// are rejected with an error naming the kind. Bytes after the message are
// allowed (DDS pads samples to a multiple of 4).
func Unmarshal(data []byte, m Message) error {
	d := decoders.Get().(*cdr.Decoder)
	defer func() {
		d.ResetBody(nil, true)
		decoders.Put(d)
	}()
	if err := d.Reset(data); err != nil {
		return fmt.Errorf("%s: %w", m.TypeName(), err)
	}
	err := m.UnmarshalCDR(d)
	if err == nil {
		err = d.Err()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.TypeName(), err)
	}
	return nil
}

// DDSTypeName maps a ROS type name to the DDS type name both rmws use:
// "std_msgs/msg/String" -> "std_msgs::msg::dds_::String_". The middle part
// may be msg, srv or action; service types such as
// "example_interfaces/srv/AddTwoInts_Request" map the same way.
func DDSTypeName(rosType string) (string, error) {
	parts := strings.Split(rosType, "/")
	if len(parts) != 3 {
		return "", fmt.Errorf("msg: ROS type %q: want <package>/<msg|srv|action>/<Name>", rosType)
	}
	pkg, kind, name := parts[0], parts[1], parts[2]
	if !validIdent(pkg) || !validIdent(name) {
		return "", fmt.Errorf("msg: ROS type %q: package and name must be identifiers", rosType)
	}
	switch kind {
	case "msg", "srv", "action":
	default:
		return "", fmt.Errorf("msg: ROS type %q: middle part %q is not msg, srv or action", rosType, kind)
	}
	return pkg + "::" + kind + "::dds_::" + name + "_", nil
}

// ROSTypeName is the inverse of DDSTypeName:
// "std_msgs::msg::dds_::String_" -> "std_msgs/msg/String".
func ROSTypeName(ddsName string) (string, error) {
	parts := strings.Split(ddsName, "::")
	if len(parts) != 4 || parts[2] != "dds_" || !strings.HasSuffix(parts[3], "_") {
		return "", fmt.Errorf("msg: DDS type %q: want <package>::<msg|srv|action>::dds_::<Name>_", ddsName)
	}
	ros := parts[0] + "/" + parts[1] + "/" + strings.TrimSuffix(parts[3], "_")
	if _, err := DDSTypeName(ros); err != nil {
		return "", fmt.Errorf("msg: DDS type %q: %w", ddsName, err)
	}
	return ros, nil
}

func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

var registry = struct {
	sync.RWMutex
	m map[string]func() Message
}{m: map[string]func() Message{}}

// Register makes a message type available by its ROS type name to New
// (used by the CLI and bag playback). Message packages call it from init.
// Registering the same name twice panics, as does an invalid name.
func Register(name string, newFn func() Message) {
	if _, err := DDSTypeName(name); err != nil {
		panic(err)
	}
	if newFn == nil {
		panic("msg: Register " + name + " with nil constructor")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("msg: type " + name + " registered twice")
	}
	registry.m[name] = newFn
}

// New returns a new zero message of the named ROS type, if registered.
// The name may also be given in DDS form ("std_msgs::msg::dds_::String_")
// or in the short form the ros2 CLI accepts ("std_msgs/String").
func New(name string) (Message, bool) {
	if strings.Contains(name, "::") {
		if ros, err := ROSTypeName(name); err == nil {
			name = ros
		}
	} else if pkg, n, ok := strings.Cut(name, "/"); ok && !strings.Contains(n, "/") {
		name = pkg + "/msg/" + n
	}
	registry.RLock()
	f, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, false
	}
	return f(), true
}

// Types returns the registered ROS type names, sorted.
func Types() []string {
	registry.RLock()
	out := make([]string, 0, len(registry.m))
	for n := range registry.m {
		out = append(out, n)
	}
	registry.RUnlock()
	sort.Strings(out)
	return out
}
