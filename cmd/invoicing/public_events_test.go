package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Issue 24's public event feed: GET /v1/events and /v1/events/{event_id}.

// wantEvent is a public event a write should have produced: its type, the
// resource it is about, and the resource's GET right after the write.
type wantEvent struct {
	typ, companyID, resourceID string
	data                       []byte
}

// feedScenario writes through the API so that every public type happens
// once at least, and returns the events expected, in order.
type feedScenario struct {
	s    *service
	tok  string
	want []wantEvent
}

// write checks a write's status, then records the event it makes: typ on
// the resource at path, as a GET of path shows it now.
func (f *feedScenario) write(t *testing.T, res response, status int, typ, companyID, path string) map[string]any {
	t.Helper()
	mustStatus(t, res, status)
	got := f.s.get(t, path, f.tok)
	mustStatus(t, got, http.StatusOK)
	rec := got.object(t)
	f.want = append(f.want, wantEvent{typ: typ, companyID: companyID, resourceID: rec["id"].(string), data: got.body})
	return rec
}

// runFeedScenario makes one event of every public type in the account org.
func runFeedScenario(t *testing.T, s *service, org string) *feedScenario {
	t.Helper()
	f := &feedScenario{s: s, tok: token(t, org)}
	tok := f.tok
	key := func(step string) string { return "feed-" + org + "-" + step }

	company := s.mustCreate(t, "/v1/companies", tok, key("company"), prefixedCompany).object(t)
	co := company["id"].(string)
	coPath := "/v1/companies/" + co
	f.write(t, response{status: http.StatusCreated}, http.StatusCreated, "company.created", co, coPath)
	f.write(t, s.patch(t, coPath, tok, key("company-patch"), `{"legal_name":"Acme SE"}`, nil), http.StatusOK, "company.updated", co, coPath)

	customer := s.createCustomer(t, tok, co, key("customer"), minimalCustomer)
	cu := customer["id"].(string)
	cuPath := coPath + "/customers/" + cu
	f.write(t, response{status: http.StatusCreated}, http.StatusCreated, "customer.created", co, cuPath)
	f.write(t, s.patch(t, cuPath, tok, key("customer-patch"), `{"email":"ap@globex.example"}`, nil), http.StatusOK, "customer.updated", co, cuPath)
	f.write(t, s.action(t, cuPath, "archive", tok, key("customer-archive"), "", nil), http.StatusOK, "customer.archived", co, cuPath)
	f.write(t, s.action(t, cuPath, "unarchive", tok, key("customer-unarchive"), "", nil), http.StatusOK, "customer.unarchived", co, cuPath)

	b := billing{s: s, tok: tok, companyID: co, customerID: cu}
	inv := b.create(t, key("invoice"), b.invoiceBody(t, nil))["id"].(string)
	invPath := b.path("/" + inv)
	f.write(t, response{status: http.StatusCreated}, http.StatusCreated, "invoice.drafted", co, invPath)
	f.write(t, s.patch(t, invPath, tok, key("invoice-patch"), `{"notes":"Thank you"}`, nil), http.StatusOK, "invoice.revised", co, invPath)
	f.write(t, b.issue(t, inv, key("issue")), http.StatusOK, "invoice.issued", co, invPath)
	paid := f.write(t, s.post(t, invPath+"/payments", tok, key("pay"), `{"amount_minor":1000,"paid_on":"2025-02-01"}`),
		http.StatusCreated, "invoice.payment_recorded", co, invPath)
	payment := paid["payments"].([]any)[0].(map[string]any)["id"].(string)
	f.write(t, s.post(t, invPath+"/payments/"+payment+"/reverse", tok, key("reverse"), `{"reason":"bounced"}`),
		http.StatusOK, "invoice.payment_reversed", co, invPath)
	cn := s.post(t, invPath+"/credit_notes", tok, key("credit"), `{"reason":"returned goods"}`)
	mustStatus(t, cn, http.StatusCreated)
	f.write(t, cn, http.StatusCreated, "credit_note.issued", co, coPath+"/credit_notes/"+cn.object(t)["id"].(string))

	voided := b.create(t, key("invoice-2"), b.invoiceBody(t, nil))["id"].(string)
	f.write(t, response{status: http.StatusCreated}, http.StatusCreated, "invoice.drafted", co, b.path("/"+voided))
	b.issue(t, voided, key("issue-2"))
	f.want = append(f.want, wantEventOf(t, s, tok, "invoice.issued", co, b.path("/"+voided)))
	f.write(t, b.void(t, voided, key("void-2"), "duplicate"), http.StatusOK, "invoice.voided", co, b.path("/"+voided))

	f.write(t, s.action(t, coPath, "archive", tok, key("company-archive"), "", nil), http.StatusOK, "company.archived", co, coPath)
	f.write(t, s.action(t, coPath, "unarchive", tok, key("company-unarchive"), "", nil), http.StatusOK, "company.unarchived", co, coPath)
	return f
}

// wantEventOf is the event of a write already checked: typ on the resource
// at path as GET shows it now.
func wantEventOf(t *testing.T, s *service, tok, typ, companyID, path string) wantEvent {
	t.Helper()
	got := s.get(t, path, tok)
	mustStatus(t, got, http.StatusOK)
	return wantEvent{typ: typ, companyID: companyID, resourceID: got.object(t)["id"].(string), data: got.body}
}

// feed returns every public event of the list at query (limit 100 pages).
func (s *service) feed(t *testing.T, tok string, q url.Values) []map[string]any {
	t.Helper()
	return s.listed(t, "/v1/events", tok, q)
}

func TestTheFeedListsEveryPublicEventWithTheResourceAsItsGetShowedIt(t *testing.T) {
	s := newService(t)
	f := runFeedScenario(t, s, "feed")
	got := s.feed(t, f.tok, nil)
	if len(got) != len(f.want) {
		var types []string
		for _, ev := range got {
			types = append(types, ev["type"].(string))
		}
		t.Fatalf("%d events %v, want %d", len(got), types, len(f.want))
	}
	seen := map[string]bool{}
	for i, w := range f.want {
		ev := got[i]
		seen[w.typ] = true
		if ev["type"] != w.typ || ev["company_id"] != w.companyID || ev["resource_id"] != w.resourceID || ev["api_version"] != "2026-11-26" {
			t.Errorf("event %d: %v %v %v %v; want %s of %s in %s", i, ev["type"], ev["api_version"], ev["company_id"], ev["resource_id"],
				w.typ, w.resourceID, w.companyID)
		}
		data, err := json.Marshal(ev["data"])
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(data, w.data) {
			t.Errorf("event %d (%s): data\n%s\nwant the GET right after the write\n%s", i, w.typ, data, w.data)
		}
		one := s.get(t, "/v1/events/"+ev["id"].(string), f.tok)
		mustStatus(t, one, http.StatusOK)
		if listed := mustJSON(t, ev); !sameJSON(one.body, []byte(listed)) {
			t.Errorf("GET /v1/events/%s differs from its list item:\n%s\n%s", ev["id"], one.body, listed)
		}
	}
	if len(seen) != 15 {
		t.Errorf("the scenario made %d public types, want all 15: %v", len(seen), seen)
	}
}

func TestTheFeedsFiltersTenancyAndRefusals(t *testing.T) {
	s := newService(t)
	f := runFeedScenario(t, s, "feedfilters")
	all := s.feed(t, f.tok, nil)
	companyID := f.want[0].companyID
	var invoiceID, creditNoteID string
	for _, w := range f.want {
		switch {
		case w.typ == "invoice.payment_recorded":
			invoiceID = w.resourceID
		case w.typ == "credit_note.issued":
			creditNoteID = w.resourceID
		}
	}
	filtered := func(pred func(map[string]any) bool) []string {
		var ids []string
		for _, ev := range all {
			if pred(ev) {
				ids = append(ids, ev["id"].(string))
			}
		}
		return ids
	}
	ids := func(evs []map[string]any) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev["id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		name string
		q    url.Values
		want []string
	}{
		{"by type", url.Values{"type": {"invoice.issued"}}, filtered(func(ev map[string]any) bool { return ev["type"] == "invoice.issued" })},
		{"by company", url.Values{"company_id": {companyID}}, ids(all)},
		{"by an unknown company", url.Values{"company_id": {"00000000-0000-4000-8000-000000000000"}}, nil},
		{"by invoice", url.Values{"resource_id": {invoiceID}}, filtered(func(ev map[string]any) bool { return ev["resource_id"] == invoiceID })},
		{"by credit note", url.Values{"resource_id": {creditNoteID}}, filtered(func(ev map[string]any) bool { return ev["type"] == "credit_note.issued" })},
		{"by type and resource", url.Values{"type": {"invoice.revised"}, "resource_id": {invoiceID}},
			filtered(func(ev map[string]any) bool { return ev["type"] == "invoice.revised" })},
		{"by every filter", url.Values{"type": {"company.updated"}, "resource_id": {companyID}, "company_id": {companyID}},
			filtered(func(ev map[string]any) bool { return ev["type"] == "company.updated" })},
	} {
		if got := ids(s.feed(t, f.tok, c.q)); strings.Join(got, ",") != strings.Join(c.want, ",") || (c.want != nil && len(got) == 0) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if len(filtered(func(ev map[string]any) bool { return ev["resource_id"] == invoiceID })) != 5 {
		t.Errorf("the invoice has %d events, want 5 (drafted, revised, issued, paid, reversed)", len(filtered(func(ev map[string]any) bool { return ev["resource_id"] == invoiceID })))
	}

	for _, c := range []struct{ query, path string }{
		{"type=InvoiceIssued", "type"},
		{"type=invoice.number_assigned", "type"},
		{"company_id=acme", "company_id"},
		{"resource_id=1", "resource_id"},
		{"since=0", "since"},
		{"limit=101", "limit"},
		{"after=bad!", "after"},
	} {
		mustFail(t, s.get(t, "/v1/events?"+c.query, f.tok), http.StatusUnprocessableEntity, "validation_failed", c.path)
	}
	mustFail(t, s.get(t, "/v1/events/not-a-uuid", f.tok), http.StatusUnprocessableEntity, "validation_failed", "event_id")
	// A cursor of one filter set is refused by another.
	page := s.get(t, "/v1/events?limit=1", f.tok).object(t)
	next := page["pagination"].(map[string]any)["next_cursor"].(string)
	mustFail(t, s.get(t, "/v1/events?limit=1&type=company.created&after="+next, f.tok), http.StatusUnprocessableEntity, "validation_failed")

	other := token(t, "someone-else")
	if got := s.feed(t, other, nil); len(got) != 0 {
		t.Errorf("another account sees %d events", len(got))
	}
	if got := s.feed(t, other, url.Values{"company_id": {companyID}}); len(got) != 0 {
		t.Errorf("another account sees %d events of the company", len(got))
	}
	mustFail(t, s.get(t, "/v1/events/"+all[0]["id"].(string), other), http.StatusNotFound, "not_found")
	mustStatus(t, s.get(t, "/v1/events/"+all[0]["id"].(string), token(t, "feedfilters", "invoicing:read")), http.StatusOK)
}

// Paging through the feed, limit 3, while another client keeps writing:
// the pages hold every event once, in order. Every page that holds events
// has a next_cursor, the last one too; at the end of the feed (an empty
// page) the walker keeps its cursor and asks again, as a client tailing
// the feed does, and is never given an event twice.
func TestPagingTheFeedWhileEventsAreAppendedNeverRepeatsOrSkipsOne(t *testing.T) {
	const updates = 40
	s := newService(t)
	b := newBilling(t, s, "feedpaging", prefixedCompany)
	coPath := "/v1/companies/" + b.companyID

	done := make(chan error, 1)
	go func() {
		for n := range updates {
			if err := s.rawPatch(coPath, b.tok, fmt.Sprintf("feed-paging-%d", n), fmt.Sprintf(`{"legal_name":"Acme %d"}`, n)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var walked []string
	after, writing, pages := "", true, 0
	for {
		q := url.Values{"limit": {"3"}}
		if after != "" {
			q.Set("after", after)
		}
		res := s.get(t, "/v1/events?"+q.Encode(), b.tok)
		mustStatus(t, res, http.StatusOK)
		pages++
		page := res.object(t)
		data := page["data"].([]any)
		for _, item := range data {
			walked = append(walked, item.(map[string]any)["id"].(string))
		}
		next := page["pagination"].(map[string]any)["next_cursor"]
		if (next != nil) != (len(data) > 0) {
			t.Fatalf("a page of %d events with next_cursor %v", len(data), next)
		}
		if next != nil {
			after = next.(string)
			continue
		}
		if !writing {
			break // the end, read after the last write
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			writing = false
		case <-time.After(time.Millisecond):
		}
	}
	full := s.walk(t, "/v1/events", b.tok, 100, nil)
	if len(full) != 2+updates {
		t.Errorf("%d events after %d updates, want %d", len(full), updates, 2+updates)
	}
	if strings.Join(walked, ",") != strings.Join(full, ",") {
		t.Fatalf("walked %d events, listed %d after:\nwalked %v\nfull   %v", len(walked), len(full), walked, full)
	}
	t.Logf("walked %d events in %d pages while %d updates were written", len(walked), pages, updates)
}

// rawPatch merge-patches path outside the test's goroutine: an error
// instead of a failed test.
func (s *service) rawPatch(path, tok, key, body string) error {
	req, err := http.NewRequest(http.MethodPatch, s.url+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", mergePatchType)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("PATCH %s: %d", path, res.StatusCode)
	}
	return nil
}

func TestGoldenPublicEvent(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "feedgolden", prefixedCompany)
	inv := b.create(t, "golden-event-invoice", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, inv, "golden-event-issue"))
	evs := s.feed(t, b.tok, url.Values{"type": {"invoice.issued"}})
	if len(evs) != 1 {
		t.Fatalf("%d invoice.issued events, want 1", len(evs))
	}
	res := s.get(t, "/v1/events/"+evs[0]["id"].(string), b.tok)
	mustStatus(t, res, http.StatusOK)
	assertGolden(t, "public_event_invoice_issued", res.body)
}
