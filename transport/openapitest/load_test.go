package openapitest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/openapitest"
)

// TestEmbeddedDocument checks that the served document is OpenAPI 3.1 and
// that kin-openapi loads and validates it with its defaults (patterns
// compiled, examples checked), here and (through Operations) in the helper.
func TestEmbeddedDocument(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(transport.OpenAPIDocument())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("validate: %v", err)
	}
	if _, err := openapitest.Operations(transport.OpenAPIDocument()); err != nil {
		t.Errorf("the helper rejects the document: %v", err)
	}
}

// TestDocumentValidatesAnInvoiceCreateWithKinDefaults validates create
// requests against the served document as any kin-openapi user would: the
// default loader, validation and router, and no option but the
// authentication hook that kin-openapi needs to accept a secured operation.
// The quantity is checked by the document's own schema.
func TestDocumentValidatesAnInvoiceCreateWithKinDefaults(t *testing.T) {
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for quantity, valid := range map[string]bool{
		"1.5": true, "1": true, "0.001": true, "0.5": true, "999999999.999": true, "10.050": true,
		"0.000": false, "0": false, "01": false, "1.0001": false, "1000000000": false, ".5": false, "1.": false,
	} {
		body := `{"customer_id":"` + customerID + `","issue_date":"2025-03-01","lines":[{"description":"Consulting",` +
			`"quantity":"` + quantity + `","unit_amount_minor":10000,"tax_rate_bps":1900}]}`
		req := httptest.NewRequest(http.MethodPost, "/v1/companies/"+companyID+"/invoices", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "invoice-key-1")
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("find route: %v", err)
		}
		err = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		})
		if valid && err != nil {
			t.Errorf("quantity %q: the valid create is refused: %v", quantity, err)
		}
		if !valid && (err == nil || !strings.Contains(err.Error(), "quantity")) {
			t.Errorf("quantity %q: want a violation at quantity, got %v", quantity, err)
		}
	}
}

func TestOperations(t *testing.T) {
	got, err := openapitest.Operations(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DELETE /v1/webhook_endpoints/{webhook_endpoint_id}",
		"GET /healthz",
		"GET /readyz",
		"GET /v1/companies",
		"GET /v1/companies/{company_id}",
		"GET /v1/companies/{company_id}/credit_notes",
		"GET /v1/companies/{company_id}/credit_notes/{credit_note_id}",
		"GET /v1/companies/{company_id}/credit_notes/{credit_note_id}/einvoice",
		"GET /v1/companies/{company_id}/credit_notes/{credit_note_id}/pdf",
		"GET /v1/companies/{company_id}/customers",
		"GET /v1/companies/{company_id}/customers/{customer_id}",
		"GET /v1/companies/{company_id}/invoices",
		"GET /v1/companies/{company_id}/invoices/{invoice_id}",
		"GET /v1/companies/{company_id}/invoices/{invoice_id}/einvoice",
		"GET /v1/companies/{company_id}/invoices/{invoice_id}/pdf",
		"GET /v1/events",
		"GET /v1/events/{event_id}",
		"GET /v1/openapi.yaml",
		"GET /v1/webhook_endpoints",
		"GET /v1/webhook_endpoints/{webhook_endpoint_id}",
		"GET /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries",
		"PATCH /v1/companies/{company_id}",
		"PATCH /v1/companies/{company_id}/customers/{customer_id}",
		"PATCH /v1/companies/{company_id}/invoices/{invoice_id}",
		"PATCH /v1/webhook_endpoints/{webhook_endpoint_id}",
		"POST /v1/companies",
		"POST /v1/companies/{company_id}/archive",
		"POST /v1/companies/{company_id}/customers",
		"POST /v1/companies/{company_id}/customers/{customer_id}/archive",
		"POST /v1/companies/{company_id}/customers/{customer_id}/unarchive",
		"POST /v1/companies/{company_id}/invoices",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/credit_notes",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/issue",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/payments",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/payments/{payment_id}/reverse",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/void",
		"POST /v1/companies/{company_id}/unarchive",
		"POST /v1/webhook_endpoints",
		"POST /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry",
		"POST /v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Operations() = %q, want %q", got, want)
	}
}

func TestOperationsRejectsAnInvalidDocument(t *testing.T) {
	for name, doc := range map[string]string{
		"not YAML":      "{{{",
		"no info":       "openapi: 3.1.0\npaths: {}\n",
		"bad reference": "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/Nope'}\n",
	} {
		if _, err := openapitest.Operations([]byte(doc)); err == nil {
			t.Errorf("%s: Operations accepted it", name)
		}
	}
}

// TestErrorResponses pins every operation's statuses to the spec's "Errors:"
// lines, and checks that every response carries X-Request-Id and every
// error status the Error schema as application/json. Every operation lists
// 405, the answer of its path to a method it lacks; a get of one resource
// lists 304, the answer to If-None-Match; a write to an existing record
// lists 412, the answer to If-Match.
func TestErrorResponses(t *testing.T) {
	lists := []string{"200", "401", "403", "404", "405", "422", "500", "503"}
	gets := slices.Insert(slices.Clone(lists), 1, "304")
	creates := []string{"201", "400", "401", "403", "404", "405", "408", "409", "413", "415", "422", "500", "503"}
	// A write to an existing record answers 200 and honours If-Match (412).
	lifecycle := slices.Clone(creates)
	lifecycle[0] = "200"
	lifecycle = slices.Insert(lifecycle, slices.Index(lifecycle, "413"), "412")
	want := map[string][]string{
		"createCompany": slices.DeleteFunc(slices.Clone(creates), func(s string) bool { return s == "404" }),
		"listCompanies": lists, "getCompany": gets,
		"updateCompany": lifecycle, "archiveCompany": lifecycle, "unarchiveCompany": lifecycle,
		"createCustomer": creates, "listCustomers": lists, "getCustomer": gets,
		"updateCustomer": lifecycle, "archiveCustomer": lifecycle, "unarchiveCustomer": lifecycle,
		"createInvoice": creates, "listInvoices": lists,
		// The invoice and its documents honour Accept (406); the e-invoice of
		// a draft is 409 (its PDF is stamped DRAFT).
		"getInvoice":         slices.Insert(slices.Clone(gets), 6, "406"),
		"getInvoiceEInvoice": slices.Insert(slices.Clone(gets), 6, "406", "409"),
		"getInvoicePDF":      slices.Insert(slices.Clone(gets), 6, "406"),
		"issueInvoice":       lifecycle, "voidInvoice": lifecycle, "reviseInvoice": lifecycle,
		// A credit note and a payment are created (201) on an invoice, whose
		// payment's reversal is a write to it (If-Match, 412). A credit note
		// and its documents honour Accept (406).
		"issueCreditNote": creates, "recordPayment": creates, "reversePayment": lifecycle,
		"listCreditNotes":       lists,
		"getCreditNote":         slices.Insert(slices.Clone(gets), 6, "406"),
		"getCreditNoteEInvoice": slices.Insert(slices.Clone(gets), 6, "406"),
		"getCreditNotePDF":      slices.Insert(slices.Clone(gets), 6, "406"),
		// A delivery's retry takes no body: no 408, 413 or 415.
		"listWebhookDeliveries": lists,
		"retryWebhookDelivery":  {"200", "400", "401", "403", "404", "405", "422", "500", "503"},
		// The account's event feed has no path record to miss (no 404);
		// one event honours Accept (406).
		"listEvents": slices.DeleteFunc(slices.Clone(lists), func(s string) bool { return s == "404" }),
		"getEvent":   slices.Insert(slices.Clone(gets), 6, "406"),
		"getOpenAPI": {"200", "405"}, "healthz": {"200", "405", "503"}, "readyz": {"200", "405", "503"},
		// Webhook endpoints belong to the account: no list under a record
		// (404); a delete takes no body (408, 413, 415) and answers 204.
		"createWebhookEndpoint": slices.DeleteFunc(slices.Clone(creates), func(s string) bool { return s == "404" }),
		"listWebhookEndpoints":  slices.DeleteFunc(slices.Clone(lists), func(s string) bool { return s == "404" }),
		"getWebhookEndpoint":    gets, "updateWebhookEndpoint": lifecycle, "rotateWebhookSecret": lifecycle,
		"deleteWebhookEndpoint": {"204", "400", "401", "403", "404", "405", "409", "412", "422", "500", "503"},
	}
	public := map[string]bool{"getOpenAPI": true, "healthz": true, "readyz": true}
	doc, err := openapi3.NewLoader().LoadFromData(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			seen++
			var got []string
			for status, ref := range op.Responses.Map() {
				got = append(got, status)
				checkResponse(t, op.OperationID+" "+status, status, ref.Value)
			}
			slices.Sort(got)
			if !slices.Equal(got, want[op.OperationID]) {
				t.Errorf("%s %s (%s): statuses %q, want %q", method, path, op.OperationID, got, want[op.OperationID])
			}
			isPublic := op.Security != nil && len(*op.Security) == 0
			if isPublic != public[op.OperationID] {
				t.Errorf("%s: public = %v, want %v", op.OperationID, isPublic, public[op.OperationID])
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d operations, want %d", seen, len(want))
	}
}

func checkResponse(t *testing.T, name, status string, resp *openapi3.Response) {
	t.Helper()
	if h := resp.Headers["X-Request-Id"]; h == nil || !h.Value.Required {
		t.Errorf("%s: no required X-Request-Id header", name)
	}
	if status < "400" || status == "503" {
		return
	}
	mt := resp.Content.Get("application/json")
	if len(resp.Content) != 1 || mt == nil || mt.Schema.Ref != "#/components/schemas/Error" {
		t.Errorf("%s: content is not the Error schema as application/json", name)
	}
}
