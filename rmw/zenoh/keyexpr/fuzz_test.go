package keyexpr

import "testing"

// FuzzKeyExpr: Validate never panics; on canonical key expressions
// Intersects is symmetric and reflexive, Includes is reflexive and implies
// Intersects, and "**" includes every key without verbatim chunks.
func FuzzKeyExpr(f *testing.F) {
	for _, c := range intersections {
		f.Add(c.a, c.b)
	}
	for _, c := range inclusions {
		f.Add(c.a, c.b)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := Validate(a), Validate(b)
		if ea != nil || eb != nil {
			return
		}
		ab, ba := Intersects(a, b), Intersects(b, a)
		if ab != ba {
			t.Fatalf("Intersects(%q, %q) = %v but reversed %v", a, b, ab, ba)
		}
		if !Intersects(a, a) || !Includes(a, a) {
			t.Fatalf("%q does not intersect or include itself", a)
		}
		if Includes(a, b) && !ab {
			t.Fatalf("Includes(%q, %q) without intersection", a, b)
		}
		if !hasVerbatim(a) && !Includes("**", a) {
			t.Fatalf("** does not include %q", a)
		}
		if !IsWild(a) && !IsWild(b) && ab != (a == b) {
			t.Fatalf("plain keys %q, %q: Intersects = %v", a, b, ab)
		}
	})
}
