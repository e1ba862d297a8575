package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestServeWithUnreachableEventStoreDBFailsFast(t *testing.T) {
	env := map[string]string{
		"DATABASE_URL":      pgtest.NewDatabase(t),
		"EVENTSTORE_URL":    "esdb://127.0.0.1:1?tls=false",
		"AUTH_HS256_SECRET": testSecret,
		"HTTP_ADDR":         "127.0.0.1:0",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "EVENTSTORE_URL") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("serve = %v; want a start-up error naming EVENTSTORE_URL and the address", err)
	}
}

func TestConfigurationErrorsAreReportedTogether(t *testing.T) {
	_, err := loadConfig(func(k string) string {
		return map[string]string{"MAX_BODY_BYTES": "lots", "LOG_LEVEL": "loud", "EVENTSTORE_URL": "http://x"}[k]
	})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"DATABASE_URL", "AUTH_JWKS_URL or AUTH_HS256_SECRET", "MAX_BODY_BYTES", "LOG_LEVEL", "EVENTSTORE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestDevTokenIsAcceptedByTheVerifier(t *testing.T) {
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return map[string]string{"AUTH_HS256_SECRET": testSecret}[k] }
	if err := run(context.Background(), []string{"dev-token", "--org", "acme", "--scope", "invoicing:read"}, getenv, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	s := newService(t)
	mustStatus(t, s.get(t, "/v1/companies", strings.TrimSpace(out.String())), 200)
	if err := run(context.Background(), []string{"dev-token"}, getenv, &out, &errOut); err == nil {
		t.Error("dev-token without --org succeeded")
	}
}

func TestEventStoreURLSchemes(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"esdb://localhost:2113?tls=false", true},
		{"esdb+discover://cluster.example:2113", true},
		{"kurrent://localhost:2113?tls=false", true},
		{"kurrent+discover://cluster.example:2113", true},
		{"kurrentdb://admin:changeit@localhost:2113", true},
		{"kurrentdb+discover://cluster.example:2113", true},
		{"KurrentDB://localhost:2113", true},
		{"postgres://localhost:5432/invoicing", false},
		{"http://localhost:2113", false},
		{"esdb+dns://localhost:2113", false},
		{"localhost:2113", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := loadConfig(func(k string) string {
				return map[string]string{"DATABASE_URL": "postgres://localhost/x", "AUTH_HS256_SECRET": testSecret, "EVENTSTORE_URL": tt.url}[k]
			})
			if tt.ok && err != nil {
				t.Errorf("loadConfig = %v, want ok", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "EVENTSTORE_URL")) {
				t.Errorf("loadConfig = %v, want an error naming EVENTSTORE_URL", err)
			}
		})
	}
}

func TestEventStoreURLErrorHidesThePassword(t *testing.T) {
	_, err := loadConfig(func(k string) string {
		return map[string]string{"DATABASE_URL": "postgres://localhost/x", "AUTH_HS256_SECRET": testSecret, "EVENTSTORE_URL": "kurentdb://admin:s3cret@localhost:2113"}[k]
	})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), `"kurentdb"`) {
		t.Errorf("loadConfig = %v, want an error naming the scheme but not the password", err)
	}
}

// rawExchange sends raw bytes to the service on a new connection and reads
// one response.
func rawExchange(t *testing.T, s *service, raw string) (response, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}, time.Since(start)
}

func TestServerAnswersUnreadableRequestsInTheErrorShape(t *testing.T) {
	s := newService(t)
	r, _ := rawExchange(t, s, "GET /healthz HTTP/1.1\r\n\r\n") // no Host
	mustStatus(t, r, http.StatusBadRequest)
	if code := errorCode(t, r); code != "malformed_request" {
		t.Errorf("code = %q, want malformed_request", code)
	}
}
