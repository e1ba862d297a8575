package openapitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records Errorf calls instead of failing, so
// that a test can assert the helper reported a violation.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// reply is what a fake handler answers.
type reply struct {
	status      int
	contentType string // default application/json
	requestID   string // X-Request-Id; "-" for none, default "req-1"
	body        any    // marshalled as JSON unless it is a string
	// header adds or, with "", removes response headers. Every reply
	// carries an ETag and a Location by default, which only the gets and
	// the creates document (others ignore them).
	header map[string]string
}

var defaultHeaders = map[string]string{
	"ETag":     `W/"` + companyID + `.1"`,
	"Location": "/v1/companies/" + companyID,
}

// fakeServer answers every request with rep, after checking that the
// request body still reaches the server whole (wantBody, when not empty).
func fakeServer(t *testing.T, rep reply, wantBody string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil || (wantBody != "" && string(got) != wantBody) {
			t.Errorf("server got body %q (err %v), want %q", got, err, wantBody)
		}
		ct := rep.contentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		for k, v := range defaultHeaders {
			w.Header().Set(k, v)
		}
		for k, v := range rep.header {
			if v == "" {
				w.Header().Del(k)
			} else {
				w.Header().Set(k, v)
			}
		}
		switch rep.requestID {
		case "":
			w.Header().Set("X-Request-Id", "req-1")
		case "-":
		default:
			w.Header().Set("X-Request-Id", rep.requestID)
		}
		w.WriteHeader(rep.status)
		if s, ok := rep.body.(string); ok {
			_, _ = io.WriteString(w, s)
			return
		}
		_ = json.NewEncoder(w).Encode(rep.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const (
	companyID  = "01890a5d-ac96-774b-bcce-b302099a8057"
	customerID = "01890a5d-ac96-774b-bcce-b302099a8058"
	invoiceID  = "01890a5d-ac96-774b-bcce-b302099a8059"
	timestamp  = "2025-03-01T09:30:00.123456Z"
)

func address() map[string]any {
	return map[string]any{"line_1": "Hauptstraße 1", "postal_code": "10115", "city": "Berlin", "country_code": "DE"}
}

func company(edit func(map[string]any)) map[string]any {
	c := map[string]any{
		"id": companyID, "legal_name": "Acme GmbH", "address": address(),
		"default_currency": "EUR", "default_language": "en", "default_payment_terms_days": 30,
		"identifiers":           []any{map[string]any{"scheme": "eu.vat", "value": "DE123456789"}},
		"invoice_number_prefix": "", "credit_note_number_prefix": "CN-", "archived_at": nil, "created_at": timestamp, "updated_at": timestamp, "version": 1,
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func invoice(edit func(map[string]any)) map[string]any {
	inv := map[string]any{
		"id": invoiceID, "company_id": companyID, "customer_id": customerID, "customer_name": "Globex",
		"customer": map[string]any{"id": customerID, "name": "Globex", "address": address(),
			"identifiers": []any{}, "schema_version": 1},
		"issuer": map[string]any{"id": companyID, "legal_name": "Acme GmbH", "address": address(),
			"identifiers": []any{}, "schema_version": 1},
		"currency": "EUR", "language": "de-DE", "issue_date": "2025-03-01", "due_date": "2025-03-31",
		"issued_at": nil, "number": nil, "status": "draft", "void_reason": nil, "voided_at": nil,
		"lines": []any{map[string]any{
			"position": 1, "description": "Consulting", "quantity": "1.5", "unit": "h", "unit_code": "HUR",
			"unit_amount_minor": 10000, "tax_rate_bps": 1900, "tax_category": "S",
			"net_amount_minor": 15000, "tax_amount_minor": 2850, "total_amount_minor": 17850,
		}},
		"subtotal_minor": 15000, "tax_minor": 2850, "total_minor": 17850,
		"amount_credited_minor": 0, "amount_paid_minor": 0, "amount_due_minor": 17850, "amount_refundable_minor": 0,
		"payment_status": "unpaid",
		"tax_breakdown":  []any{map[string]any{"tax_category": "S", "tax_rate_bps": 1900, "taxable_amount_minor": 15000, "tax_amount_minor": 2850}},
		"payments":       []any{},
		"created_at":     timestamp, "updated_at": timestamp, "version": 1,
	}
	if edit != nil {
		edit(inv)
	}
	return inv
}

func errorBody(code, requestID string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": "m", "request_id": requestID}}
}

// send makes one request through the validating client and returns the
// response body, which must still be readable.
func send(t *testing.T, client *http.Client, method, url, body string, header map[string]string) string {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}
