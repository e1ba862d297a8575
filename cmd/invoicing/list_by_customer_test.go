package main

import (
	"net/http"
	"strings"
	"testing"
)

// wideText is n characters of four bytes each, from across CJK Extension B,
// in an order that PostgreSQL's compression cannot shorten: the longest
// bytes a field of n characters can hold.
func wideText(n, seed int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(rune(0x20000 + (i*7919+seed*104729)%0xA6D0))
	}
	return b.String()
}

// TestTheListByCustomerKeepsTheLongestAcceptedValues: invoices_by_customer
// holds the list's columns (projections/schema/invoices.sql), and a btree
// entry has at most 2,704 bytes. An invoice with the longest values the
// commands accept in the index's columns (a customer name of 200
// characters, a reference of 255, a number prefix of 20), all of four bytes
// where the rules allow it, and voided with the longest reason (500
// characters, the one summary column the index leaves out), is listed by
// its customer as it was sent. Were the reason in the index, the void
// would be accepted and its projection would fail.
func TestTheListByCustomerKeepsTheLongestAcceptedValues(t *testing.T) {
	s := newService(t)
	tok := token(t, "longest")
	company := s.createCompany(t, tok, "longest-company", strings.Replace(prefixedCompany,
		`"invoice_number_prefix":"INV-"`, `"invoice_number_prefix":"ABCDEFGHIJ/_.-KLMNOP"`, 1))
	name := wideText(200, 1)
	customer := s.createCustomer(t, tok, company["id"].(string), "longest-customer",
		strings.Replace(minimalCustomer, `"Globex Corp"`, mustJSON(t, name), 1))
	b := billing{s: s, tok: tok, companyID: company["id"].(string), customerID: customer["id"].(string)}

	reference, reason := wideText(255, 2), wideText(500, 3)
	voided := b.create(t, "longest-voided", b.invoiceBody(t, map[string]any{"external_reference": reference}))
	b.mustChange(t, b.issue(t, voided["id"].(string), "longest-issue"))
	b.mustChange(t, b.void(t, voided["id"].(string), "longest-void", reason))
	draft := b.create(t, "longest-draft", b.invoiceBody(t, map[string]any{"external_reference": reference}))

	res := s.get(t, b.path("?customer_id="+b.customerID), tok)
	mustStatus(t, res, http.StatusOK)
	items := res.object(t)["data"].([]any)
	if len(items) != 2 {
		t.Fatalf("the list by customer has %d invoices, want 2: %s", len(items), res.body)
	}
	want := []struct {
		id, status string
		number     any
		voidReason any
	}{
		{voided["id"].(string), "void", "ABCDEFGHIJ/_.-KLMNOP000001", reason},
		{draft["id"].(string), "draft", nil, nil},
	}
	for n, w := range want {
		got := items[n].(map[string]any)
		if got["id"] != w.id || got["status"] != w.status || got["number"] != w.number || got["void_reason"] != w.voidReason {
			t.Errorf("item %d: id %v, status %v, number %v, void_reason %.20v…; want %s, %s, %v, %.20v…",
				n, got["id"], got["status"], got["number"], got["void_reason"], w.id, w.status, w.number, w.voidReason)
		}
		if got["customer_name"] != name || got["external_reference"] != reference {
			t.Errorf("item %d: the customer name or the reference is not the one sent", n)
		}
	}
}
