package access

// Match reports whether name matches the fnmatch(3) pattern pat without
// FNM_PATHNAME (as the DDS Security builtin plugins match topic and
// partition expressions): '*' matches any run of characters, '/' included;
// '?' one character; "[abc]", "[a-z]" and "[!a-z]" a character of (or not
// of) a set; every other character itself. A malformed set matches
// nothing.
func Match(pat, name string) bool {
	// Iterative matcher with one backtrack point for the last '*'.
	p, n := 0, 0
	starP, starN := -1, 0
	for n < len(name) {
		if p < len(pat) {
			switch c := pat[p]; c {
			case '*':
				starP, starN = p, n
				p++
				continue
			case '?':
				p++
				n++
				continue
			case '[':
				if ok, next, valid := matchSet(pat, p+1, name[n]); valid && ok {
					p = next
					n++
					continue
				} else if !valid {
					return false
				}
			default:
				if c == name[n] {
					p++
					n++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starN++
		p, n = starP+1, starN
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// matchSet matches c against the set starting after '[' at i; it returns
// whether c is in it, the index after ']', and whether the set is well formed.
func matchSet(pat string, i int, c byte) (match bool, next int, valid bool) {
	neg := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		neg = true
		i++
	}
	first := true
	for i < len(pat) {
		lo := pat[i]
		if lo == ']' && !first {
			return match != neg, i + 1, true
		}
		first = false
		if i+2 < len(pat) && pat[i+1] == '-' && pat[i+2] != ']' {
			if lo <= c && c <= pat[i+2] {
				match = true
			}
			i += 3
			continue
		}
		if lo == c {
			match = true
		}
		i++
	}
	return false, 0, false
}
