package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// revise PATCHes a draft with a merge patch.
func (b billing) revise(t *testing.T, id, key, patch string) response {
	t.Helper()
	return b.s.do(t, request{method: http.MethodPatch, path: b.path("/" + id), token: b.tok, key: "revise-" + key,
		body: patch, contentType: "application/merge-patch+json"})
}

// mustRevise checks a revision's answer: 200, the ETag of its version, and
// a GET right after it serving the same invoice.
func (b billing) mustRevise(t *testing.T, res response) map[string]any {
	t.Helper()
	inv := b.mustChange(t, res)
	if want := fmt.Sprintf(`W/"%s.%v"`, inv["id"], inv["version"]); res.header.Get("ETag") != want {
		t.Fatalf("ETag %q, want %q", res.header.Get("ETag"), want)
	}
	return inv
}

func (s *service) eventsOfInvoice(t *testing.T, id string) []string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(),
		`SELECT event_type FROM events WHERE data->>'invoice_id' = $1 AND stream_name LIKE 'invoice-%' ORDER BY global_position`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var types []string
	for rows.Next() {
		var typ string
		if err := rows.Scan(&typ); err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	return types
}

func TestReviseADraft(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-http", prefixedCompany) // 30 days of terms
	other := s.createCustomer(t, b.tok, b.companyID, "revise-http-other", fullCustomer)
	draft := b.create(t, "draft-key-r-1", b.invoiceBody(t, map[string]any{"external_reference": "ref-1", "notes": "n"}))
	id := draft["id"].(string)

	// Lines replace the array and the amounts follow; notes removed; the
	// issue date moves and the due date from terms with it.
	first := b.mustRevise(t, b.revise(t, id, "1", `{"lines":[{"description":"Audit","quantity":"2","unit_amount_minor":5000,"tax_rate_bps":700}],"notes":null,"issue_date":"2025-03-01"}`))
	if first["version"] != 2.0 || first["subtotal_minor"] != 10000.0 || first["tax_minor"] != 700.0 || first["total_minor"] != 10700.0 ||
		first["issue_date"] != "2025-03-01" || first["due_date"] != "2025-03-31" || first["notes"] != nil || first["updated_at"] == draft["updated_at"] {
		t.Fatalf("revised draft: %v", first)
	}
	// A new customer takes its snapshot now; the issuer stays.
	second := b.mustRevise(t, b.revise(t, id, "2", `{"customer_id":"`+other["id"].(string)+`","external_reference":"ref-2"}`))
	if second["customer_id"] != other["id"] || second["customer_name"] != other["name"] || mustJSON(t, second["issuer"]) != mustJSON(t, draft["issuer"]) {
		t.Fatalf("after a new customer: %v", second)
	}
	if snap := second["customer"].(map[string]any); snap["id"] != other["id"] || snap["name"] != other["name"] || mustJSON(t, snap["address"]) != mustJSON(t, other["address"]) {
		t.Fatalf("customer snapshot %v, want the customer %v", snap, other)
	}
	// A client's due date stays when the issue date moves.
	third := b.mustRevise(t, b.revise(t, id, "3", `{"due_date":"2025-06-30"}`))
	fourth := b.mustRevise(t, b.revise(t, id, "4", `{"issue_date":"2025-04-01"}`))
	if third["due_date"] != "2025-06-30" || fourth["due_date"] != "2025-06-30" || fourth["issue_date"] != "2025-04-01" {
		t.Fatalf("a client's due date: %v then %v", third["due_date"], fourth["due_date"])
	}

	// A replay answers the first answer; the same key with another patch is refused.
	replay := b.revise(t, id, "1", `{"lines":[{"description":"Audit","quantity":"2","unit_amount_minor":5000,"tax_rate_bps":700}],"notes":null,"issue_date":"2025-03-01"}`)
	if replay.status != http.StatusOK || replay.header.Get("Idempotent-Replayed") != "true" || mustJSON(t, replay.object(t)) != mustJSON(t, first) {
		t.Fatalf("replay: %d %v %s", replay.status, replay.header, replay.body)
	}
	mustCode(t, b.revise(t, id, "1", `{"notes":"other"}`), http.StatusConflict, "idempotency_key_reused")

	// A patch that changes nothing appends nothing.
	same := b.mustRevise(t, b.revise(t, id, "5", `{"issue_date":"2025-04-01","external_reference":"ref-2"}`))
	if mustJSON(t, same) != mustJSON(t, fourth) {
		t.Fatalf("a patch that changes nothing answered %v, want %v", same, fourth)
	}
	if got := s.eventsOfInvoice(t, id); !slices.Equal(got, []string{"InvoiceDrafted", "InvoiceRevised", "InvoiceRevised", "InvoiceRevised", "InvoiceRevised"}) {
		t.Fatalf("events %v", got)
	}

	// Lists and filters follow the current values.
	for _, tt := range []struct {
		filter url.Values
		listed bool
	}{
		{url.Values{"external_reference": {"ref-2"}}, true},
		{url.Values{"external_reference": {"ref-1"}}, false},
		{url.Values{"customer_id": {other["id"].(string)}}, true},
		{url.Values{"customer_id": {b.customerID}}, false},
	} {
		res := s.get(t, b.path("?"+tt.filter.Encode()), b.tok)
		mustStatus(t, res, http.StatusOK)
		items, _ := res.object(t)["data"].([]any)
		if listed := len(items) == 1 && items[0].(map[string]any)["id"] == id; listed != tt.listed || len(items) > 1 {
			t.Errorf("list %v: %d items, want the invoice listed %v", tt.filter, len(items), tt.listed)
		}
	}

	// The revised draft is issued as revised, and a rebuild and an audit
	// agree with the events.
	issued := b.mustChange(t, b.issue(t, id, "r-issue"))
	for _, f := range []string{"customer", "issuer", "lines", "total_minor", "issue_date", "due_date", "external_reference"} {
		if mustJSON(t, issued[f]) != mustJSON(t, fourth[f]) {
			t.Errorf("issued %s = %v, the revised draft's %v", f, issued[f], fourth[f])
		}
	}
	mustCode(t, b.revise(t, id, "6", `{"notes":"late"}`), http.StatusConflict, "invalid_state")
	before := s.get(t, b.path(""), b.tok)
	if out, err := runCommand(t, s, "projections", "rebuild", "invoices"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if after := s.get(t, b.path(""), b.tok); compactJSON(t, after.body) != compactJSON(t, before.body) {
		t.Fatalf("after a rebuild the list reads\n%s\nwant\n%s", after.body, before.body)
	}
	if got := s.get(t, b.path("/"+id), b.tok); mustJSON(t, got.object(t)) != mustJSON(t, issued) {
		t.Fatalf("after a rebuild the invoice reads %s, want %v", got.body, issued)
	}
	if out, err := runCommand(t, s, "audit", "verify"); err != nil {
		t.Fatalf("audit verify after revisions: %v\n%s", err, out)
	}
}

func TestARevisionIsValidatedAtItsPaths(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-checks", prefixedCompany)
	sibling := newBilling(t, s, "revise-checks-sibling", minimalCompany)
	id := b.create(t, "draft-key-rc-1", b.invoiceBody(t, nil))["id"].(string)
	for i, tt := range []struct {
		name, patch string
		status      int
		code, path  string
	}{
		{"a read-only field", `{"total_minor":1}`, 422, "validation_failed", "total_minor"},
		{"an unknown field", `{"discount":1}`, 422, "validation_failed", "discount"},
		{"null for a required field", `{"lines":null}`, 422, "validation_failed", "lines"},
		{"an issue date after the client's due date", `{"issue_date":"2025-03-01","due_date":"2025-02-01"}`, 422, "validation_failed", "due_date"},
		{"a NUL in a line", `{"lines":[{"description":"a\u0000b","quantity":"1","unit_amount_minor":1,"tax_rate_bps":0}]}`, 422, "validation_failed", "lines[0].description"},
		{"another company's customer", `{"customer_id":"` + sibling.customerID + `"}`, 422, "validation_failed", "customer_id"},
		{"a due date from terms past 9999-12-31", `{"issue_date":"9999-12-15"}`, 422, "validation_failed", "due_date"},
		{"not an object", `[]`, 400, "malformed_request", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := b.revise(t, id, fmt.Sprint("rc-", i), tt.patch)
			mustCode(t, res, tt.status, tt.code)
			if tt.path != "" && !slices.Equal(detailPaths(t, res), []string{tt.path}) {
				t.Fatalf("details %q, want [%q]", detailPaths(t, res), tt.path)
			}
		})
	}
	unsupported := s.do(t, request{method: http.MethodPatch, path: b.path("/" + id), token: b.tok, key: "revise-rc-text",
		body: `{"notes":"x"}`, contentType: "text/plain"})
	mustCode(t, unsupported, http.StatusUnsupportedMediaType, "unsupported_media_type")
	if got := s.get(t, b.path("/"+id), b.tok).object(t); got["version"] != 1.0 {
		t.Fatalf("refused revisions changed the draft: %v", got)
	}
}

// TestARevisionRacingAnIssueLandsFirstOrIsRefused sends a revision and an
// issue of the same draft at once, many times: either the issued invoice
// shows the revision, or the revision got 409 and the invoice is issued
// as drafted.
func TestARevisionRacingAnIssueLandsFirstOrIsRefused(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-race-http", prefixedCompany)
	landed := 0
	const n = 24
	for i := range n {
		id := b.create(t, fmt.Sprint("draft-key-rr-", i), b.invoiceBody(t, nil))["id"].(string)
		var revised, issued response
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); revised = b.revise(t, id, fmt.Sprint("rr-", i), `{"notes":"revised"}`) }()
		go func() { defer wg.Done(); issued = b.issue(t, id, fmt.Sprint("rr-issue-", i)) }()
		wg.Wait()
		mustStatus(t, issued, http.StatusOK)
		final := s.get(t, b.path("/"+id), b.tok).object(t)
		switch revised.status {
		case http.StatusOK:
			landed++
			if final["notes"] != "revised" || final["version"] != 3.0 || issued.object(t)["notes"] != "revised" {
				t.Fatalf("race %d: the revision answered 200, the issued invoice reads %v", i, final)
			}
		case http.StatusConflict:
			mustCode(t, revised, http.StatusConflict, "invalid_state")
			if final["notes"] != nil || final["version"] != 2.0 {
				t.Fatalf("race %d: the revision answered 409, the invoice reads %v", i, final)
			}
		default:
			t.Fatalf("race %d: the revision answered %d %s", i, revised.status, revised.body)
		}
		if final["status"] != "issued" || final["number"] != fmt.Sprintf("INV-%06d", i+1) {
			t.Fatalf("race %d: %v", i, final)
		}
	}
	t.Logf("%d of %d revisions landed before the issue", landed, n)
}

// TestConcurrentRevisionsLoseNoUpdate: revisions of one draft sent at once
// without If-Match, each of another field, through two instances: every
// one lands (each decided again on the draft another left), none is lost.
func TestConcurrentRevisionsLoseNoUpdate(t *testing.T) {
	s := newService(t)
	s2 := newService(t, func(c *config) { c.DatabaseURL = s.dbURL })
	b := newBilling(t, s, "revise-concurrent", prefixedCompany)
	other := s.createCustomer(t, b.tok, b.companyID, "revise-concurrent-other", fullCustomer)["id"].(string)
	id := b.create(t, "draft-key-rcc-1", b.invoiceBody(t, nil))["id"].(string)
	want := map[string]any{"notes": "N", "terms": "T", "external_reference": "ref-c", "purchase_order_reference": "PO-c",
		"currency": "USD", "language": "fr", "due_date": "2025-12-31", "customer_id": other}
	var wg sync.WaitGroup
	i := 0
	for field, value := range want {
		via := b
		if i%2 == 1 {
			via.s = s2
		}
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			if res := via.revise(t, id, key, mustJSON(t, map[string]any{field: value})); res.status != http.StatusOK {
				t.Errorf("revision of %s: %d %s", field, res.status, res.body)
			}
		}(fmt.Sprint("rcc-", i))
		i++
	}
	wg.Wait()
	got := s.get(t, b.path("/"+id), b.tok).object(t)
	for field, value := range want {
		if got[field] != value {
			t.Errorf("%s = %v, want %v (a lost update)", field, got[field], value)
		}
	}
	if got["version"] != float64(len(want)+1) {
		t.Errorf("version %v, want %d", got["version"], len(want)+1)
	}
}

// TestRevisionsKeepSnapshotsFrozen: a draft made before its company and
// customer were updated keeps both snapshots through a revision that
// leaves customer_id alone; moving it to another customer (and back) takes
// that customer as it is now; the issuer never changes. An archived
// customer can keep its draft but not be given one.
func TestRevisionsKeepSnapshotsFrozen(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "revise-frozen", prefixedCompany)
	other := s.createCustomer(t, b.tok, b.companyID, "revise-frozen-other", fullCustomer)["id"].(string)
	draft := b.create(t, "draft-key-rf-1", b.invoiceBody(t, nil))
	id := draft["id"].(string)
	customerPath := "/v1/companies/" + b.companyID + "/customers/"
	patch := func(path, key, body string) {
		t.Helper()
		mustStatus(t, s.do(t, request{method: http.MethodPatch, path: path, token: b.tok, key: key, body: body,
			contentType: "application/merge-patch+json"}), http.StatusOK)
	}
	patch(customerPath+b.customerID, "rf-customer-1", `{"name":"Globex Renamed"}`)
	patch("/v1/companies/"+b.companyID, "rf-company-1", `{"legal_name":"Acme Renamed GmbH"}`)

	kept := b.mustRevise(t, b.revise(t, id, "rf-1", `{"notes":"still Globex Corp"}`))
	for _, f := range []string{"customer", "customer_name", "issuer"} {
		if mustJSON(t, kept[f]) != mustJSON(t, draft[f]) {
			t.Errorf("%s after a revision = %v, want the drafted %v", f, kept[f], draft[f])
		}
	}
	b.mustRevise(t, b.revise(t, id, "rf-2", `{"customer_id":"`+other+`"}`))
	back := b.mustRevise(t, b.revise(t, id, "rf-3", `{"customer_id":"`+b.customerID+`"}`))
	if back["customer_name"] != "Globex Renamed" || back["customer"].(map[string]any)["name"] != "Globex Renamed" ||
		mustJSON(t, back["issuer"]) != mustJSON(t, draft["issuer"]) {
		t.Errorf("back to the renamed customer: customer %v, issuer %v", back["customer"], back["issuer"])
	}

	mustStatus(t, s.post(t, customerPath+other+"/archive", b.tok, "rf-archive-1", `{}`), http.StatusOK)
	refused := b.revise(t, id, "rf-4", `{"customer_id":"`+other+`"}`)
	mustCode(t, refused, http.StatusConflict, "invalid_state")
	if got := detailPaths(t, refused); !slices.Equal(got, []string{"customer_id"}) {
		t.Errorf("details %q, want [customer_id]", got)
	}
	mustStatus(t, s.post(t, customerPath+b.customerID+"/archive", b.tok, "rf-archive-2", `{}`), http.StatusOK)
	b.mustRevise(t, b.revise(t, id, "rf-5", `{"notes":"an archived customer keeps its draft"}`))
	if issued := b.mustChange(t, b.issue(t, id, "rf-issue")); issued["customer_name"] != "Globex Renamed" {
		t.Errorf("issued to %v", issued["customer_name"])
	}
}
