package transport

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/transport/auth"
	"github.com/invoicing/invoicing/webhook"
)

// Errors transport itself detects, before any command or query runs.
var (
	errUnsupportedMediaType = errors.New("the body must be sent as Content-Type: application/json")
	// errUnsupportedPatchMediaType is a PATCH's 415 (decodePatch).
	errUnsupportedPatchMediaType = errors.New("the body must be sent as Content-Type: application/merge-patch+json or application/json")
	errMissingScope              = errors.New("the token lacks the scope this operation needs")
	errRouteNotFound             = errors.New("no such resource")
	errMethodNotAllowed          = errors.New("method not allowed")
	errRequestTimeout            = errors.New("the body was not received within the read timeout")
)

// errPayloadTooLarge wraps the body reader's limit error.
type errPayloadTooLarge struct{ limit int64 }

func (e errPayloadTooLarge) Error() string { return "request body too large" }

// errorRow maps a class of errors to its response. The table is the one
// place where errors become HTTP: first match wins.
type errorRow struct {
	match   func(error) bool
	status  int
	code    string
	message string
}

// retryAfterSeconds is the Retry-After of every 503: the condition (a
// database restarting, projections catching up) usually clears in seconds.
const retryAfterSeconds = "1"

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func as[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// invalidKeyMessage states command's idempotency-key rule to the client.
var invalidKeyMessage = fmt.Sprintf("The idempotency-key header is required: %d to %d printable ASCII characters without spaces.",
	command.MinIdempotencyKeyLen, command.MaxIdempotencyKeyLen)

var errorTable = []errorRow{
	{as[*command.ValidationError], http.StatusUnprocessableEntity, "validation_failed", "The request is invalid; see details."},
	{is(query.ErrInvalidCursor), http.StatusUnprocessableEntity, "validation_failed", "The request is invalid; see details."},
	{is(webhook.ErrInvalidCursor), http.StatusUnprocessableEntity, "validation_failed", "The request is invalid; see details."},
	{is(command.ErrMalformedBody), http.StatusBadRequest, "malformed_request", "The body must be one well-formed JSON object."},
	{is(command.ErrInvalidIdempotencyKey), http.StatusBadRequest, "malformed_request", invalidKeyMessage},
	{is(auth.ErrUnauthenticated), http.StatusUnauthorized, "unauthenticated", "A valid bearer access token is required."},
	{is(auth.ErrForbidden), http.StatusForbidden, "forbidden", "The access token does not name an account."},
	{is(errMissingScope), http.StatusForbidden, "forbidden", "The access token lacks the scope this operation needs."},
	{is(events.ErrNotFound), http.StatusNotFound, "not_found", "The resource does not exist."},
	{is(webhook.ErrNotFound), http.StatusNotFound, "not_found", "The resource does not exist."},
	{is(errRouteNotFound), http.StatusNotFound, "not_found", "The resource does not exist."},
	{is(errMethodNotAllowed), http.StatusMethodNotAllowed, "method_not_allowed", "The method is not allowed on this resource."},
	{is(errRequestTimeout), http.StatusRequestTimeout, "request_timeout", "The request body was not received in time."},
	{as[*documentIncompleteError], http.StatusUnprocessableEntity, "document_incomplete", "The invoice's data cannot make a valid EN 16931 document; each detail names a rule and the field to fix."},
	{is(errNotAcceptable), http.StatusNotAcceptable, "not_acceptable", "The Accept header excludes the media type this resource is served as."},
	{is(command.ErrInvalidState), http.StatusConflict, "invalid_state", "The resource's state does not allow this operation."},
	{is(command.ErrPreconditionFailed), http.StatusPreconditionFailed, "precondition_failed", "The resource has changed since the version If-Match names; read it again."},
	{is(command.ErrIdempotencyKeyReused), http.StatusConflict, "idempotency_key_reused", "The idempotency key was already used with a different request."},
	{as[errPayloadTooLarge], http.StatusRequestEntityTooLarge, "payload_too_large", "The request body is too large."},
	{is(errUnsupportedMediaType), http.StatusUnsupportedMediaType, "unsupported_media_type", "The body must be sent as Content-Type: application/json."},
	{is(errUnsupportedPatchMediaType), http.StatusUnsupportedMediaType, "unsupported_media_type", "The body must be sent as Content-Type: application/merge-patch+json or application/json."},
	{is(command.ErrNotYetReadable), http.StatusServiceUnavailable, "not_yet_readable", "The request was stored but cannot be read back yet; send it again with the same idempotency-key to get its result."},
	{is(events.ErrUnavailable), http.StatusServiceUnavailable, "unavailable", "The service cannot reach its database right now; send the request again (writes with the same idempotency-key)."},
}

// bearerChallenge is the WWW-Authenticate of a 401 (RFC 6750 §3): the bare
// challenge when the request sent no bearer token, else invalid_token with
// a description that names no reason (which check failed is logged, not
// told).
func bearerChallenge(authorization string) string {
	const challenge = `Bearer realm="invoicing"`
	scheme, token, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return challenge
	}
	return challenge + `, error="invalid_token", error_description="The access token is malformed, expired or not issued for this service."`
}

// errorBody is the one error shape of every response.
type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Code      string       `json:"code"`
	Message   string       `json:"message"`
	RequestID string       `json:"request_id"`
	Details   []detailJSON `json:"details,omitempty"`
}

type detailJSON struct {
	Message string `json:"message"`
	Path    string `json:"path"`
}

// writeError renders err; anything the table does not know is a logged 500
// whose message says nothing internal.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	id := requestID(r.Context())
	body := errorJSON{Code: "internal", Message: "An unexpected error occurred; quote the request id when reporting it.", RequestID: id}
	status := http.StatusInternalServerError
	for _, row := range errorTable {
		if row.match(err) {
			status, body.Code, body.Message = row.status, row.code, row.message
			body.Details = details(err)
			break
		}
	}
	switch status {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfterSeconds)
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", bearerChallenge(r.Header.Get("Authorization")))
	}
	if status >= http.StatusInternalServerError {
		s.logger.ErrorContext(r.Context(), "request failed", "request_id", id, "error", err)
	} else {
		s.logger.DebugContext(r.Context(), "request rejected", "request_id", id, "status", status, "error", err)
	}
	writeJSON(w, status, errorBody{Error: body})
}

func details(err error) []detailJSON {
	var out []detailJSON
	var verr *command.ValidationError
	var merr *command.MalformedBodyError
	var serr *command.StateError
	var derr *documentIncompleteError
	switch {
	case errors.As(err, &derr):
		out = derr.details()
	case errors.As(err, &serr):
		out = violationDetails(serr.Violations)
	case errors.As(err, &verr):
		out = violationDetails(verr.Violations)
	case errors.As(err, &merr):
		out = violationDetails(merr.Violations)
	case errors.Is(err, query.ErrInvalidCursor):
		out = []detailJSON{{Message: "is not a cursor issued for this list and these filters", Path: "after"}}
	}
	return out
}

func violationDetails(vs []command.Violation) []detailJSON {
	var out []detailJSON
	for _, v := range vs {
		out = append(out, detailJSON{Message: v.Message, Path: v.Path})
	}
	return out
}
