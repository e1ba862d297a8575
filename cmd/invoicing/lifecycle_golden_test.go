package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// TestLifecycleBodiesAndEventsMatchTheirGoldenFiles pins a revised, an
// issued (on a later day) and a voided invoice as the API answers them, and the JSON of every event type
// (issue 23's too: a second invoice is credited, paid and its payment reversed)
// as the events table stores it (data and metadata, byte for byte but for
// the normalised ids, times and hashes). A change to an event's shape shows
// up in testdata/events.golden, where a reviewer sees it: stored events are
// never rewritten, so a shape change is a new schema version.
func TestLifecycleBodiesAndEventsMatchTheirGoldenFiles(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "golden", prefixedCompany)
	id := b.create(t, "draft-key-golden-1", b.invoiceBody(t, nil))["id"].(string)

	revised := s.patch(t, b.path("/"+id), b.tok, "revise-golden-revise", `{"notes":"Thank you","issue_date":"2025-01-20"}`, nil)
	s.mustWrite(t, b.path("/"+id), b.tok, revised)
	assertGolden(t, "invoice_revised", revised.body)
	issued := b.issueOn(t, id, "golden-issue", "2025-02-01")
	b.mustChange(t, issued)
	assertGolden(t, "invoice_issued", issued.body)
	voided := b.void(t, id, "golden-void", "Issued to the wrong customer")
	b.mustChange(t, voided)
	assertGolden(t, "invoice_voided", voided.body)

	// The company's and the customer's changes (issue 21).
	companyPath := "/v1/companies/" + b.companyID
	customerPath := companyPath + "/customers/" + b.customerID
	updated := s.patch(t, companyPath, b.tok, "golden-company-update",
		`{"trading_name":"Acme","address":{"line_2":"Hinterhaus"},"default_payment_terms_days":14}`, nil)
	s.mustWrite(t, companyPath, b.tok, updated)
	assertGolden(t, "company_updated", updated.body)
	s.mustWrite(t, customerPath, b.tok, s.patch(t, customerPath, b.tok, "golden-customer-update",
		`{"email":"billing@globex.example","identifiers":[{"scheme":"vat","value":"US1"}]}`, nil))
	for _, step := range []struct{ path, verb, key string }{
		{customerPath, "archive", "golden-customer-archive"},
		{customerPath, "unarchive", "golden-customer-unarchive"},
		{companyPath, "archive", "golden-company-archive"},
		{companyPath, "unarchive", "golden-company-unarchive"},
	} {
		s.mustWrite(t, step.path, b.tok, s.action(t, step.path, step.verb, b.tok, step.key, "", nil))
	}

	// Issue 23: a credit note (and its number), a payment and its reversal.
	settled := b.issued(t, "golden-settled", b.invoiceBody(t, nil))
	b.mustCreditNote(t, settled, "golden-credit-note", map[string]any{"reason": "Returned", "issue_date": "2025-02-10",
		"lines": []any{mline("Refund", "1", 1000, 1900, "")}})
	paid := b.mustPay(t, settled, "golden-payment", payment(5000))
	b.mustChange(t, b.reverse(t, settled, lastPaymentID(t, paid), "golden-reversal", `{"reason":"Bounced"}`))

	// A webhook endpoint's whole life (issue 24).
	_, endpoint := s.createWebhookEndpoint(t, b.tok, "golden-endpoint", `{"url":"`+publicURL+`","description":"ERP"}`)
	endpointPath := "/v1/webhook_endpoints/" + endpoint["id"].(string)
	s.mustWrite(t, endpointPath, b.tok, s.patch(t, endpointPath, b.tok, "golden-endpoint-update", `{"enabled":false}`, nil))
	mustStatus(t, s.action(t, endpointPath, "rotate_secret", b.tok, "golden-endpoint-rotate", "", nil), http.StatusOK)
	mustStatus(t, s.do(t, request{method: http.MethodDelete, path: endpointPath, token: b.tok, key: "golden-endpoint-delete"}), http.StatusNoContent)

	body, types := storedEvents(t, s, nil)
	assertGolden(t, "events", body)

	// Every type the service appends is in the golden file.
	slices.Sort(types)
	want := slices.Clone(events.Types)
	slices.Sort(want)
	if !slices.Equal(slices.Compact(types), want) {
		t.Errorf("the scenario stores the event types %q, want every one of %q", slices.Compact(types), want)
	}
}

// storedEvents returns the stored events of the given types (all when
// types is nil) in log order, as the events goldens hold them, and their
// types.
func storedEvents(t *testing.T, s *service, types []string) ([]byte, []string) {
	t.Helper()
	type storedEvent struct {
		Type     string          `json:"event_type"`
		Revision int64           `json:"stream_revision"`
		Data     json.RawMessage `json:"data"`
		Metadata json.RawMessage `json:"metadata"`
	}
	rows, err := s.pool.Query(context.Background(), `SELECT event_type, stream_revision, data::text, metadata::text FROM events
		WHERE $1::text[] IS NULL OR event_type = ANY($1) ORDER BY global_position`, types)
	if err != nil {
		t.Fatal(err)
	}
	var stored []storedEvent
	var got []string
	for rows.Next() {
		var e storedEvent
		var data, metadata string
		if err := rows.Scan(&e.Type, &e.Revision, &data, &metadata); err != nil {
			t.Fatal(err)
		}
		e.Data, e.Metadata = json.RawMessage(data), json.RawMessage(metadata)
		stored = append(stored, e)
		got = append(got, e.Type)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	return body, got
}
