package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Issue 23: credit notes and payments of issued invoices. The helpers of
// its acceptance tests, and the credit note list.

// twoGroupLines are an invoice's lines in two VAT groups: S 19% (net 10000,
// tax 1900) and S 7% (net 10000, tax 700); total 22600.
func twoGroupLines() []any {
	return []any{mline("Consulting", "1", 10000, 1900, ""), mline("Books", "2", 5000, 700, "")}
}

// cnPath is the path of the company's credit notes, with suffix.
func (b billing) cnPath(suffix string) string {
	return "/v1/companies/" + b.companyID + "/credit_notes" + suffix
}

// postCreditNote posts a credit note of invoice id.
func (b billing) postCreditNote(t *testing.T, id, key string, body map[string]any) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/credit_notes"), b.tok, key, mustJSON(t, body))
}

// mustCreditNote posts a credit note of invoice id and checks the answer:
// 201, Location naming the credit note, and a GET of it right after the
// 201 serving the same body (read-your-writes).
func (b billing) mustCreditNote(t *testing.T, id, key string, body map[string]any) map[string]any {
	t.Helper()
	res := b.postCreditNote(t, id, key, body)
	mustStatus(t, res, http.StatusCreated)
	cn := res.object(t)
	if loc := res.header.Get("Location"); loc != b.cnPath(fmt.Sprintf("/%v", cn["id"])) {
		t.Fatalf("Location = %q, want %q", loc, b.cnPath(fmt.Sprintf("/%v", cn["id"])))
	}
	got := b.s.get(t, res.header.Get("Location"), b.tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) {
		t.Fatalf("GET after the credit note's 201 differs:\n201: %s\nGET: %s", res.body, got.body)
	}
	return cn
}

// pay posts a payment of invoice id.
func (b billing) pay(t *testing.T, id, key string, body map[string]any) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/payments"), b.tok, key, mustJSON(t, body))
}

// payment is a payment body of amount paid on 2025-01-20.
func payment(amount int64) map[string]any {
	return map[string]any{"amount_minor": amount, "paid_on": "2025-01-20"}
}

// mustPay records a payment and checks the answer: 201 with the invoice,
// Location naming it, and a GET right after serving the same body.
func (b billing) mustPay(t *testing.T, id, key string, body map[string]any) map[string]any {
	t.Helper()
	res := b.pay(t, id, key, body)
	mustStatus(t, res, http.StatusCreated)
	if loc := res.header.Get("Location"); loc != b.path("/"+id) {
		t.Fatalf("Location = %q, want %q", loc, b.path("/"+id))
	}
	got := b.s.get(t, b.path("/"+id), b.tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) {
		t.Fatalf("GET after the payment's 201 differs:\n201: %s\nGET: %s", res.body, got.body)
	}
	if got.header.Get("ETag") != res.header.Get("ETag") {
		t.Errorf("GET's ETag %q, the payment's %q", got.header.Get("ETag"), res.header.Get("ETag"))
	}
	return res.object(t)
}

// reverse posts the reversal of payment pid of invoice id; body may be "".
func (b billing) reverse(t *testing.T, id, pid, key, body string) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/payments/"+pid+"/reverse"), b.tok, key, body)
}

// lastPaymentID is the id of the invoice's last payment.
func lastPaymentID(t *testing.T, inv map[string]any) string {
	t.Helper()
	ps, _ := inv["payments"].([]any)
	if len(ps) == 0 {
		t.Fatalf("the invoice lists no payments: %v", inv)
	}
	return ps[len(ps)-1].(map[string]any)["id"].(string)
}

// settlementOf is the invoice's settlement fields, for comparison.
type settlementOf struct {
	credited, paid, due, refundable float64
	status                          string
}

func settlement(inv map[string]any) settlementOf {
	num := func(k string) float64 { f, _ := inv[k].(float64); return f }
	st, _ := inv["payment_status"].(string)
	return settlementOf{num("amount_credited_minor"), num("amount_paid_minor"), num("amount_due_minor"), num("amount_refundable_minor"), st}
}

// errorMessages returns the messages of error.details, and error.message.
func errorMessages(t *testing.T, r response) string {
	t.Helper()
	e, _ := r.object(t)["error"].(map[string]any)
	out := fmt.Sprint(e["message"])
	items, _ := e["details"].([]any)
	for _, it := range items {
		d, _ := it.(map[string]any)
		out += "\n" + fmt.Sprint(d["message"])
	}
	return out
}

// TestCreditNoteListFiltersPagesAndTenancy: the list of a company's credit
// notes, oldest first, filtered by invoice_id, customer_id and
// external_reference (alone and combined), walked by every page size;
// another account sees neither the list nor a credit note.
func TestCreditNoteListFiltersPagesAndTenancy(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "cn-list", prefixedCompany)
	second := s.createCustomer(t, b.tok, b.companyID, "cn-list-second", customerWith(t, "name", "Initech"))["id"].(string)
	var invoices []string
	for i := range 3 {
		fields := map[string]any{"lines": twoGroupLines()}
		if i == 2 {
			fields["customer_id"] = second
		}
		invoices = append(invoices, b.issued(t, fmt.Sprint("cn-list-invoice-", i), b.invoiceBody(t, fields)))
	}
	var all, ofFirst, ofSecond, withRef []string
	for i := range 7 {
		inv := invoices[i%3]
		body := map[string]any{"reason": fmt.Sprint("Partial refund ", i), "lines": []any{mline("Refund", "1", 1000, 1900, "")}}
		if i%2 == 0 {
			body["external_reference"] = "batch-a"
		}
		cn := b.mustCreditNote(t, inv, fmt.Sprint("cn-list-", i), body)
		if want := fmt.Sprintf("CN-%06d", i+1); cn["number"] != want {
			t.Errorf("credit note %d is numbered %v, want %s", i, cn["number"], want)
		}
		id := cn["id"].(string)
		all = append(all, id)
		if inv == invoices[0] {
			ofFirst = append(ofFirst, id)
		}
		if inv == invoices[2] {
			ofSecond = append(ofSecond, id)
		}
		if i%2 == 0 {
			withRef = append(withRef, id)
		}
	}
	page := s.get(t, b.cnPath("?limit=1"), b.tok).object(t)
	got := keys(page["data"].([]any)[0].(map[string]any))
	slices.Sort(got)
	want := "company_id currency customer_id customer_name external_reference id invoice_id invoice_number issue_date issued_at number reason subtotal_minor tax_minor total_minor"
	if strings.Join(got, " ") != want {
		t.Errorf("summary fields\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	for _, tt := range []struct {
		name    string
		filters url.Values
		want    []string
	}{
		{"no filter", nil, all},
		{"invoice_id", url.Values{"invoice_id": {invoices[0]}}, ofFirst},
		{"customer_id", url.Values{"customer_id": {second}}, ofSecond},
		{"external_reference", url.Values{"external_reference": {"batch-a"}}, withRef},
		{"invoice_id and external_reference", url.Values{"invoice_id": {invoices[0]}, "external_reference": {"batch-a"}}, intersect(ofFirst, withRef)},
		{"an invoice without credit notes", url.Values{"invoice_id": {uuid.NewString()}}, nil},
		{"a reference no credit note has", url.Values{"external_reference": {"batch-b"}}, nil},
	} {
		for _, limit := range []int{1, 2, 7, 100} {
			t.Run(fmt.Sprintf("%s limit %d", tt.name, limit), func(t *testing.T) {
				if got := s.walk(t, b.cnPath(""), b.tok, limit, tt.filters); !slices.Equal(got, tt.want) {
					t.Errorf("walk = %v\nwant %v", got, tt.want)
				}
			})
		}
	}
	for _, q := range []string{"invoice_id=nope", "customer_id=nope", "limit=0", "after=nope", "status=issued"} {
		mustStatus(t, s.get(t, b.cnPath("?"+q), b.tok), http.StatusUnprocessableEntity)
	}

	other := token(t, "cn-list-other")
	cursor := s.get(t, b.cnPath("?limit=1"), b.tok).object(t)["pagination"].(map[string]any)["next_cursor"].(string)
	for _, path := range []string{b.cnPath(""), b.cnPath("?after=" + cursor), b.cnPath("/" + all[0])} {
		mustCode(t, s.get(t, path, other), http.StatusNotFound, "not_found")
	}
	mustCode(t, s.get(t, "/v1/companies/"+uuid.NewString()+"/credit_notes", b.tok), http.StatusNotFound, "not_found")
	mustCode(t, s.get(t, b.cnPath("/"+uuid.NewString()), b.tok), http.StatusNotFound, "not_found")
	// A sibling company of the same account lists none and serves none.
	sibling := billing{s: s, tok: b.tok, companyID: s.createCompany(t, b.tok, "cn-list-sibling", minimalCompany)["id"].(string)}
	if got := s.listed(t, sibling.cnPath(""), b.tok, nil); len(got) != 0 {
		t.Errorf("a sibling company lists %d credit notes", len(got))
	}
	mustCode(t, s.get(t, sibling.cnPath("/"+all[0]), b.tok), http.StatusNotFound, "not_found")
	// Another account cannot credit the invoice either.
	intruder := b
	intruder.tok = other
	mustCode(t, intruder.postCreditNote(t, invoices[0], "cn-list-intruder", map[string]any{"reason": "x"}), http.StatusNotFound, "not_found")
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
