package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/invoicing/invoicing/transport"
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

func TestAccessLogCarriesRequestIDStatusAndDuration(t *testing.T) {
	var logs bytes.Buffer
	srv := httptest.NewServer(transport.NewHandler(transport.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/no/such/route", nil)
	req.Header.Set("X-Request-Id", "trace-42")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var line struct {
		Msg        string   `json:"msg"`
		RequestID  string   `json:"request_id"`
		Status     int      `json:"status"`
		DurationMS *float64 `json:"duration_ms"`
		Path       string   `json:"path"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil {
		t.Fatalf("log is not one JSON line: %v\n%s", err, logs.String())
	}
	if line.Msg != "request" || line.RequestID != "trace-42" || line.Status != 404 || line.DurationMS == nil || line.Path != "/no/such/route" {
		t.Errorf("access log = %+v", line)
	}
}
