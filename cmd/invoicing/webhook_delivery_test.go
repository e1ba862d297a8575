package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/webhook/migrations"
)

// hookReceiver is a webhook receiver: it answers with answer (200 when
// nil) and keeps every request in arrival order.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []hook
	answer func() int
}

// hook is one request a receiver took.
type hook struct {
	id       string // webhook-id
	header   http.Header
	body     []byte
	event    publicEvent
	status   int
	received time.Time
}

// publicEvent is what a test reads of a delivered public event.
type publicEvent struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	ResourceID string `json:"resource_id"`
}

func newHookReceiver(t testing.TB, answer func() int) *hookReceiver {
	rc := &hookReceiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	h := hook{id: r.Header.Get("webhook-id"), header: r.Header.Clone(), body: body, status: http.StatusOK, received: time.Now()}
	if err != nil || json.Unmarshal(body, &h.event) != nil {
		h.status = http.StatusBadRequest
	} else if rc.answer != nil {
		h.status = rc.answer()
	}
	rc.mu.Lock()
	rc.got = append(rc.got, h)
	rc.mu.Unlock()
	w.WriteHeader(h.status)
}

func (rc *hookReceiver) hooks() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hook(nil), rc.got...)
}

// delivered returns the ids answered 2xx.
func (rc *hookReceiver) delivered() map[string]bool {
	out := map[string]bool{}
	for _, h := range rc.hooks() {
		if h.status < 300 {
			out[h.id] = true
		}
	}
	return out
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fastRetries shortens the retry schedule: retries come after
// milliseconds, so a test sees several in a second.
func fastRetries(c *config) {
	c.Webhooks.AllowPrivateNetworks = true
	c.Delivery = deliveryConfig{RetryFor: time.Hour, DisableAfter: 24 * time.Hour, Timeout: 5 * time.Second,
		BackoffMin: 50 * time.Millisecond, BackoffMax: 500 * time.Millisecond, Workers: 8}
}

// listEvents reads the account's whole public event feed, oldest first.
func (s *service) listEvents(t *testing.T, tok string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	path := "/v1/events?limit=100"
	for {
		res := s.get(t, path, tok)
		mustStatus(t, res, http.StatusOK)
		var page struct {
			Data       []json.RawMessage `json:"data"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		}
		if err := json.Unmarshal(res.body, &page); err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Data...)
		if page.Pagination.NextCursor == nil {
			return out
		}
		path = "/v1/events?limit=100&after=" + *page.Pagination.NextCursor
	}
}

// Every public event reaches a registered endpoint as the Standard
// Webhooks reference library verifies it (with the secret the create
// answered), its body the event as GET /v1/events/{id} shows it; a
// failing endpoint's attempts are in its delivery log, and a retry by
// hand sends again.
func TestDeliveriesAreSignedPublicEventsWithALog(t *testing.T) {
	s := newService(t, fastRetries)
	tok := token(t, "hooked", "invoicing:write")
	var mu sync.Mutex
	failing := false
	rc := newHookReceiver(t, func() int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	_, ep := s.createWebhookEndpoint(t, tok, "hook-endpoint-1", `{"url":"`+rc.URL+`/in"}`)
	secret := mustSecret(t, ep)
	company := s.createCompany(t, tok, "hooked-co", minimalCompany)
	s.createCustomer(t, tok, company["id"].(string), "hooked-cu", minimalCustomer)
	feed := s.listEvents(t, tok)
	if len(feed) != 2 {
		t.Fatalf("%d public events, want 2", len(feed))
	}
	eventually(t, 20*time.Second, "both deliveries", func() bool { return len(rc.delivered()) == 2 })
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range rc.hooks() {
		if err := wh.Verify(h.body, h.header); err != nil {
			t.Errorf("delivery %d does not verify: %v", i, err)
		}
		got := s.get(t, "/v1/events/"+h.id, tok)
		if compactJSON(t, got.body) != compactJSON(t, h.body) || h.event.ID != h.id {
			t.Errorf("delivery %s\n%s\nwant GET /v1/events/%s\n%s", h.id, h.body, h.id, got.body)
		}
	}

	mu.Lock()
	failing = true
	mu.Unlock()
	s.createCustomer(t, tok, company["id"].(string), "hooked-cu-2", minimalCustomer)
	logPath := "/v1/webhook_endpoints/" + ep["id"].(string) + "/deliveries"
	var last map[string]any
	eventually(t, 20*time.Second, "three failed attempts in the log", func() bool {
		res := s.get(t, logPath, tok)
		mustStatus(t, res, http.StatusOK)
		data := res.object(t)["data"].([]any)
		last = data[len(data)-1].(map[string]any)
		return len(data) == 3 && last["attempts"].(float64) >= 3
	})
	attempt := last["attempt_log"].([]any)[0].(map[string]any)
	if last["status"] != "pending" || attempt["status_code"] != float64(http.StatusBadGateway) || last["next_attempt_at"] == nil {
		t.Errorf("delivery %v: want pending, its attempts answered 502, a next attempt", last)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	retried := s.post(t, logPath+"/"+last["id"].(string)+"/retry", tok, "retry-now-1", "")
	mustStatus(t, retried, http.StatusOK)
	eventually(t, 20*time.Second, "the retried delivery", func() bool { return len(rc.delivered()) == 3 })

	// After a rotation both secrets sign for 24 h: a receiver still
	// holding the old one verifies, and so does one holding the new one.
	rot := s.post(t, "/v1/webhook_endpoints/"+ep["id"].(string)+"/rotate_secret", tok, "rotate-hook-1", "")
	mustStatus(t, rot, http.StatusOK)
	newSecret := mustSecret(t, rot.object(t))
	s.createCompany(t, tok, "hooked-co-2", minimalCompany)
	eventually(t, 20*time.Second, "the delivery after the rotation", func() bool { return len(rc.delivered()) == 4 })
	hooks := rc.hooks()
	after := hooks[len(hooks)-1]
	for _, sec := range []string{secret, newSecret} {
		v, _ := standardwebhooks.NewWebhook(sec)
		if err := v.Verify(after.body, after.header); err != nil {
			t.Errorf("the delivery after the rotation does not verify with %s...: %v", sec[:10], err)
		}
	}

	other := token(t, "someone-else", "invoicing:write")
	mustStatus(t, s.get(t, logPath, other), http.StatusNotFound)
	mustStatus(t, s.post(t, logPath+"/"+last["id"].(string)+"/retry", other, "retry-now-2", ""), http.StatusNotFound)
}

// switchingResolver is DNS whose answers a test changes.
type switchingResolver struct {
	mu    sync.Mutex
	hosts map[string]netip.Addr
}

func (r *switchingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.hosts[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &lookupError{host}
}

func (r *switchingResolver) set(host, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[host] = netip.MustParseAddr(addr)
}

// A host that resolved to a public address at registration and resolves
// to loopback, a private network, the metadata service or ::1 at delivery
// is not reached: the attempt fails with the guard's refusal.
func TestADeliveryToAHostNowResolvingInsideIsRefused(t *testing.T) {
	dns := &switchingResolver{hosts: map[string]netip.Addr{}}
	s := newService(t, fastRetries, func(c *config) {
		c.Webhooks.AllowPrivateNetworks = false
		c.Delivery.resolver = dns
	})
	tok := token(t, "rebinding", "invoicing:write")
	now := map[string]string{"loop": "127.0.0.1", "ten": "10.1.2.3", "meta": "169.254.169.254", "six": "::1"}
	var logs []string
	for name := range now {
		host := name + ".hooks.example.com"
		dns.set(host, "93.184.216.34")
		_, ep := s.createWebhookEndpoint(t, tok, "rebind-endpoint-"+name, `{"url":"https://`+host+`/in"}`)
		logs = append(logs, "/v1/webhook_endpoints/"+ep["id"].(string)+"/deliveries")
	}
	for name, addr := range now {
		dns.set(name+".hooks.example.com", addr)
	}
	s.createCompany(t, tok, "rebinding-co", minimalCompany)
	for _, path := range logs {
		eventually(t, 20*time.Second, "a refused attempt at "+path, func() bool {
			data := s.get(t, path, tok).object(t)["data"].([]any)
			if len(data) == 0 || data[0].(map[string]any)["attempts"].(float64) == 0 {
				return false
			}
			a := data[0].(map[string]any)["attempt_log"].([]any)[0].(map[string]any)
			if a["status_code"] != nil || !strings.Contains(a["error"].(string), "network deliveries may not reach") {
				t.Fatalf("attempt %v: want no status and the guard's refusal", a)
			}
			return true
		})
	}
}

func TestWebhookDeliverySettings(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://x", "AUTH_HS256_SECRET": testSecret}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // "" when valid
		check   func(deliveryConfig) bool
	}{
		{"defaults", nil, "", func(d deliveryConfig) bool {
			return d.RetryFor == 72*time.Hour && d.DisableAfter == 120*time.Hour && d.Timeout == 10*time.Second &&
				d.BackoffMin == 5*time.Second && d.BackoffMax == time.Hour && d.Workers == 16 && d.Retention == 30*24*time.Hour
		}},
		{"shorter", map[string]string{"WEBHOOK_RETRY_FOR": "1h", "WEBHOOK_DISABLE_AFTER": "2h", "WEBHOOK_TIMEOUT": "3s",
			"WEBHOOK_BACKOFF_MIN": "10ms", "WEBHOOK_BACKOFF_MAX": "1s", "WEBHOOK_WORKERS": "4", "WEBHOOK_DELIVERY_RETENTION": "168h"},
			"", func(d deliveryConfig) bool {
				return d.RetryFor == time.Hour && d.DisableAfter == 2*time.Hour && d.Timeout == 3*time.Second &&
					d.BackoffMin == 10*time.Millisecond && d.BackoffMax == time.Second && d.Workers == 4 && d.Retention == 7*24*time.Hour
			}},
		{"a timeout that is no duration", map[string]string{"WEBHOOK_TIMEOUT": "10"}, "WEBHOOK_TIMEOUT", nil},
		{"no retention", map[string]string{"WEBHOOK_DELIVERY_RETENTION": "0s"}, "WEBHOOK_DELIVERY_RETENTION", nil},
		{"a cap below the first delay", map[string]string{"WEBHOOK_BACKOFF_MIN": "2s", "WEBHOOK_BACKOFF_MAX": "1s"}, "WEBHOOK_BACKOFF_MAX", nil},
		{"no workers", map[string]string{"WEBHOOK_WORKERS": "0"}, "WEBHOOK_WORKERS", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(overlay(base, tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg.Delivery) {
				t.Fatalf("loadConfig = %+v, %v", cfg.Delivery, err)
			}
		})
	}
}

// The delivery metrics: attempts by result, and the shared queue's
// retries pending and oldest pending age, while a receiver fails and once
// it recovers.
func TestWebhookMetrics(t *testing.T) {
	s := newService(t, fastRetries, func(c *config) { c.MetricsAddr = "127.0.0.1:0" })
	tok := token(t, "metered", "invoicing:write")
	var mu sync.Mutex
	up := false
	rc := newHookReceiver(t, func() int {
		mu.Lock()
		defer mu.Unlock()
		if up {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	s.createWebhookEndpoint(t, tok, "metered-endpoint", `{"url":"`+rc.URL+`"}`)
	s.createCompany(t, tok, "metered-co", minimalCompany)
	eventually(t, 20*time.Second, "two failed attempts", func() bool { return len(rc.hooks()) >= 2 })
	m := scrapeMetrics(t, s)
	if v := m.mustValue(t, "invoicing_webhook_retries_pending", nil); v != 1 {
		t.Errorf("retries pending = %v, want 1", v)
	}
	if v := m.mustValue(t, "invoicing_webhook_oldest_pending_seconds", nil); v <= 0 {
		t.Errorf("oldest pending = %v s, want > 0", v)
	}
	if v := m.mustValue(t, "invoicing_webhook_deliveries_total", map[string]string{"result": "retried"}); v < 1 {
		t.Errorf("retried = %v, want ≥ 1", v)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	eventually(t, 20*time.Second, "the delivery", func() bool { return len(rc.delivered()) == 1 })
	eventually(t, 5*time.Second, "the success counted", func() bool {
		m = scrapeMetrics(t, s)
		v, _ := m.value("invoicing_webhook_deliveries_total", map[string]string{"result": "succeeded"})
		return v == 1
	})
	for name, want := range map[string]float64{"invoicing_webhook_retries_pending": 0, "invoicing_webhook_oldest_pending_seconds": 0} {
		if v := m.mustValue(t, name, nil); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if v := m.mustValue(t, "invoicing_webhook_deliveries_total", map[string]string{"result": "failed"}); v != 0 {
		t.Errorf("failed = %v, want 0", v)
	}
}

// An endpoint whose deliveries keep failing is disabled through the write
// side, and says why.
func TestADeadEndpointIsDisabled(t *testing.T) {
	s := newService(t, fastRetries, func(c *config) {
		c.Delivery.RetryFor, c.Delivery.DisableAfter = 300*time.Millisecond, 200*time.Millisecond
	})
	tok := token(t, "dead-end", "invoicing:write")
	rc := newHookReceiver(t, func() int { return http.StatusInternalServerError })
	_, ep := s.createWebhookEndpoint(t, tok, "dead-endpoint", `{"url":"`+rc.URL+`"}`)
	s.createCompany(t, tok, "dead-end-co", minimalCompany)
	path := "/v1/webhook_endpoints/" + ep["id"].(string)
	var got map[string]any
	eventually(t, 20*time.Second, "the endpoint disabled", func() bool {
		got = s.get(t, path, tok).object(t)
		return got["enabled"] == false
	})
	if reason, _ := got["disabled_reason"].(string); !strings.Contains(reason, "failed") {
		t.Errorf("disabled_reason = %v, want why", got["disabled_reason"])
	}
	deliveries := s.get(t, path+"/deliveries", tok).object(t)["data"].([]any)
	if len(deliveries) != 1 || deliveries[0].(map[string]any)["status"] != "failed" {
		t.Errorf("deliveries %v: want the one, failed", deliveries)
	}
}

// An event the endpoints' read model cannot apply (quarantined) does not
// stop deliveries: the dispatcher waits for that read model before each
// batch, and a quarantined event is one it has gone past.
func TestAQuarantinedEndpointEventDoesNotStopDeliveries(t *testing.T) {
	s := newService(t, fastRetries)
	tok := token(t, "hooked", "invoicing:write")
	rc := newHookReceiver(t, func() int { return http.StatusOK })
	s.createWebhookEndpoint(t, tok, "hook-endpoint-q", `{"url":"`+rc.URL+`/in"}`)
	stream := events.KindWebhookEndpoint + "-" + uuid.NewString()
	if _, err := s.app.store.Append(context.Background(), stream, events.NoStream(), events.EventData{
		ID: events.EventID(stream, 0), Type: events.TypeWebhookEndpointCreated, Data: []byte(`[]`), Metadata: []byte(`{}`),
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the broken event quarantined", func() bool {
		var n int
		err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_quarantine WHERE name = 'webhook_endpoints'`).Scan(&n)
		return err == nil && n == 1
	})
	s.createCompany(t, tok, "hooked-after-quarantine", minimalCompany)
	eventually(t, 20*time.Second, "the company's delivery", func() bool { return len(rc.delivered()) == 1 })
}

// TestServePurgesTheDeliveryLogPastItsRetention: serve runs the delivery
// log's retention; a delivery that finished longer ago than it is gone
// soon after the start, a recent one stays.
func TestServePurgesTheDeliveryLogPastItsRetention(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := migrations.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, stream_name,
			revision, position_hi, position_lo, status, next_attempt_at, last_attempt_at, created_at)
		SELECT gen_random_uuid(), 'endpoint', 'acme', gen_random_uuid(), 'invoice.drafted', 'invoice-' || age, 0, 0, age,
			'succeeded', now(), now() - age * interval '1 day', now() - age * interval '1 day'
		FROM unnest(ARRAY[6, 8]) AS age`)
	if err != nil {
		t.Fatal(err)
	}
	newService(t, func(c *config) { c.DatabaseURL, c.Delivery.Retention = dbURL, 7*24*time.Hour })
	var kept []string
	eventually(t, 10*time.Second, "the purge", func() bool {
		if err := pool.QueryRow(ctx, `SELECT array_agg(stream_name) FROM webhook_deliveries`).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		return len(kept) == 1
	})
	if kept[0] != "invoice-6" {
		t.Errorf("kept %v, want the delivery of 6 days ago", kept)
	}
}
