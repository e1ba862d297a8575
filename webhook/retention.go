package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// DefaultRetention is how long a finished delivery (succeeded or failed)
// stays in the delivery log after its last attempt
// (WEBHOOK_DELIVERY_RETENTION): a month, as long as an integrator may want
// to look back or retry one by hand. Without a bound the log would keep
// every event times every endpoint for ever.
const DefaultRetention = 30 * 24 * time.Hour

// PurgeInterval is how often each instance purges the delivery log: an
// hour's finished deliveries make a few short statements.
const PurgeInterval = time.Hour

// purgeBatch bounds one purge statement, so that a month of deliveries
// falling due at once is deleted in short transactions, none of which
// holds thousands of row locks for long.
const purgeBatch = 1000

// purgeSQL deletes up to $2 of the deliveries finished before $1, oldest
// first, with their attempts (the foreign key is checked at the end of
// the statement, when both are gone). SKIP LOCKED: a delivery that a
// manual retry is making pending again is left to it, and instances
// purging at once take different rows. The batch's ids are an array, so
// that both deletes probe their primary keys whatever the planner thinks
// of a join with the batch: a hash join would read the whole table.
const purgeSQL = `
WITH old AS MATERIALIZED (
	SELECT id FROM webhook_deliveries
	WHERE status <> 'pending' AND last_attempt_at < $1
	ORDER BY last_attempt_at
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), attempts AS (
	DELETE FROM webhook_attempts WHERE delivery_id = ANY (ARRAY(SELECT id FROM old))
)
DELETE FROM webhook_deliveries WHERE id = ANY (ARRAY(SELECT id FROM old))`

// Purge deletes the deliveries whose last attempt was before cutoff and
// that are finished, with their attempts, and returns how many. A pending
// delivery stays however old it is.
func (d *Deliveries) Purge(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		tag, err := d.pool.Exec(ctx, purgeSQL, cutoff, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("purge finished deliveries: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < purgeBatch {
			return total, nil
		}
	}
}

// KeepFor purges, at once and then every interval until ctx ends, the
// deliveries finished longer than keep ago (0: DefaultRetention). Every
// instance runs it; the purges share the work as the senders do.
func (d *Deliveries) KeepFor(ctx context.Context, keep, interval time.Duration, logger *slog.Logger) {
	setDefault(&keep, DefaultRetention)
	for {
		n, err := d.Purge(ctx, d.now().Add(-keep))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("purge the delivery log; tried again later", "error", err)
		case n > 0:
			logger.Info("purged finished deliveries", "deliveries", n, "older_than", keep.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
