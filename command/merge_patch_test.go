package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// TestMergeValueRFC7396 is the table of RFC 7396 appendix A.
func TestMergeValueRFC7396(t *testing.T) {
	for _, tc := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	} {
		t.Run(tc.patch, func(t *testing.T) {
			target := decodeJSON(t, tc.target)
			before := decodeJSON(t, tc.target)
			got := mergeValue(target, decodeJSON(t, tc.patch))
			if want := decodeJSON(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("MergePatch(%s, %s) = %v, want %s", tc.target, tc.patch, got, tc.want)
			}
			if !reflect.DeepEqual(target, before) {
				t.Errorf("the target changed: %v", target)
			}
		})
	}
}

func TestChangedFields(t *testing.T) {
	before := decodeJSON(t, `{"a":1,"b":{"c":"d"},"e":"f"}`).(map[string]any)
	after := decodeJSON(t, `{"a":1,"b":{"c":"x"},"g":"h"}`).(map[string]any)
	if got, want := changedFields(before, after), []string{"b", "e", "g"}; !reflect.DeepEqual(got, want) {
		t.Errorf("changedFields = %v, want %v", got, want)
	}
	if got := changedFields(before, before); len(got) != 0 {
		t.Errorf("changedFields(x, x) = %v, want none", got)
	}
}

// testRequest is a create request with one required, one optional and one
// nested field, read as the create readers read.
type testRequest struct {
	Name    string `json:"name"`
	Note    string `json:"note,omitempty"`
	Country string `json:"country"`
}

func readTestRequest(r *reader, body map[string]any) testRequest {
	o, _ := r.openObject("", body, "name", "note", "place")
	req := testRequest{Name: o.reqStr("name", name200), Note: o.str("note", name200)}
	if v, ok := o.required("place"); ok {
		if p, ok := r.openObject("place", v, "country"); ok {
			req.Country = p.reqStr("country", countryCode)
		}
	}
	return req
}

func TestParsePatch(t *testing.T) {
	current := decodeJSON(t, `{"name":"Acme","note":"n","place":{"country":"DE"}}`).(map[string]any)
	fields, readOnly := []string{"name", "note", "place"}, []string{"id", "version"}
	for _, tc := range []struct {
		name, patch string
		parseErr    []Violation // of the patch itself
		want        testRequest
		applyErr    []Violation
	}{
		{name: "text", patch: `{"name":"Beta"}`, want: testRequest{Name: "Beta", Note: "n", Country: "DE"}},
		{name: "remove optional", patch: `{"note":null}`, want: testRequest{Name: "Acme", Country: "DE"}},
		{name: "nested", patch: `{"place":{"country":"FR"}}`, want: testRequest{Name: "Acme", Note: "n", Country: "FR"}},
		{name: "empty", patch: `{}`, want: testRequest{Name: "Acme", Note: "n", Country: "DE"}},
		{name: "null required", patch: `{"name":null}`, applyErr: []Violation{{"name", "is required"}}},
		{name: "null nested required", patch: `{"place":{"country":null}}`, applyErr: []Violation{{"place.country", "is required"}}},
		{name: "invalid value", patch: `{"place":{"country":"de"}}`,
			applyErr: []Violation{{"place.country", "must be two uppercase letters (ISO 3166-1 alpha-2)"}}},
		{name: "unknown nested", patch: `{"place":{"city":"x"}}`, applyErr: []Violation{{"place.city", "is not a known field"}}},
		{name: "NUL", patch: `{"name":"a\u0000b"}`, applyErr: []Violation{{"name", "must not contain control characters (U+0000 to U+001F, U+007F to U+009F)"}}},
		{name: "unknown and read-only", patch: `{"colour":"red","version":2,"id":null}`,
			parseErr: []Violation{{"colour", "is not a known field"}, {"id", "is read-only"}, {"version", "is read-only"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parsed, err := parsePatch([]byte(tc.patch), fields, readOnly, readTestRequest)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parsed.Valid()
			if !sameViolations(err, tc.parseErr) {
				t.Fatalf("parse: %v, want %v", err, tc.parseErr)
			}
			if tc.parseErr != nil {
				return
			}
			got, err := p.Apply(current)
			if !sameViolations(err, tc.applyErr) {
				t.Fatalf("apply: %v, want %v", err, tc.applyErr)
			}
			if tc.applyErr == nil && got != tc.want {
				t.Errorf("apply = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func sameViolations(err error, want []Violation) bool {
	if err == nil {
		return want == nil
	}
	var verr *ValidationError
	return errors.As(err, &verr) && reflect.DeepEqual(verr.Violations, want)
}

func TestParsePatchMalformed(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"a":1,"a":2}`, `{"a":1} x`} {
		if _, err := parsePatch([]byte(body), []string{"a"}, nil, readTestRequest); !errors.Is(err, ErrMalformedBody) {
			t.Errorf("parsePatch(%q) = %v, want ErrMalformedBody", body, err)
		}
	}
}

func TestPatchFingerprint(t *testing.T) {
	parse := func(s string) Patch[testRequest] {
		p, err := parsePatch([]byte(s), []string{"name", "note", "place"}, nil, readTestRequest)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := p.Valid()
		return v
	}
	a, _ := fingerprint(operation{name: "x"}, "s", parse(`{"name":"A", "note":null}`))
	b, _ := fingerprint(operation{name: "x"}, "s", parse(`{"note":null,"name":"A"}`))
	c, _ := fingerprint(operation{name: "x"}, "s", parse(`{"name":"A"}`))
	if a != b || a == c {
		t.Errorf("fingerprints: key order must not matter (%v), null must (%v)", a == b, a != c)
	}
}

func TestPreconditionHolds(t *testing.T) {
	const id = "0190a0a0-0000-7000-8000-000000000001"
	for _, tc := range []struct {
		name string
		p    *Precondition
		want bool
	}{
		{"no header", nil, true},
		{"any", &Precondition{Any: true}, true},
		{"current", &Precondition{Tags: []string{`"` + id + `.3"`}}, true},
		{"one of several", &Precondition{Tags: []string{`"x.1"`, `"` + id + `.3"`}}, true},
		{"stale", &Precondition{Tags: []string{`"` + id + `.2"`}}, false},
		{"other record", &Precondition{Tags: []string{`"other.3"`}}, false},
		{"empty list", &Precondition{}, false},
	} {
		if got := tc.p.Holds(id, 3); got != tc.want {
			t.Errorf("%s: Holds = %v, want %v", tc.name, got, tc.want)
		}
		if err := tc.p.check(id, 3); (err == nil) != tc.want || (err != nil && !errors.Is(err, ErrPreconditionFailed)) {
			t.Errorf("%s: check = %v", tc.name, err)
		}
	}
	if got := ETag(id, 3); got != `W/"`+id+`.3"` {
		t.Errorf("ETag = %s", got)
	}
}

// TestPatchAppliesToTheRenderedRecord is the flow of an update: the record
// rendered as its create request (asObject), the patch applied to it.
func TestPatchAppliesToTheRenderedRecord(t *testing.T) {
	type rendered struct {
		Name  string         `json:"name"`
		Note  string         `json:"note,omitempty"`
		Place map[string]any `json:"place"`
	}
	current, err := asObject(rendered{Name: "Acme", Place: map[string]any{"country": "DE"}})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parsePatch([]byte(`{"note":"hello","place":{"country":"AT"}}`), []string{"name", "note", "place"}, nil, readTestRequest)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := parsed.Valid()
	got, err := p.Apply(current)
	if want := (testRequest{Name: "Acme", Note: "hello", Country: "AT"}); err != nil || got != want {
		t.Errorf("Apply = %+v, %v; want %+v", got, err, want)
	}
}
