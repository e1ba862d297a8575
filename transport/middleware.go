package transport

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/transport/auth"
)

type contextKey int

const (
	requestIDKey contextKey = iota
	principalKey
)

// saneRequestID is what a caller's X-Request-Id must look like to be kept;
// anything else is replaced, so that logs never carry caller-chosen junk.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// withRequestID gives every request an id, echoed in X-Request-Id on every
// response and in every error body.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
	})
}

// statusRecorder remembers the status for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// withAccessLog logs one line per request (with the client's address and,
// once a token is verified, the account), and turns a panic into a logged
// 500 in the error shape.
func (s *server) withAccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		r, entry := withAccessLogEntry(r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logger.ErrorContext(r.Context(), "panic", "request_id", requestID(r.Context()), "panic", p)
				if rec.status == 0 {
					s.writeError(rec, r, errPanic)
				}
			}
			s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", entry.attrs(r, rec.status, time.Since(start))...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// errPanic is a handler panic; the table does not know it, so it is a 500.
var errPanic = panicError{}

type panicError struct{}

func (panicError) Error() string { return "handler panicked" }

// Authenticator verifies bearer tokens; *auth.Verifier implements it.
type Authenticator interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// scopeCheck says what an operation needs of the principal.
type scopeCheck func(auth.Principal) bool

func canRead(p auth.Principal) bool  { return p.CanRead() }
func canWrite(p auth.Principal) bool { return p.CanWrite() }

// authenticated verifies the token (401), the account claim and the scope
// (403) before the handler runs.
func (s *server) authenticated(need scopeCheck, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		token, err := auth.ParseBearer(r.Header.Get("Authorization"))
		if err != nil {
			return err
		}
		p, err := s.Auth.Verify(r.Context(), token)
		if err != nil {
			return err
		}
		logAccount(r, p.AccountID)
		if !need(p) {
			return errMissingScope
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	}
}

func principal(r *http.Request) auth.Principal {
	p, _ := r.Context().Value(principalKey).(auth.Principal)
	return p
}

// handlerFunc is a handler that returns its error for the one error table.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *server) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}
