package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/auth"
	"github.com/invoicing/invoicing/transport/openapitest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const testSecret = "test-secret-of-at-least-32-bytes!!"

// service is the whole service, wired as serve wires it, on a fresh
// database, listening on a loopback port. Its client validates every request
// and response against the OpenAPI document.
type service struct {
	t      testing.TB
	url    string
	client *http.Client
	pool   *pgxpool.Pool
	app    *app
	dbURL  string
}

func testConfig(t testing.TB) config {
	t.Helper()
	return config{
		DatabaseURL:   pgtest.NewDatabase(t),
		MaxBodyBytes:  1 << 20,
		ShutdownGrace: 10 * time.Second, // over net/http's 5 s allowance for new, unused connections
		WaitTimeout:   5 * time.Second,
		Auth:          authConfig{HS256Secret: testSecret, OrgClaim: "org_id"},
	}
}

// newService starts the service; edit may adjust the configuration.
func newService(t testing.TB, edit ...func(*config)) *service {
	t.Helper()
	cfg := testConfig(t)
	for _, e := range edit {
		e(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := open(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, ln, cfg.ShutdownGrace) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		a.close()
	})
	return &service{
		t: t, url: "http://" + ln.Addr().String(), pool: a.pool, app: a, dbURL: cfg.DatabaseURL,
		client: openapitest.NewClient(t, transport.OpenAPIDocument()),
	}
}

// token mints an HS256 token for org with scopes (default read and write).
func token(t testing.TB, org string, scopes ...string) string {
	t.Helper()
	if scopes == nil {
		scopes = []string{auth.ScopeRead, auth.ScopeWrite}
	}
	tok, err := auth.MintDevToken([]byte(testSecret), auth.DevClaims{Org: org, Subject: "user-1", Scopes: scopes, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// object decodes the body as a JSON object.
func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// request is one HTTP call; zero fields are left out.
type request struct {
	method, path, token, key, body string
	contentType                    string
	headers                        map[string]string
}

func (s *service) do(t *testing.T, req request) response {
	t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	hr, err := http.NewRequest(req.method, s.url+req.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	if req.key != "" {
		hr.Header.Set("Idempotency-Key", req.key)
	}
	if req.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	for k, v := range req.headers {
		hr.Header.Set(k, v)
	}
	res, err := s.client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (s *service) get(t *testing.T, path, tok string) response {
	t.Helper()
	return s.do(t, request{method: http.MethodGet, path: path, token: tok})
}

func (s *service) post(t *testing.T, path, tok, key, body string) response {
	t.Helper()
	return s.do(t, request{method: http.MethodPost, path: path, token: tok, key: key, body: body})
}

// mustStatus fails the test unless r has the status.
func mustStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.status, status, r.body)
	}
}

// errorCode returns error.code of an error body, checking its shape.
func errorCode(t *testing.T, r response) string {
	t.Helper()
	m := r.object(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error body: %s", r.body)
	}
	if e["request_id"] != r.header.Get("X-Request-Id") || e["request_id"] == "" {
		t.Fatalf("error.request_id %v != X-Request-Id %q", e["request_id"], r.header.Get("X-Request-Id"))
	}
	code, _ := e["code"].(string)
	return code
}

// detailPaths returns the paths of error.details.
func detailPaths(t *testing.T, r response) []string {
	t.Helper()
	e, _ := r.object(t)["error"].(map[string]any)
	items, _ := e["details"].([]any)
	var paths []string
	for _, it := range items {
		d, _ := it.(map[string]any)
		p, _ := d["path"].(string)
		paths = append(paths, p)
	}
	return paths
}

// compactJSON normalises a JSON body for byte-wise comparison.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact: %v", err)
	}
	return buf.String()
}
