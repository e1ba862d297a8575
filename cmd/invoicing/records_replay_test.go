package main

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 21: what changes after a request does not change its replay. A
// create replayed after its record was updated or archived, or after its
// parent was archived, answers its first answer (201, the record as it was
// created).
func TestCreatesReplayTheirFirstAnswerAfterChanges(t *testing.T) {
	s := newService(t)
	tok := token(t, "replays")
	companyBody := companyWith(t, "invoice_number_prefix", "INV-")
	company := s.post(t, "/v1/companies", tok, "replays-company", companyBody)
	mustStatus(t, company, http.StatusCreated)
	companyPath := "/v1/companies/" + company.object(t)["id"].(string)
	customer := s.post(t, companyPath+"/customers", tok, "replays-customer", minimalCustomer)
	mustStatus(t, customer, http.StatusCreated)
	customerPath := companyPath + "/customers/" + customer.object(t)["id"].(string)
	b := billing{s: s, tok: tok, companyID: company.object(t)["id"].(string), customerID: customer.object(t)["id"].(string)}
	invoiceBody := b.invoiceBody(t, nil)
	invoice := s.post(t, b.path(""), tok, "replays-invoice", invoiceBody)
	mustStatus(t, invoice, http.StatusCreated)

	s.mustWrite(t, companyPath, tok, s.patch(t, companyPath, tok, "replays-patch-co", `{"legal_name":"Changed GmbH"}`, nil))
	s.mustWrite(t, customerPath, tok, s.patch(t, customerPath, tok, "replays-patch-cu", `{"name":"Changed Corp"}`, nil))
	s.mustWrite(t, customerPath, tok, s.action(t, customerPath, "archive", tok, "replays-archive-cu", "", nil))
	s.mustWrite(t, companyPath, tok, s.action(t, companyPath, "archive", tok, "replays-archive-co", "", nil))

	for _, r := range []struct {
		name  string
		req   request
		first response
	}{
		{"the company's create", request{method: http.MethodPost, path: "/v1/companies", token: tok, key: "replays-company", body: companyBody}, company},
		{"the customer's create, its company archived", request{method: http.MethodPost, path: companyPath + "/customers", token: tok, key: "replays-customer", body: minimalCustomer}, customer},
		{"the invoice's create, its customer archived", request{method: http.MethodPost, path: b.path(""), token: tok, key: "replays-invoice", body: invoiceBody}, invoice},
	} {
		t.Run(r.name, func(t *testing.T) { s.mustReplay(t, r.req, r.first) })
	}
}

// TestTheNextIssueNumbersWithThePrefixOfNow: the sequence goes on, under
// the company's invoice_number_prefix as it is when the invoice is issued,
// through the instance that took the patch and through another that had
// issued under the old prefix (its directory must not serve it); numbers
// already given stay.
func TestTheNextIssueNumbersWithThePrefixOfNow(t *testing.T) {
	s := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = s.dbURL })
	b := newBilling(t, s, "prefix-change", prefixedCompany)
	onOther := b
	onOther.s = other
	first := b.create(t, "prefix-change-1", b.invoiceBody(t, nil))["id"].(string)
	second := b.create(t, "prefix-change-2", b.invoiceBody(t, nil))["id"].(string)
	third := b.create(t, "prefix-change-3", b.invoiceBody(t, nil))["id"].(string)
	if got := onOther.mustChange(t, onOther.issue(t, first, "prefix-issue-1"))["number"]; got != "INV-000001" {
		t.Fatalf("first number %v", got)
	}
	company := "/v1/companies/" + b.companyID
	s.mustWrite(t, company, b.tok, s.patch(t, company, b.tok, "prefix-change-patch", `{"invoice_number_prefix":"RE/2026-"}`, nil))
	if got := onOther.mustChange(t, onOther.issue(t, second, "prefix-issue-2"))["number"]; got != "RE/2026-000002" {
		t.Errorf("second number, through the other instance, %v, want RE/2026-000002", got)
	}
	if got := b.mustChange(t, b.issue(t, third, "prefix-issue-3"))["number"]; got != "RE/2026-000003" {
		t.Errorf("third number %v, want RE/2026-000003", got)
	}
	if got := s.get(t, b.path("/"+first), b.tok).object(t)["number"]; got != "INV-000001" {
		t.Errorf("the first invoice's number became %v", got)
	}
}

// TestCustomersOfAnArchivedCompanyCanStillChange: an archived company takes
// nothing new, but its existing customers can be updated, archived and
// restored (docs/decisions.md).
func TestCustomersOfAnArchivedCompanyCanStillChange(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "archived-company-customers", minimalCompany)
	company := "/v1/companies/" + b.companyID
	customer := company + "/customers/" + b.customerID
	s.mustWrite(t, company, b.tok, s.action(t, company, "archive", b.tok, "acc-archive-co", "", nil))
	s.mustWrite(t, customer, b.tok, s.patch(t, customer, b.tok, "acc-patch-cu", `{"name":"Still Here"}`, nil))
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "archive", b.tok, "acc-archive-cu", "", nil))
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "unarchive", b.tok, "acc-unarchive-cu", "", nil))
	if got := ids(s.listed(t, company+"/customers", b.tok, nil)); len(got) != 1 || got[0] != b.customerID {
		t.Errorf("the archived company's customers list %v, want its customer", got)
	}
}

// TestConditionalGetsFollowChanges: a GET's ETag names the version, so an
// If-None-Match of the version before a change gets the changed record,
// and one of the current version 304.
func TestConditionalGetsFollowChanges(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "conditional-gets", minimalCompany)
	draft := b.path("/" + b.create(t, "conditional-gets-draft", b.invoiceBody(t, nil))["id"].(string))
	company := "/v1/companies/" + b.companyID
	customer := company + "/customers/" + b.customerID
	for _, tt := range []struct{ path, patch string }{
		{company, `{"legal_name":"Changed"}`}, {customer, `{"name":"Changed"}`}, {draft, `{"notes":"Changed"}`},
	} {
		old := s.get(t, tt.path, b.tok).header.Get("ETag")
		changed := s.mustWrite(t, tt.path, b.tok, s.patch(t, tt.path, b.tok, "conditional-gets-"+tt.path[len(tt.path)-12:], tt.patch, nil))
		res := s.do(t, request{method: http.MethodGet, path: tt.path, token: b.tok, headers: map[string]string{"If-None-Match": old}})
		if res.status != http.StatusOK || mustJSON(t, res.object(t)) != mustJSON(t, changed) {
			t.Errorf("GET %s If-None-Match the old tag: %d %s", tt.path, res.status, res.body)
		}
		res = s.do(t, request{method: http.MethodGet, path: tt.path, token: b.tok, headers: map[string]string{"If-None-Match": tagOf(changed)}})
		mustStatus(t, res, http.StatusNotModified)
	}
}

// TestMethodsThePathsDoNotTake: the document's Allow for each changed path
// (the harness checks Allow against the document on every 405).
func TestMethodsThePathsDoNotTake(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "methods", minimalCompany)
	draft := b.path("/" + b.create(t, "methods-draft", b.invoiceBody(t, nil))["id"].(string))
	company := "/v1/companies/" + b.companyID
	customer := company + "/customers/" + b.customerID
	for _, tt := range []struct{ method, path string }{
		{http.MethodDelete, company}, {http.MethodPut, customer}, {http.MethodDelete, draft},
		{http.MethodGet, company + "/archive"}, {http.MethodPatch, customer + "/unarchive"}, {http.MethodPatch, "/v1/companies"},
	} {
		mustStatus(t, s.do(t, request{method: tt.method, path: tt.path, token: b.tok}), http.StatusMethodNotAllowed)
	}
}

// TestPatchBodiesOverTheLimitOrWithoutAMediaType: 413 over MAX_BODY_BYTES,
// 415 without a Content-Type, as for creates.
func TestPatchBodiesOverTheLimitOrWithoutAMediaType(t *testing.T) {
	s := newService(t, func(c *config) { c.MaxBodyBytes = 2048 })
	tok := token(t, "acme")
	path := "/v1/companies/" + s.createCompany(t, tok, "patch-limits", minimalCompany)["id"].(string)
	big := `{"trading_name":"` + strings.Repeat("x", 2100) + `"}`
	mustFail(t, s.patch(t, path, tok, "patch-limits-big", big, nil), http.StatusRequestEntityTooLarge, "payload_too_large")
	res := s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: "patch-limits-none", body: `{"trading_name":"x"}`,
		headers: map[string]string{"Content-Type": ""}})
	mustFail(t, res, http.StatusUnsupportedMediaType, "unsupported_media_type")
	if got := s.get(t, path, tok).object(t); got["version"] != 1.0 {
		t.Errorf("refused patches changed the company: %v", got)
	}
}
