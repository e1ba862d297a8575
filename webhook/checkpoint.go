package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// loadCheckpoint returns the dispatcher's checkpoint: the start of the log
// before its first commit.
func loadCheckpoint(ctx context.Context, pool *pgxpool.Pool) (events.Position, error) {
	var hi, lo int64
	err := pool.QueryRow(ctx, `SELECT position_hi, position_lo FROM webhook_checkpoint WHERE name = $1`, dispatcherLock).Scan(&hi, &lo)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return events.Position{}, nil
	case err != nil:
		return events.Position{}, fmt.Errorf("load the webhook checkpoint: %w", err)
	}
	return events.NewPosition(uint64(hi), uint64(lo)), nil
}

// errCheckpointMoved means the checkpoint was not where this leader left
// it: another dispatcher committed since.
var errCheckpointMoved = errors.New("the webhook checkpoint moved under this dispatcher")

// commit enqueues rows and moves the checkpoint from from to to in one
// transaction. A batch with nothing to enqueue (most, when few accounts
// have endpoints) is the checkpoint's one statement, a round trip instead
// of BEGIN, the statement and COMMIT.
func commit(ctx context.Context, pool *pgxpool.Pool, from, to events.Position, rows []newDelivery) error {
	if len(rows) == 0 {
		return saveCheckpoint(ctx, pool, from, to)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := insertDeliveries(ctx, tx, rows); err != nil {
			return err
		}
		return saveCheckpoint(ctx, tx, from, to)
	})
}

// execer runs a statement: a pool (its own transaction) or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// saveCheckpoint moves the checkpoint from from to to; errCheckpointMoved
// when it is not at from (a row not there yet is at the start).
func saveCheckpoint(ctx context.Context, db execer, from, to events.Position) error {
	fromHi, fromLo := from.Parts()
	hi, lo := to.Parts()
	tag, err := db.Exec(ctx, `
		INSERT INTO webhook_checkpoint AS c (name, position_hi, position_lo) VALUES ($1, $4, $5)
		ON CONFLICT (name) DO UPDATE SET position_hi = $4, position_lo = $5, updated_at = now()
		WHERE c.position_hi = $2 AND c.position_lo = $3`,
		dispatcherLock, int64(fromHi), int64(fromLo), int64(hi), int64(lo))
	switch {
	case err != nil:
		return fmt.Errorf("save the webhook checkpoint: %w", err)
	case tag.RowsAffected() != 1:
		return fmt.Errorf("save the webhook checkpoint at %s: %w", from, errCheckpointMoved)
	}
	return nil
}

// insertDeliveries enqueues rows; one already there (the same endpoint and
// event) is left as it is.
func insertDeliveries(ctx context.Context, tx pgx.Tx, rows []newDelivery) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	ids, endpoints, accounts, eventIDs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	types, streams, revisions := make([]string, n), make([]string, n), make([]int64, n)
	his, los := make([]int64, n), make([]int64, n)
	for i, r := range rows {
		hi, lo := r.pos.Parts()
		ids[i], endpoints[i], accounts[i], eventIDs[i] = r.id, r.endpointID, r.accountID, r.eventID.String()
		types[i], streams[i], revisions[i], his[i], los[i] = r.eventType, r.stream, int64(r.revision), int64(hi), int64(lo)
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, stream_name,
			revision, position_hi, position_lo, next_attempt_at, created_at)
		SELECT u.id::uuid, u.endpoint_id, u.account_id, u.event_id::uuid, u.event_type, u.stream_name,
			u.revision, u.position_hi, u.position_lo, now(), now()
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[])
			AS u(id, endpoint_id, account_id, event_id, event_type, stream_name, revision, position_hi, position_lo)
		ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
		ids, endpoints, accounts, eventIDs, types, streams, revisions, his, los)
	if err != nil {
		return fmt.Errorf("insert %d deliveries: %w", n, err)
	}
	return nil
}
