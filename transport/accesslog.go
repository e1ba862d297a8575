package transport

import (
	"context"
	"net/http"
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

// attrs are the entry's fields of the log line; the account only when a
// token named one.
func (e *accessLogEntry) attrs() []any {
	if e.accountID == "" {
		return nil
	}
	return []any{"account_id", e.accountID}
}
