package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Environment variables rmw_zenoh reads.
const (
	// EnvSessionConfig names a JSON5 file that replaces the default
	// session configuration (keys it leaves out take zenoh's built-in
	// defaults, not rmw_zenoh's).
	EnvSessionConfig = "ZENOH_SESSION_CONFIG_URI"
	// EnvRouterConfig is the same for the router.
	EnvRouterConfig = "ZENOH_ROUTER_CONFIG_URI"
	// EnvOverride holds "key=value;key=value" pairs applied on top of the
	// file, the value in JSON5: mode="client";connect/endpoints=["tcp/127.0.0.1:7447"].
	EnvOverride = "ZENOH_CONFIG_OVERRIDE"
	// EnvRouterCheckAttempts is how many times (one a second) a session
	// checks for a router before it goes on without one (RouterCheck).
	EnvRouterCheckAttempts = "ZENOH_ROUTER_CHECK_ATTEMPTS"
)

// Session returns the session configuration as rmw_zenoh builds it from
// the environment: the file named by ZENOH_SESSION_CONFIG_URI when it is
// set and not empty, else Default; then ZENOH_CONFIG_OVERRIDE. getenv reads
// a variable ("" when unset), readFile a file (os.ReadFile).
//
// rmw_zenoh ignores an override pair zenoh refuses, with a warning; here it
// is an error naming the key, like every bad value.
func Session(getenv func(string) string, readFile func(string) ([]byte, error)) (*Config, error) {
	return fromEnv(getenv, readFile, EnvSessionConfig, sessionJSON5)
}

// Router returns the router configuration the same way, from
// ZENOH_ROUTER_CONFIG_URI or DefaultRouter, then ZENOH_CONFIG_OVERRIDE.
func Router(getenv func(string) string, readFile func(string) ([]byte, error)) (*Config, error) {
	return fromEnv(getenv, readFile, EnvRouterConfig, routerJSON5)
}

func fromEnv(getenv func(string) string, readFile func(string) ([]byte, error), env, def string) (*Config, error) {
	var data []byte
	if path := getenv(env); path != "" {
		b, err := readFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %s=%s: %w", env, path, err)
		}
		data = b
	} else {
		data = []byte(def)
	}
	tree, err := ParseJSON5(data)
	if err != nil {
		if path := getenv(env); path != "" {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		return nil, err
	}
	if err := ApplyOverrides(tree, getenv(EnvOverride)); err != nil {
		return nil, err
	}
	c, err := decode(tree)
	if err != nil {
		if path := getenv(env); path != "" {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	return c, nil
}

// ParseWithOverrides parses a configuration file and applies overrides
// ("key=value;…", as ZENOH_CONFIG_OVERRIDE) before decoding it.
func ParseWithOverrides(data []byte, overrides string) (*Config, error) {
	tree, err := ParseJSON5(data)
	if err != nil {
		return nil, err
	}
	if err := ApplyOverrides(tree, overrides); err != nil {
		return nil, err
	}
	return decode(tree)
}

// ErrOverride is wrapped by every error about ZENOH_CONFIG_OVERRIDE's
// syntax.
var ErrOverride = errors.New("config: " + EnvOverride)

// ApplyOverrides sets the "key=value" pairs of s (separated by ';') in
// tree, as zenoh's insert_json5 does: key is a '/'-separated path of a key
// zenoh knows (a member router, peer or client of a mode-dependent key is
// allowed), value is JSON5 and replaces the key's value whole. rmw_zenoh
// splits on every ';' and at the first '='; here a ';' inside a quoted
// string or brackets does not split, blanks around keys are trimmed, and
// empty pairs are skipped.
func ApplyOverrides(tree *Value, s string) error {
	for _, pair := range splitPairs(s) {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%w: %q is not key=value", ErrOverride, pair)
		}
		path := strings.Trim(k, "/")
		if !overridable(path) {
			e := keyErr(path, nil, "%v: zenoh has no such key", ErrUnknownKey)
			e.err = ErrUnknownKey
			return e
		}
		v, err := ParseJSON5([]byte(val))
		if err != nil {
			return keyErr(path, nil, "value %q: %v", val, err)
		}
		if err := set(tree, path, v); err != nil {
			return err
		}
	}
	return nil
}

// overridable reports whether an override may set path.
func overridable(path string) bool {
	switch lookupKey(path) {
	case keyLeaf, keyBranch, keyOpen:
		return true
	}
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return false
	}
	switch Mode(path[i+1:]) {
	case ModeRouter, ModePeer, ModeClient:
		return lookupKey(path[:i]) == keyLeaf
	}
	return false
}

// set puts v at path in tree, making the objects on the way.
func set(tree *Value, path string, v *Value) error {
	if tree.Kind != Object {
		return keyErr(path, tree, "the configuration is a %v, not an object", tree.Kind)
	}
	cur := tree
	chunks := strings.Split(path, "/")
	for i, c := range chunks {
		last := i == len(chunks)-1
		var m *Member
		for j := range cur.Obj {
			if cur.Obj[j].Key == c {
				m = &cur.Obj[j]
				break
			}
		}
		if last {
			if m != nil {
				m.Value = v
			} else {
				cur.Obj = append(cur.Obj, Member{Key: c, Value: v, Line: v.Line, Col: v.Col})
			}
			return nil
		}
		if m == nil {
			cur.Obj = append(cur.Obj, Member{Key: c, Value: &Value{Kind: Object}})
			m = &cur.Obj[len(cur.Obj)-1]
		}
		if m.Value.Kind != Object {
			if lookupKey(strings.Join(chunks[:i+1], "/")) == keyLeaf {
				// a mode member of a plain mode-dependent value: spread it
				m.Value = spreadModes(m.Value)
			} else {
				m.Value = &Value{Kind: Object}
			}
		}
		cur = m.Value
	}
	return nil
}

// spreadModes turns a plain mode-dependent value into {router, peer,
// client} with that value, so that one mode's member can be replaced.
func spreadModes(v *Value) *Value {
	o := &Value{Kind: Object, Line: v.Line, Col: v.Col}
	if v.Kind == Null {
		return o
	}
	for _, m := range []Mode{ModeRouter, ModePeer, ModeClient} {
		o.Obj = append(o.Obj, Member{Key: string(m), Value: v, Line: v.Line, Col: v.Col})
	}
	return o
}

// splitPairs splits on ';' outside quotes and brackets.
func splitPairs(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == ';' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// RouterCheckInterval is the time between two router checks.
const RouterCheckInterval = time.Second

// RouterCheck returns how a session checks for a router after it opens, as
// rmw_zenoh reads ZENOH_ROUTER_CHECK_ATTEMPTS: unset or empty, 1 attempt;
// a positive number, that many (one a second); 0, until a router answers
// (attempts is math.MaxUint64); a negative number, no check (check is
// false). Like rmw_zenoh (strtoll) it reads the leading integer and takes
// text without one as 0.
func RouterCheck(getenv func(string) string) (attempts uint64, check bool) {
	s := getenv(EnvRouterCheckAttempts)
	if s == "" {
		return 1, true
	}
	n := leadingInt(s)
	switch {
	case n > 0:
		return uint64(n), true
	case n < 0:
		return 0, false
	}
	return math.MaxUint64, true
}

// leadingInt parses an optional sign and digits after leading blanks, as
// strtoll does, saturating.
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := int64(s[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			break
		}
		n = n*10 + d
	}
	if neg {
		return -n
	}
	return n
}

// NoRouterWarning is what rmw_zenoh logs (warning) at each failed router
// check.
const NoRouterWarning = "Unable to connect to a Zenoh router. " +
	"Have you started a router with `ros2 run rmw_zenoh_cpp rmw_zenohd`?"

// NoRouterGiveUp returns what rmw_zenoh logs (warning) when the last of
// attempts checks failed; the session then goes on without a router.
func NoRouterGiveUp(attempts uint64) string {
	return fmt.Sprintf("Unable to connect to a Zenoh router after %d attempt(s). "+
		"Please ensure that a Zenoh router is running and can be reached. "+
		"You may increase the number of attempts to check for a router by "+
		"setting the ZENOH_ROUTER_CHECK_ATTEMPTS environment variable. "+
		"Proceeding with initialization but other peers will not discover "+
		"or receive data from peers in this session until a router is started.", attempts)
}
