package transport_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/transport"
)

type observedRequest struct {
	route, method string
	status        int
}

type fakeMetrics struct {
	mu       sync.Mutex
	requests []observedRequest
}

func (m *fakeMetrics) Request(route, method string, status int, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, observedRequest{route, method, status})
}

func (m *fakeMetrics) Command(string, bool) {}

func TestMetricsLabelRequestsByRouteTemplate(t *testing.T) {
	m := &fakeMetrics{}
	srv := httptest.NewServer(transport.NewHandler(transport.Config{
		Logger: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), Metrics: m,
	}))
	defer srv.Close()
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/healthz"},
		{http.MethodGet, "/no/such/route"},
		{"BREW", "/healthz"},
		{http.MethodGet, "/v1/companies/0190c0de-0000-7000-8000-000000000001"},
	} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, nil)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	want := []observedRequest{
		{"/healthz", "GET", 200},
		{transport.UnmatchedRoute, "GET", 404},
		{transport.UnmatchedRoute, transport.OtherMethod, 405},
		{"/v1/companies/{company_id}", "GET", 401},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Equal(m.requests, want) {
		t.Errorf("observed %+v, want %+v", m.requests, want)
	}
}

func TestEveryWriteOperationHasACommandKind(t *testing.T) {
	ops, err := transport.Operations()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, op := range ops {
		kind := transport.CommandKind(op)
		if strings.HasPrefix(op, http.MethodPost+" ") && kind == "" {
			t.Errorf("%s has no command kind for metrics", op)
		}
		if kind != "" {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, transport.CommandKinds()) {
		t.Errorf("kinds of the routed operations %v, CommandKinds %v", kinds, transport.CommandKinds())
	}
}
