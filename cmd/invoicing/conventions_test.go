package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// The HTTP conventions of docs/decisions.md, end to end through the
// validating client (which also holds every answer to the document: the
// headers, 304 and 405 included, and HEAD as the GET without its body).

func TestCreatesAnswerWithLocationAndReplaysSayTheyAre(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	company := s.createCompany(t, tok, "location-company", minimalCompany)["id"].(string)
	invoiceBody := `{"customer_id":"%s","issue_date":"2025-01-15","lines":[{"description":"x","quantity":"1","unit_amount_minor":1,"tax_rate_bps":0}]}`
	customer := s.createCustomer(t, tok, company, "location-customer", minimalCustomer)["id"].(string)
	for _, c := range []struct{ path, key, body string }{
		{"/v1/companies", "location-company", minimalCompany},
		{"/v1/companies/" + company + "/customers", "location-customer", minimalCustomer},
		{"/v1/companies/" + company + "/invoices", "location-invoice", strings.Replace(invoiceBody, "%s", customer, 1)},
	} {
		// The company and the customer exist already, so these two replay;
		// the invoice is new. Either way: 201 with Location.
		first := s.mustCreate(t, c.path, tok, c.key, c.body)
		replay := s.post(t, c.path, tok, c.key, c.body)
		mustStatus(t, replay, http.StatusCreated)
		if replay.header.Get("Location") != first.header.Get("Location") || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("POST %s replayed: Location %q (first %q), Idempotent-Replayed %q; want the same Location and true",
				c.path, replay.header.Get("Location"), first.header.Get("Location"), replay.header.Get("Idempotent-Replayed"))
		}
	}
}

func TestHeadAnswersAsGetWithoutTheBody(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	invoice := b.create(t, "head-invoice", b.invoiceBody(t, nil))["id"].(string)
	co := "/v1/companies/" + b.companyID
	for _, tt := range []struct{ path, tok string }{
		{"/healthz", ""}, {"/readyz", ""}, {"/v1/openapi.yaml", ""},
		{"/v1/companies", b.tok}, {co, b.tok}, {co + "/customers", b.tok}, {co + "/customers/" + b.customerID, b.tok},
		{co + "/invoices?status=draft", b.tok}, {co + "/invoices/" + invoice, b.tok},
		{co + "/invoices/" + uuid.NewString(), b.tok}, // 404
		{co + "/invoices/not-a-uuid", b.tok},          // 422
		{co, ""},                                      // 401
		{"/v1/nothing", ""},                           // 404 without a route
	} {
		get := s.get(t, tt.path, tt.tok)
		head := s.do(t, request{method: http.MethodHead, path: tt.path, token: tt.tok})
		if head.status != get.status || len(head.body) != 0 {
			t.Errorf("HEAD %s: %d with %d body bytes; GET: %d", tt.path, head.status, len(head.body), get.status)
		}
		for name := range get.header {
			if name == "Date" || name == "X-Request-Id" {
				continue
			}
			if !slices.Equal(head.header.Values(name), get.header.Values(name)) {
				t.Errorf("HEAD %s: %s = %q, GET's %q", tt.path, name, head.header.Values(name), get.header.Values(name))
			}
		}
	}
}

func TestSingleResourcesCarryAnETagAndIfNoneMatchGives304(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "etags", prefixedCompany)
	invoice := b.create(t, "etag-invoice", b.invoiceBody(t, nil))["id"].(string)
	co := "/v1/companies/" + b.companyID
	ifNoneMatch := func(path, method, tag string) response {
		return s.do(t, request{method: method, path: path, token: b.tok, headers: map[string]string{"If-None-Match": tag}})
	}
	for path, id := range map[string]string{
		co: b.companyID, co + "/customers/" + b.customerID: b.customerID, co + "/invoices/" + invoice: invoice,
	} {
		res := s.get(t, path, b.tok)
		tag := res.header.Get("ETag")
		if want := `W/"` + id + `.1"`; tag != want {
			t.Fatalf("GET %s: ETag %q, want %q", path, tag, want)
		}
		strong := strings.TrimPrefix(tag, "W/")
		for _, match := range []string{tag, strong, "*", `"other", ` + tag, `W/"` + id + `.0", ` + strong} {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				got := ifNoneMatch(path, method, match)
				if got.status != http.StatusNotModified || len(got.body) != 0 || got.header.Get("ETag") != tag {
					t.Errorf("%s %s with If-None-Match %s: %d, ETag %q, %d body bytes; want 304, %s, none",
						method, path, match, got.status, got.header.Get("ETag"), len(got.body), tag)
				}
			}
		}
		for _, other := range []string{`W/"` + id + `.2"`, `"` + id + `"`, `W/"x", "y"`, "garbage", ""} {
			if got := ifNoneMatch(path, http.MethodGet, other); got.status != http.StatusOK || string(got.body) != string(res.body) {
				t.Errorf("GET %s with If-None-Match %q: %d, want 200 and the resource", path, other, got.status)
			}
		}
	}

	// A change makes the old tag stale.
	old := s.get(t, co+"/invoices/"+invoice, b.tok).header.Get("ETag")
	b.mustChange(t, b.issue(t, invoice, "etag-issue"))
	res := ifNoneMatch(co+"/invoices/"+invoice, http.MethodGet, old)
	if want := `W/"` + invoice + `.2"`; res.status != http.StatusOK || res.header.Get("ETag") != want {
		t.Errorf("after issuing, If-None-Match %s: %d with ETag %q; want 200 with %s", old, res.status, res.header.Get("ETag"), want)
	}

	// Preconditions are ignored when the answer would not be a 2xx, and
	// lists carry no ETag.
	if got := ifNoneMatch(co+"/invoices/"+uuid.NewString(), http.MethodGet, "*"); got.status != http.StatusNotFound {
		t.Errorf("If-None-Match * on a missing invoice: %d, want 404", got.status)
	}
	for _, list := range []string{"/v1/companies", co + "/customers", co + "/invoices"} {
		if got := s.get(t, list, b.tok); got.header.Get("ETag") != "" {
			t.Errorf("GET %s has an ETag %q; lists carry none", list, got.header.Get("ETag"))
		}
		if got := ifNoneMatch(list, http.MethodGet, "*"); got.status != http.StatusOK {
			t.Errorf("GET %s with If-None-Match *: %d, want 200", list, got.status)
		}
	}
}

func TestMethodNotAllowedListsThePathsMethods(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	co := "/v1/companies/" + uuid.NewString()
	inv := co + "/invoices/" + uuid.NewString()
	for _, tt := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/v1/companies", "GET, HEAD, POST"},
		{http.MethodPut, co, "GET, HEAD, PATCH"},
		{http.MethodDelete, co + "/customers/" + uuid.NewString(), "GET, HEAD, PATCH"},
		{http.MethodGet, co + "/archive", "POST"},
		{http.MethodGet, inv + "/issue", "POST"},
		{http.MethodHead, inv + "/void", "POST"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
		{http.MethodOptions, "/v1/openapi.yaml", "GET, HEAD"},
	} {
		res := s.do(t, request{method: tt.method, path: tt.path, token: tok})
		if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d with Allow %q, want 405 with %q", tt.method, tt.path, res.status, res.header.Get("Allow"), tt.allow)
		}
		if tt.method != http.MethodHead {
			if code := errorCode(t, res); code != "method_not_allowed" {
				t.Errorf("%s %s: code %q", tt.method, tt.path, code)
			}
		}
	}
}

func TestUnauthenticatedCarriesABearerChallenge(t *testing.T) {
	s := newService(t)
	const bare = `Bearer realm="invoicing"`
	const invalid = `Bearer realm="invoicing", error="invalid_token", error_description="The access token is malformed, expired or not issued for this service."`
	expired := with(validClaims(), "exp", time.Now().Add(-2*time.Minute).Unix())
	for _, tt := range []struct{ name, authorization, want string }{
		{"no Authorization", "", bare},
		{"another scheme", "Basic dXNlcjpwYXNz", bare},
		{"Bearer without a token", "Bearer", bare},
		{"a garbled token", "Bearer not.a.jwt", invalid},
		{"an expired token", "Bearer " + signed(t, testSecret, jwt.MapClaims(expired)), invalid},
		{"a token signed with another key", "Bearer " + signed(t, "another-secret-another-secret!!!", validClaims()), invalid},
	} {
		res := s.do(t, request{method: http.MethodGet, path: "/v1/companies", headers: map[string]string{"Authorization": tt.authorization}})
		mustStatus(t, res, http.StatusUnauthorized)
		if got := res.header.Get("WWW-Authenticate"); got != tt.want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", tt.name, got, tt.want)
		}
	}
	// A token that is valid but grants too little is 403, without a challenge.
	res := s.get(t, "/v1/companies", token(t, "acme", "other:scope"))
	mustStatus(t, res, http.StatusForbidden)
	if got := res.header.Get("WWW-Authenticate"); got != "" {
		t.Errorf("403 with WWW-Authenticate %q", got)
	}
}
