package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/auth"
	"github.com/invoicing/invoicing/transport/openapitest"
)

func TestHealthAndReadinessNeedNoToken(t *testing.T) {
	var ready error
	h := transport.NewHandler(transport.Config{
		Logger: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)),
		Ready:  func(context.Context) error { return ready },
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := openapitest.NewClient(t, transport.OpenAPIDocument())
	tests := []struct {
		path     string
		notReady error
		want     int
	}{
		{"/healthz", nil, 200},
		{"/readyz", nil, 200},
		{"/readyz", errors.New("database down"), 503},
		{"/healthz", errors.New("database down"), 200},
		{"/v1/openapi.yaml", nil, 200},
	}
	for _, tt := range tests {
		ready = tt.notReady
		res, err := client.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("GET %s with readiness %v = %d, want %d", tt.path, tt.notReady, res.StatusCode, tt.want)
		}
	}
}

// fakeAuth accepts the token "good" as a principal of account acme without
// any scope, and refuses every other.
type fakeAuth struct{}

func (fakeAuth) Verify(_ context.Context, token string) (auth.Principal, error) {
	if token != "good" {
		return auth.Principal{}, fmt.Errorf("%w: not the good token", auth.ErrUnauthenticated)
	}
	return auth.Principal{AccountID: "acme", Subject: "user-1"}, nil
}

type accessLine struct {
	Msg        string   `json:"msg"`
	RequestID  string   `json:"request_id"`
	Method     string   `json:"method"`
	Status     int      `json:"status"`
	DurationMS *float64 `json:"duration_ms"`
	Path       string   `json:"path"`
	RemoteAddr string   `json:"remote_addr"`
	AccountID  *string  `json:"account_id"`
}

func TestAccessLogCarriesRequestIDStatusDurationClientAndAccount(t *testing.T) {
	var logs bytes.Buffer
	srv := httptest.NewServer(transport.NewHandler(transport.Config{Auth: fakeAuth{}, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	defer srv.Close()
	tests := []struct {
		path, token, requestID string
		status                 int
		account                string // "" for none logged
	}{
		{"/no/such/route", "", "trace-42", 404, ""},
		{"/v1/companies", "", "trace-43", 401, ""},
		{"/v1/companies", "bad", "trace-44", 401, ""},
		{"/v1/companies", "good", "trace-45", 403, "acme"}, // verified, but no scope
	}
	for _, tt := range tests {
		logs.Reset()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tt.path, nil)
		req.Header.Set("X-Request-Id", tt.requestID)
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		var line accessLine
		if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil {
			t.Fatalf("log is not one JSON line: %v\n%s", err, logs.String())
		}
		host, _, err := net.SplitHostPort(line.RemoteAddr)
		if line.Msg != "request" || line.RequestID != tt.requestID || line.Status != tt.status || line.DurationMS == nil ||
			line.Path != tt.path || line.Method != "GET" || err != nil || host != "127.0.0.1" {
			t.Errorf("%s with token %q: access log = %+v", tt.path, tt.token, line)
		}
		if got := line.AccountID; (tt.account == "") != (got == nil) || got != nil && *got != tt.account {
			t.Errorf("%s with token %q: account_id = %v, want %q", tt.path, tt.token, got, tt.account)
		}
	}
}

// TestHTTPConventionsWithoutADatabase checks, through the validating
// client, the conventions that need no read model: 401's challenge,
// HEAD, and 405's Allow (the end-to-end tests in cmd/invoicing cover the
// rest).
func TestHTTPConventionsWithoutADatabase(t *testing.T) {
	srv := httptest.NewServer(transport.NewHandler(transport.Config{Auth: fakeAuth{}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	defer srv.Close()
	client := openapitest.NewClient(t, transport.OpenAPIDocument())
	tests := []struct {
		method, path, token string
		status              int
		header, value       string
	}{
		{"GET", "/v1/companies", "", 401, "WWW-Authenticate", `Bearer realm="invoicing"`},
		{"GET", "/v1/companies", "bad", 401, "WWW-Authenticate",
			`Bearer realm="invoicing", error="invalid_token", error_description="The access token is malformed, expired or not issued for this service."`},
		{"HEAD", "/v1/companies", "", 401, "WWW-Authenticate", `Bearer realm="invoicing"`},
		{"HEAD", "/healthz", "", 200, "Content-Type", "application/json"},
		{"HEAD", "/v1/openapi.yaml", "", 200, "Content-Type", "application/yaml"},
		{"POST", "/healthz", "", 405, "Allow", "GET, HEAD"},
		{"DELETE", "/v1/companies", "", 405, "Allow", "GET, HEAD, POST"},
		{"PUT", "/v1/companies/0190a0c0-0000-7000-8000-000000000000", "", 405, "Allow", "GET, HEAD, PATCH"},
		{"GET", "/v1/companies/x/invoices/y/issue", "", 405, "Allow", "POST"},
		{"HEAD", "/v1/companies/x/invoices/y/void", "", 405, "Allow", "POST"},
		{"OPTIONS", "/v1/companies/x/customers", "", 405, "Allow", "GET, HEAD, POST"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tt.status || res.Header.Get(tt.header) != tt.value {
			t.Errorf("%s %s: %d %s: %q, want %d %q", tt.method, tt.path, res.StatusCode, tt.header, res.Header.Get(tt.header), tt.status, tt.value)
		}
		if tt.method == http.MethodHead && len(body) != 0 {
			t.Errorf("%s %s: a body of %d bytes", tt.method, tt.path, len(body))
		}
	}
}
