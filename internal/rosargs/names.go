package rosargs

import (
	"errors"
	"fmt"
	"strings"
)

// Length limits of rmw: a fully qualified topic name may have at most
// MaxTopicNameLength characters, a namespace two fewer, a node name 255.
const (
	MaxTopicNameLength = 247
	MaxNamespaceLength = MaxTopicNameLength - 2
	MaxNodeNameLength  = 255
)

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ValidateNodeName checks a node name (no namespace) against rmw's rules:
// non-empty, only letters, digits and '_', not starting with a digit, at
// most MaxNodeNameLength characters.
func ValidateNodeName(name string) error {
	if name == "" {
		return errors.New("node name must not be empty")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' {
			return fmt.Errorf("node name %q must not contain %q (index %d)", name, c, i)
		}
	}
	if isDigit(name[0]) {
		return fmt.Errorf("node name %q must not start with a number", name)
	}
	if len(name) > MaxNodeNameLength {
		return fmt.Errorf("node name %s has %d characters, more than the ROS 2 limit of %d", abbrev(name), len(name), MaxNodeNameLength)
	}
	return nil
}

// validateAbsolute checks a fully qualified name of '/'-separated tokens.
func validateAbsolute(what, name string, allowRoot bool, maxLen int) error {
	if name == "" {
		return fmt.Errorf("%s must not be empty", what)
	}
	if name[0] != '/' {
		return fmt.Errorf("%s %q must be absolute (start with '/')", what, name)
	}
	if name == "/" {
		if allowRoot {
			return nil
		}
		return fmt.Errorf("%s must not be just '/'", what)
	}
	if name[len(name)-1] == '/' {
		return fmt.Errorf("%s %q must not end with '/'", what, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/':
			if i > 0 && name[i-1] == '/' {
				return fmt.Errorf("%s %q must not contain '//' (index %d)", what, name, i)
			}
			if i+1 < len(name) && isDigit(name[i+1]) {
				return fmt.Errorf("%s %q has a token starting with a number (index %d)", what, name, i+1)
			}
		case isAlnum(c) || c == '_':
		default:
			return fmt.Errorf("%s %q must not contain %q (index %d)", what, name, c, i)
		}
	}
	if len(name) > maxLen {
		return fmt.Errorf("%s %s has %d characters, more than the ROS 2 limit of %d", what, abbrev(name), len(name), maxLen)
	}
	return nil
}

// abbrev quotes a name, shortened in the middle when it is long, for
// messages about its length.
func abbrev(name string) string {
	if len(name) <= 40 {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q", name[:24]+"..."+name[len(name)-12:])
}

// checkLiteralLength refuses a topic or service name without
// substitutions ('~', '{...}') that cannot fit MaxTopicNameLength once
// expanded (a relative name gains at least a leading '/').
func checkLiteralLength(name string) error {
	if strings.ContainsAny(name, "~{") {
		return nil
	}
	n := len(name)
	if !strings.HasPrefix(name, "/") {
		n++
	}
	if n > MaxTopicNameLength {
		return fmt.Errorf("topic name %s has %d characters once fully qualified, more than the ROS 2 limit of %d", abbrev(name), n, MaxTopicNameLength)
	}
	return nil
}

// ValidateNamespace checks a node namespace against rmw's rules: absolute,
// "/" or '/'-separated tokens of letters, digits and '_' not starting with
// a digit, no trailing or doubled '/', at most MaxNamespaceLength long.
func ValidateNamespace(ns string) error {
	return validateAbsolute("namespace", ns, true, MaxNamespaceLength)
}

// ValidateFullTopicName checks a fully qualified (expanded) topic or
// service name against rmw's rules.
func ValidateFullTopicName(name string) error {
	return validateAbsolute("topic name", name, false, MaxTopicNameLength)
}

// ValidateTopicName checks a topic or service name before expansion, as
// rcl_validate_topic_name does: non-empty; only letters, digits, '_', '/',
// '~', '{' and '}'; no trailing '/'; not starting with a digit, nor any
// token after '/'; '~' only first and then followed by '/' (or alone);
// '{...}' substitutions balanced, of letters, digits and '_', not
// starting with a digit. ('//' and unknown or empty substitutions are
// caught by ExpandTopicName, as in rcl.)
func ValidateTopicName(name string) error {
	if name == "" {
		return errors.New("topic name must not be empty")
	}
	if name[len(name)-1] == '/' {
		return fmt.Errorf("topic name %q must not end with '/'", name)
	}
	if isDigit(name[0]) {
		return fmt.Errorf("topic name %q must not start with a number", name)
	}
	inSub := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if inSub >= 0 {
			switch {
			case c == '}':
				inSub = -1
			case isAlnum(c) || c == '_':
				if i == inSub+1 && isDigit(c) {
					return fmt.Errorf("topic name %q has a substitution starting with a number (index %d)", name, i)
				}
			default:
				return fmt.Errorf("topic name %q has %q inside a substitution (index %d)", name, c, i)
			}
			continue
		}
		switch {
		case c == '{':
			inSub = i
		case c == '}':
			return fmt.Errorf("topic name %q has an unmatched '}' (index %d)", name, i)
		case c == '~':
			if i != 0 {
				return fmt.Errorf("topic name %q has '~' not at the start (index %d)", name, i)
			}
			if len(name) > 1 && name[1] != '/' {
				return fmt.Errorf("topic name %q: '~' must be followed by '/'", name)
			}
		case c == '/':
			if i+1 < len(name) && isDigit(name[i+1]) {
				return fmt.Errorf("topic name %q has a token starting with a number (index %d)", name, i+1)
			}
		case isAlnum(c) || c == '_':
		default:
			return fmt.Errorf("topic name %q must not contain %q (index %d)", name, c, i)
		}
	}
	if inSub >= 0 {
		return fmt.Errorf("topic name %q has an unmatched '{' (index %d)", name, inSub)
	}
	return nil
}

// ExpandTopicName turns a topic or service name into a fully qualified one
// for a node, as rcl_expand_topic_name does: "~" becomes the node's fully
// qualified name, "{node}" the node name, "{ns}" and "{namespace}" the
// namespace (other substitutions are an error), and a relative name is
// put under the namespace. The inputs and the result are validated.
func ExpandTopicName(name, nodeName, namespace string) (string, error) {
	if err := ValidateTopicName(name); err != nil {
		return "", err
	}
	if err := ValidateNodeName(nodeName); err != nil {
		return "", err
	}
	if err := ValidateNamespace(namespace); err != nil {
		return "", err
	}
	nodeFQN := namespace + "/" + nodeName
	if namespace == "/" {
		nodeFQN = "/" + nodeName
	}
	out := name
	if strings.HasPrefix(out, "~") {
		out = nodeFQN + out[1:]
	}
	if strings.Contains(out, "{") {
		var b strings.Builder
		for len(out) > 0 {
			i := strings.IndexByte(out, '{')
			if i < 0 {
				b.WriteString(out)
				break
			}
			b.WriteString(out[:i])
			j := strings.IndexByte(out[i:], '}') + i
			key := out[i+1 : j]
			out = out[j+1:]
			switch key {
			case "node":
				b.WriteString(nodeName)
			case "ns", "namespace":
				if namespace == "/" {
					// "{ns}/x" in the root namespace is "/x", not "//x".
					if b.Len() == 0 && strings.HasPrefix(out, "/") {
						break
					}
					b.WriteString("/")
				} else {
					b.WriteString(namespace)
				}
			default:
				return "", fmt.Errorf("topic name %q has an unknown substitution {%s}", name, key)
			}
		}
		out = b.String()
	}
	if !strings.HasPrefix(out, "/") {
		if namespace == "/" {
			out = "/" + out
		} else {
			out = namespace + "/" + out
		}
	}
	if err := ValidateFullTopicName(out); err != nil {
		if out == name {
			return "", err
		}
		return "", fmt.Errorf("expanding %s: %w", abbrev(name), err)
	}
	return out, nil
}

// NormalizeNamespace turns a namespace as users write it into an absolute
// one, as rclcpp does for node construction: "" → "/", "foo" → "/foo".
func NormalizeNamespace(ns string) string {
	if ns == "" {
		return "/"
	}
	if ns[0] != '/' {
		return "/" + ns
	}
	return ns
}
