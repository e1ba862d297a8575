package transport

import (
	"context"
	"net/http"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Metrics receives what the HTTP edge observes: one call per answered
// request and one per successful command. cmd passes telemetry's Prometheus
// implementation; transport itself knows no metrics library. Every label
// value it passes is bounded: route templates, standard methods, status
// codes, command kinds.
type Metrics interface {
	// Request observes an answered request: its route template
	// (UnmatchedRoute when no route matched: 404 and 405), method
	// (OtherMethod when not a standard one), status and latency.
	Request(route, method string, status int, elapsed time.Duration)
	// Command observes a command that succeeded; kind is one of
	// CommandKinds, replayed says the answer is an earlier request's with
	// the same idempotency key.
	Command(kind string, replayed bool)
}

// UnmatchedRoute is the route label of requests no route matched; route
// templates begin with a slash, so it cannot collide with one.
const UnmatchedRoute = "unmatched"

// OtherMethod is the method label of requests with a non-standard method.
const OtherMethod = "other"

// commandKinds names the command each write operation runs.
var commandKinds = map[string]string{
	"POST /v1/companies":                                                                  "company",
	"POST /v1/companies/{company_id}/customers":                                           "customer",
	"POST /v1/companies/{company_id}/invoices":                                            "invoice",
	"POST /v1/companies/{company_id}/invoices/{invoice_id}/issue":                         "issue",
	"POST /v1/companies/{company_id}/invoices/{invoice_id}/void":                          "void",
	"PATCH /v1/companies/{company_id}":                                                    "company_update",
	"POST /v1/companies/{company_id}/archive":                                             "company_archive",
	"POST /v1/companies/{company_id}/unarchive":                                           "company_unarchive",
	"PATCH /v1/companies/{company_id}/customers/{customer_id}":                            "customer_update",
	"POST /v1/companies/{company_id}/customers/{customer_id}/archive":                     "customer_archive",
	"POST /v1/companies/{company_id}/customers/{customer_id}/unarchive":                   "customer_unarchive",
	"POST /v1/companies/{company_id}/invoices/{invoice_id}/credit_notes":                  "credit_note",
	"POST /v1/companies/{company_id}/invoices/{invoice_id}/payments":                      "payment",
	"POST /v1/companies/{company_id}/invoices/{invoice_id}/payments/{payment_id}/reverse": "payment_reversal",
	"POST /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry":     "webhook_delivery_retry",
	"POST /v1/webhook_endpoints":                                                          "webhook_endpoint",
	"PATCH /v1/webhook_endpoints/{webhook_endpoint_id}":                                   "webhook_endpoint_update",
	"DELETE /v1/webhook_endpoints/{webhook_endpoint_id}":                                  "webhook_endpoint_delete",
	"POST /v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret":                      "webhook_secret_rotation",
}

// CommandKinds lists the kinds Metrics.Command is called with.
func CommandKinds() []string {
	var kinds []string
	for _, k := range commandKinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// CommandKind returns the kind of command an operation ("METHOD /template",
// as Operations lists them) runs, or "" when it runs none.
func CommandKind(operation string) string { return commandKinds[operation] }

// routeSlot carries the matched route's template from nameRoute back out
// to withMetrics.
type routeSlot struct{ template string }

type routeSlotKey struct{}

// withMetrics observes every request once it is answered, and every command
// that succeeded: the route's command kind, a 2xx status, and whether the
// handler marked the answer as a replay (markReplayed).
func withMetrics(m Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		slot := &routeSlot{template: UnmatchedRoute}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeSlotKey{}, slot)))
		status := rec.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http answers 200
		}
		m.Request(slot.template, methodLabel(r.Method), status, time.Since(start))
		if kind := commandKinds[r.Method+" "+slot.template]; kind != "" && status/100 == 2 {
			m.Command(kind, rec.Header().Get(replayedHeader) == "true")
		}
	})
}

// replayedHeader is the header markReplayed sets.
const replayedHeader = "Idempotent-Replayed"

// nameRoute wraps the handler of the route with the path template tmpl
// (routes): it hands the template to withMetrics and names the request's
// trace span after it (the span otelhttp started, when tracing is on).
// Requests no route matched (404, 405) keep UnmatchedRoute and the span's
// method name.
func nameRoute(tmpl string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slot, ok := r.Context().Value(routeSlotKey{}).(*routeSlot); ok {
			slot.template = tmpl
		}
		if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
			span.SetName(r.Method + " " + tmpl)
			span.SetAttributes(attribute.String("http.route", tmpl))
		}
		next.ServeHTTP(w, r)
	})
}

// methodLabel bounds the method label: the caller chooses the method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return OtherMethod
}
