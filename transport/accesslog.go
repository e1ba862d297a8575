package transport

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// accessLogEntry collects what the access log learns from deeper in the
// handler chain: the account, once a token names one.
type accessLogEntry struct {
	accountID string
}

type accessLogKey struct{}

// withAccessLogEntry returns r carrying a fresh entry for the access log.
func withAccessLogEntry(r *http.Request) (*http.Request, *accessLogEntry) {
	e := &accessLogEntry{}
	return r.WithContext(context.WithValue(r.Context(), accessLogKey{}, e)), e
}

// logAccount records the verified account of the request for its access
// log line.
func logAccount(r *http.Request, accountID string) {
	if e, ok := r.Context().Value(accessLogKey{}).(*accessLogEntry); ok {
		e.accountID = accountID
	}
}

// attrs are the fields of the request's log line; the account only when a
// token named one. Typed attributes, unlike key-value pairs, are not boxed
// into interfaces: this runs once per request.
func (e *accessLogEntry) attrs(r *http.Request, status int, took time.Duration) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("request_id", requestID(r.Context())), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.String("remote_addr", r.RemoteAddr),
	}
	if e.accountID != "" {
		attrs = append(attrs, slog.String("account_id", e.accountID))
	}
	return attrs
}
