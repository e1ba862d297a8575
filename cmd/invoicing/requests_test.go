package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestMalformedRequestsAre400(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	tests := []struct {
		name, key, body string
	}{
		{"syntax error", "malformed-1", `{"legal_name":`},
		{"trailing data after the object", "malformed-2", minimalCompany + ` {}`},
		{"empty body", "malformed-3", ``},
		{"an array instead of an object", "malformed-4", `[` + minimalCompany + `]`},
		{"a string instead of an object", "malformed-5", `"company"`},
		{"idempotency-key missing", "", minimalCompany},
		{"idempotency-key of 7 characters", "1234567", minimalCompany},
		{"idempotency-key of 256 characters", strings.Repeat("k", 256), minimalCompany},
		{"idempotency-key with a space", "has a space", minimalCompany},
		{"idempotency-key with non-ASCII", "schlüssel-1", minimalCompany},
		{"a body that is not UTF-8", "malformed-6", strings.Replace(minimalCompany, "Acme", "\xff", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(t, request{method: http.MethodPost, path: "/v1/companies", token: tok, key: tt.key, body: tt.body, contentType: "application/json"})
			mustStatus(t, res, http.StatusBadRequest)
			if code := errorCode(t, res); code != "malformed_request" {
				t.Errorf("code = %q, want malformed_request", code)
			}
		})
	}
	for _, key := range []string{"12345678", strings.Repeat("k", 255), "!~#$%&'*+-.^_`|"} {
		mustStatus(t, s.post(t, "/v1/companies", tok, key, minimalCompany), http.StatusCreated)
	}
}

func TestBodyOverTheLimitIs413(t *testing.T) {
	s := newService(t, func(c *config) { c.MaxBodyBytes = 2048 })
	tok := token(t, "acme")
	padded := companyWith(t, "trading_name", strings.Repeat("x", 150))
	if len(padded) > 2048 {
		t.Fatal("setup: padded body too large")
	}
	mustStatus(t, s.post(t, "/v1/companies", tok, "limit-under", padded), http.StatusCreated)
	res := s.post(t, "/v1/companies", tok, "limit-over", `{"legal_name":"`+strings.Repeat("x", 2100)+`"}`)
	mustStatus(t, res, http.StatusRequestEntityTooLarge)
	if code := errorCode(t, res); code != "payload_too_large" {
		t.Errorf("code = %q", code)
	}
}

func TestCreateWithoutJSONContentTypeIs415(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", "none"} {
		t.Run(ct, func(t *testing.T) {
			req := request{method: http.MethodPost, path: "/v1/companies", token: tok, key: "media-type-1", body: minimalCompany, contentType: ct}
			if ct == "none" {
				req.headers = map[string]string{"Content-Type": ""}
				req.contentType = ""
			}
			res := s.do(t, req)
			mustStatus(t, res, http.StatusUnsupportedMediaType)
			if code := errorCode(t, res); code != "unsupported_media_type" {
				t.Errorf("code = %q", code)
			}
		})
	}
	res := s.do(t, request{method: http.MethodPost, path: "/v1/companies", token: tok, key: "media-type-2", body: minimalCompany, contentType: "application/json; charset=utf-8"})
	mustStatus(t, res, http.StatusCreated)
}

func TestCompanyOfAnotherAccountIs404(t *testing.T) {
	s := newService(t)
	c := s.createCompany(t, token(t, "acme"), "tenancy-company", minimalCompany)
	other := token(t, "globex")
	for _, path := range []string{"/v1/companies/" + c["id"].(string), "/v1/companies/" + uuid.NewString()} {
		res := s.get(t, path, other)
		mustStatus(t, res, http.StatusNotFound)
		if code := errorCode(t, res); code != "not_found" {
			t.Errorf("code = %q", code)
		}
	}
	res := s.get(t, "/v1/companies", other)
	mustStatus(t, res, http.StatusOK)
	if data := res.object(t)["data"].([]any); len(data) != 0 {
		t.Errorf("another account lists %d companies, want 0", len(data))
	}
	res = s.get(t, "/v1/companies/not-a-uuid", other)
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != "company_id" {
		t.Errorf("paths = %v, want [company_id]", paths)
	}
}

func TestEveryResponseCarriesTheRequestID(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	res := s.do(t, request{method: http.MethodGet, path: "/v1/companies/" + uuid.NewString(), token: tok, headers: map[string]string{"X-Request-Id": "caller-id-123"}})
	if got := res.header.Get("X-Request-Id"); got != "caller-id-123" {
		t.Errorf("X-Request-Id = %q, want the caller's", got)
	}
	errorCode(t, res) // checks error.request_id == X-Request-Id
	res = s.do(t, request{method: http.MethodGet, path: "/v1/companies", token: tok, headers: map[string]string{"X-Request-Id": "bad id with spaces"}})
	if got := res.header.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("X-Request-Id = %q, want a generated id replacing an insane one", got)
	}
	res = s.get(t, "/v1/companies", "")
	if res.header.Get("X-Request-Id") == "" {
		t.Error("a 401 has no X-Request-Id")
	}
	errorCode(t, res)
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodDelete, "/v1/companies", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/companies/" + uuid.NewString(), http.StatusMethodNotAllowed},
		{http.MethodGet, "/v2/companies", http.StatusNotFound},
		{http.MethodGet, "/v1/nothing", http.StatusNotFound},
	}
	for _, tt := range tests {
		res := s.do(t, request{method: tt.method, path: tt.path, token: tok})
		if res.status != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, res.status, tt.want)
		}
		errorCode(t, res)
	}
}

// A request wrong in several ways gets the answer of the first check it
// fails, in the order docs/decisions.md gives: path ids, Content-Type, a
// malformed body, the idempotency key, the company in the path, the body's
// violations, then what needs the stored records (an issue's or void's
// invoice, a new invoice's customer).
func TestAWriteAnswersTheFirstCheckItFails(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "precedence", minimalCompany)
	other := token(t, "someone-else")
	customers := "/v1/companies/" + b.companyID + "/customers"
	unknownInvoice := b.path("/" + uuid.NewString())
	const malformedMessage = "The body must be one well-formed JSON object."
	const keyMessage = "The idempotency-key header is required: 8 to 255 printable ASCII characters without spaces."
	for _, tt := range []struct {
		name    string
		res     response
		status  int
		message string   // error.message, when it tells two 400s apart
		paths   []string // error.details' paths, for a 422
	}{
		{"a malformed path id before a malformed body", s.post(t, "/v1/companies/not-a-uuid/customers", b.tok, "", `{"name":`),
			http.StatusUnprocessableEntity, "", []string{"company_id"}},
		{"the media type before a malformed body", s.do(t, request{method: http.MethodPost, path: customers, token: b.tok, body: `{"name":`, contentType: "text/plain"}),
			http.StatusUnsupportedMediaType, "", nil},
		{"a malformed body before the key", s.post(t, "/v1/companies", b.tok, "", `{"legal_name":"a","legal_name":"b"}`),
			http.StatusBadRequest, malformedMessage, []string{"legal_name"}},
		{"the key before the company", s.post(t, customers, other, "", minimalCustomer),
			http.StatusBadRequest, keyMessage, nil},
		{"the key before the body's violations", s.post(t, "/v1/companies", b.tok, "short", `{"legal_name":5}`),
			http.StatusBadRequest, keyMessage, nil},
		{"the company before the body's violations", s.post(t, customers, other, "precedence-1", `{"name":5}`),
			http.StatusNotFound, "", nil},
		{"the company before an invoice body's violations", s.post(t, b.path(""), other, "precedence-4", `{"customer_id":5}`),
			http.StatusNotFound, "", nil},
		{"the body's violations before the customer", s.post(t, b.path(""), b.tok, "precedence-2",
			`{"customer_id":"`+uuid.NewString()+`","issue_date":"2025-02-30","lines":[{"description":"x","quantity":"1","unit_amount_minor":1,"tax_rate_bps":0}]}`),
			http.StatusUnprocessableEntity, "", []string{"issue_date"}},
		{"the body's violations before the invoice", s.post(t, unknownInvoice+"/void", b.tok, "precedence-3", `{}`),
			http.StatusUnprocessableEntity, "", []string{"reason"}},
		{"the key before the invoice", s.post(t, unknownInvoice+"/issue", b.tok, "", ""),
			http.StatusBadRequest, keyMessage, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustStatus(t, tt.res, tt.status)
			errorCode(t, tt.res)
			e := tt.res.object(t)["error"].(map[string]any)
			if tt.message != "" && e["message"] != tt.message {
				t.Errorf("message %q, want %q", e["message"], tt.message)
			}
			if got := detailPaths(t, tt.res); !slices.Equal(got, tt.paths) {
				t.Errorf("detail paths %q, want %q", got, tt.paths)
			}
		})
	}
}
