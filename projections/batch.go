package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgarray"
)

// errCheckpointMoved means the checkpoint changed under us: another worker
// committed a batch, so ours must not.
var errCheckpointMoved = errors.New("checkpoint moved by another worker")

// target is where a batch goes: the schema holding the tables (empty for
// the live tables in public) and the checkpoint row that tracks it.
type target struct {
	schema     string
	checkpoint string
	// bulk marks a rebuild: losing the last batches in a crash is harmless
	// because the checkpoint commits with them, so skip the WAL flush wait.
	bulk bool
}

// applyBatch writes the batch's rows and the new checkpoint in one
// transaction; the checkpoint update is a compare-and-swap on the old one
// and on q's epoch. All statements go to the server in one round trip.
//
// When that fails on an error an event causes (see deterministic), the
// batch is written again in a new transaction, one event at a time, setting
// aside the events that fail (see quarantine.go); it returns them. A batch
// with an event of a quarantined stream takes that path at once. Any other
// error fails the batch, and the caller retries it.
//
// pre, when not nil, holds the batch's statements built ahead (see
// readAhead); the careful path builds its own.
func applyBatch(ctx context.Context, pool *pgxpool.Pool, proj Projection, to target, q *quarantine, from events.Position, batch []events.RecordedEvent, pre *built) (events.Position, []QuarantinedEvent, error) {
	last := batch[len(batch)-1].Position
	if !q.touches(batch) {
		err := casFailure(writeBatch(ctx, pool, proj, to, batch, pre, func(b *pgx.Batch) { q.queueCAS(b, from, last) }))
		if err == nil {
			return last, nil, nil
		}
		if !deterministic(err) {
			return from, nil, err
		}
	}
	set, err := applyBatchCarefully(ctx, pool, proj, to, q, from, batch)
	if err != nil {
		return from, nil, casFailure(err)
	}
	q.add(set)
	return last, set, nil
}

// applyBatchCarefully is applyBatch's slow path. The quarantine rows are
// written after the compare-and-swap, so that every writer takes the locks
// in the same order (read-model tables, checkpoint row, quarantine rows) and
// none can deadlock with a rebuild's swap or a retry.
func applyBatchCarefully(ctx context.Context, pool *pgxpool.Pool, proj Projection, to target, q *quarantine, from events.Position, batch []events.RecordedEvent) ([]QuarantinedEvent, error) {
	var set []QuarantinedEvent
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := to.enter(ctx, tx); err != nil {
			return err
		}
		var err error
		if set, err = applyCarefully(ctx, tx, proj, q, batch); err != nil {
			return err
		}
		b := &pgx.Batch{}
		q.queueCAS(b, from, batch[len(batch)-1].Position)
		queueRecords(b, set)
		return tx.SendBatch(ctx, b).Close()
	})
	return set, err
}

// writeBatch writes the events' statements and finish's in one
// transaction. The live tables need no settings, so a batch of statements
// alone goes as one implicit transaction: one round trip, committed at its
// end, rolled back entirely by any error (queueCAS fails on the server for
// that reason). A batch that copies rows (bulkWrite) and a rebuild's batch,
// which sets its schema and commit mode first, go in an explicit
// transaction.
func writeBatch(ctx context.Context, pool *pgxpool.Pool, proj Projection, to target, evs []events.RecordedEvent, pre *built, finish func(*pgx.Batch)) error {
	if pre == nil {
		pre = build(proj, evs)
	}
	if to.schema == "" && !to.bulk && len(pre.copies) == 0 {
		return pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
			return sendEvents(ctx, c, proj, evs, pre, finish)
		})
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := to.enter(ctx, tx); err != nil {
			return err
		}
		return sendEvents(ctx, tx, proj, evs, pre, finish)
	})
}

// batchSender is what a pool's connection and a transaction share for
// sendEvents.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
	Conn() *pgx.Conn
}

// built is a batch's writes, made before its write (see readAhead), or
// the error making them met.
type built struct {
	copies     []rowCopy
	statements *pgx.Batch
	err        error
}

// bulkWrite is what a batchApplier makes of a batch of events: rows to
// copy into tables, then statements, written in that order in one
// transaction.
type bulkWrite struct {
	copies     []rowCopy
	statements *pgx.Batch
	// copyMin is the fewest rows a table's rows are copied at; fewer go in
	// a multi-row INSERT among the statements (see copyMinRows).
	copyMin int
}

// rowCopy is one COPY of rows into a table.
type rowCopy struct {
	table   string
	columns []string
	rows    pgx.CopyFromSource
}

// addRows adds n rows for table: copied (columns, from the source copy
// makes) when there are w.copyMin or more and copy can make one, otherwise
// queued by insert in one multi-row INSERT. copy says false when a value
// must go to the server's casts (see draftedRows.write).
func (w *bulkWrite) addRows(n int, table string, columns []string, copy func() (pgx.CopyFromSource, bool), insert func(*pgx.Batch)) {
	if n == 0 {
		return
	}
	if n >= w.copyMin {
		if rows, ok := copy(); ok {
			w.copies = append(w.copies, rowCopy{table: table, columns: columns, rows: rows})
			return
		}
	}
	insert(w.statements)
}

// rowCursor is a copy source's position: Values returns row next-1 of
// rows. The sources check their rows before the copy starts, so none
// fails midway (Err).
type rowCursor struct{ next, rows int }

// Next implements pgx.CopyFromSource.
func (c *rowCursor) Next() bool {
	c.next++
	return c.next <= c.rows
}

// Err implements pgx.CopyFromSource.
func (c *rowCursor) Err() error { return nil }

// copyMinRows is the fewest rows a batch copies into a table rather than
// inserts. A COPY streams its rows, so PostgreSQL inserts the first while
// the last are still being encoded, and it inserts them in pages rather
// than one at a time: 2,000 invoices take PostgreSQL about 0.6 times as
// long as by one INSERT of unnested arrays, which must arrive whole before
// it starts. But a COPY needs an explicit transaction, three round trips
// more than a batch of statements alone: the batches of a service keeping
// up with its appends (a create's one draft) stay statements, and so does
// a catch-up's short batch, whose rows cost less than those round trips.
const copyMinRows = 100

// build makes every event's writes.
func build(proj Projection, evs []events.RecordedEvent) *built {
	return buildCopying(proj, evs, copyMinRows)
}

// buildCopying is build with copyMin (see bulkWrite).
func buildCopying(proj Projection, evs []events.RecordedEvent, copyMin int) *built {
	b := &pgx.Batch{}
	if ba, ok := proj.(batchApplier); ok {
		w := bulkWrite{statements: b, copyMin: copyMin}
		if err := ba.ApplyAll(evs, &w); err != nil {
			return &built{err: fmt.Errorf("apply a batch at %s: %w", evs[0].Position, &applyError{err})}
		}
		return &built{copies: w.copies, statements: b}
	}
	for _, ev := range evs {
		if err := proj.Apply(ev, b); err != nil {
			return &built{err: fmt.Errorf("apply %s at %s: %w", ev.Type, ev.Position, &applyError{err})}
		}
	}
	return &built{statements: b}
}

// sendEvents copies pre's rows, then sends its statements and whatever
// finish adds in one round trip; pre nil: the events' writes, made now. A
// batch that copies rows must be sent in a transaction (pgx.Tx): writeBatch
// sees to it.
func sendEvents(ctx context.Context, tx batchSender, proj Projection, evs []events.RecordedEvent, pre *built, finish func(*pgx.Batch)) error {
	if pre == nil {
		pre = build(proj, evs)
	}
	if pre.err != nil {
		return pre.err
	}
	if err := copyRows(ctx, tx, pre.copies); err != nil {
		return fmt.Errorf("write %s: %w", proj.Name(), err)
	}
	b := pre.statements
	if finish != nil {
		finish(b)
	}
	if b.Len() == 0 {
		return nil
	}
	pgarray.Reserve(tx.Conn(), b)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write %s: %w", proj.Name(), err)
	}
	return nil
}

// copyRows runs the copies in tx, which must be a transaction.
func copyRows(ctx context.Context, tx batchSender, copies []rowCopy) error {
	if len(copies) == 0 {
		return nil
	}
	if _, ok := tx.(pgx.Tx); !ok {
		return errCopyOutsideTransaction
	}
	for _, c := range copies {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, c.rows); err != nil {
			return fmt.Errorf("copy into %s: %w", c.table, err)
		}
	}
	return nil
}

// errCopyOutsideTransaction is a caller's mistake: each COPY outside a
// transaction would commit on its own, ahead of the checkpoint.
var errCopyOutsideTransaction = errors.New("projections: rows copied outside a transaction")

// enter points the transaction at the target's schema.
func (to target) enter(ctx context.Context, tx pgx.Tx) error {
	if to.schema != "" {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{to.schema}.Sanitize()+", public"); err != nil {
			return fmt.Errorf("search_path %s: %w", to.schema, err)
		}
	}
	if to.bulk {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
	}
	return nil
}

// querier is what a pool and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// loadCheckpoint reads a checkpoint, creating it at the start if missing.
func loadCheckpoint(ctx context.Context, db querier, name string) (events.Position, error) {
	_, err := db.Exec(ctx, `
		INSERT INTO public.projection_checkpoints (name, position) VALUES ($1, $2)
		ON CONFLICT (name) DO NOTHING`, name, events.Position{}.String())
	if err != nil {
		return events.Position{}, fmt.Errorf("create checkpoint %s: %w", name, err)
	}
	var s string
	if err := db.QueryRow(ctx, `SELECT position FROM public.projection_checkpoints WHERE name = $1`, name).Scan(&s); err != nil {
		return events.Position{}, fmt.Errorf("load checkpoint %s: %w", name, err)
	}
	return events.ParsePosition(s)
}
