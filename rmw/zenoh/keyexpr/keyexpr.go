package keyexpr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every error of Validate.
var ErrInvalid = errors.New("invalid key expression")

func invalid(s, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalid, s, why)
}

// Validate returns nil when s is a canonical key expression, else an error
// (wrapping ErrInvalid) that names the broken rule.
func Validate(s string) error {
	if s == "" || s[len(s)-1] == '/' {
		return invalid(s, "empty chunks are forbidden, as well as leading and trailing slashes")
	}
	chunkStart := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c > '/' && c != '?':
			i++
		case c == '/':
			if i == chunkStart {
				return invalid(s, "empty chunks are forbidden, as well as leading and trailing slashes")
			}
			i++
			chunkStart = i
		case c == '*':
			if i != chunkStart {
				return invalid(s, "'*' may only be preceded by '/' or '$'")
			}
			switch at(s, i+1) {
			case end:
				return nil
			case '/':
				i += 2
				chunkStart = i
			case '*':
				switch at(s, i+2) {
				case end:
					return nil
				case '/':
					if at(s, i+3) == '*' {
						switch n1, n2 := at(s, i+4), at(s, i+5); {
						case n1 == end || n1 == '/':
							return invalid(s, "'**/*' must be replaced by '*/**' to reach canon-form")
						case n1 == '*' && (n2 == end || n2 == '/'):
							return invalid(s, "'**/**' must be replaced by '**' to reach canon-form")
						default:
							return invalid(s, "'*' may only be preceded by '/' or '$'")
						}
					}
					i += 3
					chunkStart = i
				default:
					return invalid(s, "'*' may only be preceded by '/' or '$'")
				}
			default:
				return invalid(s, "'*' may only be preceded by '/' or '$'")
			}
		case c == '$':
			if at(s, i+1) != '*' {
				return invalid(s, "'$' is only allowed in '$*'")
			}
			switch n := at(s, i+2); {
			case n == '$':
				return invalid(s, "'$' is not allowed after '$*'")
			case (n == '/' || n == end) && i == chunkStart:
				return invalid(s, "a lone '$*' chunk must be written '*'")
			case n == end:
				return nil
			default:
				i += 2
			}
		case c == '#' || c == '?':
			return invalid(s, "'#' and '?' are forbidden characters")
		default:
			i++
		}
	}
	return nil
}

// end is what at returns past the end of the string.
const end = -1

// at returns s[i], or end past the end.
func at(s string, i int) int {
	if i >= len(s) {
		return end
	}
	return int(s[i])
}

// IsWild reports whether k holds a wildcard ("*", "**" or "$*").
func IsWild(k string) bool {
	return strings.IndexByte(k, '*') >= 0 || strings.IndexByte(k, '$') >= 0
}

func directVerbatim(chunk string) bool { return len(chunk) > 0 && chunk[0] == '@' }

func hasVerbatim(s string) bool {
	for {
		c, rest, more := strings.Cut(s, "/")
		if directVerbatim(c) {
			return true
		}
		if !more {
			return false
		}
		s = rest
	}
}

func next(s string) (chunk, rest string) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// Intersects reports whether some key (a key expression without wildcards)
// matches both a and b. Both must be canonical (Validate).
func Intersects(a, b string) bool {
	if a == b {
		return true
	}
	wa, wb := strings.IndexByte(a, '*') >= 0, strings.IndexByte(b, '*') >= 0
	da, db := strings.IndexByte(a, '$') >= 0, strings.IndexByte(b, '$') >= 0
	if !wa && !wb && !da && !db {
		return false
	}
	x := intersector{a: a, b: b, dsl: da || db}
	return x.keys(a, b)
}

type intersector struct {
	a, b string
	dsl  bool
	memo map[[2]int]bool
}

// keys is zenoh's recursive intersection over suffixes of a and b; results
// are memoized on the suffix lengths.
func (x *intersector) keys(s1, s2 string) bool {
	key := [2]int{len(s1), len(s2)}
	if v, ok := x.memo[key]; ok {
		return v
	}
	v := x.keysUncached(s1, s2)
	if x.memo == nil {
		x.memo = map[[2]int]bool{}
	}
	x.memo[key] = v
	return v
}

func (x *intersector) keysUncached(it1, it2 string) bool {
	if it1 == "" || it2 == "" {
		return (it1 == "" || it1 == "**") && (it2 == "" || it2 == "**")
	}
	c1, a1 := next(it1)
	c2, a2 := next(it2)
	switch {
	case c1 == "**":
		if a1 == "" {
			return !hasVerbatim(it2)
		}
		return (!directVerbatim(c2) && x.keys(it1, a2)) || x.keys(a1, it2)
	case c2 == "**":
		if a2 == "" {
			return !hasVerbatim(it1)
		}
		return (!directVerbatim(c1) && x.keys(a1, it2)) || x.keys(it1, a2)
	case x.chunks(c1, c2):
		return x.keys(a1, a2)
	}
	return false
}

func (x *intersector) chunks(c1, c2 string) bool {
	if c1 == c2 {
		return true
	}
	if directVerbatim(c1) || directVerbatim(c2) {
		return false
	}
	if c1 == "*" || c2 == "*" {
		return true
	}
	if !x.dsl {
		return false
	}
	d := dsl{}
	return d.intersect(c1, c2)
}

// dsl intersects two chunks where "$*" matches any run of characters.
type dsl struct{ memo map[[2]int]bool }

func (d *dsl) intersect(s1, s2 string) bool {
	key := [2]int{len(s1), len(s2)}
	if v, ok := d.memo[key]; ok {
		return v
	}
	v := d.intersectUncached(s1, s2)
	if d.memo == nil {
		d.memo = map[[2]int]bool{}
	}
	d.memo[key] = v
	return v
}

func (d *dsl) intersectUncached(it1, it2 string) bool {
	if it1 == "" || it2 == "" {
		return (it1 == "" && it2 == "") || it1 == "$*" || it2 == "$*"
	}
	c1, a1 := it1[0], it1[1:]
	c2, a2 := it2[0], it2[1:]
	switch {
	case c1 == '$' && c2 == '$':
		if len(a1) == 1 || len(a2) == 1 {
			return true
		}
		return d.intersect(a1[1:], it2) || d.intersect(it1, a2[1:])
	case c1 == '$':
		// "$*" matches nothing more, or one more character of it2
		return len(a1) == 1 || d.intersect(a1[1:], it2) || d.intersect(it1, a2)
	case c2 == '$':
		return len(a2) == 1 || d.intersect(it1, a2[1:]) || d.intersect(a1, it2)
	case c1 == c2:
		return d.intersect(a1, a2)
	}
	return false
}

// Includes reports whether every key matched by b is matched by a. Both
// must be canonical (Validate).
func Includes(a, b string) bool {
	if a == b {
		return true
	}
	in := includer{}
	return in.includes(a, b)
}

type includer struct{ memo map[[2]int]bool }

func (in *includer) includes(left, right string) bool {
	key := [2]int{len(left), len(right)}
	if v, ok := in.memo[key]; ok {
		return v
	}
	v := in.includesUncached(left, right)
	if in.memo == nil {
		in.memo = map[[2]int]bool{}
	}
	in.memo[key] = v
	return v
}

func (in *includer) includesUncached(left, right string) bool {
	lchunk, lrest := next(left)
	lempty := lrest == ""
	if lchunk == "**" {
		if (lempty && !hasVerbatim(right)) || (!lempty && in.includes(lrest, right)) {
			return true
		}
		if directVerbatim(right) {
			return false
		}
		// let "**" take one more chunk of right
		_, right = next(right)
		return right != "" && in.includes(left, right)
	}
	rchunk, rrest := next(right)
	if rchunk == "" || rchunk == "**" || !chunkIncludes(lchunk, rchunk) {
		return false
	}
	if lempty {
		return rrest == ""
	}
	return in.includes(lrest, rrest)
}

func chunkIncludes(l, r string) bool {
	switch {
	case l == r:
		return true
	case directVerbatim(l) || directVerbatim(r):
		return false
	case l == "*":
		return true
	case strings.IndexByte(l, '$') < 0:
		return false
	}
	parts := strings.Split(l, "$*")
	rest, ok := strings.CutPrefix(r, parts[0])
	if !ok {
		return false
	}
	if rest, ok = strings.CutSuffix(rest, parts[len(parts)-1]); !ok {
		return false
	}
	for _, needle := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, needle)
		if i < 0 {
			return false
		}
		rest = rest[i+len(needle):]
	}
	return true
}
