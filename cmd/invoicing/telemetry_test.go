package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing/invoicing/projections"
)

// metrics is one scrape, parsed.
type metrics map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, s *service) metrics {
	t.Helper()
	addr := s.app.obs.metricsAddr()
	if addr == "" {
		t.Fatal("no metrics listener")
	}
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /metrics = %d: %s", res.StatusCode, b)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the family's series whose labels include
// labels: a counter's or gauge's value, a histogram's count.
func (m metrics) value(name string, labels map[string]string) (float64, bool) {
	fam, ok := m[name]
	if !ok {
		return 0, false
	}
series:
	for _, s := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue series
			}
		}
		switch {
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Histogram != nil:
			return float64(s.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func (m metrics) mustValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := m.value(name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

var uuidText = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func TestMetricsEndpointReportsEveryFamily(t *testing.T) {
	s := newService(t, func(c *config) { c.MetricsAddr = "127.0.0.1:0" })
	tok := token(t, "acme")
	company := s.createCompany(t, tok, "metrics-company-1", minimalCompany) // a create and a get
	replay := s.post(t, "/v1/companies", tok, "metrics-company-1", minimalCompany)
	mustStatus(t, replay, http.StatusCreated)
	if replay.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the second create is not a replay: %v %s", replay.header, replay.body)
	}
	res, err := http.Get(s.url + "/no/such/route")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	// The projectors report their batch right after it commits, which may
	// be just after the create's read-your-writes wait saw the checkpoint;
	// and they set a batch's series one after the other, so a scrape may
	// come between the applied count and the batch size or timestamp.
	var m metrics
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m = scrapeMetrics(t, s)
		done := true
		for _, p := range projections.All() {
			l := map[string]string{"projection": p.Name()}
			v, _ := m.value("invoicing_projection_events_applied_total", l)
			_, observed := m.value("invoicing_projection_batch_events", l)
			_, set := m.value("invoicing_projection_checkpoint_event_timestamp_seconds", l)
			done = done && v >= 1 && observed && set
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the projectors' batches were never counted")
		}
	}

	type series struct {
		name   string
		labels map[string]string
		want   func(float64) bool
		says   string
	}
	is := func(n float64) func(float64) bool { return func(v float64) bool { return v == n } }
	atLeast := func(n float64) func(float64) bool { return func(v float64) bool { return v >= n } }
	checks := []series{
		// HTTP, by route template, method and status.
		{"invoicing_http_requests_total", map[string]string{"route": "/v1/companies", "method": "POST", "status": "201"}, is(2), "2"},
		{"invoicing_http_request_duration_seconds", map[string]string{"route": "/v1/companies", "method": "POST", "status": "201"}, is(2), "2 observations"},
		{"invoicing_http_requests_total", map[string]string{"route": "/v1/companies/{company_id}", "method": "GET", "status": "200"}, is(1), "1"},
		{"invoicing_http_request_duration_seconds", map[string]string{"route": "/v1/companies/{company_id}", "method": "GET", "status": "200"}, is(1), "1 observation"},
		{"invoicing_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}, is(1), "1"},
		// Commands: the create once, its replay once.
		{"invoicing_commands_total", map[string]string{"kind": "company", "result": "applied"}, is(1), "1"},
		{"invoicing_commands_total", map[string]string{"kind": "company", "result": "replayed"}, is(1), "1"},
		{"invoicing_commands_total", map[string]string{"kind": "invoice", "result": "applied"}, is(0), "0"},
		// The event store: one append, one conflict (the replay's).
		{"invoicing_event_store_append_duration_seconds", map[string]string{"outcome": "ok"}, is(1), "1 append"},
		{"invoicing_event_store_append_duration_seconds", map[string]string{"outcome": "conflict"}, is(1), "1 conflict"},
		{"invoicing_event_store_unavailable_total", map[string]string{"operation": "append"}, is(0), "0"},
		// The pool.
		{"invoicing_db_pool_max_connections", nil, atLeast(1), "≥ 1"},
		{"invoicing_db_pool_acquires_total", nil, atLeast(1), "≥ 1"},
		{"invoicing_db_pool_connections", map[string]string{"state": "idle"}, atLeast(0), "present"},
		// Go runtime and process.
		{"go_goroutines", nil, atLeast(1), "≥ 1"},
		{"process_cpu_seconds_total", nil, atLeast(0), "present"},
	}
	for _, p := range projections.All() {
		l := map[string]string{"projection": p.Name()}
		checks = append(checks,
			series{"invoicing_projection_events_applied_total", l, is(1), "1"},
			series{"invoicing_projection_batch_events", l, atLeast(1), "≥ 1 batch"},
			series{"invoicing_projection_checkpoint_event_timestamp_seconds", l,
				func(v float64) bool { return time.Since(time.Unix(int64(v), 0)) < time.Minute }, "a moment ago"},
			series{"invoicing_projection_lag_events", l, is(0), "0"},
			series{"invoicing_projection_lag_seconds", l, is(0), "0"},
			series{"invoicing_projection_quarantined_events", l, is(0), "0"},
			series{"invoicing_projection_rebuild_events_applied_total", l, is(0), "0"},
		)
	}
	for _, c := range checks {
		if v := m.mustValue(t, c.name, c.labels); !c.want(v) {
			t.Errorf("%s%v = %v, want %s", c.name, c.labels, v, c.says)
		}
	}
	for name, fam := range m {
		for _, s := range fam.GetMetric() {
			for _, l := range s.GetLabel() {
				if uuidText.MatchString(l.GetValue()) || strings.Contains(l.GetValue(), company["id"].(string)) {
					t.Errorf("%s has an id in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestMetricsAndTracingConfiguration(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://x", "AUTH_HS256_SECRET": testSecret}
	load := func(env map[string]string) (config, error) {
		return loadConfig(func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return base[k]
		})
	}
	cfg, err := load(nil)
	if err != nil || cfg.MetricsAddr != "" || cfg.Tracing.Enabled {
		t.Fatalf("by default: %+v, %v; want neither metrics nor tracing", cfg, err)
	}
	cfg, err = load(map[string]string{"METRICS_ADDR": ":9090", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
	if err != nil || cfg.MetricsAddr != ":9090" || !cfg.Tracing.Enabled {
		t.Fatalf("METRICS_ADDR and OTEL_EXPORTER_OTLP_ENDPOINT set: %+v, %v", cfg, err)
	}
	cfg, err = load(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c/v1/traces", "OTEL_SDK_DISABLED": "true"})
	if err != nil || cfg.Tracing.Enabled {
		t.Fatalf("OTEL_SDK_DISABLED=true: %+v, %v; want tracing off", cfg, err)
	}
	for _, bad := range []struct {
		env   map[string]string
		names string
	}{
		{map[string]string{"METRICS_ADDR": "9090"}, "METRICS_ADDR"},
		{map[string]string{"METRICS_ADDR": "localhost:metrics"}, "METRICS_ADDR"},
		{map[string]string{"METRICS_ADDR": ":8080"}, "METRICS_ADDR"}, // HTTP_ADDR's default
		{map[string]string{"PPROF_ADDR": "6060"}, "PPROF_ADDR"},
		{map[string]string{"PPROF_ADDR": ":8080"}, "PPROF_ADDR"},
		{map[string]string{"PPROF_ADDR": ":9090", "METRICS_ADDR": ":9090"}, "PPROF_ADDR"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
	} {
		if _, err := load(bad.env); err == nil || !strings.Contains(err.Error(), bad.names) {
			t.Errorf("%v: error %v; want one naming %s", bad.env, err, bad.names)
		}
	}
}

// A create's event metadata carries the caller's traceparent: with tracing
// on, the trace is the caller's and the span is the server span that did
// the write, a child of the caller's.
func TestACreateRecordsItsServerSpanWhenTracing(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := newService(t, func(c *config) { c.Tracing.provider = tp })

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res := s.do(t, request{method: http.MethodPost, path: "/v1/companies", token: token(t, "acme"), key: "traced-create-1",
		body: minimalCompany, headers: map[string]string{"Traceparent": fmt.Sprintf("00-%s-%s-01", callerTrace, callerSpan)}})
	mustStatus(t, res, http.StatusCreated)
	var raw string
	err := s.pool.QueryRow(context.Background(), `SELECT metadata::text FROM events WHERE data->>'company_id' = $1`, res.object(t)["id"]).Scan(&raw)
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		TraceParent string `json:"traceparent"`
	}
	if err := json.Unmarshal([]byte(raw), &md); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(md.TraceParent, "-")
	if len(parts) != 4 || parts[0] != "00" || parts[1] != callerTrace || parts[2] == callerSpan || parts[3] != "01" {
		t.Fatalf("recorded traceparent %q: want the caller's trace %s, a span of ours, sampled", md.TraceParent, callerTrace)
	}

	// The server span ends once the handler returns, maybe just after the
	// client has the response.
	var server sdktrace.ReadOnlySpan
	var spans tracetest.SpanStubs
	for deadline := time.Now().Add(5 * time.Second); server == nil; time.Sleep(10 * time.Millisecond) {
		spans = exporter.GetSpans()
		for _, sp := range spans.Snapshots() {
			if sp.SpanContext().SpanID().String() == parts[2] {
				server = sp
			}
		}
		if server == nil && time.Now().After(deadline) {
			t.Fatalf("no span %s among %d exported", parts[2], len(spans))
		}
	}
	if server.SpanKind() != trace.SpanKindServer || server.Parent().SpanID().String() != callerSpan || server.Name() != "POST /v1/companies" {
		t.Errorf("span %s: kind %v, parent %s, name %q; want the server span of POST /v1/companies under the caller's %s",
			parts[2], server.SpanKind(), server.Parent().SpanID(), server.Name(), callerSpan)
	}
	if !hasAttribute(server.Attributes(), attribute.String("http.route", "/v1/companies")) {
		t.Errorf("server span attributes %v lack http.route", server.Attributes())
	}
	var appendSpan, dbSpan bool
	for _, sp := range spans.Snapshots() {
		if sp.SpanContext().TraceID().String() != callerTrace {
			continue
		}
		appendSpan = appendSpan || (sp.Name() == "events.Append" && sp.Parent().SpanID() == server.SpanContext().SpanID())
		dbSpan = dbSpan || hasAttribute(sp.Attributes(), attribute.String("db.system.name", "postgresql"))
	}
	if !appendSpan || !dbSpan {
		t.Errorf("in the caller's trace: an events.Append span under the server span: %v, a PostgreSQL span: %v; want both", appendSpan, dbSpan)
	}
}

func hasAttribute(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}
