package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

const minimalCompany = `{"legal_name":"Acme GmbH","address":{"line_1":"Hauptstr. 1","city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR"}`

// createCompany creates a company and checks that a GET right after the 201
// finds it (read-your-writes).
func (s *service) createCompany(t *testing.T, tok, key, body string) map[string]any {
	t.Helper()
	return s.mustCreate(t, "/v1/companies", tok, key, body).object(t)
}

// mustCreate posts a create, expects 201 with Location naming the new
// resource under path, and checks that a GET of that Location right after
// the 201 finds the same body (read-your-writes).
func (s *service) mustCreate(t *testing.T, path, tok, key, body string) response {
	t.Helper()
	res := s.post(t, path, tok, key, body)
	mustStatus(t, res, http.StatusCreated)
	id, _ := res.object(t)["id"].(string)
	location := res.header.Get("Location")
	if location != path+"/"+id {
		t.Fatalf("Location = %q, want %q", location, path+"/"+id)
	}
	got := s.get(t, location, tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) {
		t.Fatalf("GET %s after 201 differs from the 201 body:\n201: %s\nGET: %s", location, res.body, got.body)
	}
	return res
}

func TestCreateCompanyRendersEveryField(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	body := `{"legal_name":"Ünïcödé Holding AG","trading_name":"Ünï","address":{"line_1":"Bahnhofstr. 1","line_2":"Postfach","city":"Zürich","postal_code":"8001","region":"ZH","country_code":"CH"},
		"default_currency":"CHF","default_language":"de-CH","default_payment_terms_days":14,"email":"billing@example.ch",
		"external_reference":"erp-42","identifiers":[{"scheme":"ch.uid","value":"CHE-123.456.789","country_code":"CH"},{"scheme":"vat","value":"X"}],
		"invoice_number_prefix":"RE/2025-"}`
	before := time.Now().UTC().Add(-time.Second)
	res := s.mustCreate(t, "/v1/companies", tok, "create-every-field", body)
	assertGolden(t, "company_created", res.body)

	// What the golden file cannot say: the id is a UUIDv7, the time now.
	c := res.object(t)
	id, err := uuid.Parse(c["id"].(string))
	if err != nil || id.Version() != 7 {
		t.Errorf("id = %v; want a UUIDv7", c["id"])
	}
	created, _ := c["created_at"].(string)
	if ts, _ := time.Parse(time.RFC3339Nano, created); ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at %s is not now", created)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCreateCompanyAppliesDefaultsAndOmitsAbsentFields(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for name, body := range map[string]string{
		"omitted":       minimalCompany,
		"explicit null": `{"legal_name":"Acme GmbH","trading_name":null,"email":null,"external_reference":null,"identifiers":null,"default_language":null,"default_payment_terms_days":null,"address":{"line_1":"Hauptstr. 1","line_2":null,"region":null,"city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := s.createCompany(t, tok, "defaults-"+strings.ReplaceAll(name, " ", "-"), body)
			if c["default_language"] != "en" || c["default_payment_terms_days"] != 30.0 || mustJSON(t, c["identifiers"]) != "[]" || c["invoice_number_prefix"] != "" {
				t.Errorf("defaults: language %v terms %v identifiers %v; want en, 30, []", c["default_language"], c["default_payment_terms_days"], c["identifiers"])
			}
			for _, k := range []string{"trading_name", "email", "external_reference"} {
				if _, ok := c[k]; ok {
					t.Errorf("%s present; absent optional fields are omitted", k)
				}
			}
			addr := c["address"].(map[string]any)
			if _, ok := addr["line_2"]; ok {
				t.Errorf("address.line_2 present; want omitted")
			}
			if v, ok := c["archived_at"]; !ok || v != nil {
				t.Errorf("archived_at = %v (present %v); want a present null", v, ok)
			}
		})
	}
}

// companyWith returns the minimal company with one top-level field replaced.
func companyWith(t *testing.T, field string, value any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimalCompany), &m); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(field, "address.") {
		m["address"].(map[string]any)[strings.TrimPrefix(field, "address.")] = value
	} else {
		m[field] = value
	}
	return mustJSON(t, m)
}

func identifiersN(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"scheme": "vat", "value": fmt.Sprint(i)}
	}
	return out
}

func TestCreateCompanyFieldRulesAtTheirBoundaries(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	tests := []struct {
		name     string
		field    string
		value    any
		wantPath string // "" means accepted
	}{
		{"legal_name of 200 code points is accepted", "legal_name", strings.Repeat("é", 200), ""},
		{"legal_name of 201 code points is rejected", "legal_name", strings.Repeat("é", 201), "legal_name"},
		{"legal_name empty is rejected", "legal_name", "", "legal_name"},
		{"legal_name missing is rejected", "legal_name", nil, "legal_name"},
		{"legal_name of the wrong type is rejected", "legal_name", 5, "legal_name"},
		{"trading_name empty is rejected", "trading_name", "", "trading_name"},
		{"trading_name of 200 is accepted", "trading_name", strings.Repeat("x", 200), ""},
		{"trading_name of 201 is rejected", "trading_name", strings.Repeat("x", 201), "trading_name"},
		{"address missing is rejected", "address", nil, "address"},
		{"address not an object is rejected", "address", "Berlin", "address"},
		{"address.line_1 of 200 is accepted", "address.line_1", strings.Repeat("x", 200), ""},
		{"address.line_1 of 201 is rejected", "address.line_1", strings.Repeat("x", 201), "address.line_1"},
		{"address.line_2 of 201 is rejected", "address.line_2", strings.Repeat("x", 201), "address.line_2"},
		{"address.city of 120 is accepted", "address.city", strings.Repeat("ß", 120), ""},
		{"address.city of 121 is rejected", "address.city", strings.Repeat("ß", 121), "address.city"},
		{"address.postal_code of 32 is accepted", "address.postal_code", strings.Repeat("1", 32), ""},
		{"address.postal_code of 33 is rejected", "address.postal_code", strings.Repeat("1", 33), "address.postal_code"},
		{"address.region of 121 is rejected", "address.region", strings.Repeat("x", 121), "address.region"},
		{"address.country_code lowercase is rejected", "address.country_code", "de", "address.country_code"},
		{"address.country_code of three letters is rejected", "address.country_code", "DEU", "address.country_code"},
		{"address unknown field is rejected", "address.street", "x", "address.street"},
		{"default_currency lowercase is rejected", "default_currency", "eur", "default_currency"},
		{"default_currency of four letters is rejected", "default_currency", "EURO", "default_currency"},
		{"default_language with a region is accepted", "default_language", "de-CH", ""},
		{"default_language of 8 letters is accepted", "default_language", "abcdefgh", ""},
		{"default_language of 9 letters is rejected", "default_language", "abcdefghi", "default_language"},
		{"default_language of 1 letter is rejected", "default_language", "e", "default_language"},
		{"default_language with a trailing dash is rejected", "default_language", "en-", "default_language"},
		{"default_payment_terms_days 0 is accepted", "default_payment_terms_days", 0, ""},
		{"default_payment_terms_days 365 is accepted", "default_payment_terms_days", 365, ""},
		{"default_payment_terms_days -1 is rejected", "default_payment_terms_days", -1, "default_payment_terms_days"},
		{"default_payment_terms_days 366 is rejected", "default_payment_terms_days", 366, "default_payment_terms_days"},
		{"default_payment_terms_days fractional is rejected", "default_payment_terms_days", 30.5, "default_payment_terms_days"},
		{"default_payment_terms_days as a string is rejected", "default_payment_terms_days", "30", "default_payment_terms_days"},
		{"email valid is accepted", "email", "a.b+c@example.com", ""},
		{"email without @ is rejected", "email", "not-an-email", "email"},
		{"email with a display name is rejected", "email", "Bob <bob@example.com>", "email"},
		{"external_reference of 255 is accepted", "external_reference", strings.Repeat("r", 255), ""},
		{"external_reference of 256 is rejected", "external_reference", strings.Repeat("r", 256), "external_reference"},
		{"external_reference empty is rejected", "external_reference", "", "external_reference"},
		{"invoice_number_prefix of 20 is accepted", "invoice_number_prefix", "ABCDEFGHIJ/_.-012345", ""},
		{"invoice_number_prefix empty is accepted", "invoice_number_prefix", "", ""},
		{"invoice_number_prefix of 21 is rejected", "invoice_number_prefix", strings.Repeat("A", 21), "invoice_number_prefix"},
		{"invoice_number_prefix with a space is rejected", "invoice_number_prefix", "INV 1", "invoice_number_prefix"},
		{"invoice_number_prefix non-ASCII is rejected", "invoice_number_prefix", "RÉ-", "invoice_number_prefix"},
		{"20 identifiers are accepted", "identifiers", identifiersN(20), ""},
		{"21 identifiers are rejected", "identifiers", identifiersN(21), "identifiers"},
		{"identifier scheme uppercase is rejected", "identifiers", []any{map[string]any{"scheme": "VAT", "value": "1"}}, "identifiers[0].scheme"},
		{"identifier scheme of 64 is accepted", "identifiers", []any{map[string]any{"scheme": "a" + strings.Repeat("b", 63), "value": "1"}}, ""},
		{"identifier scheme of 65 is rejected", "identifiers", []any{map[string]any{"scheme": "a" + strings.Repeat("b", 64), "value": "1"}}, "identifiers[0].scheme"},
		{"identifier value empty is rejected", "identifiers", []any{map[string]any{"scheme": "vat", "value": ""}}, "identifiers[0].value"},
		{"identifier value of 201 is rejected", "identifiers", []any{map[string]any{"scheme": "vat", "value": strings.Repeat("v", 201)}}, "identifiers[0].value"},
		{"identifier country_code lowercase is rejected", "identifiers", []any{map[string]any{"scheme": "vat", "value": "1", "country_code": "de"}}, "identifiers[0].country_code"},
		{"identifier unknown field is rejected", "identifiers", []any{map[string]any{"scheme": "vat", "value": "1", "kind": "x"}}, "identifiers[0].kind"},
		{"unknown top-level field is rejected", "colour", "red", "colour"},
		{"server fields are not accepted", "id", uuid.NewString(), "id"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := companyWith(t, tt.field, tt.value)
			if tt.value == nil {
				body = withoutField(t, tt.field)
			}
			res := s.post(t, "/v1/companies", tok, fmt.Sprintf("boundary-%03d", i), body)
			if tt.wantPath == "" {
				mustStatus(t, res, http.StatusCreated)
				return
			}
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if code := errorCode(t, res); code != "validation_failed" {
				t.Errorf("code = %q, want validation_failed", code)
			}
			if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != tt.wantPath {
				t.Errorf("details paths = %v, want [%s]", paths, tt.wantPath)
			}
		})
	}
}

func withoutField(t *testing.T, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimalCompany), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, field)
	return mustJSON(t, m)
}

func TestValidationReportsEveryViolation(t *testing.T) {
	s := newService(t)
	res := s.post(t, "/v1/companies", token(t, "acme"), "every-violation", `{"legal_name":"","address":{"country_code":"x"},"default_currency":1,"extra":true}`)
	mustStatus(t, res, http.StatusUnprocessableEntity)
	errorCode(t, res) // the shape, and error.request_id equal to X-Request-Id
	assertGolden(t, "error_validation_failed", res.body)
}
