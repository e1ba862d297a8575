package main

import (
	"net/http"
	"slices"
	"testing"
)

// TestSettlementBodiesAndEventsMatchTheirGoldenFiles pins, as the API
// answers them, a credit note (its 201, and its list item), an invoice
// partly paid, paid in full and with a payment reversed, and the JSON of
// issue 23's events as the events table stores them (ids, times and hashes
// normalised as assertGolden does; every date is given, so nothing else
// varies between runs).
func TestSettlementBodiesAndEventsMatchTheirGoldenFiles(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "golden-settlement", withFields(prefixedCompany, `"credit_note_number_prefix":"GS-"`))
	id := b.create(t, "golden-settlement-draft", b.invoiceBody(t, map[string]any{"lines": twoGroupLines(), "external_reference": "erp-9"}))["id"].(string)
	b.mustChange(t, b.issueOn(t, id, "golden-settlement-issue", "2025-02-01"))

	cn := b.postCreditNote(t, id, "golden-settlement-cn", map[string]any{"reason": "Two books returned\ndamaged", "external_reference": "rma-1",
		"issue_date": "2025-02-10", "lines": []any{map[string]any{"description": "Books", "quantity": "2", "unit": "pc", "unit_amount_minor": 1500, "tax_rate_bps": 700}}})
	mustStatus(t, cn, http.StatusCreated)
	assertGolden(t, "credit_note_issued", cn.body)
	list := s.get(t, b.cnPath(""), b.tok)
	mustStatus(t, list, http.StatusOK)
	assertGolden(t, "credit_note_list", list.body)

	partly := b.pay(t, id, "golden-settlement-pay-1", map[string]any{"amount_minor": 10000, "paid_on": "2025-02-15", "method": "bank_transfer", "reference": "SEPA-4711"})
	mustStatus(t, partly, http.StatusCreated)
	assertGolden(t, "invoice_partly_paid", partly.body)
	due := settlement(partly.object(t)).due
	paid := b.pay(t, id, "golden-settlement-pay-2", map[string]any{"amount_minor": due, "paid_on": "2025-02-20"})
	mustStatus(t, paid, http.StatusCreated)
	assertGolden(t, "invoice_paid", paid.body)
	reversed := b.reverse(t, id, lastPaymentID(t, paid.object(t)), "golden-settlement-reverse", `{"reason":"Bounced"}`)
	b.mustChange(t, reversed)
	assertGolden(t, "invoice_payment_reversed", reversed.body)
	summary := s.get(t, b.path("?payment_status=partially_paid"), b.tok)
	mustStatus(t, summary, http.StatusOK)
	assertGolden(t, "invoice_list_partially_paid", summary.body)

	settlementTypes := []string{"CreditNoteIssued", "CreditNoteNumberAssigned", "PaymentRecorded", "PaymentReversed"}
	body, types := storedEvents(t, s, settlementTypes)
	assertGolden(t, "settlement_events", body)
	slices.Sort(types)
	if got := slices.Compact(types); !slices.Equal(got, settlementTypes) {
		t.Errorf("the scenario stores %q, want each of %q", got, settlementTypes)
	}
}
