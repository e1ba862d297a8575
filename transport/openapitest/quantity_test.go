package openapitest_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/invoicing/invoicing/transport"
)

// lookaheadQuantity is the spec's quantity rule as first written: one
// ECMA-262 pattern with a negative look-ahead, which Go's regexp (RE2)
// cannot compile. The document now says it as a look-ahead-free pattern
// plus a `not` of the zeros.
const lookaheadQuantity = `^(?!0(?:\.0{1,3})?$)(?:0|[1-9]\d{0,8})(?:\.\d{1,3})?$`

// TestQuantitySchemaAcceptsExactlyWhatTheLookaheadAccepts checks the
// document's Quantity schema, as kin-openapi evaluates it with both of its
// validators, against the look-ahead pattern's ECMA-262 meaning over a
// generated set of strings.
func TestQuantitySchemaAcceptsExactlyWhatTheLookaheadAccepts(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["Quantity"]
	if ref == nil || ref.Value == nil {
		t.Fatal("the document has no Quantity schema")
	}
	lookahead := splitLookahead(t, lookaheadQuantity)
	all := quantityCandidates()
	// kin-openapi's JSON Schema 2020-12 validator (the one it uses for a 3.1
	// document's bodies) compiles the schema on every call, so it gets the
	// edge cases and a sample of the rest.
	sample := edgeQuantities()
	for i := 0; i < len(all); i += 40 {
		sample = append(sample, all[i])
	}
	validators := []struct {
		name       string
		opts       []openapi3.SchemaValidationOption
		candidates []string
	}{
		{"default", nil, all},
		{"as response", []openapi3.SchemaValidationOption{openapi3.VisitAsResponse()}, all},
		{"2020-12", []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020()}, sample},
	}
	for _, v := range validators {
		accepted := 0
		for _, s := range v.candidates {
			got := ref.Value.VisitJSON(s, v.opts...) == nil
			if want := lookahead(s); got != want {
				t.Errorf("%s validator: %q: the schema says %v, the look-ahead pattern %v", v.name, s, got, want)
			}
			if got {
				accepted++
			}
		}
		// The candidates must exercise both answers.
		if accepted < len(v.candidates)/20 || accepted > len(v.candidates)-len(v.candidates)/20 {
			t.Errorf("%s validator: %d of %d candidates accepted; they do not probe the rule", v.name, accepted, len(v.candidates))
		}
	}
}

// splitLookahead turns `^(?!X)Y` into a matcher with ECMA-262 semantics:
// s matches when `^(?:Y)` matches it and `^(?:X)` does not (the look-ahead
// is anchored at the start), which RE2 evaluates as two expressions.
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

// edgeQuantities are hand-picked cases, and integer parts of 0 to 11
// digits (zeros, a leading 1, nines, a leading zero) with fractional parts
// of 0 to 5 digits: every limit of the rule, from both sides.
func edgeQuantities() []string {
	out := []string{"", "0", "00", "01", "0.0", "0.00", "0.000", "0.0000", "0.001", "0.010", "0.1",
		"1.", ".1", "-1", "+1", "1e3", " 1", "1 ", "123456789", "1234567890", "123456789.123",
		"123456789.1234", "100000000.000", "999999999.999", "0.999", "10.05", "1,5", "١", "１", "1\n",
		"\n1", "0x1", "1_000", "Infinity", "NaN"}
	for n := 0; n <= 11; n++ {
		ints := []string{strings.Repeat("0", n), strings.Repeat("9", n)}
		if n > 0 {
			ints = append(ints, "1"+strings.Repeat("0", n-1), "0"+strings.Repeat("1", n-1))
		}
		for _, i := range ints {
			out = append(out, i, i+".")
			for k := 1; k <= 5; k++ {
				out = append(out, i+"."+strings.Repeat("0", k), i+"."+strings.Repeat("1", k), i+"."+strings.Repeat("0", k-1)+"1")
			}
		}
	}
	return out
}

// quantityCandidates is the edge cases, every string of up to 6 characters
// over "0159.", and 20000 random strings over digits and dots.
func quantityCandidates() []string {
	out := edgeQuantities()
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
