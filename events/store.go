package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrWrongExpectedRevision reports an append whose expected revision did not
// match the stream: the stream already existed when NoStream was expected, or
// another writer moved it past the expected revision.
var ErrWrongExpectedRevision = errors.New("events: wrong expected stream revision")

// ErrUnavailable reports that the store could not be reached, or went away
// during the call: worth a retry, not a bug. An append that fails so may or
// may not have been written; a retry with the same deterministic event ids
// is safe either way. The read side marks an unreachable read-model
// database with it too (pgerr.MarkUnavailable), so that every outage is
// one error to its callers.
var ErrUnavailable = errors.New("events: the database is unavailable")

// ErrStreamNotFound reports a read of a stream that has no events.
var ErrStreamNotFound = errors.New("events: stream not found")

// ExpectedRevision is the optimistic-concurrency condition of an append.
// The zero value is invalid; use NoStream or AtRevision.
type ExpectedRevision struct {
	set      bool
	noStream bool
	revision uint64
}

// NoStream expects the stream not to exist: the append creates it.
func NoStream() ExpectedRevision { return ExpectedRevision{set: true, noStream: true} }

// AtRevision expects the stream's last event to have revision r (0-based).
func AtRevision(r uint64) ExpectedRevision { return ExpectedRevision{set: true, revision: r} }

// IsNoStream reports whether the expectation is "stream must not exist".
func (e ExpectedRevision) IsNoStream() bool { return e.noStream }

// Revision returns the expected last revision; meaningful only when
// IsNoStream is false.
func (e ExpectedRevision) Revision() uint64 { return e.revision }

// Valid reports whether e was built by NoStream or AtRevision.
func (e ExpectedRevision) Valid() bool { return e.set }

func (e ExpectedRevision) String() string {
	if e.noStream {
		return "no stream"
	}
	return "revision " + strconv.FormatUint(e.revision, 10)
}

// Position is a point in a store's global order. Its two parts are the
// adapter's business (PostgreSQL: transaction id and sequence; EventStoreDB:
// commit and prepare positions); callers only compare, store and print it.
// The zero value is "before the first event".
type Position struct {
	hi, lo uint64
}

// NewPosition builds a position from an adapter's two parts.
func NewPosition(hi, lo uint64) Position { return Position{hi: hi, lo: lo} }

// Parts returns the adapter's two parts.
func (p Position) Parts() (hi, lo uint64) { return p.hi, p.lo }

// IsZero reports whether p is the start of the store.
func (p Position) IsZero() bool { return p.hi == 0 && p.lo == 0 }

// Compare returns -1, 0 or +1 as p is before, equal to or after q.
func (p Position) Compare(q Position) int {
	switch {
	case p.hi < q.hi:
		return -1
	case p.hi > q.hi:
		return 1
	case p.lo < q.lo:
		return -1
	case p.lo > q.lo:
		return 1
	}
	return 0
}

// String renders p as "hi/lo", the form checkpoints and exports store.
func (p Position) String() string {
	return strconv.FormatUint(p.hi, 10) + "/" + strconv.FormatUint(p.lo, 10)
}

// ParsePosition parses the form String produces.
func ParsePosition(s string) (Position, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return Position{}, fmt.Errorf("events: position %q: want HI/LO", s)
	}
	h, err := strconv.ParseUint(hi, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("events: position %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("events: position %q: %w", s, err)
	}
	return Position{hi: h, lo: l}, nil
}

// AppendResult tells where an append landed.
type AppendResult struct {
	// NextRevision is the revision of the last event appended (0-based).
	NextRevision uint64
	// Position is the global position of the last event appended.
	Position Position
}

// Store is the event-store port. Both adapters (PostgreSQL and EventStoreDB)
// implement it unchanged, and eventstoretest.Run checks that they agree.
type Store interface {
	// Append writes events to stream atomically if the stream matches
	// expected; otherwise it returns an error wrapping
	// ErrWrongExpectedRevision and writes nothing.
	Append(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error)

	// ReadStream returns the events of one stream in revision order, or an
	// error wrapping ErrStreamNotFound.
	ReadStream(ctx context.Context, stream string) ([]RecordedEvent, error)

	// ReadStreamFrom returns the events of one stream from revision from
	// on, in revision order. A stream with no event there, missing or
	// not, gives none and no error: its caller knows the events before
	// from (a fold it keeps) and asks only for what came after them.
	ReadStreamFrom(ctx context.Context, stream string, from uint64) ([]RecordedEvent, error)

	// ReadLast returns the last event of a stream, or an error wrapping
	// ErrStreamNotFound. Its cost does not grow with the stream (a
	// company's numbering stream holds one event per issued invoice).
	ReadLast(ctx context.Context, stream string) (RecordedEvent, error)

	// ReadAll returns up to max events of this service's types after from,
	// in global order. Fewer than max means the reader has caught up with
	// every event committed so far.
	ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error)

	// SubscribeAll delivers this service's events after from in global
	// order, first the history and then live ones, until ctx ends or the
	// subscription fails. It never skips an event and never delivers one
	// twice. When payloadsOf names event types, it delivers every event of
	// those types, but events of other types may come without Data and
	// Metadata, or be left out: a subscriber that passes over most events
	// (a projection of one kind of stream) need not read them. It still
	// advances past them: a run of events it leaves out ends with one it
	// delivers, without payload unless of payloadsOf, so that the position
	// of the last delivered event reaches the last event of the log
	// whatever its type (read-your-writes waits for that position).
	// Subscribers must therefore treat any event of another type as a
	// position only, and not count on seeing each of them.
	SubscribeAll(ctx context.Context, from Position, payloadsOf ...string) (Subscription, error)

	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error

	// Close releases the store's connections.
	Close() error
}

// SkippingReader is a Store that can read the log as a subscription to
// payloadsOf does (the PostgreSQL store): the events of other types left
// out where it reads them, a page's last event kept as a position, and
// scanned, the events the page passed, fewer than max meaning caught up as
// a short page of ReadAll does. A rebuild of companies over a log of
// invoices then neither reads nor copies the invoices' payloads.
type SkippingReader interface {
	ReadAllOf(ctx context.Context, from Position, max int, payloadsOf ...string) (page []RecordedEvent, scanned int, err error)
}

// ReadAllOf reads the page after from as a reader of payloadsOf: with s's
// ReadAllOf when s is a SkippingReader, else with ReadAll, every event
// counted as scanned.
func ReadAllOf(ctx context.Context, s Store, from Position, max int, payloadsOf ...string) ([]RecordedEvent, int, error) {
	if r, ok := s.(SkippingReader); ok {
		return r.ReadAllOf(ctx, from, max, payloadsOf...)
	}
	page, err := s.ReadAll(ctx, from, max)
	return page, len(page), err
}

// Subscription is a running catch-up subscription.
type Subscription interface {
	// Events delivers events in global order. It is closed when the
	// subscription ends; Err then tells why.
	Events() <-chan RecordedEvent
	// Err returns nil while running or after a normal end (context
	// cancelled), else the error that ended the subscription.
	Err() error
}
