package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// What the write side accepts, the read side keeps: these tests hold the
// rule that every accepted value can be projected and served, and that no
// input of one account can stop the projections of the others.

const fullCompany = `{"legal_name":"Acme GmbH","trading_name":"Acme","address":{"line_1":"Hauptstr. 1","line_2":"Hof 2",
	"city":"Berlin","postal_code":"10115","region":"BE","country_code":"DE"},"default_currency":"EUR","default_language":"de",
	"email":"billing@acme.example","external_reference":"erp-1","identifiers":[{"scheme":"vat","value":"DE123","country_code":"DE"}]}`

const fullCustomer = `{"name":"Globex","address":{"line_1":"1 Main St","line_2":"Suite 2","city":"Springfield",
	"postal_code":"12345","region":"OR","country_code":"US"},"email":"ap@globex.example","external_reference":"crm-1",
	"identifiers":[{"scheme":"ein","value":"12-345","country_code":"US"}]}`

func fullInvoice(customerID string) string {
	return `{"customer_id":"` + customerID + `","issue_date":"2025-01-15","due_date":"2025-02-14","currency":"EUR",
	"language":"de","external_reference":"inv-1","purchase_order_reference":"po-1","notes":"n","terms":"t",
	"lines":[{"description":"Consulting","quantity":"1.5","unit":"h","unit_amount_minor":10000,"tax_rate_bps":1900}]}`
}

// withValueAt returns body with the string at path ("a.b", "a[0].b")
// replaced by edit(old).
func withValueAt(t *testing.T, body, path string, edit func(string) string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	parent := v
	for _, p := range parts[:len(parts)-1] {
		parent = child(parent, p)
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		old, _ := c[last].(string)
		c[last] = edit(old)
	default:
		t.Fatalf("%s: no object holds %q", path, last)
	}
	return mustJSON(t, v)
}

func child(v any, step string) any {
	if i, err := strconv.Atoi(step); err == nil {
		return v.([]any)[i]
	}
	return v.(map[string]any)[step]
}

func stringPaths(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

var (
	addressPaths    = stringPaths("address.", "line_1", "line_2", "city", "postal_code", "region", "country_code")
	identifierPaths = stringPaths("identifiers[0].", "scheme", "value", "country_code")
	companyPaths    = slices.Concat(stringPaths("", "legal_name", "trading_name", "default_currency", "default_language",
		"email", "external_reference"), addressPaths, identifierPaths)
	customerPaths = slices.Concat(stringPaths("", "name", "email", "external_reference"), addressPaths, identifierPaths)
	invoicePaths  = slices.Concat(stringPaths("", "customer_id", "issue_date", "due_date", "currency", "language",
		"external_reference", "purchase_order_reference", "notes", "terms"),
		stringPaths("lines[0].", "description", "quantity", "unit"))
)

func TestANULInAnyStringFieldIsRefusedWithItsPath(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "hostile", fullCompany)
	withNUL := func(old string) string { return old[:len(old)/2] + "\x00" + old[len(old)/2:] }
	cases := []struct {
		kind, url, body string
		paths           []string
	}{
		{"company", "/v1/companies", fullCompany, companyPaths},
		{"customer", "/v1/companies/" + b.companyID + "/customers", fullCustomer, customerPaths},
		{"invoice", b.path(""), fullInvoice(b.customerID), invoicePaths},
	}
	for _, c := range cases {
		for _, path := range c.paths {
			t.Run(c.kind+"/"+path, func(t *testing.T) {
				res := s.post(t, c.url, b.tok, "nul-"+c.kind+"-"+path, withValueAt(t, c.body, path, withNUL))
				mustStatus(t, res, http.StatusUnprocessableEntity)
				if got := detailPaths(t, res); !slices.Equal(got, []string{path}) {
					t.Fatalf("details paths = %q, want [%q]", got, path)
				}
			})
		}
	}
	mustStatus(t, s.get(t, "/readyz", ""), http.StatusOK)
	other := newBilling(t, s, "bystander", fullCompany) // creates are readable at once
	other.create(t, "bystander-invoice-1", fullInvoice(other.customerID))
}

func TestAnAccountClaimThatIsNotTextIsForbidden(t *testing.T) {
	s := newService(t)
	for name, org := range map[string]string{
		"NUL":          "acme\x00evil",
		"a newline":    "acme\nevil",
		"256 letters":  strings.Repeat("a", 256),
		"a C1 control": "acme\u0085",
	} {
		t.Run(name, func(t *testing.T) {
			res := s.post(t, "/v1/companies", token(t, org), "claim-"+strings.ReplaceAll(name, " ", "-"), minimalCompany)
			mustStatus(t, res, http.StatusForbidden)
		})
	}
	s.createCompany(t, token(t, strings.Repeat("a", 255)), "claim-ok-1", minimalCompany)
	mustStatus(t, s.get(t, "/readyz", ""), http.StatusOK)
}

func TestDatesStayWithinFourDigitYears(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "dates", minimalCompany) // 30 payment days
	for _, tt := range []struct {
		name   string
		fields map[string]any
		path   string // "" when accepted
	}{
		{"year 0", map[string]any{"issue_date": "0000-01-01"}, "issue_date"},
		{"a due date of year 0", map[string]any{"issue_date": "0001-01-01", "due_date": "0000-12-31"}, "due_date"},
		{"a default due date past 9999-12-31", map[string]any{"issue_date": "9999-12-15"}, "due_date"},
		{"year 1", map[string]any{"issue_date": "0001-01-01"}, ""},
		{"the last day, sent", map[string]any{"issue_date": "9999-12-15", "due_date": "9999-12-31"}, ""},
		{"the last day, computed", map[string]any{"issue_date": "9999-12-01"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := b.invoiceBody(t, tt.fields)
			if tt.path == "" {
				b.create(t, "dates-"+strings.ReplaceAll(tt.name, " ", "-"), body)
				return
			}
			res := s.post(t, b.path(""), b.tok, "dates-"+strings.ReplaceAll(tt.name, " ", "-"), body)
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if got := detailPaths(t, res); !slices.Equal(got, []string{tt.path}) {
				t.Fatalf("paths = %q, want [%q]", got, tt.path)
			}
		})
	}
}

func TestBodiesThatEncodingJSONWouldGuessAre400WithAPath(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "guess", minimalCompany)
	for _, tt := range []struct{ name, body, path string }{
		{"a duplicate key", `{"legal_name":"A","legal_name":"B","address":{"line_1":"a","city":"b","postal_code":"c","country_code":"DE"},"default_currency":"EUR"}`, "legal_name"},
		{"a lone surrogate", `{"legal_name":"A\ud800","address":{"line_1":"a","city":"b","postal_code":"c","country_code":"DE"},"default_currency":"EUR"}`, "legal_name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := s.post(t, "/v1/companies", b.tok, "guess-"+strconv.Itoa(len(tt.body)), tt.body)
			mustStatus(t, res, http.StatusBadRequest)
			if errorCode(t, res) != "malformed_request" || !slices.Equal(detailPaths(t, res), []string{tt.path}) {
				t.Fatalf("body = %s, want malformed_request at %s", res.body, tt.path)
			}
		})
	}
	res := s.post(t, b.path(""), b.tok, "guess-quantity", b.invoiceBody(t, map[string]any{
		"lines": []any{map[string]any{"description": "x", "quantity": "", "unit_amount_minor": 1, "tax_rate_bps": 0}},
	}))
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if got := detailPaths(t, res); !slices.Equal(got, []string{"lines[0].quantity"}) {
		t.Fatalf("an empty quantity is reported at %q, want lines[0].quantity", got)
	}
}

func TestNoListQueryParameterValueGives5xx(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "params", minimalCompany)
	lists := []string{"/v1/companies", "/v1/companies/" + b.companyID + "/customers", b.path("")}
	names := []string{"external_reference", "customer_id", "status", "after", "limit", "unknown"}
	var values []string
	for c := 0; c < 256; c++ {
		values = append(values, "%"+strings.ToUpper(strconv.FormatInt(int64(c), 16)))
	}
	values = append(values, "%C0%AF", "%ED%A0%80", "%F4%90%80%80", "a%00b", "%EF%BF%BF", strings.Repeat("%E2%82%AC", 300), "%", "%zz", "")
	for _, list := range lists {
		for _, name := range names {
			for _, v := range values {
				res := s.get(t, list+"?"+name+"="+v, b.tok)
				if res.status >= 500 {
					t.Fatalf("GET %s?%s=%s: %d %s", list, name, v, res.status, res.body)
				}
			}
		}
	}
}

func TestServeRefusesReadModelsNewerThanItsCode(t *testing.T) {
	cfg := testConfig(t)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	a, err := open(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	if _, err := a.pool.Exec(ctx, `UPDATE projection_versions SET version = version + 1 WHERE name = 'invoices'`); err != nil {
		t.Fatal(err)
	}
	a.close()
	a, err = open(ctx, cfg, logger)
	if err == nil {
		a.close()
		t.Fatal("an older binary started against newer invoices tables")
	}
	if !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("err = %v, want it to name the newer tables", err)
	}
}

// FuzzAcceptedTextIsProjectedAndServedBack drives requests through the real
// write side, event store and projections: whatever text and dates a create
// accepts, a GET right after the 201 serves back exactly; whatever it
// refuses, it refuses with a 4xx. Never a 5xx, never a 503 from a stalled
// projection.
func FuzzAcceptedTextIsProjectedAndServedBack(f *testing.F) {
	for _, seed := range []struct{ text, date string }{
		{"Acme GmbH", "2025-01-15"}, {"nul \x00 inside", "0000-01-01"}, {"tab\tand\nnewline", "9999-12-31"},
		{"東京 😀 \u2028 \u202e \ufeff \uffff \U0010ffff", "0001-01-01"}, {"\x7f\u0085", "9999-12-02"},
		{"\\u0000 spelled out", "2024-02-29"}, {"'; DROP TABLE invoices; --", "2025-02-29"}, {" ", "1-01-01"},
	} {
		f.Add(seed.text, seed.date)
	}
	s := newService(f)
	tok := token(f, "fuzz")
	f.Fuzz(func(t *testing.T, text, date string) {
		if !utf8.ValidString(text + date) {
			t.Skip("json.Marshal would send U+FFFD; bodies that are not UTF-8 are refused before parsing (TestMalformedRequestsAre400)")
		}
		key := "fuzz-" + strconv.FormatUint(uint64(len(text))*7919+uint64(len(date)), 36) + "-" + shortHash(text+"\x00"+date)
		company, ok := fuzzCreate(t, s, tok, "/v1/companies", key, fuzzCompany(text), "legal_name", text)
		if !ok {
			company, _ = fuzzCreate(t, s, tok, "/v1/companies", key+"-plain", minimalCompany, "", "")
		}
		base := "/v1/companies/" + company["id"].(string)
		customer, ok := fuzzCreate(t, s, tok, base+"/customers", key, fuzzCustomer(text), "name", text)
		if !ok {
			customer, _ = fuzzCreate(t, s, tok, base+"/customers", key+"-plain", minimalCustomer, "", "")
		}
		fuzzCreate(t, s, tok, base+"/invoices", key, fuzzInvoice(customer["id"].(string), text, date), "notes", text)
	})
}

func fuzzCompany(text string) string {
	return mustJSONAny(map[string]any{"legal_name": text, "trading_name": text, "default_currency": "EUR",
		"default_payment_terms_days": 365, "external_reference": text,
		"address":     map[string]any{"line_1": text, "city": text, "postal_code": text, "country_code": "DE", "region": text},
		"identifiers": []any{map[string]any{"scheme": "vat", "value": text}}})
}

func fuzzCustomer(text string) string {
	return mustJSONAny(map[string]any{"name": text, "external_reference": text,
		"address": map[string]any{"line_1": text, "line_2": text, "city": text, "postal_code": text, "country_code": "US"}})
}

func fuzzInvoice(customerID, text, date string) string {
	return mustJSONAny(map[string]any{"customer_id": customerID, "issue_date": date, "notes": text, "terms": text,
		"external_reference": text, "purchase_order_reference": text,
		"lines": []any{map[string]any{"description": text, "quantity": "1", "unit": text, "unit_amount_minor": 1, "tax_rate_bps": 0}}})
}

// fuzzCreate posts a create with a plain client (the fuzz engine's inputs
// break the document's rules on purpose); a 201 must be readable at once
// with field equal to want.
func fuzzCreate(t *testing.T, s *service, tok, path, key, body, field, want string) (map[string]any, bool) {
	t.Helper()
	status, created := fuzzDo(t, http.MethodPost, s.url+path, tok, key, body)
	switch {
	case status >= 500:
		t.Fatalf("POST %s %q: %d %v", path, body, status, created)
	case status != http.StatusCreated:
		return nil, false
	}
	status, got := fuzzDo(t, http.MethodGet, s.url+path+"/"+created["id"].(string), tok, "", "")
	if status != http.StatusOK {
		t.Fatalf("GET after 201 of %s: %d %v", path, status, got)
	}
	if field != "" && got[field] != want {
		t.Fatalf("%s %s = %q, want %q", path, field, got[field], want)
	}
	return got, true
}

func fuzzDo(t *testing.T, method, url, tok, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %d with a body that is not JSON: %v", method, url, res.StatusCode, err)
	}
	return res.StatusCode, m
}

func mustJSONAny(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always encode
	}
	return string(b)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
