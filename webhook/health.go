package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// updateHealth keeps what disabling needs: a success clears the failing
// streak (and a past disabling, as the endpoint was enabled again); a
// failure starts a streak if none runs, or a new one after a disabling
// (an attempt means the owner enabled the endpoint again since, so it may
// be disabled again, with a reason of its own); a delivery failed for
// good is noted.
func updateHealth(ctx context.Context, tx pgx.Tx, c claimed, out outcome, result string) error {
	var sql string
	switch result {
	case ResultSucceeded:
		sql = `INSERT INTO webhook_endpoint_health AS h (endpoint_id, account_id, last_success_at) VALUES ($1, $2, $3)
			ON CONFLICT (endpoint_id) DO UPDATE SET failing_since = NULL, disabled_at = NULL,
				last_success_at = greatest(h.last_success_at, $3)`
	case ResultFailed:
		sql = `INSERT INTO webhook_endpoint_health AS h (endpoint_id, account_id, failing_since, last_failed_at) VALUES ($1, $2, $3, $3)
			ON CONFLICT (endpoint_id) DO UPDATE SET last_failed_at = $3, disabled_at = NULL,
				failing_since = CASE WHEN h.disabled_at IS NULL THEN coalesce(h.failing_since, $3) ELSE $3 END`
	default:
		sql = `INSERT INTO webhook_endpoint_health AS h (endpoint_id, account_id, failing_since) VALUES ($1, $2, $3)
			ON CONFLICT (endpoint_id) DO UPDATE SET disabled_at = NULL,
				failing_since = CASE WHEN h.disabled_at IS NULL THEN coalesce(h.failing_since, $3) ELSE $3 END`
	}
	if _, err := tx.Exec(ctx, sql, c.endpointID, c.accountID, out.at); err != nil {
		return fmt.Errorf("update the endpoint's health: %w", err)
	}
	return nil
}

// disableIfDead disables the endpoint once every attempt has failed for
// DisableAfter and at least one delivery failed for good in that time:
// deliveries to it only pile up, and its owner learns why from the
// endpoint's disabled_reason. Once per streak: disabled_at is set after
// Disable succeeded.
func (s *Sender) disableIfDead(ctx context.Context, c claimed) error {
	if s.opts.Disable == nil {
		return nil
	}
	var since time.Time
	err := s.pool.QueryRow(ctx, `
		SELECT failing_since FROM webhook_endpoint_health
		WHERE endpoint_id = $1 AND disabled_at IS NULL AND failing_since <= $2 AND last_failed_at >= failing_since`,
		c.endpointID, s.opts.Now().Add(-s.opts.DisableAfter)).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the endpoint's health: %w", err)
	}
	// The streak's start to the microsecond, as every timestamp of the API:
	// the disabling's idempotency key is made of the reason, so two
	// streaks must never read the same.
	reason := fmt.Sprintf("every delivery attempt has failed since %s", since.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	if err := s.opts.Disable(ctx, c.accountID, c.endpointID, reason); err != nil {
		return fmt.Errorf("disable endpoint %s: %w", c.endpointID, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE webhook_endpoint_health SET disabled_at = $2 WHERE endpoint_id = $1`, c.endpointID, s.opts.Now()); err != nil {
		return fmt.Errorf("note the endpoint's disabling: %w", err)
	}
	s.logger.Warn("disabled a dead webhook endpoint", "endpoint", c.endpointID, "reason", reason)
	return nil
}
