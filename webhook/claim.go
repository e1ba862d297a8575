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

// claimSQL takes up to $3 due deliveries and leases them for $4, in one
// short statement. heads are the deliveries the ordering rule lets go:
// the earliest pending one (by log position) of each endpoint and stream,
// so a resource's events reach an endpoint in order; a head being sent
// (leased) is still pending and still holds back the rest. Reading the
// heads off the ordering index costs one pass over the pending rows, not
// one probe per row: a dead endpoint's backlog stays cheap to pass over.
// Due: a head whose time has come and that nobody holds. Fair: an
// endpoint gets at most $2 in flight (busy counts its leases, which only
// heads hold, once per endpoint: a count per head would cost heads × heads
// when a dead endpoint's backlog holds thousands), so one slow or dead
// endpoint never takes every worker. Two
// instances claiming at once may each give an endpoint its share: the
// limit bounds, it does not meter. SKIP LOCKED: concurrent claimers pass
// over each other's rows instead of waiting. Leases are kept by the
// database's clock, the one clock every instance shares: by their own, an
// instance whose clock ran ahead would take deliveries another still
// sends. Due times are the senders' (they set them, from the attempts'
// times), where a skew only moves a retry.
const claimSQL = `
WITH heads AS (
	SELECT DISTINCT ON (endpoint_id, stream_name) id, endpoint_id, next_attempt_at, lease_until, position_hi, position_lo
	FROM webhook_deliveries
	WHERE status = 'pending'
	ORDER BY endpoint_id, stream_name, position_hi, position_lo
), busy AS (
	SELECT endpoint_id, count(*) AS n FROM heads WHERE lease_until > statement_timestamp() GROUP BY endpoint_id
), ranked AS (
	SELECT h.id, h.next_attempt_at,
		row_number() OVER (PARTITION BY h.endpoint_id ORDER BY h.next_attempt_at, h.position_hi, h.position_lo) AS rn,
		coalesce(b.n, 0) AS busy
	FROM heads h LEFT JOIN busy b ON b.endpoint_id = h.endpoint_id
	WHERE h.next_attempt_at <= $1 AND (h.lease_until IS NULL OR h.lease_until <= statement_timestamp())
), pick AS (
	SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
	WHERE r.rn + r.busy <= $2 AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= statement_timestamp())
	ORDER BY r.next_attempt_at
	LIMIT $3
	FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d
SET lease_until = statement_timestamp() + $4::interval, first_attempt_at = coalesce(d.first_attempt_at, $1),
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
	rows, err := s.pool.Query(ctx, claimSQL, now, s.opts.PerEndpoint, n, s.lease(), s.opts.RetryFor)
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

// postpone gives a lease back without an attempt, due again after delay.
func (s *Sender) postpone(c claimed, delay time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET lease_until = NULL, next_attempt_at = $2
		WHERE id = $1 AND status = 'pending'`, c.id, s.opts.Now().Add(delay))
	if err != nil {
		// The lease then runs out by itself; the delivery waits that long.
		s.logger.Warn("postpone a delivery", "delivery", c.id, "error", err)
	}
}

// release gives a lease back without an attempt (shutdown, or the
// database failed recording one): due again at once.
func (s *Sender) release(c claimed) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1 AND status = 'pending'`, c.id); err != nil {
		// The lease then runs out by itself; the delivery waits that long.
		s.logger.Warn("release a delivery's lease", "delivery", c.id, "error", err)
	}
}
