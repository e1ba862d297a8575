package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// billing is a company with one customer, ready to invoice.
type billing struct {
	s                     *service
	tok                   string
	companyID, customerID string
}

// alternate is b through other for odd i: requests numbered i, sent at
// once, go half through each of two instances on one database.
func (b billing) alternate(other *service, i int) billing {
	if i%2 == 1 {
		b.s = other
	}
	return b
}

func newBilling(t *testing.T, s *service, org, companyBody string) billing {
	t.Helper()
	tok := token(t, org)
	companyID := s.createCompany(t, tok, "billing-co-"+org+fmt.Sprint(len(companyBody)), companyBody)["id"].(string)
	customerID := s.createCustomer(t, tok, companyID, "billing-cu-"+org, minimalCustomer)["id"].(string)
	return billing{s: s, tok: tok, companyID: companyID, customerID: customerID}
}

func (b billing) invoiceBody(t *testing.T, fields map[string]any) string {
	t.Helper()
	m := map[string]any{
		"customer_id": b.customerID, "issue_date": "2025-01-15",
		"lines": []any{map[string]any{"description": "Consulting", "quantity": "1.5", "unit_amount_minor": 10000, "tax_rate_bps": 1900}},
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return mustJSON(t, m)
}

func (b billing) path(suffix string) string {
	return "/v1/companies/" + b.companyID + "/invoices" + suffix
}

// create posts an invoice and checks the GET right after the 201.
func (b billing) create(t *testing.T, key, body string) map[string]any {
	t.Helper()
	return b.s.mustCreate(t, b.path(""), b.tok, key, body).object(t)
}

func TestCreateInvoiceComputesAndSnapshots(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", companyWith(t, "identifiers", []any{map[string]any{"scheme": "vat", "value": "DE123"}}))
	res := s.mustCreate(t, b.path(""), b.tok, "invoice-full", b.invoiceBody(t, map[string]any{
		"due_date": "2025-02-01", "currency": "USD", "language": "de-CH", "external_reference": "inv-ext",
		"purchase_order_reference": "PO-9", "notes": "Thanks", "terms": "Net 17",
		"lines": []any{
			map[string]any{"description": "Consulting", "quantity": "1.5", "unit": "h", "unit_amount_minor": 10000, "tax_rate_bps": 1900},
			map[string]any{"description": "Rounding", "quantity": "0.001", "unit_amount_minor": 500, "tax_rate_bps": 10000},
		},
	}))
	// Every field: the computed lines and totals, the frozen snapshots.
	assertGolden(t, "invoice_created", res.body)
	inv := res.object(t)
	if inv["company_id"] != b.companyID || inv["customer_id"] != b.customerID {
		t.Errorf("company_id %v customer_id %v, want %s %s", inv["company_id"], inv["customer_id"], b.companyID, b.customerID)
	}
}

func TestInvoiceDefaultsComeFromTheCompany(t *testing.T) {
	s := newService(t)
	tests := []struct {
		name, issue string
		terms       int
		wantDue     string
	}{
		{"terms 0 are due on the issue date", "2025-01-15", 0, "2025-01-15"},
		{"terms 30 cross a month end", "2025-01-31", 30, "2025-03-02"},
		{"terms 30 land on a leap day", "2024-01-30", 30, "2024-02-29"},
		{"terms 30 from a leap day", "2024-02-29", 30, "2024-03-30"},
		{"terms 365 from a leap day", "2024-02-29", 365, "2025-02-28"},
		{"terms 1 cross a year end", "2025-12-31", 1, "2026-01-01"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			company := companyWith(t, "default_payment_terms_days", tt.terms)
			var m map[string]any
			json.Unmarshal([]byte(company), &m)
			m["default_language"], m["default_currency"] = "fr", "CHF"
			b := newBilling(t, s, fmt.Sprint("terms-", i), mustJSON(t, m))
			inv := b.create(t, "terms-invoice", b.invoiceBody(t, map[string]any{"issue_date": tt.issue}))
			if inv["due_date"] != tt.wantDue || inv["currency"] != "CHF" || inv["language"] != "fr" {
				t.Errorf("due %v currency %v language %v; want %s CHF fr", inv["due_date"], inv["currency"], inv["language"], tt.wantDue)
			}
		})
	}
}

func lineWith(field string, value any) []any {
	l := map[string]any{"description": "x", "quantity": "1", "unit_amount_minor": 1, "tax_rate_bps": 0}
	if value == nil {
		delete(l, field)
	} else {
		l[field] = value
	}
	return []any{l}
}

func manyLines(n int, unit int64) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"description": "x", "quantity": "1", "unit_amount_minor": unit, "tax_rate_bps": 0}
	}
	return out
}

func TestCreateInvoiceFieldRules(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	sibling := s.createCompany(t, b.tok, "sibling-co", minimalCompany)["id"].(string)
	siblingCustomer := s.createCustomer(t, b.tok, sibling, "sibling-cu", minimalCustomer)["id"].(string)
	const max = 9007199254740991
	tests := []struct {
		name, field string
		value       any
		wantPath    string
	}{
		{"100 lines are accepted", "lines", manyLines(100, 1), ""},
		{"101 lines are rejected", "lines", manyLines(101, 1), "lines"},
		{"no lines are rejected", "lines", []any{}, "lines"},
		{"lines missing are rejected", "lines", nil, "lines"},
		{"quantity 999999999.999 is accepted", "lines", lineWith("quantity", "999999999.999"), ""},
		{"quantity with 4 decimals is rejected", "lines", lineWith("quantity", "1.0001"), "lines[0].quantity"},
		{"quantity of 10 integer digits is rejected", "lines", lineWith("quantity", "1000000000"), "lines[0].quantity"},
		{"quantity zero is rejected", "lines", lineWith("quantity", "0.000"), "lines[0].quantity"},
		{"quantity as a number is rejected", "lines", lineWith("quantity", 1), "lines[0].quantity"},
		{"quantity with a leading zero is rejected", "lines", lineWith("quantity", "01"), "lines[0].quantity"},
		{"tax_rate_bps 10000 is accepted", "lines", lineWith("tax_rate_bps", 10000), ""},
		{"tax_rate_bps 10001 is rejected", "lines", lineWith("tax_rate_bps", 10001), "lines[0].tax_rate_bps"},
		{"tax_rate_bps missing is rejected", "lines", lineWith("tax_rate_bps", nil), "lines[0].tax_rate_bps"},
		{"unit of 32 is accepted", "lines", lineWith("unit", strings.Repeat("u", 32)), ""},
		{"unit of 33 is rejected", "lines", lineWith("unit", strings.Repeat("u", 33)), "lines[0].unit"},
		{"unit empty is rejected", "lines", lineWith("unit", ""), "lines[0].unit"},
		{"description of 500 is accepted", "lines", lineWith("description", strings.Repeat("d", 500)), ""},
		{"description of 501 is rejected", "lines", lineWith("description", strings.Repeat("d", 501)), "lines[0].description"},
		{"unit_amount_minor at the bound is accepted", "lines", lineWith("unit_amount_minor", max), ""},
		{"unit_amount_minor over the bound is rejected", "lines", lineWith("unit_amount_minor", max+1), "lines[0].unit_amount_minor"},
		{"unit_amount_minor negative is rejected", "lines", lineWith("unit_amount_minor", -1), "lines[0].unit_amount_minor"},
		{"a line whose net exceeds the bound is rejected naming it", "lines", []any{map[string]any{"description": "x", "quantity": "999999999.999", "unit_amount_minor": 9007200, "tax_rate_bps": 0}}, "lines[0]"},
		{"lines summing past the bound are rejected naming the line", "lines", manyLines(3, max/2), "lines[2]"},
		{"an unknown line field is rejected", "lines", lineWith("discount", 1), "lines[0].discount"},
		{"due_date before issue_date is rejected", "due_date", "2025-01-14", "due_date"},
		{"due_date on issue_date is accepted", "due_date", "2025-01-15", ""},
		{"issue_date not a date is rejected", "issue_date", "2025-02-30", "issue_date"},
		{"issue_date missing is rejected", "issue_date", nil, "issue_date"},
		{"currency lowercase is rejected", "currency", "usd", "currency"},
		{"language invalid is rejected", "language", "english language", "language"},
		{"notes of 5000 are accepted", "notes", strings.Repeat("n", 5000), ""},
		{"notes of 5001 are rejected", "notes", strings.Repeat("n", 5001), "notes"},
		{"terms of 5001 are rejected", "terms", strings.Repeat("n", 5001), "terms"},
		{"purchase_order_reference of 256 is rejected", "purchase_order_reference", strings.Repeat("p", 256), "purchase_order_reference"},
		{"external_reference empty is rejected", "external_reference", "", "external_reference"},
		{"customer_id not a UUID is rejected", "customer_id", "cust-1", "customer_id"},
		{"customer_id of a sibling company is rejected", "customer_id", siblingCustomer, "customer_id"},
		{"customer_id unknown is rejected", "customer_id", "0190a0c0-0000-7000-8000-000000000000", "customer_id"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := b.invoiceBody(t, map[string]any{tt.field: tt.value})
			if tt.value == nil {
				var m map[string]any
				json.Unmarshal([]byte(b.invoiceBody(t, nil)), &m)
				delete(m, tt.field)
				body = mustJSON(t, m)
			}
			res := s.post(t, b.path(""), b.tok, fmt.Sprintf("invoice-rule-%03d", i), body)
			if tt.wantPath == "" {
				mustStatus(t, res, http.StatusCreated)
				return
			}
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != tt.wantPath {
				t.Errorf("paths = %v, want [%s]; body %s", paths, tt.wantPath, res.body)
			}
		})
	}
}

func TestInvoiceRendersFromItsEventAlone(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	body := b.invoiceBody(t, nil)
	first := s.post(t, b.path(""), b.tok, "from-event", body)
	mustStatus(t, first, http.StatusCreated)
	id := first.object(t)["id"].(string)

	ctx := context.Background()
	// Later changes to the customer and company do not reach the snapshot.
	if _, err := s.pool.Exec(ctx, `UPDATE customers SET name = 'Renamed'; UPDATE companies SET legal_name = 'Renamed'`); err != nil {
		t.Fatal(err)
	}
	got := s.get(t, b.path("/"+id), b.tok)
	if compactJSON(t, got.body) != compactJSON(t, first.body) {
		t.Errorf("GET after the customer changed differs:\n%s\n%s", first.body, got.body)
	}
	// With the invoice read model gone, the replay renders from the event.
	if _, err := s.pool.Exec(ctx, `DELETE FROM invoices`); err != nil {
		t.Fatal(err)
	}
	replay := s.post(t, b.path(""), b.tok, "from-event", body)
	mustStatus(t, replay, http.StatusCreated)
	if string(replay.body) != string(first.body) {
		t.Errorf("rendered from the event alone:\n%s\nwant the POST response\n%s", replay.body, first.body)
	}
}

// The read models keep addresses, identifiers, snapshots and lines as the
// API renders them, and GETs pass that text through: the very bytes of the
// 201, with the characters encoding/json would escape for HTML (which the
// API does not) and absent identifiers as [].
func TestGetsServeStoredDocumentsByteForByte(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	html := `Smith & Sons <"Nord"> \ Ü`
	companyBody := strings.Replace(minimalCompany, `"Hauptstr. 1"`, mustJSON(t, html), 1)
	companyBody = strings.Replace(companyBody, `"Acme GmbH"`, mustJSON(t, html), 1)
	company := s.mustCreate(t, "/v1/companies", tok, "html-company", companyBody)
	companyID := company.object(t)["id"].(string)
	customerBody := strings.Replace(minimalCustomer, `"1 Main St"`, mustJSON(t, html), 1)
	customer := s.mustCreate(t, "/v1/companies/"+companyID+"/customers", tok, "html-customer", customerBody)
	b := billing{s: s, tok: tok, companyID: companyID, customerID: customer.object(t)["id"].(string)}
	invoice := s.mustCreate(t, b.path(""), tok, "html-invoice", b.invoiceBody(t, map[string]any{
		"lines": []any{map[string]any{"description": html, "quantity": "1", "unit_amount_minor": 100, "tax_rate_bps": 0}},
	}))
	for _, created := range []response{company, customer, invoice} {
		got := s.get(t, created.header.Get("Location"), tok)
		mustStatus(t, got, http.StatusOK)
		if !strings.Contains(string(got.body), `Smith & Sons <\"Nord\"> \\ Ü`) {
			t.Errorf("GET %s does not hold the text unescaped:\n%s", created.header.Get("Location"), got.body)
		}
		if strings.TrimSpace(string(got.body)) != strings.TrimSpace(string(created.body)) {
			t.Errorf("GET %s differs from the 201 body:\n201: %s\nGET: %s", created.header.Get("Location"), created.body, got.body)
		}
	}
	if ids := invoice.object(t)["customer"].(map[string]any)["identifiers"]; ids == nil {
		t.Errorf("the customer snapshot's identifiers are null, want []")
	}
}

func TestTenancyOnEveryRoute(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	inv := b.create(t, "tenancy-invoice", b.invoiceBody(t, nil))["id"].(string)
	sibling := s.createCompany(t, b.tok, "tenancy-sibling", minimalCompany)["id"].(string)
	other := token(t, "globex")
	co, cu := "/v1/companies/"+b.companyID, "/customers/"+b.customerID
	tests := []struct {
		name, method, path, tok string
	}{
		{"another account's company", http.MethodGet, co, other},
		{"another account's customers", http.MethodGet, co + "/customers", other},
		{"another account's customer", http.MethodGet, co + cu, other},
		{"another account's invoices", http.MethodGet, co + "/invoices", other},
		{"another account's invoice", http.MethodGet, co + "/invoices/" + inv, other},
		{"a customer under another account's company", http.MethodPost, co + "/customers", other},
		{"an invoice under another account's company", http.MethodPost, co + "/invoices", other},
		{"a customer under a sibling company", http.MethodGet, "/v1/companies/" + sibling + cu, b.tok},
		{"an invoice under a sibling company", http.MethodGet, "/v1/companies/" + sibling + "/invoices/" + inv, b.tok},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: tt.method, path: tt.path, token: tt.tok}
			if tt.method == http.MethodPost {
				req.key, req.body = fmt.Sprint("tenancy-post-", i), minimalCustomer
				if strings.HasSuffix(tt.path, "/invoices") {
					req.body = b.invoiceBody(t, nil)
				}
			}
			res := s.do(t, req)
			mustStatus(t, res, http.StatusNotFound)
			if code := errorCode(t, res); code != "not_found" {
				t.Errorf("code = %q", code)
			}
		})
	}
	for _, path := range []string{"/v1/companies/" + sibling + "/customers", "/v1/companies/" + sibling + "/invoices"} {
		if data := s.get(t, path, b.tok).object(t)["data"].([]any); len(data) != 0 {
			t.Errorf("%s lists %d rows of a sibling company", path, len(data))
		}
	}
}

// A list checks the company only when its page is empty or the list
// failed; the answers are those of a check made first: another account's
// company is a 404 whatever the cursor, the caller's own a 422 for a cursor
// of another list, and a page with rows is the caller's.
func TestAListOfAnotherAccountsCompanyIs404WhateverItsCursor(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	b.create(t, "cursor-invoice-1", b.invoiceBody(t, nil))
	b.create(t, "cursor-invoice-2", b.invoiceBody(t, nil))
	s.createCustomer(t, b.tok, b.companyID, "cursor-customer-2", minimalCustomer)
	cursor := func(path string) string {
		page := s.get(t, path+"?limit=1", b.tok)
		mustStatus(t, page, http.StatusOK)
		return page.object(t)["pagination"].(map[string]any)["next_cursor"].(string)
	}
	invoices, customers := b.path(""), "/v1/companies/"+b.companyID+"/customers"
	invoiceCursor, customerCursor := cursor(invoices), cursor(customers)
	other := token(t, "globex")
	tests := []struct {
		name, path, tok string
		want            int
	}{
		{"another account's invoices", invoices, other, http.StatusNotFound},
		{"another account's invoices after the owner's cursor", invoices + "?after=" + invoiceCursor, other, http.StatusNotFound},
		{"another account's invoices after a customers cursor", invoices + "?after=" + customerCursor, other, http.StatusNotFound},
		{"another account's customers after the owner's cursor", customers + "?after=" + customerCursor, other, http.StatusNotFound},
		{"an unknown company's invoices after a cursor", "/v1/companies/" + uuid.NewString() + "/invoices?after=" + invoiceCursor, b.tok, http.StatusNotFound},
		{"the owner's invoices after a customers cursor", invoices + "?after=" + customerCursor, b.tok, http.StatusUnprocessableEntity},
		{"the owner's customers after an invoices cursor", customers + "?after=" + invoiceCursor, b.tok, http.StatusUnprocessableEntity},
		{"the owner's invoices after its cursor", invoices + "?after=" + invoiceCursor, b.tok, http.StatusOK},
		{"the owner's invoices of a status it has none of", invoices + "?status=void", b.tok, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustStatus(t, s.get(t, tt.path, tt.tok), tt.want)
		})
	}
}

func TestInvoiceListSummariesFiltersAndCursors(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	second := s.createCustomer(t, b.tok, b.companyID, "list-second-customer", customerWith(t, "name", "Initech"))["id"].(string)
	var all, ofSecond, withRef []string
	for i := range 9 {
		fields := map[string]any{}
		if i%3 == 0 {
			fields["customer_id"] = second
		}
		if i%2 == 0 {
			fields["external_reference"] = "batch-a"
		}
		id := b.create(t, fmt.Sprint("list-invoice-", i), b.invoiceBody(t, fields))["id"].(string)
		all = append(all, id)
		if i%3 == 0 {
			ofSecond = append(ofSecond, id)
		}
		if i%2 == 0 {
			withRef = append(withRef, id)
		}
	}
	page := s.get(t, b.path("?limit=1"), b.tok).object(t)
	summary := page["data"].([]any)[0].(map[string]any)
	got := keys(summary)
	sort.Strings(got)
	want := "amount_credited_minor amount_due_minor amount_paid_minor amount_refundable_minor company_id created_at currency customer_id customer_name due_date external_reference id issue_date issued_at number payment_status status subtotal_minor tax_minor total_minor updated_at version void_reason voided_at"
	if strings.Join(got, " ") != want {
		t.Errorf("summary fields\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	tests := []struct {
		name    string
		filters url.Values
		want    []string
	}{
		{"no filter", nil, all},
		{"customer_id", url.Values{"customer_id": {second}}, ofSecond},
		{"external_reference", url.Values{"external_reference": {"batch-a"}}, withRef},
		{"status draft", url.Values{"status": {"draft"}}, all},
		{"status issued", url.Values{"status": {"issued"}}, nil},
		{"combined", url.Values{"customer_id": {second}, "external_reference": {"batch-a"}}, intersect(ofSecond, withRef)},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 2, 7} {
			t.Run(fmt.Sprintf("%s limit %d", tt.name, limit), func(t *testing.T) {
				if got := s.walk(t, b.path(""), b.tok, limit, tt.filters); strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("walk = %v\nwant %v", got, tt.want)
				}
			})
		}
	}
	for _, q := range []string{"status=paid", "customer_id=nope", "due_date=2025-01-01"} {
		mustStatus(t, s.get(t, b.path("?"+q), b.tok), http.StatusUnprocessableEntity)
	}
}

func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

func TestInvoiceIdempotency(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "acme", minimalCompany)
	body := b.invoiceBody(t, nil)
	first := s.post(t, b.path(""), b.tok, "invoice-key-1", body)
	mustStatus(t, first, http.StatusCreated)
	if replay := s.post(t, b.path(""), b.tok, "invoice-key-1", body); replay.status != 201 || string(replay.body) != string(first.body) {
		t.Errorf("replay: %d %s", replay.status, replay.body)
	}
	conflict := s.post(t, b.path(""), b.tok, "invoice-key-1", b.invoiceBody(t, map[string]any{"notes": "changed"}))
	mustStatus(t, conflict, http.StatusConflict)
	concurrent := s.concurrentPosts(t, b.path(""), b.tok, "invoice-key-2", body, 20)
	for i := range concurrent {
		if concurrent[i] != concurrent[0] {
			t.Errorf("concurrent request %d got another body", i)
		}
	}
	if n := s.count(t, "invoices"); n != 2 {
		t.Errorf("%d invoices, want 2", n)
	}
}
