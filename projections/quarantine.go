package projections

// Quarantine: an event a projection cannot apply is set aside instead of
// stopping the projection.
//
// Projections follow the store's global order, so an event that fails on
// every attempt would hold back every later event, of every tenant, forever.
// When a batch fails on an error that the event itself causes (see
// deterministic), the batch is written again one event at a time, each in a
// savepoint; an event that fails is rolled back to its savepoint and
// recorded in projection_quarantine, in the transaction that moves the
// checkpoint past it. Errors that may pass (a lost connection, a timeout, a
// serialization failure) still fail the batch, which is retried.
//
// Events of a stream follow each other: once one is quarantined, the
// stream's later events are quarantined too rather than applied to rows
// whose earlier events are missing. A retry (RetryQuarantined) applies them
// again, in order, once the cause is fixed.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// QuarantinedEvent is an event a projection set aside because it could not
// apply it.
type QuarantinedEvent struct {
	// Projection is the checkpoint name: the projection's, or an
	// unfinished rebuild's ("companies@v2").
	Projection string
	Position   events.Position
	EventID    [16]byte
	Stream     string
	Revision   uint64
	Type       string
	Error      string    // why it was set aside (the latest attempt's error after a retry)
	At         time.Time // when it was first set aside
}

// applyError is an error that Projection.Apply returned for an event. Apply
// is deterministic, so it would return it again on every attempt.
type applyError struct{ err error }

func (e *applyError) Error() string { return e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// errEarlierQuarantined is why a stream's later events are quarantined.
var errEarlierQuarantined = errors.New("not applied: an earlier event of its stream is quarantined")

// errQuarantineChanged means someone else changed the checkpoint's
// quarantine (its epoch moved): the batch rolls back and the runner reloads
// its list of quarantined streams before writing it again.
var errQuarantineChanged = errors.New("quarantine changed by another process")

// deterministic reports whether err comes from the event being applied, so
// that applying it again can only fail again: an error from Apply, a data
// exception (SQLSTATE class 22: a NUL byte in text, an out-of-range date), or
// an integrity constraint violation (class 23). Anything else — a lost
// connection, a timeout, a serialization failure, a server shutting down —
// may pass, so the batch is retried rather than an event set aside.
func deterministic(err error) bool {
	var ae *applyError
	if errors.As(err, &ae) || errors.Is(err, errEarlierQuarantined) {
		return true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return false
	}
	class := pgErr.Code[:2]
	return class == "22" || class == "23"
}

// quarantine is what a runner, or a rebuild, knows of its checkpoint's
// quarantine: the streams with a quarantined event, and the checkpoint row's
// quarantine_epoch when that list was read. The runner itself adds streams
// as it commits; anyone else who changes the rows bumps the epoch, which the
// checkpoint's compare-and-swap returns, so a stale list is caught before a
// batch commits (errQuarantineChanged) and reloaded. An epoch, rather than
// re-checking a stream's rows before quarantining by stream, because a
// swap can also add streams the runner never saw, and because it costs the
// fast path nothing: the compare-and-swap it already sends returns it.
type quarantine struct {
	name    string
	epoch   int64
	streams map[string]bool
}

// loadQuarantine reads the epoch and the quarantined streams of checkpoint
// name in one statement, so from one snapshot. The checkpoint must exist.
func loadQuarantine(ctx context.Context, db querier, name string) (*quarantine, error) {
	q := &quarantine{name: name, streams: map[string]bool{}}
	var streams []string
	err := db.QueryRow(ctx, `
		SELECT c.quarantine_epoch,
			ARRAY(SELECT DISTINCT q.stream_name FROM public.projection_quarantine q WHERE q.name = c.name)
		FROM public.projection_checkpoints c WHERE c.name = $1`, name).Scan(&q.epoch, &streams)
	if err != nil {
		return nil, fmt.Errorf("load quarantine of %s: %w", name, err)
	}
	for _, s := range streams {
		q.streams[s] = true
	}
	return q, nil
}

// touches reports whether evs hold an event of a quarantined stream; the
// fast path cannot write such a batch.
func (q *quarantine) touches(evs []events.RecordedEvent) bool {
	if len(q.streams) == 0 {
		return false
	}
	return slices.ContainsFunc(evs, func(ev events.RecordedEvent) bool { return q.streams[ev.Stream] })
}

// add records streams quarantined by a committed batch.
func (q *quarantine) add(set []QuarantinedEvent) {
	for _, qe := range set {
		q.streams[qe.Stream] = true
	}
}

// queueCAS queues the checkpoint's compare-and-swap from from to to
// (projection_advance, migration 005). It fails the transaction when
// another worker moved the checkpoint, or when the quarantine changed since
// q was read; casFailure tells which.
func (q *quarantine) queueCAS(b *pgx.Batch, from, to events.Position) {
	b.Queue(`SELECT public.projection_advance($1, $2, $3, $4)`, q.name, from.String(), to.String(), q.epoch)
}

// casFailure maps projection_advance's errors to errCheckpointMoved and
// errQuarantineChanged, keeping the cause; other errors pass unchanged.
func casFailure(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case !errors.As(err, &pgErr):
		return err
	case pgErr.Code == "IV001":
		return fmt.Errorf("%w: %w", errCheckpointMoved, err)
	case pgErr.Code == "IV002":
		return fmt.Errorf("%w: %w", errQuarantineChanged, err)
	}
	return err
}

// applyCarefully applies evs one at a time, each in a savepoint, and returns
// the events it set aside: those that fail deterministically, rolled back to
// their savepoint, and the later events of their streams. Any other error
// is returned and dooms the transaction. Each event that writes costs a
// subtransaction and a round trip, which only a batch holding a bad event
// pays.
func applyCarefully(ctx context.Context, tx pgx.Tx, proj Projection, q *quarantine, evs []events.RecordedEvent) ([]QuarantinedEvent, error) {
	blocked := maps.Clone(q.streams)
	var set []QuarantinedEvent
	for _, ev := range evs {
		err := applyOne(ctx, tx, proj, ev, blocked[ev.Stream])
		if err == nil {
			continue
		}
		if !deterministic(err) {
			return nil, err
		}
		blocked[ev.Stream] = true
		set = append(set, newQuarantined(q.name, ev, err))
	}
	return set, nil
}

// applyOne writes ev inside a savepoint; when that fails deterministically
// the savepoint is rolled back and the error returned. An event of a blocked
// stream that would write something is not applied (errEarlierQuarantined);
// one that writes nothing is simply passed over.
func applyOne(ctx context.Context, tx pgx.Tx, proj Projection, ev events.RecordedEvent, blocked bool) error {
	b := &pgx.Batch{}
	b.Queue("SAVEPOINT quarantine_event")
	if err := proj.Apply(ev, b); err != nil {
		return &applyError{err}
	}
	switch {
	case b.Len() == 1:
		return nil
	case blocked:
		return errEarlierQuarantined
	}
	b.Queue("RELEASE SAVEPOINT quarantine_event")
	err := tx.SendBatch(ctx, b).Close()
	if err == nil || !deterministic(err) {
		return err
	}
	if _, rbErr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT quarantine_event; RELEASE SAVEPOINT quarantine_event"); rbErr != nil {
		return fmt.Errorf("roll back %s at %s: %w", ev.Type, ev.Position, rbErr)
	}
	return err
}

func newQuarantined(name string, ev events.RecordedEvent, cause error) QuarantinedEvent {
	return QuarantinedEvent{Projection: name, Position: ev.Position, EventID: ev.ID, Stream: ev.Stream,
		Revision: ev.Revision, Type: ev.Type, Error: cause.Error()}
}

// queueRecords queues the INSERTs of set. A row already there (a batch
// written again after a crash cannot meet one, but a swap's tail can) keeps
// its time and takes the new error.
func queueRecords(b *pgx.Batch, set []QuarantinedEvent) {
	for _, qe := range set {
		b.Queue(`
			INSERT INTO public.projection_quarantine
				(name, position, event_id, stream_name, stream_revision, event_type, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (name, position) DO UPDATE SET error = EXCLUDED.error`,
			qe.Projection, qe.Position.String(), uuid.UUID(qe.EventID), qe.Stream, int64(qe.Revision), qe.Type, qe.Error)
	}
}

// QuarantinedEvents lists the events that projs have quarantined, by
// projection and then in global order, for operators.
func QuarantinedEvents(ctx context.Context, pool *pgxpool.Pool, projs []Projection) ([]QuarantinedEvent, error) {
	names := make([]string, len(projs))
	for i, p := range projs {
		names[i] = p.Name()
	}
	return listQuarantine(ctx, pool, names)
}

func listQuarantine(ctx context.Context, db querier, names []string) ([]QuarantinedEvent, error) {
	rows, err := db.Query(ctx, `
		SELECT name, position, event_id, stream_name, stream_revision, event_type, error, quarantined_at
		FROM public.projection_quarantine WHERE name = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("list quarantined events: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanQuarantined)
	if err != nil {
		return nil, fmt.Errorf("list quarantined events: %w", err)
	}
	// Positions are text, which does not sort in global order.
	slices.SortFunc(list, func(a, b QuarantinedEvent) int {
		if c := slices.Index(names, a.Projection) - slices.Index(names, b.Projection); c != 0 {
			return c
		}
		return a.Position.Compare(b.Position)
	})
	return list, nil
}

func scanQuarantined(row pgx.CollectableRow) (QuarantinedEvent, error) {
	var (
		qe       QuarantinedEvent
		pos      string
		id       uuid.UUID
		revision int64
	)
	if err := row.Scan(&qe.Projection, &pos, &id, &qe.Stream, &revision, &qe.Type, &qe.Error, &qe.At); err != nil {
		return qe, err
	}
	p, err := events.ParsePosition(pos)
	qe.Position, qe.EventID, qe.Revision = p, id, uint64(revision)
	return qe, err
}

// countQuarantine counts the events quarantined under the checkpoints names.
func countQuarantine(ctx context.Context, db querier, names []string) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM public.projection_quarantine WHERE name = ANY($1)`, names).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count quarantined events: %w", err)
	}
	return n, nil
}
