package transport

import (
	"net/http"

	"go.opentelemetry.io/otel/trace"
)

// recordedTraceParent is the W3C traceparent a command records in its
// event's metadata. When tracing is on, it is the span serving the request
// (a child of the caller's, so the event points at the span that did the
// write, in the caller's trace); otherwise the caller's own traceparent
// header, when it is a valid version-00 one; else "".
func recordedTraceParent(r *http.Request) string {
	if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
		return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
	}
	if tp := r.Header.Get("Traceparent"); traceParent.MatchString(tp) {
		return tp
	}
	return ""
}
