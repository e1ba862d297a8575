package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Issue 21, items 4 and 5: revising drafts (PATCH of an invoice) and issuing
// with an issue_date.

// agreeInInvoiceLists checks that the invoice lists follow a revision at
// once: the summary in the list is the record's, and the external_reference,
// status and customer_id filters find it by its current values only.
func (b billing) agreeInInvoiceLists(customers []string, oldRefs *[]string) func(*testing.T, map[string]any) {
	return func(t *testing.T, rec map[string]any) {
		t.Helper()
		id := rec["id"].(string)
		item := find(b.s.listed(t, b.path(""), b.tok, nil), id)
		if item == nil {
			t.Fatalf("the list lacks invoice %s", id)
		}
		for k, v := range item {
			if mustJSON(t, v) != mustJSON(t, rec[k]) {
				t.Errorf("the list's %s = %v, the invoice's %v", k, v, rec[k])
			}
		}
		has := func(filters url.Values) bool {
			return slices.Contains(ids(b.s.listed(t, b.path(""), b.tok, filters)), id)
		}
		ref, _ := rec["external_reference"].(string)
		if ref != "" {
			if got := ids(b.s.listed(t, b.path(""), b.tok, url.Values{"external_reference": {ref}})); !slices.Equal(got, []string{id}) {
				t.Errorf("external_reference=%s lists %v, want [%s]", ref, got, id)
			}
			*oldRefs = append(*oldRefs, ref)
		}
		for _, old := range *oldRefs {
			if old != ref && has(url.Values{"external_reference": {old}}) {
				t.Errorf("external_reference=%s (a former value) still lists the invoice", old)
			}
		}
		for status, want := range map[string]bool{"draft": true, "issued": false, "void": false} {
			if has(url.Values{"status": {status}}) != want {
				t.Errorf("status=%s lists the invoice: %v, want %v", status, !want, want)
			}
		}
		for _, c := range customers {
			if has(url.Values{"customer_id": {c}}) != (c == rec["customer_id"]) {
				t.Errorf("customer_id=%s lists the invoice of customer %v: %v", c, rec["customer_id"], c != rec["customer_id"])
			}
		}
	}
}

var (
	revisedLines = []any{
		map[string]any{"description": "Design", "quantity": "2", "unit": "day", "unit_amount_minor": 5000, "tax_rate_bps": 1900},
		map[string]any{"description": "Travel", "quantity": "0.5", "unit": nil, "unit_amount_minor": 3001, "tax_rate_bps": 700},
	}
)

func TestReviseDraftFieldFamilies(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise", minimalCompany) // EUR, en, 30 days
	second := s.createCustomer(t, b.tok, b.companyID, "revise-second", fullCustomer)["id"].(string)
	// What a create computes is what a revision must: reference drafts.
	refLines := b.create(t, "revise-ref-lines", b.invoiceBody(t, map[string]any{"lines": revisedLines}))
	refSecond := b.create(t, "revise-ref-second", b.invoiceBody(t, map[string]any{"customer_id": second}))
	id := b.create(t, "revise-draft", b.invoiceBody(t, map[string]any{"external_reference": "inv-1", "notes": "n"}))["id"].(string)

	steps := []patchStep{
		{"text", `{"notes":"Thank you","terms":"Net 30","purchase_order_reference":"PO-7"}`,
			map[string]any{"notes": "Thank you", "terms": "Net 30", "purchase_order_reference": "PO-7"}},
		{"lines replace the array and the amounts follow", mustJSONAny(map[string]any{"lines": revisedLines}),
			map[string]any{"lines": refLines["lines"], "subtotal_minor": refLines["subtotal_minor"], "tax_minor": refLines["tax_minor"],
				"total_minor": refLines["total_minor"], "tax_breakdown": refLines["tax_breakdown"],
				"amount_due_minor": refLines["amount_due_minor"]}},
		{"the document fields", `{"buyer_reference":"04011000-12345-34","tax_exemptions":[{"tax_category":"E","reason":"Art. 132"}],` +
			`"delivery_date":"2025-02-27","delivery_address":{"line_1":"Dock 4","city":"Hamburg","postal_code":"20457","country_code":"DE"},` +
			`"billing_period":{"start":"2025-02-01","end":"2025-02-28"}}`,
			map[string]any{"buyer_reference": "04011000-12345-34", "tax_exemptions": []any{map[string]any{"tax_category": "E", "reason": "Art. 132"}},
				"delivery_date": "2025-02-27", "delivery_address": map[string]any{"line_1": "Dock 4", "city": "Hamburg", "postal_code": "20457", "country_code": "DE"},
				"billing_period": map[string]any{"start": "2025-02-01", "end": "2025-02-28"}}},
		{"a member of the delivery address", `{"delivery_address":{"city":"Bremen"},"billing_period":{"end":null}}`,
			map[string]any{"delivery_address": map[string]any{"line_1": "Dock 4", "city": "Bremen", "postal_code": "20457", "country_code": "DE"},
				"billing_period": map[string]any{"start": "2025-02-01"}}},
		{"null removes the document fields", `{"buyer_reference":null,"tax_exemptions":null,"delivery_date":null,"delivery_address":null,"billing_period":null}`,
			map[string]any{"buyer_reference": absent, "tax_exemptions": absent, "delivery_date": absent, "delivery_address": absent, "billing_period": absent}},
		{"null removes optional fields", `{"notes":null,"purchase_order_reference":null}`,
			map[string]any{"notes": absent, "purchase_order_reference": absent}},
		{"another customer takes its snapshot now", `{"customer_id":"` + second + `"}`,
			map[string]any{"customer_id": second, "customer_name": "Globex", "customer": refSecond["customer"]}},
		{"a due date from the terms follows the issue date", `{"issue_date":"2025-03-01"}`,
			map[string]any{"issue_date": "2025-03-01", "due_date": "2025-03-31"}},
		{"a due date sent", `{"due_date":"2025-04-30"}`, map[string]any{"due_date": "2025-04-30"}},
		{"a due date sent stays when the issue date changes", `{"issue_date":"2025-04-01"}`, map[string]any{"issue_date": "2025-04-01"}},
		{"currency and language", `{"currency":"USD","language":"de"}`, map[string]any{"currency": "USD", "language": "de"}},
		{"null restores the defaults", `{"currency":null,"language":null,"due_date":null}`,
			map[string]any{"currency": "EUR", "language": "en", "due_date": "2025-05-01"}},
		{"external_reference", `{"external_reference":"inv-2"}`, map[string]any{"external_reference": "inv-2"}},
		{"null removes the external_reference", `{"external_reference":null}`, map[string]any{"external_reference": absent}},
	}
	var oldRefs []string
	final := s.runPatchSteps(t, b.path("/"+id), b.tok, "revise", steps,
		b.agreeInInvoiceLists([]string{b.customerID, second}, &oldRefs))

	if streams, n := s.streamsOf(t, "Invoice", "invoice_id", id); streams != 1 || n != 1+len(steps) {
		t.Errorf("the draft's events: %d in %d streams; want %d in its one stream", n, streams, 1+len(steps))
	}
	// A step's key with another patch is refused.
	mustFail(t, s.patch(t, b.path("/"+id), b.tok, "revise-00", `{"notes":"other"}`, nil), http.StatusConflict, "idempotency_key_reused")
	// The revised draft issues as it reads, and a rebuild folds the same
	// invoice and list.
	issued := b.mustChange(t, b.issue(t, id, "revise-issue"))
	for _, f := range []string{"lines", "customer", "issuer", "issue_date", "due_date", "total_minor", "currency"} {
		if mustJSON(t, issued[f]) != mustJSON(t, final[f]) {
			t.Errorf("issued %s = %v, the revised draft's %v", f, issued[f], final[f])
		}
	}
	list := s.listed(t, b.path(""), b.tok, nil)
	if out, err := runCommand(t, s, "projections", "rebuild", "invoices"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if got := s.get(t, b.path("/"+id), b.tok).object(t); mustJSON(t, got) != mustJSON(t, issued) {
		t.Errorf("after a rebuild the invoice reads\n%v\nwant\n%v", got, issued)
	}
	if got := s.listed(t, b.path(""), b.tok, nil); mustJSON(t, got) != mustJSON(t, list) {
		t.Errorf("after a rebuild the list reads\n%v\nwant\n%v", got, list)
	}
	if out, err := runCommand(t, s, "audit", "verify"); err != nil {
		t.Fatalf("audit verify after revisions: %v\n%s", err, out)
	}
}

func TestReviseDraftRefusesBadPatchesWithTheirPath(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-bad", minimalCompany)
	sibling := s.createCompany(t, b.tok, "revise-bad-sibling", minimalCompany)["id"].(string)
	siblingCustomer := s.createCustomer(t, b.tok, sibling, "revise-bad-sibling-cu", minimalCustomer)["id"].(string)
	id := b.create(t, "revise-bad-draft", b.invoiceBody(t, nil))["id"].(string)
	line := func(field string, value any) string {
		return mustJSONAny(map[string]any{"lines": lineWith(field, value)})
	}
	bad := append([]badPatch{
		{"unknown field", `{"discount":1}`, "discount"},
		{"unknown line field", line("discount", 1), "lines[0].discount"},
		{"null customer_id", `{"customer_id":null}`, "customer_id"},
		{"null issue_date", `{"issue_date":null}`, "issue_date"},
		{"null lines", `{"lines":null}`, "lines"},
		{"no lines", `{"lines":[]}`, "lines"},
		{"a line without its tax rate", line("tax_rate_bps", nil), "lines[0].tax_rate_bps"},
		{"a quantity of 4 decimals", line("quantity", "1.0001"), "lines[0].quantity"},
		{"currency lowercase", `{"currency":"usd"}`, "currency"},
		{"language invalid", `{"language":"english language"}`, "language"},
		{"due_date before issue_date", `{"due_date":"2025-01-14"}`, "due_date"},
		{"issue_date after a due date sent with it", `{"issue_date":"2025-03-01","due_date":"2025-02-01"}`, "due_date"},
		{"issue_date not a date", `{"issue_date":"2025-02-30"}`, "issue_date"},
		{"issue_date of year 10000", `{"issue_date":"10000-01-01"}`, "issue_date"},
		{"due_date of year 10000", `{"due_date":"10000-01-01"}`, "due_date"},
		{"a default due date past 9999-12-31", `{"issue_date":"9999-12-15"}`, "due_date"},
		{"customer_id not a UUID", `{"customer_id":"cust-1"}`, "customer_id"},
		{"customer_id of a sibling company", `{"customer_id":"` + siblingCustomer + `"}`, "customer_id"},
		{"customer_id unknown", `{"customer_id":"0190a0c0-0000-7000-8000-000000000000"}`, "customer_id"},
		{"notes of 5001", `{"notes":"` + strings.Repeat("n", 5001) + `"}`, "notes"},
		{"NUL in notes", `{"notes":"a\u0000b"}`, "notes"},
		{"NUL in a line's description", line("description", "a\x00b"), "lines[0].description"},
		{"NUL in the external_reference", `{"external_reference":"a\u0000b"}`, "external_reference"},
	}, readOnlyPatches("company_id", "status", "number", "issued_at", "voided_at", "void_reason",
		"subtotal_minor", "tax_minor", "total_minor", "customer", "issuer", "customer_name")...)
	s.mustRefusePatches(t, b.path("/"+id), b.tok, "revise-bad", bad)
	mustFail(t, s.patch(t, b.path("/"+id), b.tok, "revise-bad-array", `[]`, nil), http.StatusBadRequest, "malformed_request")
	mustFail(t, s.do(t, request{method: http.MethodPatch, path: b.path("/" + id), token: b.tok, key: "revise-bad-text",
		body: `{"notes":"x"}`, contentType: "text/plain"}), http.StatusUnsupportedMediaType, "unsupported_media_type")
	if n := s.eventCount(t, "InvoiceRevised", "invoice_id", id); n != 0 {
		t.Errorf("%d InvoiceRevised events after refused patches, want 0", n)
	}
	mustStatus(t, s.get(t, "/readyz", ""), http.StatusOK)
}

func TestOnlyDraftsCanBeRevised(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-states", minimalCompany)
	issued := b.create(t, "revise-states-1", b.invoiceBody(t, nil))["id"].(string)
	voided := b.create(t, "revise-states-2", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, issued, "revise-states-issue"))
	b.mustChange(t, b.void(t, voided, "revise-states-void", "duplicate"))
	for _, id := range []string{issued, voided} {
		before := s.get(t, b.path("/"+id), b.tok)
		mustFail(t, s.patch(t, b.path("/"+id), b.tok, "revise-states-"+id, `{"notes":"late"}`, nil), http.StatusConflict, "invalid_state")
		if after := s.get(t, b.path("/"+id), b.tok); string(after.body) != string(before.body) {
			t.Errorf("a refused revision changed the invoice")
		}
	}
	mustFail(t, s.patch(t, b.path("/0190a0c0-0000-7000-8000-000000000000"), b.tok, "revise-states-unknown", `{"notes":"x"}`, nil), http.StatusNotFound, "not_found")
	mustFail(t, s.patch(t, b.path("/"+issued), token(t, "globex"), "revise-states-other", `{"notes":"x"}`, nil), http.StatusNotFound, "not_found")
}

// TestARevisionRacingAnIssueLandsBeforeOrGets409: sent at once, a revision
// either lands before the issue (the issue's answer and the issued invoice
// show it) or is 409; either way the issue takes the next number, without
// a gap (a revision lapsing the issue's reservation must not cost one).
func TestARevisionRacingAnIssueLandsBeforeOrGets409(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-race", prefixedCompany)
	landed := 0
	const rounds = 24
	for i := range rounds {
		id := b.create(t, fmt.Sprint("revise-race-", i), b.invoiceBody(t, nil))["id"].(string)
		var revised, issued response
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			revised = s.patch(t, b.path("/"+id), b.tok, fmt.Sprint("revise-race-patch-", i), `{"notes":"revised"}`, nil)
		}()
		go func() { defer wg.Done(); issued = b.issue(t, id, fmt.Sprint("race-issue-", i)) }()
		wg.Wait()
		mustStatus(t, issued, http.StatusOK)
		final := b.s.get(t, b.path("/"+id), b.tok).object(t)
		switch revised.status {
		case http.StatusOK:
			landed++
			if final["notes"] != "revised" || final["version"] != 3.0 || issued.object(t)["notes"] != "revised" {
				t.Errorf("race %d: the revision answered 200 but the issued invoice reads notes %v version %v (the issue answered %s)",
					i, final["notes"], final["version"], issued.body)
			}
		case http.StatusConflict:
			mustFail(t, revised, http.StatusConflict, "invalid_state")
			if _, ok := final["notes"]; ok || final["version"] != 2.0 {
				t.Errorf("race %d: the revision answered 409 but the invoice reads notes %v version %v", i, final["notes"], final["version"])
			}
		default:
			t.Errorf("race %d: the revision answered %d %s", i, revised.status, revised.body)
		}
		if final["status"] != "issued" || final["number"] != fmt.Sprintf("INV-%06d", i+1) {
			t.Errorf("race %d: status %v number %v, want issued INV-%06d", i, final["status"], final["number"], i+1)
		}
	}
	t.Logf("%d of %d revisions landed before the issue", landed, rounds)
}

func TestIssueWithAnIssueDate(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "issue-date", minimalCompany) // 30 days
	for i, tt := range []struct {
		name       string
		draft      map[string]any
		body       string
		issue, due string // "" when refused
		refusedAt  string
	}{
		{"a due date from the terms moves with it", nil, `{"issue_date":"2026-11-26"}`, "2026-11-26", "2026-12-26", ""},
		{"a due date sent stays", map[string]any{"due_date": "2027-01-31"}, `{"issue_date":"2026-11-26"}`, "2026-11-26", "2027-01-31", ""},
		{"the drafted date by default", nil, ``, "2025-01-15", "2025-02-14", ""},
		{"the drafted date with an empty body", nil, `{}`, "2025-01-15", "2025-02-14", ""},
		{"an earlier date", nil, `{"issue_date":"2025-01-01"}`, "2025-01-01", "2025-01-31", ""},
		{"a due date sent before the new issue date", map[string]any{"due_date": "2025-02-01"}, `{"issue_date":"2025-03-01"}`, "", "", "issue_date"},
		{"not a date", nil, `{"issue_date":"2025-02-30"}`, "", "", "issue_date"},
		{"year 10000", nil, `{"issue_date":"10000-01-01"}`, "", "", "issue_date"},
		{"year 0", nil, `{"issue_date":"0000-01-01"}`, "", "", "issue_date"},
		{"a due date from the terms past 9999-12-31", nil, `{"issue_date":"9999-12-15"}`, "", "", "issue_date"},
		{"not a string", nil, `{"issue_date":20261126}`, "", "", "issue_date"},
		{"null is the drafted date, as an omitted field", nil, `{"issue_date":null}`, "2025-01-15", "2025-02-14", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			draft := b.create(t, fmt.Sprint("issue-date-draft-", i), b.invoiceBody(t, tt.draft))
			id := draft["id"].(string)
			req := request{method: http.MethodPost, path: b.path("/" + id + "/issue"), token: b.tok, key: fmt.Sprint("issue-date-", i), body: tt.body}
			res := s.do(t, req)
			if tt.refusedAt != "" {
				mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", tt.refusedAt)
				if got := s.get(t, b.path("/"+id), b.tok).object(t); mustJSON(t, got) != mustJSON(t, draft) {
					t.Errorf("a refused issue changed the draft: %v", got)
				}
				return
			}
			issued := b.mustChange(t, res)
			checkChanged(t, draft, issued, map[string]any{"status": "issued", "number": issued["number"], "issued_at": issued["issued_at"],
				"issue_date": tt.issue, "due_date": tt.due})
			s.mustReplay(t, req, res)
		})
	}
	// What an issue set, a rebuild folds from the events.
	before := s.listed(t, b.path(""), b.tok, url.Values{"status": {"issued"}})
	if out, err := runCommand(t, s, "projections", "rebuild", "invoices"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if after := s.listed(t, b.path(""), b.tok, url.Values{"status": {"issued"}}); mustJSON(t, after) != mustJSON(t, before) {
		t.Errorf("after a rebuild the issued invoices read\n%v\nwant\n%v", after, before)
	}
}

// TestIfMatchOnIssueAndVoid: a stale tag is 412 precondition_failed and
// changes nothing; the current tag, or *, applies.
func TestIfMatchOnIssueAndVoid(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "if-match-lifecycle", minimalCompany)
	draft := b.create(t, "if-match-draft", b.invoiceBody(t, nil))
	id := draft["id"].(string)
	path := b.path("/" + id)
	stale := tagOf(draft)
	revised := s.mustWrite(t, path, b.tok, s.patch(t, path, b.tok, "if-match-revise", `{"notes":"v2"}`, ifMatch(stale)))
	mustFail(t, s.patch(t, path, b.tok, "if-match-revise-stale", `{"notes":"v3"}`, ifMatch(stale)), http.StatusPreconditionFailed, "precondition_failed")
	mustFail(t, s.action(t, path, "issue", b.tok, "if-match-issue-stale", "", ifMatch(stale)), http.StatusPreconditionFailed, "precondition_failed")
	mustFail(t, s.action(t, path, "issue", b.tok, "if-match-issue-other", "", ifMatch(`W/"`+id+`.7"`, `"`+id+`.2x"`)), http.StatusPreconditionFailed, "precondition_failed")
	if got := s.get(t, path, b.tok).object(t); mustJSON(t, got) != mustJSON(t, revised) {
		t.Fatalf("412s changed the invoice: %v", got)
	}
	// Weak comparison: the strong form of the current tag matches too, in a list.
	current := strings.TrimPrefix(tagOf(revised), "W/")
	issued := s.mustWrite(t, path, b.tok, s.action(t, path, "issue", b.tok, "if-match-issue", "", ifMatch(stale, current)))
	mustFail(t, s.action(t, path, "void", b.tok, "if-match-void-stale", `{"reason":"x"}`, ifMatch(tagOf(revised))), http.StatusPreconditionFailed, "precondition_failed")
	voided := s.mustWrite(t, path, b.tok, s.action(t, path, "void", b.tok, "if-match-void", `{"reason":"x"}`, ifMatch(tagOf(issued))))
	if voided["status"] != "void" || voided["version"] != 4.0 {
		t.Fatalf("voided: %v", voided)
	}
	other := b.path("/" + b.create(t, "if-match-draft-2", b.invoiceBody(t, nil))["id"].(string))
	s.mustWrite(t, other, b.tok, s.action(t, other, "issue", b.tok, "if-match-any", "", ifMatch("*")))
}

// TestARevisionThatChangesNothingAppendsNothing: 200 with the draft as it
// is, the same version, no event.
func TestARevisionThatChangesNothingAppendsNothing(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-noop", minimalCompany)
	draft := b.create(t, "revise-noop-draft", b.invoiceBody(t, nil))
	id := draft["id"].(string)
	var body map[string]any
	if err := json.Unmarshal([]byte(b.invoiceBody(t, nil)), &body); err != nil {
		t.Fatal(err)
	}
	for i, patch := range []string{`{}`, `{"issue_date":"2025-01-15"}`, `{"currency":"EUR","language":"en"}`,
		mustJSONAny(map[string]any{"lines": body["lines"], "customer_id": b.customerID})} {
		res := s.patch(t, b.path("/"+id), b.tok, fmt.Sprint("revise-noop-", i), patch, nil)
		if got := s.mustWrite(t, b.path("/"+id), b.tok, res); mustJSON(t, got) != mustJSON(t, draft) {
			t.Errorf("no-op revision %s answered\n%v\nwant the draft as it was\n%v", patch, got, draft)
		}
	}
	if n := s.eventCount(t, "InvoiceRevised", "invoice_id", id); n != 0 {
		t.Errorf("no-op revisions appended %d events", n)
	}
}

// TestDueDatesFollowTheTermsRecordedAtDrafting: a due date from the
// company's terms moves by the days it was computed with, whatever the
// company's terms became since; null restores it with the terms of now.
func TestDueDatesFollowTheTermsRecordedAtDrafting(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "recorded-terms", minimalCompany) // 30 days
	revised := b.create(t, "recorded-terms-1", b.invoiceBody(t, nil))["id"].(string)
	issued := b.create(t, "recorded-terms-2", b.invoiceBody(t, nil))["id"].(string)
	company := "/v1/companies/" + b.companyID
	s.mustWrite(t, company, b.tok, s.patch(t, company, b.tok, "recorded-terms-company", `{"default_payment_terms_days":10}`, nil))
	later := b.create(t, "recorded-terms-3", b.invoiceBody(t, nil))["id"].(string)

	dates := func(rec map[string]any) string { return fmt.Sprint(rec["issue_date"], " ", rec["due_date"]) }
	revise := func(id, key, patch string) map[string]any {
		t.Helper()
		return s.mustWrite(t, b.path("/"+id), b.tok, s.patch(t, b.path("/"+id), b.tok, key, patch, nil))
	}
	if got := dates(revise(revised, "recorded-terms-r1", `{"issue_date":"2025-02-01"}`)); got != "2025-02-01 2025-03-03" {
		t.Errorf("revised issue date: %s, want 2025-02-01 2025-03-03 (30 days, as drafted)", got)
	}
	if got := dates(revise(revised, "recorded-terms-r2", `{"due_date":null}`)); got != "2025-02-01 2025-02-11" {
		t.Errorf("due_date null: %s, want 2025-02-01 2025-02-11 (the company's 10 days of now)", got)
	}
	for _, tt := range []struct{ id, want string }{
		{revised, "2025-03-01 2025-03-11"}, {issued, "2025-03-01 2025-03-31"}, {later, "2025-03-01 2025-03-11"},
	} {
		res := s.action(t, b.path("/"+tt.id), "issue", b.tok, "recorded-terms-issue-"+tt.id, `{"issue_date":"2025-03-01"}`, nil)
		if got := dates(s.mustWrite(t, b.path("/"+tt.id), b.tok, res)); got != tt.want {
			t.Errorf("issued on 2025-03-01: %s, want %s", got, tt.want)
		}
	}
}
