package command

import (
	"errors"
	"fmt"
	"strings"
)

// ErrIdempotencyKeyReused means the idempotency key already created an entity
// from a different request.
var ErrIdempotencyKeyReused = errors.New("idempotency key already used for a different request")

// ErrInvalidState means an operation the state of a record does not allow:
// issuing what is not a draft, voiding what is void, archiving what is
// archived, creating under an archived company.
var ErrInvalidState = errors.New("the resource's state does not allow this operation")

// StateError is an ErrInvalidState that names where the state is: the
// request's path or field (company_id, customer_id) whose record forbids
// the operation. transport answers the violations as details.
type StateError struct {
	Violations []Violation
}

func (e *StateError) Error() string {
	return ErrInvalidState.Error() + ": " + (&ValidationError{Violations: e.Violations}).Error()
}

// Unwrap makes errors.Is(err, ErrInvalidState) hold.
func (e *StateError) Unwrap() error { return ErrInvalidState }

// stateOf is a StateError at path, the record whose state forbids the
// operation (invoice_id, payment_id), saying why.
func stateOf(path, format string, args ...any) error {
	return &StateError{Violations: []Violation{{Path: path, Message: fmt.Sprintf(format, args...)}}}
}

// ErrPreconditionFailed means the request's If-Match names no current
// version of the record: another write changed it since the client read it.
var ErrPreconditionFailed = errors.New("the record does not match If-Match")

// ErrNotYetReadable means a create is stored (its event is durable) but the
// read models could not confirm in time that it is readable: a database
// outage, projection lag, or an event a projection could not apply. It is
// never answered as a success, because a GET might not find the resource;
// the client retries the same request with the same idempotency key, which
// replays it once it is readable.
var ErrNotYetReadable = errors.New("the create is stored but not yet readable")

// The idempotency-key rule, stated here once: MinIdempotencyKeyLen to
// MaxIdempotencyKeyLen characters, each one of U+0021..U+007E (printable
// ASCII without the space). CheckIdempotencyKey applies it.
const (
	MinIdempotencyKeyLen = 8
	MaxIdempotencyKeyLen = 255
)

// ErrInvalidIdempotencyKey means the idempotency-key header is missing or
// breaks the rule (CheckIdempotencyKey).
var ErrInvalidIdempotencyKey = fmt.Errorf("idempotency-key must be %d to %d printable ASCII characters (U+0021 to U+007E)",
	MinIdempotencyKeyLen, MaxIdempotencyKeyLen)

// Violation is one broken rule of a request, at a JSON-pointer-like path
// such as "lines[2].quantity".
type Violation struct {
	Path    string
	Message string
}

// ValidationError lists every violation of a request, not just the first:
// of its body (the Parse functions) and of its path and query parameters
// (transport), answered alike.
type ValidationError struct {
	Violations []Violation
}

// Add records a violation at path.
func (e *ValidationError) Add(path, message string) {
	e.Violations = append(e.Violations, Violation{Path: path, Message: message})
}

// OrNil returns e if it holds a violation, else nil: the error of checks
// that collected into e.
func (e *ValidationError) OrNil() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return e
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Path + ": " + v.Message
	}
	return fmt.Sprintf("invalid request: %s", strings.Join(parts, "; "))
}

// CheckIdempotencyKey returns ErrInvalidIdempotencyKey unless key keeps the
// idempotency-key rule (MinIdempotencyKeyLen).
func CheckIdempotencyKey(key string) error {
	if len(key) < MinIdempotencyKeyLen || len(key) > MaxIdempotencyKeyLen {
		return ErrInvalidIdempotencyKey
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return ErrInvalidIdempotencyKey
		}
	}
	return nil
}
