package main

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// Issue 23, acceptance: payments and the settlement of an invoice: the
// payment state table, the list filter payment_status, and the amounts
// after a projection rebuild.

// settlementStep is one write of the state table and what it must answer:
// a status, for a refusal its code and detail path, for a success the
// invoice's settlement after it.
type settlementStep struct {
	name   string
	send   func(t *testing.T) response
	status int
	code   string   // refusals
	paths  []string // refusals: error.details paths, nil = not checked
	msg    string   // refusals: a text the error names
	want   *settlementOf
	check  func(t *testing.T, inv map[string]any)
}

// TestPaymentStateTable walks one invoice (total 17850) through partial,
// full, refused and reversed payments, a refused and an allowed void, and
// the other invoices through credit notes and payments in the states that
// refuse or allow them.
func TestPaymentStateTable(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "pay-table", prefixedCompany)
	id := b.issued(t, "pay-table-main", b.invoiceBody(t, nil))
	draft := b.create(t, "pay-table-draft", b.invoiceBody(t, nil))["id"].(string)
	voided := b.issued(t, "pay-table-voided", b.invoiceBody(t, nil))
	b.mustChange(t, b.void(t, voided, "pay-table-void-0", "Duplicate"))
	credited := b.issued(t, "pay-table-credited", b.invoiceBody(t, nil))
	paidThenCredited := b.issued(t, "pay-table-refund", b.invoiceBody(t, nil))
	var payments []string
	pay := func(inv string, amount int64, key string) func(*testing.T) response {
		return func(t *testing.T) response {
			res := b.pay(t, inv, "pay-table-"+key, payment(amount))
			if res.status == http.StatusCreated && inv == id {
				payments = append(payments, lastPaymentID(t, res.object(t)))
			}
			return res
		}
	}
	reverse := func(n int, key string) func(*testing.T) response {
		return func(t *testing.T) response {
			return b.reverse(t, id, payments[n], "pay-table-"+key, `{"reason":"Recorded twice"}`)
		}
	}
	credit := func(inv, key string, lines []any) func(*testing.T) response {
		return func(t *testing.T) response {
			body := map[string]any{"reason": "Goodwill"}
			if lines != nil {
				body["lines"] = lines
			}
			return b.postCreditNote(t, inv, "pay-table-"+key, body)
		}
	}
	void := func(inv, key string) func(*testing.T) response {
		return func(t *testing.T) response { return b.void(t, inv, "pay-table-"+key, "Mistake") }
	}
	steps := []settlementStep{
		{name: "an issued invoice is unpaid", send: func(t *testing.T) response { return s.get(t, b.path("/"+id), b.tok) },
			status: 200, want: &settlementOf{0, 0, 17850, 0, "unpaid"}},
		{name: "a partial payment: partially_paid", send: pay(id, 5000, "p1"), status: 201, want: &settlementOf{0, 5000, 12850, 0, "partially_paid"},
			check: func(t *testing.T, inv map[string]any) {
				p := inv["payments"].([]any)[0].(map[string]any)
				if p["amount_minor"] != 5000.0 || p["paid_on"] != "2025-01-20" || p["reversed_at"] != nil {
					t.Errorf("the payment is listed as %v", p)
				}
			}},
		{name: "an over-payment is refused naming what is due", send: pay(id, 12851, "p-over"), status: 409, code: "invalid_state", paths: []string{"amount_minor"}, msg: "12850"},
		{name: "a void with payments is refused", send: void(id, "void-1"), status: 409, code: "invalid_state"},
		{name: "the rest: paid, nothing due", send: pay(id, 12850, "p2"), status: 201, want: &settlementOf{0, 17850, 0, 0, "paid"}},
		{name: "a payment of a paid invoice is refused", send: pay(id, 1, "p-paid"), status: 409, code: "invalid_state", paths: []string{"amount_minor"}, msg: "0"},
		{name: "reversing the last payment goes back to partially_paid", send: reverse(1, "r2"), status: 200, want: &settlementOf{0, 5000, 12850, 0, "partially_paid"},
			check: func(t *testing.T, inv map[string]any) {
				ps := inv["payments"].([]any)
				if len(ps) != 2 {
					t.Fatalf("%d payments listed, want both, the reversed one too", len(ps))
				}
				first, second := ps[0].(map[string]any), ps[1].(map[string]any)
				if first["reversed_at"] != nil || second["reversed_at"] == nil || second["reversal_reason"] != "Recorded twice" || second["amount_minor"] != 12850.0 {
					t.Errorf("payments after the reversal: %v", ps)
				}
			}},
		{name: "a payment is reversed once", send: reverse(1, "r2-again"), status: 409, code: "invalid_state"},
		{name: "still a payment: a void is refused", send: void(id, "void-2"), status: 409, code: "invalid_state"},
		{name: "reversing every payment: unpaid", send: reverse(0, "r1"), status: 200, want: &settlementOf{0, 0, 17850, 0, "unpaid"}},
		{name: "an unknown payment is 404", send: func(t *testing.T) response {
			return b.reverse(t, id, "01a20588-7ee3-7d5f-b3e9-b847ee0b78f7", "pay-table-r-unknown", "")
		}, status: 404, code: "not_found"},
		{name: "every payment reversed: the void is allowed", send: void(id, "void-3"), status: 200, want: &settlementOf{0, 0, 0, 0, "unpaid"}},
		{name: "a void invoice takes no payment", send: pay(id, 100, "p-void"), status: 409, code: "invalid_state"},
		{name: "a void invoice cannot be credited", send: credit(voided, "c-void", nil), status: 409, code: "invalid_state"},
		{name: "a draft takes no payment", send: pay(draft, 100, "p-draft"), status: 409, code: "invalid_state"},
		{name: "a draft cannot be credited", send: credit(draft, "c-draft", nil), status: 409, code: "invalid_state"},
		{name: "a partial credit note", send: credit(credited, "c-part", []any{mline("Refund", "1", 5000, 1900, "")}), status: 201},
		{name: "a credited invoice cannot be voided", send: void(credited, "void-credited"), status: 409, code: "invalid_state"},
		{name: "a payment is refused above what credit notes left due", send: pay(credited, 11901, "p-credited-over"), status: 409, code: "invalid_state", paths: []string{"amount_minor"}, msg: "11900"},
		{name: "paying what credit notes left due: paid", send: pay(credited, 11900, "p-credited"), status: 201, want: &settlementOf{5950, 11900, 0, 0, "paid"}},
		{name: "a full payment", send: pay(paidThenCredited, 17850, "p-full"), status: 201, want: &settlementOf{0, 17850, 0, 0, "paid"}},
		{name: "crediting a paid invoice makes it refundable", send: credit(paidThenCredited, "c-refund", []any{mline("Refund", "1", 2000, 1900, "")}), status: 201},
		{name: "the refundable amount", send: func(t *testing.T) response { return s.get(t, b.path("/"+paidThenCredited), b.tok) },
			status: 200, want: &settlementOf{2380, 17850, 0, 2380, "paid"}},
		{name: "what is left, credited without lines", send: credit(paidThenCredited, "c-rest", nil), status: 201},
		{name: "fully credited after a full payment", send: func(t *testing.T) response { return s.get(t, b.path("/"+paidThenCredited), b.tok) },
			status: 200, want: &settlementOf{17850, 17850, 0, 17850, "paid"}},
		{name: "nothing is left to credit", send: credit(paidThenCredited, "c-nothing", nil), status: 409, code: "invalid_state"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) { runSettlementStep(t, b, step) })
	}
	if out, err := runCommand(t, s, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}

func runSettlementStep(t *testing.T, b billing, step settlementStep) {
	t.Helper()
	res := step.send(t)
	if step.code != "" {
		mustFail(t, res, step.status, step.code, step.paths...)
		if step.msg != "" && !strings.Contains(errorMessages(t, res), step.msg) {
			t.Errorf("the refusal does not name %s: %s", step.msg, res.body)
		}
		return
	}
	mustStatus(t, res, step.status)
	obj := res.object(t)
	if obj["invoice_id"] != nil { // a credit note: its invoice
		obj = b.s.get(t, b.path("/"+obj["invoice_id"].(string)), b.tok).object(t)
	}
	if res.status != http.StatusCreated || obj["payments"] != nil { // the invoice answered: read-your-writes
		if got := b.s.get(t, b.path("/"+obj["id"].(string)), b.tok); mustJSON(t, got.object(t)) != mustJSON(t, obj) {
			t.Errorf("GET right after differs:\nanswer %s\nGET    %s", mustJSON(t, obj), got.body)
		}
	}
	if step.want != nil {
		if got := settlement(obj); got != *step.want {
			t.Errorf("settlement %+v, want %+v", got, *step.want)
		}
		checkSummaryAgrees(t, b, obj)
	}
	if step.check != nil {
		step.check(t, obj)
	}
}

// checkSummaryAgrees checks that the invoice's list summary has the full
// form's settlement.
func checkSummaryAgrees(t *testing.T, b billing, inv map[string]any) {
	t.Helper()
	item := find(b.s.listed(t, b.path(""), b.tok, nil), inv["id"].(string))
	if item == nil {
		t.Fatalf("the invoice %v is not listed", inv["id"])
	}
	if settlement(item) != settlement(inv) {
		t.Errorf("the list summary's settlement %+v differs from the invoice's %+v", settlement(item), settlement(inv))
	}
	if _, ok := item["payments"]; ok {
		t.Errorf("the list summary carries payments")
	}
}

// settlementFixture makes invoices in every payment status: it returns the
// ids by the status they must be listed under.
func settlementFixture(t *testing.T, b billing, prefix string) map[string][]string {
	t.Helper()
	want := map[string][]string{}
	add := func(status, id string) { want[status] = append(want[status], id) }
	add("unpaid", b.create(t, prefix+"draft", b.invoiceBody(t, nil))["id"].(string))
	add("unpaid", b.issued(t, prefix+"issued", b.invoiceBody(t, nil)))
	partly := b.issued(t, prefix+"partly", b.invoiceBody(t, nil))
	b.mustPay(t, partly, prefix+"partly-pay", payment(100))
	add("partially_paid", partly)
	paid := b.issued(t, prefix+"paid", b.invoiceBody(t, nil))
	b.mustPay(t, paid, prefix+"paid-pay", map[string]any{"amount_minor": 17850, "paid_on": "2025-01-31", "method": "bank_transfer", "reference": "SEPA-1"})
	add("paid", paid)
	credited := b.issued(t, prefix+"credited", b.invoiceBody(t, nil))
	b.mustCreditNote(t, credited, prefix+"credited-cn", map[string]any{"reason": "Cancelled"})
	add("paid", credited)
	reversed := b.issued(t, prefix+"reversed", b.invoiceBody(t, nil))
	inv := b.mustPay(t, reversed, prefix+"reversed-pay", payment(17850))
	b.mustChange(t, b.reverse(t, reversed, lastPaymentID(t, inv), prefix+"reversed-rev", ""))
	add("unpaid", reversed)
	void := b.issued(t, prefix+"void", b.invoiceBody(t, nil))
	b.mustChange(t, b.void(t, void, prefix+"void", "Duplicate"))
	add("unpaid", void)
	refund := b.issued(t, prefix+"refund", b.invoiceBody(t, nil))
	b.mustPay(t, refund, prefix+"refund-pay", payment(10000))
	b.mustCreditNote(t, refund, prefix+"refund-cn", map[string]any{"reason": "Returned"})
	add("paid", refund)
	return want
}

// TestInvoiceListFiltersByPaymentStatus: ?payment_status= lists exactly
// the invoices of that status, in order, by every page size, alone and
// with status; another value is 422 at payment_status.
func TestInvoiceListFiltersByPaymentStatus(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "pay-filter", prefixedCompany)
	want := settlementFixture(t, b, "pay-filter-")
	for _, status := range []string{"unpaid", "partially_paid", "paid"} {
		for _, limit := range []int{1, 3, 100} {
			t.Run(fmt.Sprintf("%s limit %d", status, limit), func(t *testing.T) {
				got := s.walk(t, b.path(""), b.tok, limit, url.Values{"payment_status": {status}})
				if !slices.Equal(got, want[status]) {
					t.Errorf("?payment_status=%s lists %v, want %v", status, got, want[status])
				}
			})
		}
		for _, item := range s.listed(t, b.path(""), b.tok, url.Values{"payment_status": {status}}) {
			if item["payment_status"] != status {
				t.Errorf("?payment_status=%s lists an invoice %v", status, item["payment_status"])
			}
		}
	}
	// With status: the issued invoices that are unpaid are the issued and
	// the reversed one.
	if got := s.walk(t, b.path(""), b.tok, 2, url.Values{"payment_status": {"unpaid"}, "status": {"issued"}}); !slices.Equal(got, want["unpaid"][1:3]) {
		t.Errorf("?payment_status=unpaid&status=issued lists %v, want %v", got, want["unpaid"][1:3])
	}
	for _, bad := range []string{"overdue", "PAID", "paid,unpaid", "void"} {
		res := s.get(t, b.path("?payment_status="+url.QueryEscape(bad)), b.tok)
		mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", "payment_status")
	}
}

// TestSettlementSurvivesAProjectionRebuild: every invoice (its settlement
// and payments), its list summary and every credit note read the same
// after `projections rebuild` as before.
func TestSettlementSurvivesAProjectionRebuild(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "pay-rebuild", prefixedCompany)
	settlementFixture(t, b, "pay-rebuild-")
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, path := range []string{b.path("?limit=100"), b.cnPath("?limit=100")} {
			res := s.get(t, path, b.tok)
			mustStatus(t, res, http.StatusOK)
			out[path] = compactJSON(t, res.body)
		}
		for _, inv := range s.listed(t, b.path(""), b.tok, nil) {
			out[inv["id"].(string)] = compactJSON(t, s.get(t, b.path("/"+inv["id"].(string)), b.tok).body)
		}
		for _, cn := range s.listed(t, b.cnPath(""), b.tok, nil) {
			out[cn["id"].(string)] = compactJSON(t, s.get(t, b.cnPath("/"+cn["id"].(string)), b.tok).body)
		}
		return out
	}
	before := snapshot()
	if len(before) != 2+8+2 {
		t.Fatalf("%d documents read, want 12: %v", len(before), before)
	}
	if out, err := runCommand(t, s, "projections", "rebuild"); err != nil {
		t.Fatalf("projections rebuild: %v\n%s", err, out)
	}
	after := snapshot()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s after the rebuild:\n%s\nbefore:\n%s", k, after[k], v)
		}
	}
}
