package ros

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Distro selects the ROS 2 distribution whose rmw_zenoh the keys follow.
// The only difference on the wire is the type hash in data keys and
// liveliness tokens: Humble has no type hashes and rmw_zenoh's Humble
// backport writes the literal TypeHashNotSupported; Iron and later write
// the type's RIHS01 hash. The zero value is Jazzy (the current LTS), as on
// the DDS side.
type Distro uint8

const (
	// DistroJazzy stands for Iron, Jazzy, Kilted, Lyrical and Rolling:
	// RIHS01 type hashes.
	DistroJazzy Distro = iota
	// DistroHumble stands for Humble (and older): TypeHashNotSupported.
	DistroHumble
)

// TypeHashNotSupported is the type-hash field rmw_zenoh writes on Humble.
const TypeHashNotSupported = "TypeHashNotSupported"

// DistroForName returns the Distro of a ROS_DISTRO value; ok is false for
// "" or a name it does not know.
func DistroForName(name string) (d Distro, ok bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "ardent", "bouncy", "crystal", "dashing", "eloquent", "foxy", "galactic", "humble":
		return DistroHumble, true
	case "iron", "jazzy", "kilted", "lyrical", "rolling":
		return DistroJazzy, true
	}
	return DistroJazzy, false
}

// String returns "humble" or "jazzy".
func (d Distro) String() string {
	if d == DistroHumble {
		return "humble"
	}
	return "jazzy"
}

// TypeHash returns the type-hash field for a type whose RIHS01 hash is
// rihs ("RIHS01_" and 64 hex digits, or "" when the type has none):
// TypeHashNotSupported on Humble, and also for a type without a hash on
// later distros (no rmw_zenoh peer will match such a key, which is the
// honest outcome for a type nobody else can name).
func (d Distro) TypeHash(rihs string) string {
	if d == DistroHumble || rihs == "" {
		return TypeHashNotSupported
	}
	return rihs
}

// ValidTypeHash reports whether h is a type-hash field rmw_zenoh writes:
// TypeHashNotSupported or "RIHS01_" and 64 lowercase hex digits.
func ValidTypeHash(h string) bool {
	if h == TypeHashNotSupported {
		return true
	}
	rest, ok := strings.CutPrefix(h, "RIHS01_")
	if !ok || len(rest) != 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DDSTypeName returns the type name rmw_zenoh puts in keys and tokens for a
// ROS type name: "std_msgs/msg/String" -> "std_msgs::msg::dds_::String_",
// "example_interfaces/srv/AddTwoInts" -> "example_interfaces::srv::dds_::AddTwoInts_"
// (a service's type is its request type's name without "Request_").
func DDSTypeName(rosType string) (string, error) {
	parts := strings.Split(rosType, "/")
	if len(parts) < 2 {
		return "", fmt.Errorf("ros: type name %q: want package/kind/Name", rosType)
	}
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, ":*$#?% ") {
			return "", fmt.Errorf("ros: type name %q: bad part %q", rosType, p)
		}
	}
	ns := strings.Join(parts[:len(parts)-1], "::")
	return ns + "::dds_::" + parts[len(parts)-1] + "_", nil
}

// ROSTypeName turns a DDS type name back into a ROS one as rmw_zenoh's
// graph reports it: "std_msgs::msg::dds_::String_" -> "std_msgs/msg/String".
// A name that is not of that form is returned unchanged.
func ROSTypeName(dds string) string {
	if !strings.HasSuffix(dds, "_") {
		return dds
	}
	i := strings.Index(dds, "dds_::")
	if i < 0 {
		return dds
	}
	ns := strings.ReplaceAll(dds[:i], "::", "/")
	return ns + dds[i+len("dds_::"):len(dds)-1]
}

// StripSlashes removes one leading and one trailing '/' from a ROS name,
// as rmw_zenoh does before it puts the name in a data key.
func StripSlashes(name string) string {
	name = strings.TrimPrefix(name, "/")
	return strings.TrimSuffix(name, "/")
}

// TopicKey returns the key expression of a topic's or a service's data:
// "<domain>/<name without leading/trailing '/'>/<dds type>/<type hash>",
// e.g. "0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66…". Publishers
// put and subscribers subscribe on it; a service server declares its
// queryable on it and a client queries it.
func TopicKey(domain uint32, name, ddsType, typeHash string) (string, error) {
	n := StripSlashes(name)
	if n == "" {
		return "", fmt.Errorf("ros: empty topic or service name %q", name)
	}
	if err := checkChunks(n, "name"); err != nil {
		return "", err
	}
	if err := checkChunk(ddsType, "type"); err != nil {
		return "", err
	}
	if err := checkChunk(typeHash, "type hash"); err != nil {
		return "", err
	}
	return strconv.FormatUint(uint64(domain), 10) + "/" + n + "/" + ddsType + "/" + typeHash, nil
}

// Mangle replaces every '/' by '%', as rmw_zenoh does to fit a name into
// one chunk of a liveliness token. No other character is escaped.
func Mangle(s string) string { return strings.ReplaceAll(s, "/", "%") }

// Demangle undoes Mangle: every '%' becomes '/'.
func Demangle(s string) string { return strings.ReplaceAll(s, "%", "/") }

var errEmptyChunk = errors.New("empty")

// checkChunk reports whether s can stand as one chunk of a key
// expression: not empty, no '/', and none of the characters zenoh keeps
// for wildcards and selectors ('*', '$', '#', '?').
func checkChunk(s, what string) error {
	if s == "" {
		return fmt.Errorf("ros: %s is %w", what, errEmptyChunk)
	}
	if i := strings.IndexAny(s, "/*$#?"); i >= 0 {
		return fmt.Errorf("ros: %s %q: character %q not allowed in a key expression", what, s, s[i])
	}
	return nil
}

// checkChunks checks a '/'-separated name: every chunk must pass
// checkChunk.
func checkChunks(s, what string) error {
	for _, c := range strings.Split(s, "/") {
		if c == "" {
			return fmt.Errorf("ros: %s %q: empty chunk (\"//\")", what, s)
		}
		if err := checkChunk(c, what); err != nil {
			return err
		}
	}
	return nil
}
