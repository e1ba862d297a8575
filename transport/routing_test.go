package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/auth"
)

// TestRoutingEdgeCases pins how the router treats paths that are not
// plainly one of its templates: unclean paths are redirected (301, the
// cleaned path and the query in Location, no body), a trailing slash is no
// route (404, not 405), and percent-encoded characters. The route column is
// the metrics label, which names the template that answered.
func TestRoutingEdgeCases(t *testing.T) {
	m := &fakeMetrics{}
	h := transport.NewHandler(transport.Config{Auth: fakeAuth{}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: m})
	const co = "/v1/companies/0190a0c0-0000-7000-8000-000000000000"
	const inv = co + "/invoices/0190a0c0-0000-7000-8000-000000000001"
	tests := []struct {
		method, target string
		status         int
		location       string // 301's Location
		allow          string // 405's Allow
		route          string // the metrics route label
	}{
		// Unclean paths: 301 to the cleaned path, whatever the method,
		// before any matching (so the route is unmatched).
		{"GET", "//v1/companies", 301, "/v1/companies", "", transport.UnmatchedRoute},
		{"GET", "//v1/companies?limit=2&after=x", 301, "/v1/companies?limit=2&after=x", "", transport.UnmatchedRoute},
		{"POST", "/v1//companies", 301, "/v1/companies", "", transport.UnmatchedRoute},
		{"DELETE", "/v1/companies//", 301, "/v1/companies/", "", transport.UnmatchedRoute},
		{"GET", "/v1/companies/./0190a0c0-0000-7000-8000-000000000000", 301, co, "", transport.UnmatchedRoute},
		{"GET", co + "/invoices/..", 301, co, "", transport.UnmatchedRoute},
		{"GET", "/v1/companies/%2E%2E/events", 301, "/v1/events", "", transport.UnmatchedRoute},
		{"GET", "/v1/companies/%2F", 301, "/v1/companies/", "", transport.UnmatchedRoute},
		{"GET", "/v1/events/x/../", 301, "/v1/events/", "", transport.UnmatchedRoute},
		// A trailing slash is no route: 404, for any method.
		{"GET", "/v1/companies/", 404, "", "", transport.UnmatchedRoute},
		{"POST", "/v1/companies/", 404, "", "", transport.UnmatchedRoute},
		{"DELETE", "/v1/companies/", 404, "", "", transport.UnmatchedRoute},
		{"GET", co + "/", 404, "", "", transport.UnmatchedRoute},
		{"PUT", co + "/", 404, "", "", transport.UnmatchedRoute},
		{"GET", inv + "/issue/", 404, "", "", transport.UnmatchedRoute},
		{"GET", "/healthz/", 404, "", "", transport.UnmatchedRoute},
		// Paths and prefixes that are no route.
		{"GET", "/", 404, "", "", transport.UnmatchedRoute},
		{"DELETE", "/v1", 404, "", "", transport.UnmatchedRoute},
		{"GET", "/V1/companies", 404, "", "", transport.UnmatchedRoute},
		{"GET", co + "/nothing", 404, "", "", transport.UnmatchedRoute},
		{"GET", inv + "/issue/more", 404, "", "", transport.UnmatchedRoute},
		// Percent-encoding: an escaped letter is the letter. An escaped
		// slash is data within its segment, as RFC 3986 has it (so a%2Fb
		// is one segment, whose value "a/b" is no UUID: see
		// TestEncodedSlashIsNoSeparator). gorilla/mux matched the decoded
		// path instead: a%2Fb was two segments (404 here), and
		// {company_id}%2Fcustomers listed the company's customers.
		{"GET", "/v1/comp%61nies", 401, "", "", "/v1/companies"},
		{"GET", "/v1/companies%2F", 404, "", "", transport.UnmatchedRoute},
		{"GET", "/v1/companies/a%2Fb", 401, "", "", "/v1/companies/{company_id}"},
		{"DELETE", "/v1/companies/a%2Fb", 405, "", "GET, HEAD, PATCH", transport.UnmatchedRoute},
		{"GET", co + "%2Fcustomers", 401, "", "", "/v1/companies/{company_id}"},
		{"GET", co + "/customers%2Fx", 404, "", "", transport.UnmatchedRoute},
		// Methods: HEAD answers as GET; any other method on a known path is
		// 405 with the path's methods.
		{"HEAD", inv + "/pdf", 401, "", "", "/v1/companies/{company_id}/invoices/{invoice_id}/pdf"},
		{"HEAD", co + "/archive", 405, "", "POST", transport.UnmatchedRoute},
		{"BREW", "/v1/companies", 405, "", "GET, HEAD, POST", transport.UnmatchedRoute},
		{"PUT", inv, 405, "", "GET, HEAD, PATCH", transport.UnmatchedRoute},
		{"GET", "/v1/webhook_endpoints/x", 401, "", "", "/v1/webhook_endpoints/{webhook_endpoint_id}"},
		{"POST", "/v1/webhook_endpoints/x", 405, "", "DELETE, GET, HEAD, PATCH", transport.UnmatchedRoute},
		{"PATCH", inv, 401, "", "", "/v1/companies/{company_id}/invoices/{invoice_id}"},
	}
	for _, tt := range tests {
		m.requests = nil
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		res := rec.Result()
		if res.StatusCode != tt.status || res.Header.Get("Location") != tt.location || res.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d Location %q Allow %q, want %d %q %q", tt.method, tt.target,
				res.StatusCode, res.Header.Get("Location"), res.Header.Get("Allow"), tt.status, tt.location, tt.allow)
		}
		if tt.status == http.StatusMovedPermanently && rec.Body.Len() != 0 {
			t.Errorf("%s %s: 301 with a body %q", tt.method, tt.target, rec.Body.String())
		}
		if len(m.requests) != 1 || m.requests[0].route != tt.route {
			t.Errorf("%s %s: observed %+v, want route %q", tt.method, tt.target, m.requests, tt.route)
		}
	}
}

// readerAuth accepts the token "reader" as a principal of account acme with
// the read scope.
type readerAuth struct{}

func (readerAuth) Verify(_ context.Context, token string) (auth.Principal, error) {
	if token != "reader" {
		return auth.Principal{}, fmt.Errorf("%w: not the reader token", auth.ErrUnauthenticated)
	}
	return auth.Principal{AccountID: "acme", Subject: "user-1", Scopes: []string{auth.ScopeRead}}, nil
}

// TestEncodedSlashIsNoSeparator: a path parameter with an escaped slash
// reaches its handler as one value, which is no UUID: 422 on that
// parameter, never another route's answer.
func TestEncodedSlashIsNoSeparator(t *testing.T) {
	h := transport.NewHandler(transport.Config{Auth: readerAuth{}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	const co = "/v1/companies/0190a0c0-0000-7000-8000-000000000000"
	for _, tt := range []struct{ target, param string }{
		{"/v1/companies/a%2Fb", "company_id"},
		{co + "%2Fcustomers", "company_id"},
		{co + "/invoices/x%2Fissue", "invoice_id"},
		{"/v1/events/a%2Fb", "event_id"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, tt.target, nil)
		req.Header.Set("Authorization", "Bearer reader")
		h.ServeHTTP(rec, req)
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Details []struct {
					Path string `json:"path"`
				} `json:"details"`
			} `json:"error"`
		}
		err := json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusUnprocessableEntity || err != nil || body.Error.Code != "validation_failed" ||
			len(body.Error.Details) != 1 || body.Error.Details[0].Path != tt.param {
			t.Errorf("GET %s: %d %s, want 422 on %s", tt.target, rec.Code, rec.Body.String(), tt.param)
		}
	}
}
