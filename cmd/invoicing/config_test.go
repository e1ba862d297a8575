package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/audit"
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

// rawExchange sends raw bytes to the service on a new connection, reads one
// response, and reports how long it took and whether the server then closed
// the connection.
func rawExchange(t *testing.T, s *service, raw string) (r response, took time.Duration, closed bool) {
	t.Helper()
	// The clock starts before the dial: the server starts its read deadline
	// when it accepts, which can come before Dial returns here.
	start := time.Now()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	took = time.Since(start)
	_, err = br.ReadByte()
	return response{status: res.StatusCode, header: res.Header, body: body}, took, err == io.EOF
}

func TestServerAnswersUnreadableRequestsInTheErrorShape(t *testing.T) {
	s := newService(t)
	r, _, closed := rawExchange(t, s, "GET /healthz HTTP/1.1\r\n\r\n") // no Host
	mustStatus(t, r, http.StatusBadRequest)
	if code := errorCode(t, r); code != "malformed_request" || !closed {
		t.Errorf("code = %q, connection closed %v; want malformed_request, true", code, closed)
	}
}

func TestHTTPTimeouts(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://localhost/x", "AUTH_HS256_SECRET": testSecret}
	load := func(extra map[string]string) (config, error) {
		return loadConfig(func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		})
	}
	cfg, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := httpTimeouts{ReadHeader: DefaultReadHeaderTimeout, Read: DefaultReadTimeout, Write: DefaultWriteTimeout, Idle: DefaultIdleTimeout}
	if cfg.HTTP != want || want != (httpTimeouts{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute}) {
		t.Errorf("defaults = %+v, want %+v", cfg.HTTP, want)
	}

	cfg, err = load(map[string]string{"HTTP_READ_TIMEOUT": "4s", "HTTP_WRITE_TIMEOUT": "1m30s", "HTTP_IDLE_TIMEOUT": "5m"})
	if err != nil {
		t.Fatal(err)
	}
	// The header timeout is never longer than the whole request's.
	want = httpTimeouts{ReadHeader: 4 * time.Second, Read: 4 * time.Second, Write: 90 * time.Second, Idle: 5 * time.Minute}
	if cfg.HTTP != want {
		t.Errorf("overridden = %+v, want %+v", cfg.HTTP, want)
	}

	for _, bad := range []map[string]string{
		{"HTTP_READ_TIMEOUT": "30"},
		{"HTTP_READ_TIMEOUT": "0s"},
		{"HTTP_WRITE_TIMEOUT": "-1m"},
		{"HTTP_IDLE_TIMEOUT": "soon"},
		{"HTTP_WRITE_TIMEOUT": "30s"},                           // not over 30 s read + 5 s wait
		{"HTTP_READ_TIMEOUT": "1m", "HTTP_WRITE_TIMEOUT": "1m"}, // idem
	} {
		_, err := load(bad)
		for name := range bad {
			if err == nil || !strings.Contains(err.Error(), "HTTP_") {
				t.Errorf("%s=%s: loadConfig = %v, want an error naming it", name, bad[name], err)
			}
		}
	}
}

func TestAStalledBodyGets408InTheErrorShape(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	s := newService(t, func(c *config) { c.HTTP = httpTimeouts{Read: readTimeout, Write: 10 * time.Second} })
	// Headers promise 100 bytes; 10 come, then nothing.
	r, took, closed := rawExchange(t, s, "POST /v1/companies HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: Bearer "+token(t, "acme")+"\r\nIdempotency-Key: stalled-body-1\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": \"")
	mustStatus(t, r, http.StatusRequestTimeout)
	if code := errorCode(t, r); code != "request_timeout" {
		t.Errorf("code = %q, want request_timeout", code)
	}
	if !closed {
		t.Error("the connection stays open, but the rest of the body may still come")
	}
	if took < readTimeout || took > readTimeout+2*time.Second {
		t.Errorf("answered after %s, want about %s", took, readTimeout)
	}
}

func TestAuditSettings(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://x", "AUTH_HS256_SECRET": testSecret}
	seed := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // "" when valid
		check   func(auditConfig) bool
	}{
		{"defaults", nil, "", func(a auditConfig) bool {
			return !a.Off && a.SigningKey == nil && a.SealEvery == audit.DefaultSealEvery && a.SealInterval == audit.DefaultSealInterval
		}},
		{"a signing key", map[string]string{"AUDIT_SIGNING_KEY": seed}, "", func(a auditConfig) bool { return a.SigningKey != nil }},
		{"a short key", map[string]string{"AUDIT_SIGNING_KEY": "c2hvcnQ="}, "AUDIT_SIGNING_KEY", nil},
		{"seal every 10 events, every 5 s", map[string]string{"AUDIT_SEAL_EVERY": "10", "AUDIT_SEAL_INTERVAL": "5s"}, "",
			func(a auditConfig) bool { return a.SealEvery == 10 && a.SealInterval == 5*time.Second }},
		{"seal every 0 events", map[string]string{"AUDIT_SEAL_EVERY": "0"}, "AUDIT_SEAL_EVERY", nil},
		{"the sealer off", map[string]string{"AUDIT_SEALER": "off"}, "", func(a auditConfig) bool { return a.Off }},
		{"the sealer maybe", map[string]string{"AUDIT_SEALER": "maybe"}, "AUDIT_SEALER", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(overlay(base, tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), seed) {
					t.Fatalf("err = %v, want one naming %s (and never the key)", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg.Audit) {
				t.Fatalf("loadConfig = %+v, %v", cfg.Audit, err)
			}
		})
	}
}

func TestWebhookSettings(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://x", "AUTH_HS256_SECRET": testSecret}
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	short := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // "" when valid
		check   func(webhooksConfig) bool
	}{
		{"defaults", nil, "", func(w webhooksConfig) bool { return !w.AllowPrivateNetworks && w.SecretKey == nil }},
		{"private networks", map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true"}, "",
			func(w webhooksConfig) bool { return w.AllowPrivateNetworks }},
		{"private networks maybe", map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "yes"}, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", nil},
		{"a key", map[string]string{"WEBHOOK_SECRET_KEY": key}, "", func(w webhooksConfig) bool { return len(w.SecretKey) == 32 }},
		{"a short key", map[string]string{"WEBHOOK_SECRET_KEY": short}, "WEBHOOK_SECRET_KEY", nil},
		{"not base64", map[string]string{"WEBHOOK_SECRET_KEY": "not base64!"}, "WEBHOOK_SECRET_KEY", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(overlay(base, tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), short) {
					t.Fatalf("err = %v, want one naming %s (and never the key)", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg.Webhooks) {
				t.Fatalf("loadConfig = %+v, %v", cfg.Webhooks, err)
			}
		})
	}
}

// overlay is a getenv of env over base.
func overlay(base, env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return base[k]
	}
}
