package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Issue 23, acceptance: every new write replays its first answer, and
// every new text and date field refuses bad input with 422 at its path.

// TestSettlementWritesReplayTheirFirstAnswer: a credit note, a payment, a
// reversal, and a company's create and patch naming
// credit_note_number_prefix, each sent again with its key after later
// writes changed what it answered, answer their first status and body,
// byte for byte; the same key with another body is 409
// idempotency_key_reused and writes nothing.
func TestSettlementWritesReplayTheirFirstAnswer(t *testing.T) {
	s := newService(t)
	tok := token(t, "settle-replays")
	companyBody := companyWith(t, "credit_note_number_prefix", "GS-")
	company := s.post(t, "/v1/companies", tok, "settle-replays-company", companyBody)
	mustStatus(t, company, http.StatusCreated)
	if got := company.object(t)["credit_note_number_prefix"]; got != "GS-" {
		t.Fatalf("credit_note_number_prefix = %v, want GS-", got)
	}
	companyPath := "/v1/companies/" + company.object(t)["id"].(string)
	customerID := s.createCustomer(t, tok, company.object(t)["id"].(string), "settle-replays-customer", minimalCustomer)["id"].(string)
	b := billing{s: s, tok: tok, companyID: company.object(t)["id"].(string), customerID: customerID}
	patchBody := `{"credit_note_number_prefix":"GS2-"}`
	patched := s.patch(t, companyPath, tok, "settle-replays-patch", patchBody, nil)
	s.mustWrite(t, companyPath, tok, patched)

	id := b.issued(t, "settle-replays-invoice", b.invoiceBody(t, nil))
	cnBody := mustJSON(t, map[string]any{"reason": "Damaged", "external_reference": "rma-1", "lines": []any{mline("Refund", "1", 1000, 1900, "")}})
	cnPath := b.path("/" + id + "/credit_notes")
	cn := s.post(t, cnPath, tok, "settle-replays-cn", cnBody)
	mustStatus(t, cn, http.StatusCreated)
	if got := cn.object(t)["number"]; got != "GS2-000001" {
		t.Errorf("the credit note is numbered %v, want GS2-000001 (the prefix of now)", got)
	}
	payBody := mustJSON(t, map[string]any{"amount_minor": 5000, "paid_on": "2025-01-20", "method": "card", "reference": "ch_1"})
	paid := s.post(t, b.path("/"+id+"/payments"), tok, "settle-replays-pay", payBody)
	mustStatus(t, paid, http.StatusCreated)
	reversePath := b.path("/" + id + "/payments/" + lastPaymentID(t, paid.object(t)) + "/reverse")
	reversed := s.post(t, reversePath, tok, "settle-replays-reverse", `{"reason":"Chargeback"}`)
	mustStatus(t, reversed, http.StatusOK)
	barePath := b.path("/" + id + "/payments/" + lastPaymentID(t, b.mustPay(t, id, "settle-replays-pay-2", payment(100))) + "/reverse")
	reversedBare := s.do(t, request{method: http.MethodPost, path: barePath, token: tok, key: "settle-replays-reverse-bare"})
	mustStatus(t, reversedBare, http.StatusOK)
	// Later writes: another credit note, another payment, a new prefix.
	b.mustCreditNote(t, id, "settle-replays-cn-2", map[string]any{"reason": "More", "lines": []any{mline("Refund", "1", 500, 1900, "")}})
	b.mustPay(t, id, "settle-replays-pay-3", payment(200))
	s.mustWrite(t, companyPath, tok, s.patch(t, companyPath, tok, "settle-replays-patch-2", `{"credit_note_number_prefix":"GS3-"}`, nil))

	for _, r := range []struct {
		name  string
		req   request
		first response
		other string // another body under the same key
	}{
		{"the company's create", request{method: http.MethodPost, path: "/v1/companies", token: tok, key: "settle-replays-company", body: companyBody}, company,
			companyWith(t, "credit_note_number_prefix", "GX-")},
		{"the company's patch", request{method: http.MethodPatch, path: companyPath, token: tok, key: "settle-replays-patch", body: patchBody, contentType: mergePatchType}, patched,
			`{"credit_note_number_prefix":"GY-"}`},
		{"the credit note", request{method: http.MethodPost, path: cnPath, token: tok, key: "settle-replays-cn", body: cnBody}, cn,
			strings.Replace(cnBody, "Damaged", "Broken", 1)},
		{"the payment", request{method: http.MethodPost, path: b.path("/" + id + "/payments"), token: tok, key: "settle-replays-pay", body: payBody}, paid,
			strings.Replace(payBody, "5000", "5001", 1)},
		{"the reversal", request{method: http.MethodPost, path: reversePath, token: tok, key: "settle-replays-reverse", body: `{"reason":"Chargeback"}`}, reversed,
			`{"reason":"Other"}`},
		{"the reversal without a body", request{method: http.MethodPost, path: barePath, token: tok, key: "settle-replays-reverse-bare"}, reversedBare,
			`{"reason":"Now with one"}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			s.mustReplay(t, r.req, r.first)
			before := eventCount(t, s)
			other := r.req
			other.body = r.other
			mustFail(t, s.do(t, other), http.StatusConflict, "idempotency_key_reused")
			if after := eventCount(t, s); after != before {
				t.Errorf("the refused reuse appended %d events", after-before)
			}
		})
	}
}

// settlementCase is one request of the totality table: the body sent and
// the path of its one 422 detail ("" when accepted).
type settlementCase struct {
	name, body, path string
}

// nulCases puts a NUL in the middle of each string path of body: each is
// 422 at that path.
func nulCases(t *testing.T, body string, paths ...string) []settlementCase {
	t.Helper()
	var out []settlementCase
	for _, p := range paths {
		withNUL := func(old string) string { return old[:len(old)/2] + "\x00" + old[len(old)/2:] }
		out = append(out, settlementCase{"a NUL in " + p, withValueAt(t, body, p, withNUL), p})
	}
	return out
}

// edited is body with the top-level field set to value (nil removes it).
func edited(t *testing.T, body, field string, value any) string {
	t.Helper()
	m := map[string]any{}
	if err := jsonUnmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if value == nil {
		delete(m, field)
	} else {
		m[field] = value
	}
	return mustJSON(t, m)
}

// TestSettlementFieldsRefuseBadInputAtTheirPath: every text and date field
// of a credit note (reason, external_reference, issue_date and its
// lines'), a payment (amount_minor, paid_on, method, reference), a
// reversal (reason) and a company (credit_note_number_prefix) refuses bad
// input with 422 at its path and nothing else; what is accepted is served
// back as sent.
func TestSettlementFieldsRefuseBadInputAtTheirPath(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "settle-totality", prefixedCompany)
	id := b.issued(t, "settle-totality-invoice", b.invoiceBody(t, map[string]any{"issue_date": "2025-01-15"}))
	paymentID := lastPaymentID(t, b.mustPay(t, id, "settle-totality-pay", payment(1)))

	cnBody := mustJSON(t, map[string]any{"reason": "Returned goods", "external_reference": "rma-7", "issue_date": "2025-01-20",
		"lines": []any{map[string]any{"description": "Refund", "quantity": "1", "unit": "pc", "unit_amount_minor": 1, "tax_rate_bps": 1900}}})
	long := func(n int) string { return strings.Repeat("x", n) }
	creditNotes := slices.Concat(nulCases(t, cnBody, "reason", "external_reference", "issue_date", "lines[0].description", "lines[0].quantity", "lines[0].unit"),
		[]settlementCase{
			{"reason missing", edited(t, cnBody, "reason", nil), "reason"},
			{"reason empty", edited(t, cnBody, "reason", ""), "reason"},
			{"reason of 501", edited(t, cnBody, "reason", long(501)), "reason"},
			{"reason a number", edited(t, cnBody, "reason", 7), "reason"},
			{"reason of 500 on lines, in any script", edited(t, cnBody, "reason", "Rückgabe\nzweite Zeile 😀 "+long(500-25)), ""},
			{"external_reference empty", edited(t, cnBody, "external_reference", ""), "external_reference"},
			{"external_reference of 256", edited(t, cnBody, "external_reference", long(256)), "external_reference"},
			{"external_reference of 255", edited(t, cnBody, "external_reference", long(255)), ""},
			{"issue_date not a date", edited(t, cnBody, "issue_date", "2025-02-30"), "issue_date"},
			{"issue_date of year 0", edited(t, cnBody, "issue_date", "0000-01-01"), "issue_date"},
			{"issue_date without padding", edited(t, cnBody, "issue_date", "2025-1-20"), "issue_date"},
			{"issue_date a timestamp", edited(t, cnBody, "issue_date", "2025-01-20T00:00:00Z"), "issue_date"},
			{"issue_date before the invoice's", edited(t, cnBody, "issue_date", "2025-01-14"), "issue_date"},
			{"issue_date on the invoice's", edited(t, cnBody, "issue_date", "2025-01-15"), ""},
			{"no lines", edited(t, cnBody, "lines", []any{}), "lines"},
			{"an unknown field", edited(t, cnBody, "total_minor", 1), "total_minor"},
		})
	payBody := mustJSON(t, map[string]any{"amount_minor": 1, "paid_on": "2025-01-20", "method": "bank_transfer", "reference": "SEPA-1"})
	payments := slices.Concat(nulCases(t, payBody, "paid_on", "method", "reference"),
		[]settlementCase{
			{"amount_minor missing", edited(t, payBody, "amount_minor", nil), "amount_minor"},
			{"amount_minor 0", edited(t, payBody, "amount_minor", 0), "amount_minor"},
			{"amount_minor negative", edited(t, payBody, "amount_minor", -1), "amount_minor"},
			{"amount_minor over the bound", edited(t, payBody, "amount_minor", int64(9007199254740992)), "amount_minor"},
			{"amount_minor fractional", edited(t, payBody, "amount_minor", 1.5), "amount_minor"},
			{"amount_minor a string", edited(t, payBody, "amount_minor", "1"), "amount_minor"},
			{"paid_on missing", edited(t, payBody, "paid_on", nil), "paid_on"},
			{"paid_on empty", edited(t, payBody, "paid_on", ""), "paid_on"},
			{"paid_on not a date", edited(t, payBody, "paid_on", "2025-02-29"), "paid_on"},
			{"paid_on of year 0", edited(t, payBody, "paid_on", "0000-01-01"), "paid_on"},
			{"paid_on in the future", edited(t, payBody, "paid_on", "9999-12-31"), "paid_on"},
			{"paid_on a leap day", edited(t, payBody, "paid_on", "2024-02-29"), ""},
			{"method empty", edited(t, payBody, "method", ""), "method"},
			{"method of 65", edited(t, payBody, "method", long(65)), "method"},
			{"method of 64", edited(t, payBody, "method", long(64)), ""},
			{"reference empty", edited(t, payBody, "reference", ""), "reference"},
			{"reference of 256", edited(t, payBody, "reference", long(256)), "reference"},
			{"reference of 255, any script", edited(t, payBody, "reference", "Überweisung 東京 "+long(255-15)), ""},
			{"an unknown field", edited(t, payBody, "currency", "EUR"), "currency"},
		})
	reversals := slices.Concat(nulCases(t, `{"reason":"Recorded twice"}`, "reason"),
		[]settlementCase{
			{"reason of 501", `{"reason":"` + long(501) + `"}`, "reason"},
			{"reason a number", `{"reason":1}`, "reason"},
			{"an unknown field", `{"amount_minor":1}`, "amount_minor"},
		})
	run := func(kind, path string, cases []settlementCase, accepted int, check func(t *testing.T, c settlementCase, res response)) {
		for i, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				res := s.post(t, path, b.tok, fmt.Sprintf("settle-totality-%s-%02d", kind, i), c.body)
				if c.path != "" {
					mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", c.path)
					return
				}
				mustStatus(t, res, accepted)
				check(t, c, res)
			})
		}
	}
	run("credit-note", b.path("/"+id+"/credit_notes"), creditNotes, http.StatusCreated, func(t *testing.T, c settlementCase, res response) {
		got := s.get(t, res.header.Get("Location"), b.tok)
		if compactJSON(t, got.body) != compactJSON(t, res.body) {
			t.Fatalf("GET after the 201 differs:\n%s\n%s", res.body, got.body)
		}
		sent, served := map[string]any{}, got.object(t)
		jsonUnmarshal(c.body, &sent)
		for _, f := range []string{"reason", "external_reference", "issue_date"} {
			if served[f] != sent[f] {
				t.Errorf("%s = %q, sent %q", f, served[f], sent[f])
			}
		}
	})
	run("payment", b.path("/"+id+"/payments"), payments, http.StatusCreated, func(t *testing.T, c settlementCase, res response) {
		sent := map[string]any{}
		jsonUnmarshal(c.body, &sent)
		ps := s.get(t, b.path("/"+id), b.tok).object(t)["payments"].([]any)
		last := ps[len(ps)-1].(map[string]any)
		for _, f := range []string{"paid_on", "method", "reference"} {
			if last[f] != sent[f] {
				t.Errorf("%s = %q, sent %q", f, last[f], sent[f])
			}
		}
	})
	run("reversal", b.path("/"+id+"/payments/"+paymentID+"/reverse"), reversals, http.StatusOK, nil)
	if got := settlement(s.get(t, b.path("/"+id), b.tok).object(t)); got.paid != 4 {
		t.Errorf("the refused payments changed the invoice: %+v (want the 4 accepted ones of 1)", got)
	}
	res := b.reverse(t, id, paymentID, "settle-totality-reverse-ok", `{"reason":"Zweimal\nerfasst"}`)
	if p := find(paymentList(t, b.mustChange(t, res)), paymentID); p == nil || p["reversal_reason"] != "Zweimal\nerfasst" {
		t.Errorf("the reversal's reason is served as %v", p)
	}
}

// paymentList is the invoice's payments.
func paymentList(t *testing.T, inv map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	ps, _ := inv["payments"].([]any)
	for _, p := range ps {
		out = append(out, p.(map[string]any))
	}
	return out
}

// TestCreditNoteNumberPrefixRules: credit_note_number_prefix is refused
// at its path when it is not a prefix or when it equals the company's
// invoice_number_prefix (given or default), on create and on patch.
func TestCreditNoteNumberPrefixRules(t *testing.T) {
	s := newService(t)
	tok := token(t, "settle-prefix")
	base := companyWith(t, "invoice_number_prefix", "INV-")
	creates := slices.Concat(nulCases(t, edited(t, base, "credit_note_number_prefix", "CN-"), "credit_note_number_prefix"),
		[]settlementCase{
			{"of 21", edited(t, base, "credit_note_number_prefix", strings.Repeat("C", 21)), "credit_note_number_prefix"},
			{"with a space", edited(t, base, "credit_note_number_prefix", "CN 1"), "credit_note_number_prefix"},
			{"with a letter outside ASCII", edited(t, base, "credit_note_number_prefix", "GÜ-"), "credit_note_number_prefix"},
			{"a number", edited(t, base, "credit_note_number_prefix", 1), "credit_note_number_prefix"},
			{"equal to invoice_number_prefix", edited(t, base, "credit_note_number_prefix", "INV-"), "credit_note_number_prefix"},
			{"both empty", edited(t, edited(t, base, "invoice_number_prefix", nil), "credit_note_number_prefix", ""), "credit_note_number_prefix"},
			{"omitted while invoice_number_prefix is the default CN-", companyWith(t, "invoice_number_prefix", "CN-"), "credit_note_number_prefix"},
			{"of 20", edited(t, base, "credit_note_number_prefix", "GS/2026_"+strings.Repeat("9", 12)), ""},
			{"empty", edited(t, base, "credit_note_number_prefix", ""), ""},
		})
	var accepted string
	for i, c := range creates {
		t.Run("create/"+c.name, func(t *testing.T) {
			res := s.post(t, "/v1/companies", tok, fmt.Sprint("settle-prefix-", i), c.body)
			if c.path != "" {
				mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", c.path)
				return
			}
			mustStatus(t, res, http.StatusCreated)
			sent := map[string]any{}
			jsonUnmarshal(c.body, &sent)
			if got := res.object(t)["credit_note_number_prefix"]; got != sent["credit_note_number_prefix"] {
				t.Errorf("credit_note_number_prefix = %v, sent %v", got, sent["credit_note_number_prefix"])
			}
			accepted = res.object(t)["id"].(string)
		})
	}
	if accepted == "" {
		t.Fatal("no company was accepted")
	}
	if got := s.createCompany(t, tok, "settle-prefix-default", base)["credit_note_number_prefix"]; got != "CN-" {
		t.Errorf("a company naming no credit_note_number_prefix has %v, want CN-", got)
	}
	path := "/v1/companies/" + s.createCompany(t, tok, "settle-prefix-patched", base)["id"].(string)
	for i, c := range []settlementCase{
		{"the credit-note prefix equal to the invoice prefix", `{"credit_note_number_prefix":"INV-"}`, "credit_note_number_prefix"},
		{"the invoice prefix equal to the default credit-note prefix", `{"invoice_number_prefix":"CN-"}`, "credit_note_number_prefix"},
		{"a credit-note prefix of 21", `{"credit_note_number_prefix":"` + strings.Repeat("C", 21) + `"}`, "credit_note_number_prefix"},
		{"both swapped at once", `{"credit_note_number_prefix":"INV-","invoice_number_prefix":"CN-"}`, ""},
	} {
		t.Run("patch/"+c.name, func(t *testing.T) {
			res := s.patch(t, path, tok, fmt.Sprint("settle-prefix-patch-", i), c.body, nil)
			if c.path != "" {
				mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed")
				if got := detailPaths(t, res); len(got) != 1 || (got[0] != c.path && got[0] != "invoice_number_prefix") {
					t.Errorf("details %q, want one at credit_note_number_prefix or invoice_number_prefix", got)
				}
				return
			}
			got := s.mustWrite(t, path, tok, res)
			if got["credit_note_number_prefix"] != "INV-" || got["invoice_number_prefix"] != "CN-" {
				t.Errorf("prefixes after the swap: %v %v", got["invoice_number_prefix"], got["credit_note_number_prefix"])
			}
		})
	}
}
