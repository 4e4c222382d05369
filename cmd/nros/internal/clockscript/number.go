package clockscript

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"
)

// maxNumberLen bounds a number's text so that big arithmetic stays cheap on
// hostile input.
const maxNumberLen = 64

var (
	bigMaxInt64 = big.NewInt(math.MaxInt64)
	bigMinInt64 = big.NewInt(math.MinInt64)
)

// isDecimal reports whether s is [+-]?digits[.digits] with at least one digit.
func isDecimal(s string, allowSign bool) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if !allowSign {
			return false
		}
		s = s[1:]
	}
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// exactRat parses a decimal (already checked with isDecimal) exactly.
func exactRat(s string) (*big.Rat, error) {
	if len(s) > maxNumberLen {
		return nil, fmt.Errorf("number %.20q... longer than %d characters", s, maxNumberLen)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("bad number %q", s)
	}
	return r, nil
}

// toInt64 returns r*mul when it is an integer that fits int64.
func toInt64(r *big.Rat, mul int64, what string) (int64, error) {
	v := new(big.Rat).Mul(r, new(big.Rat).SetInt64(mul))
	if !v.IsInt() {
		return 0, fmt.Errorf("%s is finer than the 1e-9 resolution", what)
	}
	n := v.Num()
	if n.Cmp(bigMaxInt64) > 0 || n.Cmp(bigMinInt64) < 0 {
		return 0, fmt.Errorf("%s overflows int64 nanoseconds", what)
	}
	return n.Int64(), nil
}

// parseFixed parses a plain decimal and returns it times 1e9 exactly
// (seconds to ns, or a rate to parts per billion).
func parseFixed(s string, allowSign bool, what string) (int64, error) {
	if !isDecimal(s, allowSign) {
		return 0, fmt.Errorf("%s %q is not a decimal number", what, s)
	}
	r, err := exactRat(s)
	if err != nil {
		return 0, err
	}
	return toInt64(r, 1e9, fmt.Sprintf("%s %q", what, s))
}

// parsePositive parses a positive exact decimal (a rate or a frequency) in
// parts per billion.
func parsePositive(s, what string) (Rate, error) {
	if strings.HasPrefix(s, "-") && isDecimal(s[1:], false) {
		return 0, fmt.Errorf("%s %s must be positive (a decimal such as 0.5 or 2)", what, s)
	}
	v, err := parseFixed(s, false, what)
	if err != nil {
		return 0, err
	}
	if v <= 0 {
		return 0, fmt.Errorf("%s %s must be positive (a decimal such as 0.5 or 2)", what, s)
	}
	return Rate(v), nil
}

var units = map[string]int64{
	"ns": 1,
	"us": 1e3,
	"µs": 1e3, // U+00B5
	"μs": 1e3, // U+03BC
	"ms": 1e6,
	"s":  1e9,
	"m":  60e9,
	"h":  3600e9,
}

// parseDuration parses a non-negative duration in Go syntax ("1.5s",
// "1m30s", "250ms") or a bare decimal number of seconds, exactly to the
// nanosecond. A sign is not accepted.
func parseDuration(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("missing duration")
	}
	if isDecimal(s, false) {
		return parseFixed(s, false, "duration")
	}
	if s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("duration %q must not be signed", s)
	}
	total := new(big.Int)
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] == '.' || (rest[i] >= '0' && rest[i] <= '9')) {
			i++
		}
		num := rest[:i]
		if !isDecimal(num, false) {
			return 0, fmt.Errorf("duration %q: expected a number at %q", s, rest)
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && rest[j] != '.' && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		mul, ok := units[unit]
		if !ok {
			if unit == "" {
				return 0, fmt.Errorf("duration %q: missing unit after %q", s, num)
			}
			return 0, fmt.Errorf("duration %q: unknown unit %q", s, unit)
		}
		r, err := exactRat(num)
		if err != nil {
			return 0, err
		}
		v := new(big.Rat).Mul(r, new(big.Rat).SetInt64(mul))
		if !v.IsInt() {
			return 0, fmt.Errorf("duration %q is finer than 1ns", s)
		}
		total.Add(total, v.Num())
		if total.Cmp(bigMaxInt64) > 0 {
			return 0, fmt.Errorf("duration %q overflows int64 nanoseconds", s)
		}
	}
	return total.Int64(), nil
}

// mulDiv returns floor((a*b + add) / c) and whether it fits in uint64.
func mulDiv(a, b, add, c uint64) (uint64, uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	var carry uint64
	lo, carry = bits.Add64(lo, add, 0)
	hi += carry
	if hi >= c {
		return 0, 0, false
	}
	q, r := bits.Div64(hi, lo, c)
	return q, r, true
}

// addInt64 returns a+b and whether it did not overflow.
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// formatFixed formats v/1e9 as a minimal exact decimal ("100", "0.5", "-1.25").
func formatFixed(v int64) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	s := fmt.Sprintf("%d.%09d", u/1e9, u%1e9)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if neg {
		s = "-" + s
	}
	return s
}
