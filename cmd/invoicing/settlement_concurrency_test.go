package main

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// Issue 23, acceptance: credit notes under concurrency. Their numbers are
// gapless through two instances; the credit notes of one invoice never
// take more than it has, in sum nor per VAT category and rate.

// TestSixtyFourConcurrentCreditNotesThroughTwoInstancesNumberGaplessly: 64
// issued invoices of one company, each credited at once, half through each
// of two service instances on one database: 64 201s, the numbers
// CN-000001..CN-000064 once each, each credit note readable at once
// through both instances.
func TestSixtyFourConcurrentCreditNotesThroughTwoInstancesNumberGaplessly(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "cn-gapless", prefixedCompany)
	const n = 64
	invoices := make([]string, n)
	for i := range invoices {
		invoices[i] = b.issued(t, fmt.Sprint("cn-gapless-invoice-", i), b.invoiceBody(t, nil))
	}
	numbers := make([]string, n)
	sendAtOnce(t, n, func(i int) response {
		via := b.alternate(other, i)
		res := via.postCreditNote(t, invoices[i], fmt.Sprint("cn-gapless-", i), map[string]any{"reason": "Cancelled order"})
		if res.status != http.StatusCreated {
			t.Errorf("credit note of invoice %d: %d %s", i, res.status, res.body)
			return res
		}
		cn := res.object(t)
		numbers[i], _ = cn["number"].(string)
		for _, s := range []*service{a, other} {
			got := s.get(t, res.header.Get("Location"), b.tok)
			if got.status != http.StatusOK || compactJSON(t, got.body) != compactJSON(t, res.body) {
				t.Errorf("credit note %d: GET %s right after its 201: %d %s\nwant %s", i, res.header.Get("Location"), got.status, got.body, res.body)
			}
		}
		if cn["invoice_id"] != invoices[i] || cn["total_minor"] != 17850.0 {
			t.Errorf("credit note %d: invoice_id %v total %v, want %s 17850", i, cn["invoice_id"], cn["total_minor"], invoices[i])
		}
		return res
	})
	slices.Sort(numbers)
	for i, got := range numbers {
		if want := fmt.Sprintf("CN-%06d", i+1); got != want {
			t.Fatalf("sorted numbers[%d] = %q, want %q (all: %v)", i, got, want, numbers)
		}
	}
	if got := a.walk(t, b.cnPath(""), b.tok, 50, nil); len(got) != n {
		t.Errorf("the company lists %d credit notes, want %d", len(got), n)
	}
	if n := a.eventCount(t, "CreditNoteIssued", "company_id", b.companyID); n != 64 {
		t.Errorf("%d CreditNoteIssued events, want 64", n)
	}
	// The invoices' numbering went on apart: the next invoice is INV-000065.
	next := b.issued(t, "cn-gapless-next", b.invoiceBody(t, nil))
	if got := a.get(t, b.path("/"+next), b.tok).object(t)["number"]; got != "INV-000065" {
		t.Errorf("the invoice after 64 credit notes is numbered %v, want INV-000065", got)
	}
}

// partialCredit is one of the sixteen concurrent credit notes of
// TestSixteenConcurrentPartialCreditNotesNeverExceedTheInvoice: amounts
// net in the 19% group and in the 7% group (0 = no line).
type partialCredit struct{ at19, at7 int64 }

func (p partialCredit) body(i int) map[string]any {
	var lines []any
	if p.at19 > 0 {
		lines = append(lines, mline("Refund 19", "1", p.at19, 1900, ""))
	}
	if p.at7 > 0 {
		lines = append(lines, mline("Refund 7", "1", p.at7, 700, ""))
	}
	return map[string]any{"reason": fmt.Sprint("Partial refund ", i), "lines": lines}
}

var leftPattern = regexp.MustCompile(`only (\d+) net and (\d+) tax are left`)

// TestSixteenConcurrentPartialCreditNotesNeverExceedTheInvoice: sixteen
// partial credit notes of one invoice with two VAT groups, sent at once
// through two instances, would together credit far more than it has. The
// accepted ones credit at most its total, and per category and rate at
// most its net and its tax; every other is 409 invalid_state naming what
// is left, and could indeed not fit in what is left at the end (no credit
// note was refused that would have fitted). The invoice's
// amount_credited_minor is the sum of the accepted ones, and its credit
// notes are exactly those.
func TestSixteenConcurrentPartialCreditNotesNeverExceedTheInvoice(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "cn-overcredit", prefixedCompany)
	id := b.issued(t, "cn-overcredit-invoice", b.invoiceBody(t, map[string]any{"lines": twoGroupLines()}))
	invoice := a.get(t, b.path("/"+id), b.tok).object(t)
	if invoice["total_minor"] != 22600.0 {
		t.Fatalf("the invoice's total is %v, want 22600", invoice["total_minor"])
	}
	credits := make([]partialCredit, 16)
	for i := range credits {
		credits[i] = []partialCredit{{3000, 0}, {0, 3000}, {1500, 1500}, {2500, 500}}[i%4]
	}
	results := make([]response, len(credits))
	sendAtOnce(t, len(credits), func(i int) response {
		via := b.alternate(other, i)
		results[i] = via.postCreditNote(t, id, fmt.Sprint("cn-overcredit-", i), credits[i].body(i))
		return results[i]
	})

	type group struct{ net, tax, netLeft, taxLeft float64 }
	groups := map[float64]*group{1900: {netLeft: 10000, taxLeft: 1900}, 700: {netLeft: 10000, taxLeft: 700}}
	var accepted []string
	var creditedTotal float64
	for i, res := range results {
		if res.status != http.StatusCreated {
			continue
		}
		cn := res.object(t)
		accepted = append(accepted, cn["id"].(string))
		creditedTotal += cn["total_minor"].(float64)
		for _, l := range cn["lines"].([]any) {
			line := l.(map[string]any)
			g := groups[line["tax_rate_bps"].(float64)]
			if g == nil {
				t.Fatalf("credit note %d has a line at %v", i, line["tax_rate_bps"])
			}
			g.net += line["net_amount_minor"].(float64)
			g.tax += line["tax_amount_minor"].(float64)
		}
	}
	t.Logf("%d of %d credit notes accepted, crediting %v", len(accepted), len(credits), creditedTotal)
	if len(accepted) == 0 || len(accepted) == len(credits) {
		t.Fatalf("%d of %d credit notes accepted; want some accepted and some refused", len(accepted), len(credits))
	}
	if creditedTotal > 22600 {
		t.Errorf("the accepted credit notes credit %v, more than the invoice's total 22600", creditedTotal)
	}
	for rate, g := range groups {
		if g.net > g.netLeft || g.tax > g.taxLeft {
			t.Errorf("at %v bps the accepted credit notes credit %v net and %v tax, more than the invoice's %v and %v", rate, g.net, g.tax, g.netLeft, g.taxLeft)
		}
		g.netLeft, g.taxLeft = g.netLeft-g.net, g.taxLeft-g.tax
	}
	for i, res := range results {
		if res.status == http.StatusCreated {
			continue
		}
		checkOvercreditRefusal(t, i, res, credits[i], groups[1900].netLeft, groups[700].netLeft)
	}

	inv := a.get(t, b.path("/"+id), b.tok).object(t)
	if got := settlement(inv); got.credited != creditedTotal || got.due != 22600-creditedTotal || got.paid != 0 || got.refundable != 0 {
		t.Errorf("the invoice's settlement %+v; want credited %v, due %v", got, creditedTotal, 22600-creditedTotal)
	}
	listed := a.walk(t, b.cnPath(""), b.tok, 100, url.Values{"invoice_id": {id}})
	slices.Sort(listed)
	slices.Sort(accepted)
	if !slices.Equal(listed, accepted) {
		t.Errorf("the invoice's credit notes are %v, want the accepted ones %v", listed, accepted)
	}
}

// checkOvercreditRefusal checks the refusal of credit: 409 invalid_state
// at lines, naming what was left (at least what is left at the end), and
// credit does not fit what is left at the end either.
func checkOvercreditRefusal(t *testing.T, i int, res response, credit partialCredit, left19, left7 float64) {
	t.Helper()
	if res.status != http.StatusConflict || errorCode(t, res) != "invalid_state" {
		t.Errorf("credit note %d: %d %s; want 201 or 409 invalid_state", i, res.status, res.body)
		return
	}
	for _, p := range detailPaths(t, res) {
		if p != "lines" && !regexp.MustCompile(`^lines\[\d+\]$`).MatchString(p) {
			t.Errorf("credit note %d refused at %q, want lines or lines[i]: %s", i, p, res.body)
		}
	}
	msgs := errorMessages(t, res)
	m := leftPattern.FindAllStringSubmatch(msgs, -1)
	if len(m) == 0 {
		t.Errorf("credit note %d: the refusal does not name what is left: %s", i, res.body)
	}
	for _, g := range m {
		if net, _ := strconv.ParseFloat(g[1], 64); net < min(left19, left7) {
			t.Errorf("credit note %d: refused naming %v net left, less than is left at the end: %s", i, net, msgs)
		}
	}
	if credit.at19 <= int64(left19) && credit.at7 <= int64(left7) {
		t.Errorf("credit note %d (%d at 19%%, %d at 7%%) was refused, yet fits what is left at the end (%v, %v)", i, credit.at19, credit.at7, left19, left7)
	}
}

// TestConcurrentPaymentsNeverOverpay: sixteen payments of 2000 of one
// invoice of 17850, sent at once through two instances: at most eight fit,
// the others are 409 invalid_state at amount_minor, and the invoice's
// amount_paid_minor is the sum of the accepted ones, its payments exactly
// those.
func TestConcurrentPaymentsNeverOverpay(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "pay-concurrent", prefixedCompany)
	id := b.issued(t, "pay-concurrent-invoice", b.invoiceBody(t, nil))
	results := make([]response, 16)
	sendAtOnce(t, len(results), func(i int) response {
		via := b.alternate(other, i)
		results[i] = via.pay(t, id, fmt.Sprint("pay-concurrent-", i), payment(2000))
		return results[i]
	})
	accepted := 0
	for i, res := range results {
		switch {
		case res.status == http.StatusCreated:
			accepted++
		case res.status != http.StatusConflict || errorCode(t, res) != "invalid_state" || !slices.Equal(detailPaths(t, res), []string{"amount_minor"}):
			t.Errorf("payment %d: %d %s; want 201 or 409 invalid_state at amount_minor", i, res.status, res.body)
		}
	}
	if accepted != 8 {
		t.Errorf("%d payments of 2000 accepted on 17850, want the 8 that fit (none refused that fitted)", accepted)
	}
	inv := a.get(t, b.path("/"+id), b.tok).object(t)
	if got := settlement(inv); got.paid != float64(2000*accepted) || got.due != float64(17850-2000*accepted) {
		t.Errorf("settlement %+v after %d payments of 2000", got, accepted)
	}
	if ps, _ := inv["payments"].([]any); len(ps) != accepted {
		t.Errorf("%d payments listed, %d accepted", len(ps), accepted)
	}
}

// TestConcurrentReplaysOfOneCreditNoteMakeOne: twenty identical credit
// notes under one key, sent at once through two instances, make one credit
// note: twenty 201s with the same body, one number, one event.
func TestConcurrentReplaysOfOneCreditNoteMakeOne(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "cn-replays", prefixedCompany)
	id := b.issued(t, "cn-replays-invoice", b.invoiceBody(t, nil))
	bodies := make([]string, 20)
	sendAtOnce(t, len(bodies), func(i int) response {
		via := b.alternate(other, i)
		res := via.postCreditNote(t, id, "cn-replays-one", map[string]any{"reason": "Once", "lines": []any{mline("Refund", "1", 100, 1900, "")}})
		if res.status != http.StatusCreated {
			t.Errorf("request %d: %d %s", i, res.status, res.body)
		}
		bodies[i] = string(res.body)
		return res
	})
	for i := range bodies {
		if bodies[i] != bodies[0] {
			t.Errorf("request %d answered another body:\n%s\nwant\n%s", i, bodies[i], bodies[0])
		}
	}
	if n := a.eventCount(t, "CreditNoteIssued", "invoice_id", id); n != 1 {
		t.Errorf("%d CreditNoteIssued events, want 1", n)
	}
	if got := a.walk(t, b.cnPath(""), b.tok, 10, nil); len(got) != 1 {
		t.Errorf("%d credit notes listed, want 1", len(got))
	}
	next := b.mustCreditNote(t, id, "cn-replays-next", map[string]any{"reason": "Next", "lines": []any{mline("Refund", "1", 100, 1900, "")}})
	if next["number"] != "CN-000002" {
		t.Errorf("the next credit note is numbered %v, want CN-000002 (no number lost to the replays)", next["number"])
	}
}
