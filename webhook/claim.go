package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimed is a delivery a sender holds the lease of.
type claimed struct {
	id, endpointID, accountID string
	eventID, eventType        string
	stream                    string
	revision                  uint64
	attempts                  int
	expiresAt                 time.Time
}

// claimSQL takes up to $3 due deliveries and leases them until $4, in one
// short statement. Due: pending, its time come, not leased, and no earlier
// delivery (by log position) of the same endpoint and stream pending, so a
// resource's events reach an endpoint in order. Fair: candidates are ranked
// per endpoint and an endpoint gets at most $2 in flight (busy counts its
// leases), so one slow or dead endpoint never takes every worker. Two
// instances claiming at once may each give an endpoint its share: the
// limit bounds, it does not meter. SKIP LOCKED: concurrent claimers pass
// over each other's rows instead of waiting.
const claimSQL = `
WITH due AS (
	SELECT d.id, d.endpoint_id, d.next_attempt_at, d.position_hi, d.position_lo
	FROM webhook_deliveries d
	WHERE d.status = 'pending' AND d.next_attempt_at <= $1
		AND (d.lease_until IS NULL OR d.lease_until <= $1)
		AND NOT EXISTS (
			SELECT 1 FROM webhook_deliveries e
			WHERE e.endpoint_id = d.endpoint_id AND e.stream_name = d.stream_name AND e.status = 'pending'
				AND (e.position_hi, e.position_lo) < (d.position_hi, d.position_lo))
	ORDER BY d.next_attempt_at
	LIMIT 1000
), ranked AS (
	SELECT due.id, row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.position_hi, due.position_lo) AS rn,
		(SELECT count(*) FROM webhook_deliveries f
		 WHERE f.endpoint_id = due.endpoint_id AND f.status = 'pending' AND f.lease_until > $1) AS busy
	FROM due
), pick AS (
	SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
	WHERE r.rn + r.busy <= $2 AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= $1)
	ORDER BY d.next_attempt_at
	LIMIT $3
	FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d
SET lease_until = $4, first_attempt_at = coalesce(d.first_attempt_at, $1),
	expires_at = coalesce(d.expires_at, $1 + $5::interval)
FROM pick WHERE d.id = pick.id
RETURNING d.id::text, d.endpoint_id, d.account_id, d.event_id::text, d.event_type, d.stream_name,
	d.revision, d.attempts, d.expires_at`

// claim leases up to n due deliveries.
func (s *Sender) claim(ctx context.Context, n int) ([]claimed, error) {
	if n <= 0 {
		return nil, nil
	}
	now := s.opts.Now()
	rows, err := s.pool.Query(ctx, claimSQL, now, s.opts.PerEndpoint, n, now.Add(s.lease()), s.opts.RetryFor)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claimed, error) {
		var c claimed
		var rev int64
		err := row.Scan(&c.id, &c.endpointID, &c.accountID, &c.eventID, &c.eventType, &c.stream, &rev, &c.attempts, &c.expiresAt)
		c.revision = uint64(rev)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// release gives a lease back without an attempt (shutdown, or the
// database or store failed before the send): due again at once.
func (s *Sender) release(c claimed) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1 AND status = 'pending'`, c.id); err != nil {
		// The lease then runs out by itself; the delivery waits that long.
		s.logger.Warn("release a delivery's lease", "delivery", c.id, "error", err)
	}
}
