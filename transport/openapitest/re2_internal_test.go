package openapitest

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestRE2EquivalentsMatchLookahead checks that each RE2 stand-in accepts
// exactly the strings its ECMA-262 pattern accepts. A pattern `^(?!X)Y`
// matches s when `^(?:Y)` matches s and `^(?:X)` does not (the look-ahead
// is anchored at the start), which RE2 can evaluate as two expressions.
func TestRE2EquivalentsMatchLookahead(t *testing.T) {
	for ecma, re2 := range re2Equivalents {
		lookahead := splitLookahead(t, ecma)
		stand := regexp.MustCompile(re2)
		for _, s := range quantityCandidates() {
			if got, want := stand.MatchString(s), lookahead(s); got != want {
				t.Errorf("%q: RE2 stand-in says %v, %s says %v", s, got, ecma, want)
			}
		}
	}
}

// splitLookahead turns `^(?!X)Y` into a matcher with ECMA-262 semantics.
func splitLookahead(t *testing.T, p string) func(string) bool {
	t.Helper()
	rest, ok := strings.CutPrefix(p, "^(?!")
	if !ok {
		t.Fatalf("%q does not start with a negative look-ahead", p)
	}
	depth := 1
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				not := regexp.MustCompile(`^(?:` + rest[:i] + `)`)
				yes := regexp.MustCompile(`^(?:` + rest[i+1:] + `)`)
				return func(s string) bool { return yes.MatchString(s) && !not.MatchString(s) }
			}
		}
	}
	t.Fatalf("%q: unbalanced look-ahead", p)
	return nil
}

// quantityCandidates is every string of up to 6 characters over "0159.",
// edge cases around the digit limits, and random strings.
func quantityCandidates() []string {
	out := []string{"", "0", "00", "01", "0.0", "0.00", "0.000", "0.0000", "0.001", "0.010", "0.1",
		"1.", ".1", "-1", "+1", "1e3", " 1", "1 ", "123456789", "1234567890", "123456789.123",
		"123456789.1234", "100000000.000", "999999999.999", "0.999", "10.05", "1,5", "١"}
	var gen func(prefix string)
	gen = func(prefix string) {
		out = append(out, prefix)
		if len(prefix) == 6 {
			return
		}
		for _, c := range "0159." {
			gen(prefix + string(c))
		}
	}
	gen("")
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789.0000"
	for range 20000 {
		b := make([]byte, 1+r.IntN(14))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		out = append(out, string(b))
	}
	return out
}
