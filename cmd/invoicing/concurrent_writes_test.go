package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// Issue 21, item 2: concurrent writers never lose an update; If-Match
// makes a write conditional.

// concurrentCompanyPatches are 16 patches of one company (made from
// fullCompany), each changing other fields: the 15 paths of a company's
// create request once each, legal_name twice (the two values of
// legal_name overwrite each other by design: a company has 15 paths, not
// 16). Each value differs from fullCompany's.
var concurrentCompanyPatches = []struct {
	patch string
	path  string
	value any // absent for a removal
}{
	{`{"legal_name":"Acme One"}`, "legal_name", "Acme One"},
	{`{"trading_name":"Acme Two"}`, "trading_name", "Acme Two"},
	{`{"default_currency":"CHF"}`, "default_currency", "CHF"},
	{`{"default_language":"fr"}`, "default_language", "fr"},
	{`{"default_payment_terms_days":45}`, "default_payment_terms_days", 45.0},
	{`{"email":"new@acme.example"}`, "email", "new@acme.example"},
	{`{"external_reference":"erp-new"}`, "external_reference", "erp-new"},
	{`{"identifiers":[{"scheme":"vat","value":"NEW"}]}`, "identifiers", []any{map[string]any{"scheme": "vat", "value": "NEW"}}},
	{`{"invoice_number_prefix":"NEW-"}`, "invoice_number_prefix", "NEW-"},
	{`{"address":{"line_1":"Ring 1"}}`, "address.line_1", "Ring 1"},
	{`{"address":{"line_2":null}}`, "address.line_2", absent},
	{`{"address":{"city":"Köln"}}`, "address.city", "Köln"},
	{`{"address":{"postal_code":"50667"}}`, "address.postal_code", "50667"},
	{`{"address":{"region":"NW"}}`, "address.region", "NW"},
	{`{"address":{"country_code":"AT"}}`, "address.country_code", "AT"},
	{`{"legal_name":"Acme Sixteen"}`, "legal_name", "Acme Sixteen"},
}

// TestSixteenConcurrentPatchesLoseNoUpdate: sent at once, half through each
// of two instances, without If-Match: sixteen 200s, sixteen events in the
// company's stream, version 17, every change there.
func TestSixteenConcurrentPatchesLoseNoUpdate(t *testing.T) {
	a := newService(t)
	b := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	tok := token(t, "concurrent")
	companyID := a.createCompany(t, tok, "concurrent-company", fullCompany)["id"].(string)
	path := "/v1/companies/" + companyID
	statuses := sendAtOnce(t, len(concurrentCompanyPatches), func(i int) response {
		via := [2]*service{a, b}[i%2]
		return via.patch(t, path, tok, fmt.Sprint("concurrent-patch-", i), concurrentCompanyPatches[i].patch, nil)
	})
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("patch %d (%s) answered %d", i, concurrentCompanyPatches[i].patch, st)
		}
	}
	final := a.get(t, path, tok).object(t)
	if final["version"] != 17.0 {
		t.Errorf("version = %v, want 17", final["version"])
	}
	if n := a.eventCount(t, "CompanyUpdated", "company_id", companyID); n != 16 {
		t.Errorf("%d CompanyUpdated events, want 16", n)
	}
	if streams, n := a.streamsOf(t, "Company", "company_id", companyID); streams != 1 || n != 17 {
		t.Errorf("the company's events: %d in %d streams; want 17 in one", n, streams)
	}
	for _, p := range concurrentCompanyPatches {
		got, ok := at(final, p.path)
		switch {
		case p.path == "legal_name":
			if got != "Acme One" && got != "Acme Sixteen" {
				t.Errorf("legal_name = %v, want either patch's", got)
			}
		case p.value == absent:
			if ok {
				t.Errorf("%s = %v, want it removed (lost update)", p.path, got)
			}
		case mustJSON(t, got) != mustJSON(t, p.value):
			t.Errorf("%s = %v, want %v (lost update)", p.path, got, p.value)
		}
	}
	// Both legal_name patches were applied, one after the other.
	var names int
	err := a.pool.QueryRow(context.Background(), `SELECT count(DISTINCT data->>'legal_name') FROM events
		WHERE event_type = 'CompanyUpdated' AND data->>'company_id' = $1 AND data->>'legal_name' IN ('Acme One', 'Acme Sixteen')`, companyID).Scan(&names)
	if err != nil {
		t.Fatal(err)
	}
	if names != 2 {
		t.Errorf("%d of the two legal_name patches are in the events, want both", names)
	}

	// With one shared If-Match: exactly one 200, fifteen 412.
	tag := tagOf(final)
	statuses = sendAtOnce(t, 16, func(i int) response {
		via := [2]*service{a, b}[i%2]
		return via.patch(t, path, tok, fmt.Sprint("conditional-patch-", i), fmt.Sprintf(`{"trading_name":"Conditional %d"}`, i), ifMatch(tag))
	})
	count := map[int]int{}
	for _, st := range statuses {
		count[st]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusPreconditionFailed] != 15 {
		t.Errorf("16 patches with one If-Match answered %v; want one 200 and fifteen 412", count)
	}
	if got := a.get(t, path, tok).object(t); got["version"] != 18.0 {
		t.Errorf("version after the conditional patches = %v, want 18", got["version"])
	}
	if out, err := runCommand(t, a, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}

// TestALongStreamKeepsEveryGuaranteeFromItsFold: once a company's stream
// is long (longLifecycleStream events), each instance decides on the fold
// it keeps and reads only the events after it (command's fold cache).
// Sixteen patches at once through two instances still all land; a replay
// of any earlier key, old or new, through either instance answers that
// request's first answer and appends nothing; a key reused with another
// body is refused.
func TestALongStreamKeepsEveryGuaranteeFromItsFold(t *testing.T) {
	const longLifecycleStream = 48 // past command's minFoldedEvents (32)
	a := newService(t)
	b := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	tok := token(t, "long-stream")
	companyID := a.createCompany(t, tok, "long-stream-company", fullCompany)["id"].(string)
	path := "/v1/companies/" + companyID
	first := map[string]response{}
	for i := range longLifecycleStream {
		key := fmt.Sprint("long-patch-", i)
		first[key] = [2]*service{a, b}[i%2].patch(t, path, tok, key, fmt.Sprintf(`{"trading_name":"Long %d"}`, i), nil)
		mustStatus(t, first[key], http.StatusOK)
	}
	statuses := sendAtOnce(t, len(concurrentCompanyPatches), func(i int) response {
		return [2]*service{a, b}[i%2].patch(t, path, tok, fmt.Sprint("long-concurrent-", i), concurrentCompanyPatches[i].patch, nil)
	})
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("patch %d (%s) answered %d", i, concurrentCompanyPatches[i].patch, st)
		}
	}
	want := 1 + longLifecycleStream + len(concurrentCompanyPatches)
	final := a.get(t, path, tok).object(t)
	if final["version"] != float64(want) {
		t.Errorf("version = %v, want %d", final["version"], want)
	}
	for _, p := range concurrentCompanyPatches[1 : len(concurrentCompanyPatches)-1] { // the two legal_name patches overwrite each other
		if got, ok := at(final, p.path); (p.value == absent) == ok || (ok && mustJSON(t, got) != mustJSON(t, p.value)) {
			t.Errorf("%s = %v, want %v (lost update)", p.path, got, p.value)
		}
	}
	for _, key := range []string{"long-patch-2", "long-patch-40", fmt.Sprint("long-patch-", longLifecycleStream-1)} {
		for _, via := range []*service{a, b} {
			again := via.patch(t, path, tok, key, fmt.Sprintf(`{"trading_name":"Long %s"}`, key[len("long-patch-"):]), nil)
			if again.status != http.StatusOK || string(again.body) != string(first[key].body) {
				t.Errorf("replay of %s: %d %s; want the first answer %s", key, again.status, again.body, first[key].body)
			}
		}
	}
	mustFail(t, b.patch(t, path, tok, "long-patch-7", `{"trading_name":"Another"}`, nil), http.StatusConflict, "idempotency_key_reused")
	if streams, n := a.streamsOf(t, "Company", "company_id", companyID); streams != 1 || n != want {
		t.Errorf("the company's events: %d in %d streams; want %d in one (a replay appended)", n, streams, want)
	}
}

// TestIfMatchOnRecords: a stale tag on a patch, an archive or a restore of
// a company or customer is 412 precondition_failed and changes nothing.
func TestIfMatchOnRecords(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "if-match-company", minimalCompany)["id"].(string)
	customerID := s.createCustomer(t, tok, companyID, "if-match-customer", minimalCustomer)["id"].(string)
	for name, path := range map[string]string{
		"company":  "/v1/companies/" + companyID,
		"customer": "/v1/companies/" + companyID + "/customers/" + customerID,
	} {
		t.Run(name, func(t *testing.T) {
			v1 := s.get(t, path, tok).object(t)
			stale := tagOf(v1)
			v2 := s.mustWrite(t, path, tok, s.patch(t, path, tok, "if-match-1-"+name, `{"email":"a@example.com"}`, ifMatch(stale)))
			mustFail(t, s.patch(t, path, tok, "if-match-2-"+name, `{"email":"b@example.com"}`, ifMatch(stale)), http.StatusPreconditionFailed, "precondition_failed")
			mustFail(t, s.action(t, path, "archive", tok, "if-match-3-"+name, "", ifMatch(stale)), http.StatusPreconditionFailed, "precondition_failed")
			if got := s.get(t, path, tok).object(t); mustJSON(t, got) != mustJSON(t, v2) {
				t.Fatalf("412s changed the record: %v", got)
			}
			v3 := s.mustWrite(t, path, tok, s.action(t, path, "archive", tok, "if-match-4-"+name, "", ifMatch(tagOf(v2))))
			mustFail(t, s.action(t, path, "unarchive", tok, "if-match-5-"+name, "", ifMatch(tagOf(v2))), http.StatusPreconditionFailed, "precondition_failed")
			s.mustWrite(t, path, tok, s.action(t, path, "unarchive", tok, "if-match-6-"+name, "", ifMatch("*")))
			mustFail(t, s.patch(t, path, tok, "if-match-7-"+name, `{"email":"c@example.com"}`, ifMatch(tagOf(v3))), http.StatusPreconditionFailed, "precondition_failed")
		})
	}
}

// TestConcurrentRevisionsLoseNoUpdate: revisions of one draft sent at
// once, half through each of two instances, without If-Match, each of
// another field: every one lands (each decided again on the draft another
// left), none is lost.
func TestConcurrentRevisionsLoseNoUpdate(t *testing.T) {
	a := newService(t)
	b := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	bill := newBilling(t, a, "revise-concurrent", prefixedCompany)
	other := a.createCustomer(t, bill.tok, bill.companyID, "revise-concurrent-other", fullCustomer)["id"].(string)
	path := bill.path("/" + bill.create(t, "revise-concurrent-draft", bill.invoiceBody(t, nil))["id"].(string))
	revisions := []struct {
		field string
		value any
	}{
		{"notes", "N"}, {"terms", "T"}, {"external_reference", "ref-c"}, {"purchase_order_reference", "PO-c"},
		{"currency", "USD"}, {"language", "fr"}, {"due_date", "2025-12-31"}, {"customer_id", other},
	}
	statuses := sendAtOnce(t, len(revisions), func(i int) response {
		via := [2]*service{a, b}[i%2]
		r := revisions[i]
		return via.patch(t, path, bill.tok, fmt.Sprint("revise-concurrent-", i), mustJSON(t, map[string]any{r.field: r.value}), nil)
	})
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("revision of %s answered %d", revisions[i].field, st)
		}
	}
	got := a.get(t, path, bill.tok).object(t)
	for _, r := range revisions {
		if got[r.field] != r.value {
			t.Errorf("%s = %v, want %v (a lost update)", r.field, got[r.field], r.value)
		}
	}
	if got["version"] != float64(len(revisions)+1) {
		t.Errorf("version %v, want %d", got["version"], len(revisions)+1)
	}
}

// sendAtOnce runs n requests at the same moment and returns their statuses.
func sendAtOnce(t *testing.T, n int, send func(i int) response) []int {
	t.Helper()
	statuses := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = send(i).status
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

// TestAChangeIsReadableAtOnceThroughEitherInstance: every write answers
// once the read models show it, through the instance that answered and
// through the other (which may not lead the projections).
func TestAChangeIsReadableAtOnceThroughEitherInstance(t *testing.T) {
	a := newService(t)
	b := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	bill := newBilling(t, a, "ryw-changes", minimalCompany)
	instances := [2]*service{a, b}
	customer := "/v1/companies/" + bill.companyID + "/customers/" + bill.customerID
	company := "/v1/companies/" + bill.companyID
	draft := bill.path("/" + bill.create(t, "ryw-changes-draft", bill.invoiceBody(t, nil))["id"].(string))
	writes := []struct{ method, path, suffix, body string }{
		{http.MethodPatch, customer, "", `{"name":"Globex 1"}`},
		{http.MethodPatch, company, "", `{"legal_name":"Acme 1"}`},
		{http.MethodPatch, draft, "", `{"notes":"one"}`},
		{http.MethodPost, customer, "/archive", ""},
		{http.MethodPost, customer, "/unarchive", ""},
		{http.MethodPatch, customer, "", `{"name":"Globex 2"}`},
		{http.MethodPost, company, "/archive", ""},
		{http.MethodPatch, draft, "", `{"notes":"two"}`},
		{http.MethodPost, company, "/unarchive", ""},
		{http.MethodPatch, company, "", `{"legal_name":"Acme 2"}`},
		{http.MethodPost, draft, "/issue", ""},
		{http.MethodPost, draft, "/void", `{"reason":"done"}`},
	}
	for i, w := range writes {
		via, other := instances[i%2], instances[(i+1)%2]
		req := request{method: w.method, path: w.path + w.suffix, token: bill.tok, key: fmt.Sprint("ryw-changes-", i), body: w.body}
		if w.method == http.MethodPatch {
			req.contentType = mergePatchType
		}
		res := via.do(t, req)
		mustStatus(t, res, http.StatusOK)
		for _, s := range []*service{other, via} {
			if got := s.get(t, w.path, bill.tok); got.status != http.StatusOK || compactJSON(t, got.body) != compactJSON(t, res.body) {
				t.Errorf("write %d (%s %s): GET right after it: %d %s\nwant %s", i, w.method, req.path, got.status, got.body, res.body)
			}
		}
	}
}
