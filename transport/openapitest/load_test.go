package openapitest_test

import (
	"context"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/openapitest"
)

// TestEmbeddedDocument checks that the served document is OpenAPI 3.1 and
// that it loads and validates, here and (through Operations) in the helper.
func TestEmbeddedDocument(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(transport.OpenAPIDocument())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	// The spec's quantity pattern is an ECMA-262 look-ahead that Go cannot
	// compile (nor can its example validation); the rest must validate as
	// written.
	err = doc.Validate(context.Background(), openapi3.DisableSchemaPatternValidation(), openapi3.DisableExamplesValidation())
	if err != nil {
		t.Errorf("validate: %v", err)
	}
	if _, err := openapitest.Operations(transport.OpenAPIDocument()); err != nil {
		t.Errorf("the helper rejects the document: %v", err)
	}
}

func TestOperations(t *testing.T) {
	got, err := openapitest.Operations(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /healthz",
		"GET /readyz",
		"GET /v1/companies",
		"GET /v1/companies/{company_id}",
		"GET /v1/companies/{company_id}/customers",
		"GET /v1/companies/{company_id}/customers/{customer_id}",
		"GET /v1/companies/{company_id}/invoices",
		"GET /v1/companies/{company_id}/invoices/{invoice_id}",
		"GET /v1/openapi.yaml",
		"POST /v1/companies",
		"POST /v1/companies/{company_id}/customers",
		"POST /v1/companies/{company_id}/invoices",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/issue",
		"POST /v1/companies/{company_id}/invoices/{invoice_id}/void",
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
// error status the Error schema as application/json.
func TestErrorResponses(t *testing.T) {
	reads := []string{"200", "401", "403", "404", "422", "500", "503"}
	creates := []string{"201", "400", "401", "403", "404", "408", "409", "413", "415", "422", "500", "503"}
	lifecycle := slices.Clone(creates)
	lifecycle[0] = "200"
	want := map[string][]string{
		"createCompany": slices.DeleteFunc(slices.Clone(creates), func(s string) bool { return s == "404" }),
		"listCompanies": reads, "getCompany": reads,
		"createCustomer": creates, "listCustomers": reads, "getCustomer": reads,
		"createInvoice": creates, "listInvoices": reads, "getInvoice": reads,
		"issueInvoice": lifecycle, "voidInvoice": lifecycle,
		"getOpenAPI": {"200"}, "healthz": {"200", "503"}, "readyz": {"200", "503"},
	}
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
			public := op.Security != nil && len(*op.Security) == 0
			if wantPublic := len(want[op.OperationID]) <= 2; public != wantPublic {
				t.Errorf("%s: public = %v, want %v", op.OperationID, public, wantPublic)
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
