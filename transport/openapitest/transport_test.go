package openapitest_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/openapitest"
)

func TestTransport(t *testing.T) {
	const validCreate = `{"legal_name":"Acme GmbH","trading_name":null,"default_currency":"EUR",` +
		`"address":{"line_1":"a","postal_code":"1","city":"b","country_code":"DE","region":null}}`
	json := map[string]string{"Content-Type": "application/json"}
	idempotent := map[string]string{"Content-Type": "application/json", "idempotency-key": "key-00000001"}
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		reply  reply
		// want is a fragment of the violation reported; "" means none.
		want string
	}{
		{name: "a conforming response passes", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(nil)}},
		{name: "a response with an extra field is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["owner"] = "x" })},
			want:  "getCompany (GET /v1/companies/" + companyID + "): response 200 violates"},
		{name: "a response missing a nullable key is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { delete(c, "archived_at") })},
			want:  "archived_at"},
		{name: "a response missing a defaulted key is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { delete(c, "identifiers") })},
			want:  "identifiers"},
		{name: "a response field of the wrong type is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["version"] = "1" })},
			want:  "version"},
		{name: "null where the field is not nullable is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["email"] = nil })},
			want:  "email"},
		{name: "a status the operation does not list is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 409, body: errorBody("idempotency_key_reused", "req-1")},
			want:  "status is not supported"},
		{name: "a listed error status in the Error shape passes", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 404, body: errorBody("not_found", "req-1")}},
		{name: "an error body not in the Error shape is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 404, body: map[string]any{"message": "not found"}},
			want:  "response 404 violates"},
		{name: "an error whose request_id differs from X-Request-Id is reported", method: "GET",
			path: "/v1/companies/" + companyID, reply: reply{status: 404, body: errorBody("not_found", "other")},
			want: "differs from the X-Request-Id header"},
		{name: "a response without X-Request-Id is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, requestID: "-", body: company(nil)},
			want:  "X-Request-Id"},
		{name: "a timestamp not in UTC is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["created_at"] = "2025-03-01T10:30:00+01:00" })},
			want:  "created_at"},
		{name: "a malformed email is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["email"] = "Acme <a@b.example>" })},
			want:  "email"},
		{name: "a non-UUID id is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(func(c map[string]any) { c["id"] = "42" })},
			want:  "id"},
		{name: "an impossible date is reported", method: "GET",
			path:  "/v1/companies/" + companyID + "/invoices/" + invoiceID,
			reply: reply{status: 200, body: invoice(func(inv map[string]any) { inv["issue_date"] = "2025-02-30" })},
			want:  "issue_date"},
		{name: "a schema-violating request answered 422 passes", method: "POST", path: "/v1/companies",
			body: `{"legal_name":5}`, header: json,
			reply: reply{status: 422, body: errorBody("validation_failed", "req-1")}},
		{name: "a request without idempotency-key answered 400 passes", method: "POST", path: "/v1/companies",
			body: validCreate, header: json,
			reply: reply{status: 400, body: errorBody("malformed_request", "req-1")}},
		{name: "a request with a bad path UUID answered 422 passes", method: "GET", path: "/v1/companies/nope",
			reply: reply{status: 422, body: errorBody("validation_failed", "req-1")}},
		{name: "a schema-violating request answered 201 is reported", method: "POST", path: "/v1/companies",
			body: `{"legal_name":5}`, header: idempotent, reply: reply{status: 201, body: company(nil)},
			want: "createCompany (POST /v1/companies): request violates the document, yet the server answered 201"},
		{name: "a request without idempotency-key answered 201 is reported", method: "POST", path: "/v1/companies",
			body: validCreate, header: json, reply: reply{status: 201, body: company(nil)},
			want: "idempotency-key"},
		{name: "a conforming create with nulls for optional fields passes", method: "POST", path: "/v1/companies",
			body: validCreate, header: idempotent, reply: reply{status: 201, body: company(nil)}},
		{name: "an undeclared query parameter answered 200 is reported", method: "GET", path: "/v1/companies?color=red",
			reply: reply{status: 200, body: map[string]any{"data": []any{company(nil)},
				"pagination": map[string]any{"next_cursor": nil}}},
			want: "undeclared query parameters"},
		{name: "a conforming list page passes", method: "GET", path: "/v1/companies?limit=1&after=abc_-9",
			reply: reply{status: 200, body: map[string]any{"data": []any{company(nil)},
				"pagination": map[string]any{"next_cursor": "Zm9v"}}}},
		{name: "a conforming invoice passes", method: "GET",
			path:  "/v1/companies/" + companyID + "/invoices/" + invoiceID,
			reply: reply{status: 200, body: invoice(nil)}},
		{name: "a zero quantity is reported", method: "GET",
			path: "/v1/companies/" + companyID + "/invoices/" + invoiceID,
			reply: reply{status: 200, body: invoice(func(inv map[string]any) {
				inv["lines"].([]any)[0].(map[string]any)["quantity"] = "0.000"
			})},
			want: "quantity"},
		{name: "an unknown status is reported", method: "GET",
			path:  "/v1/companies/" + companyID + "/invoices/" + invoiceID,
			reply: reply{status: 200, body: invoice(func(inv map[string]any) { inv["status"] = "paid" })},
			want:  "status"},
		{name: "an unknown path answered 404 in the Error shape passes", method: "GET", path: "/v2/nothing",
			reply: reply{status: 404, body: errorBody("not_found", "req-1")}},
		{name: "an unknown method answered 405 with Allow in the Error shape passes", method: "DELETE", path: "/v1/companies",
			reply: reply{status: 405, body: errorBody("method_not_allowed", "req-1"), header: map[string]string{"Allow": "GET, HEAD, POST"}}},
		{name: "a 405 without Allow is reported", method: "DELETE", path: "/v1/companies",
			reply: reply{status: 405, body: errorBody("method_not_allowed", "req-1")},
			want:  `response header "Allow" missing`},
		{name: "a 405 whose Allow is not the path's methods is reported", method: "PUT", path: "/v1/companies/" + companyID,
			reply: reply{status: 405, body: errorBody("method_not_allowed", "req-1"), header: map[string]string{"Allow": "GET, POST"}},
			want:  `want the path's methods "GET, HEAD, PATCH"`},
		{name: "a 405 not in the Error shape is reported", method: "DELETE", path: "/v1/companies",
			reply: reply{status: 405, body: map[string]any{"message": "no"}, header: map[string]string{"Allow": "GET, HEAD, POST"}},
			want:  "response 405 violates"},
		{name: "a known path answered 200 to a method it lacks is reported", method: "DELETE", path: "/v1/companies",
			reply: reply{status: 200, body: map[string]any{}},
			want:  "want 405 with Allow"},
		{name: "a get without ETag is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(nil), header: map[string]string{"ETag": ""}},
			want:  `response header "ETag" missing`},
		{name: "a strong ETag is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(nil), header: map[string]string{"ETag": `"abc"`}},
			want:  "ETag"},
		{name: "a 304 with its ETag and no body passes", method: "GET", path: "/v1/companies/" + companyID,
			header: map[string]string{"If-None-Match": `W/"x"`}, reply: reply{status: 304, body: ""}},
		{name: "a 304 without ETag is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 304, body: "", header: map[string]string{"ETag": ""}},
			want:  `response header "ETag" missing`},
		{name: "a 304 to a list is reported", method: "GET", path: "/v1/companies",
			reply: reply{status: 304, body: ""},
			want:  "status is not supported"},
		{name: "a create without Location is reported", method: "POST", path: "/v1/companies",
			body: validCreate, header: idempotent, reply: reply{status: 201, body: company(nil), header: map[string]string{"Location": ""}},
			want: `response header "Location" missing`},
		{name: "a replayed create saying so passes", method: "POST", path: "/v1/companies",
			body: validCreate, header: idempotent, reply: reply{status: 201, body: company(nil), header: map[string]string{"Idempotent-Replayed": "true"}}},
		{name: "an Idempotent-Replayed other than true is reported", method: "POST", path: "/v1/companies",
			body: validCreate, header: idempotent, reply: reply{status: 201, body: company(nil), header: map[string]string{"Idempotent-Replayed": "yes"}},
			want: "Idempotent-Replayed"},
		{name: "a 401 with a bearer challenge passes", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 401, body: errorBody("unauthenticated", "req-1"), header: map[string]string{"WWW-Authenticate": `Bearer realm="invoicing"`}}},
		{name: "a 401 without WWW-Authenticate is reported", method: "GET", path: "/v1/companies/" + companyID,
			reply: reply{status: 401, body: errorBody("unauthenticated", "req-1")},
			want:  `response header "WWW-Authenticate" missing`},
		{name: "a conforming HEAD passes", method: "HEAD", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(nil)}},
		{name: "a HEAD without ETag is reported", method: "HEAD", path: "/v1/companies/" + companyID,
			reply: reply{status: 200, body: company(nil), header: map[string]string{"ETag": ""}},
			want:  `getCompany (HEAD /v1/companies/` + companyID + `): response 200 violates the document: response header "ETag" missing`},
		{name: "a HEAD of an unknown path answered 404 passes", method: "HEAD", path: "/v2/nothing",
			reply: reply{status: 404, body: errorBody("not_found", "req-1")}},
		{name: "a HEAD of a path without GET answered 405 passes", method: "HEAD",
			path:  "/v1/companies/" + companyID + "/invoices/" + invoiceID + "/issue",
			reply: reply{status: 405, body: errorBody("method_not_allowed", "req-1"), header: map[string]string{"Allow": "POST"}}},
		{name: "an unknown path answered 200 is reported", method: "GET", path: "/v2/nothing",
			reply: reply{status: 200, body: map[string]any{}},
			want:  "GET /v2/nothing (no operation in the document): response 200"},
		{name: "an unknown path answered 404 as plain text is reported", method: "GET", path: "/v2/nothing",
			reply: reply{status: 404, contentType: "text/plain", body: "404 page not found"},
			want:  "Content-Type"},
		{name: "health probes pass", method: "GET", path: "/readyz",
			reply: reply{status: 503, body: map[string]any{"status": "unavailable"}}},
		{name: "the document is served as YAML", method: "GET", path: "/v1/openapi.yaml",
			reply: reply{status: 200, contentType: "application/yaml", body: string(transport.OpenAPIDocument())}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, tt.reply, tt.body)
			rec := &recorder{TB: t}
			client := &http.Client{Transport: openapitest.NewTransport(rec, transport.OpenAPIDocument(), nil)}
			got := send(t, client, tt.method, srv.URL+tt.path, tt.body, tt.header)
			if want, ok := tt.reply.body.(string); ok && got != want {
				t.Errorf("caller read body %q, want %q", got, want)
			}
			reported := rec.reported()
			for _, r := range reported {
				t.Log(r)
			}
			switch {
			case tt.want == "" && len(reported) > 0:
				t.Errorf("reported %q, want no violation", reported)
			case tt.want != "" && !strings.Contains(strings.Join(reported, "\n"), tt.want):
				t.Errorf("reported %q, want a violation containing %q", reported, tt.want)
			}
		})
	}
}

// TestNewClient checks the client variant, and that a caller still reads
// the response body after validation consumed it.
func TestNewClient(t *testing.T) {
	srv := fakeServer(t, reply{status: 200, body: map[string]any{"status": "ok"}}, "")
	client := openapitest.NewClient(t, transport.OpenAPIDocument())
	if got := send(t, client, "GET", srv.URL+"/healthz", "", nil); got != "{\"status\":\"ok\"}\n" {
		t.Errorf("body = %q, want the server's", got)
	}
}

// TestConcurrentUse runs exchanges in parallel through one transport, as the
// idempotency tests do (run with -race).
func TestConcurrentUse(t *testing.T) {
	srv := fakeServer(t, reply{status: 200, body: invoice(nil)}, "")
	rec := &recorder{TB: t}
	client := &http.Client{Transport: openapitest.NewTransport(rec, transport.OpenAPIDocument(), nil)}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			send(t, client, "GET", srv.URL+"/v1/companies/"+companyID+"/invoices/"+invoiceID, "", nil)
		})
	}
	wg.Wait()
	if reported := rec.reported(); len(reported) > 0 {
		t.Errorf("reported %q, want no violation", reported)
	}
}
