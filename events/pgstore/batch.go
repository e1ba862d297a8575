package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
)

// Appends of one event, the only kind the service makes, are gathered into
// batches: while a batch is being written, the appends that arrive wait,
// and the next free appender writes all of them in one statement. Under
// load, PostgreSQL then runs one statement and one commit for many
// appends instead of one each: on this project's benchmark machine it
// inserted ≈ 2.5× as many 2 KB events a second in statements of 8 as one
// at a time, for a third of the server CPU per event. A lone append waits
// for nobody: an idle appender takes it at once.
//
// Each append keeps its own outcome. The statement checks every stream's
// head separately and skips, instead of failing, a row that a unique index
// already holds (ON CONFLICT DO NOTHING): an append whose head moved, or
// whose revision a concurrent writer took first, writes nothing and gets
// events.ErrWrongExpectedRevision, while the others of its batch are
// written. A batch never holds two appends to one stream, nor two of one
// event id; the later waits for the next batch.
//
// Rows are inserted in stream order. An insert that meets a row of the
// same stream from a transaction still open waits for it to end; two
// batches taking the same two streams in opposite orders would each wait
// for the other (a deadlock PostgreSQL breaks after a second by failing
// one). In one order, one of them always finishes first.
const batchAppendSQL = `
WITH req AS (
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::text[], $6::text[])
		AS r(stream, head, id, type, data, metadata)
)
INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
SELECT r.id, r.stream, r.head + 1, r.type, r.data::json, r.metadata::json
FROM req r
WHERE r.head = (SELECT coalesce(max(stream_revision), -1) FROM events WHERE stream_name = r.stream)
ORDER BY r.stream
ON CONFLICT DO NOTHING
RETURNING event_id, global_position, tx_id::text, stream_revision`

const (
	// appenders is how many batches can be written at once: one can
	// execute while another waits for its commit to reach the disk.
	appenders = 2
	// maxBatch bounds the appends of one statement.
	maxBatch = 64
	// batchTimeout bounds a batch's statement when the database stops
	// answering; callers give up sooner, on their own contexts.
	batchTimeout = 30 * time.Second
)

// errClosed answers an append made after Close: the service is shutting
// down, and a client may retry elsewhere.
var errClosed = fmt.Errorf("%w: the store is closed", events.ErrUnavailable)

type appendRequest struct {
	ctx      context.Context
	stream   string
	expected events.ExpectedRevision
	ev       events.EventData
	done     chan appendOutcome // buffered: an appender never waits for the caller
}

type appendOutcome struct {
	res events.AppendResult
	err error
}

// appendOne hands one event to the appenders and waits for its outcome.
// A caller that gives up while its batch is being written returns its
// context's error, and its event may still be appended, as with a
// statement cancelled in flight; an idempotent retry finds it.
func (s *Store) appendOne(ctx context.Context, stream string, expected events.ExpectedRevision, ev events.EventData) (events.AppendResult, error) {
	req := &appendRequest{ctx: ctx, stream: stream, expected: expected, ev: ev, done: make(chan appendOutcome, 1)}
	select {
	case s.appends <- req:
	case <-ctx.Done():
		return events.AppendResult{}, gaveUp(stream, ctx.Err())
	case <-s.stopped():
		return events.AppendResult{}, fmt.Errorf("pgstore: append to %s: %w", stream, errClosed)
	}
	select {
	case out := <-req.done:
		return out.res, out.err
	case <-ctx.Done():
		return events.AppendResult{}, gaveUp(stream, ctx.Err())
	}
}

// wrongRevision is the error of an append that wrote nothing because its
// stream's head was not where it expected.
func wrongRevision(stream string, expected events.ExpectedRevision) error {
	return fmt.Errorf("pgstore: append to %s expecting %s: %w", stream, expected, events.ErrWrongExpectedRevision)
}

// appendFailed is the error of an append whose statement failed; an
// outage is marked events.ErrUnavailable.
func appendFailed(stream string, err error) error {
	return fmt.Errorf("pgstore: append to %s: %w", stream, pgerr.MarkUnavailable(err, events.ErrUnavailable))
}

// gaveUp is the error of an append whose caller's context ended first:
// the database did not answer in the time the caller had, as when pgx
// gives up on a statement.
func gaveUp(stream string, cause error) error {
	return fmt.Errorf("pgstore: append to %s: %w: %w", stream, events.ErrUnavailable, cause)
}

// runAppender writes batches until the store is closed; the batch in hand
// when it is closed is written and answered first.
func (s *Store) runAppender() {
	defer s.wg.Done()
	var deferred []*appendRequest
	for {
		if len(deferred) == 0 {
			select {
			case req := <-s.appends:
				deferred = append(deferred, req)
			case <-s.stopped():
				return
			}
		}
		var batch []*appendRequest
		batch, deferred = gather(deferred, s.appends)
		s.writeBatch(batch)
	}
}

// gather makes a batch of the deferred requests and of those waiting on
// queue, at most maxBatch, with distinct streams and event ids; the rest
// stays deferred, in order.
func gather(deferred []*appendRequest, queue <-chan *appendRequest) (batch, rest []*appendRequest) {
	streams := make(map[string]bool, len(deferred))
	ids := make(map[[16]byte]bool, len(deferred))
	take := func(req *appendRequest) {
		if len(batch) == maxBatch || streams[req.stream] || ids[req.ev.ID] {
			rest = append(rest, req)
			return
		}
		streams[req.stream], ids[req.ev.ID] = true, true
		batch = append(batch, req)
	}
	for _, req := range deferred {
		take(req)
	}
	for len(batch) < maxBatch {
		select {
		case req := <-queue:
			take(req)
		default:
			return batch, rest
		}
	}
	return batch, rest
}

// writeBatch writes the batch's appends in one statement and answers each.
// An error the database sends for the statement may come from one event
// (bad data, a size or depth limit) or from another writer (a deadlock),
// and must not fail the others: then each is written alone, each within
// batchTimeout. Only an outage or the batch's own timeout answers every
// append of the batch with the same error.
func (s *Store) writeBatch(batch []*appendRequest) {
	live := batch[:0]
	for _, req := range batch {
		if err := req.ctx.Err(); err != nil {
			req.done <- appendOutcome{err: gaveUp(req.stream, err)}
			continue
		}
		live = append(live, req)
	}
	if len(live) == 0 {
		return
	}
	// The statement belongs to no single caller: none of them giving up
	// cancels it. It keeps the first caller's values, so that a trace of
	// that request shows the statement.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), batchTimeout)
	defer cancel()
	written, err := s.insertBatch(ctx, live)
	if statementFailed(err) {
		for _, req := range live {
			req.done <- s.appendAloneWithin(req, batchTimeout)
		}
		return
	}
	s.answer(live, written, err)
}

// statementFailed reports whether the database refused the statement
// itself, rather than being out of reach or cancelled.
func statementFailed(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && !pgerr.Unavailable(err) && pgErr.Code != "57014" // query_canceled
}

// appendAloneWithin writes one request in a statement of its own, giving
// up after d: an appender must not wait on one caller's lock for longer
// than on a batch.
func (s *Store) appendAloneWithin(req *appendRequest, d time.Duration) appendOutcome {
	ctx, cancel := context.WithTimeout(req.ctx, d)
	defer cancel()
	res, err := s.appendAlone(ctx, req.stream, req.expected, []events.EventData{req.ev})
	return appendOutcome{res: res, err: err}
}

// answer tells each request its outcome and announces what was written.
func (s *Store) answer(batch []*appendRequest, written map[[16]byte]events.AppendResult, err error) {
	var types []string
	for _, req := range batch {
		res, ok := written[req.ev.ID]
		switch {
		case err != nil:
			req.done <- appendOutcome{err: appendFailed(req.stream, err)}
		case !ok:
			req.done <- appendOutcome{err: wrongRevision(req.stream, req.expected)}
		default:
			types = append(types, req.ev.Type)
			req.done <- appendOutcome{res: res}
		}
	}
	if len(types) > 0 {
		s.committed(types)
	}
}

// insertBatch runs batchAppendSQL and returns what it wrote, by event id.
func (s *Store) insertBatch(ctx context.Context, batch []*appendRequest) (map[[16]byte]events.AppendResult, error) {
	n := len(batch)
	streams, heads := make([]string, n), make([]int64, n)
	var cols eventColumns
	for i, req := range batch {
		streams[i], heads[i] = req.stream, headOf(req.expected)
		cols.add(req.ev)
	}
	rows, err := s.pool.Query(ctx, batchAppendSQL, streams, heads, cols.ids, cols.types, cols.data, cols.metadata)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	written := make(map[[16]byte]events.AppendResult, n)
	for rows.Next() {
		var (
			id      [16]byte // see eventColumns
			gp, rev int64
			txID    string
		)
		if err := rows.Scan(&id, &gp, &txID, &rev); err != nil {
			return nil, err
		}
		pos, err := position(txID, gp)
		if err != nil {
			return nil, err
		}
		written[id] = events.AppendResult{NextRevision: uint64(rev), Position: pos}
	}
	return written, rows.Err()
}

// headOf is the stream revision an append expects to find: -1 for none.
func headOf(expected events.ExpectedRevision) int64 {
	if expected.IsNoStream() {
		return -1
	}
	return int64(expected.Revision())
}
