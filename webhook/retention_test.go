package webhook

import (
	"context"
	"slices"
	"testing"
	"time"
)

// addDeliveries adds n deliveries of one endpoint in stream, with status
// and, when lastAttempt is set, that last attempt and one before it.
func addDeliveries(t *testing.T, e *env, stream string, n int, status string, lastAttempt *time.Time) {
	t.Helper()
	ctx := context.Background()
	_, err := e.pool.Exec(ctx, `
		INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, stream_name, revision,
			position_hi, position_lo, status, attempts, next_attempt_at, first_attempt_at, last_attempt_at, created_at)
		SELECT gen_random_uuid(), 'endpoint', 'acme', gen_random_uuid(), 'invoice.drafted', $1, i, 0, i, $2,
			CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE 2 END, coalesce($3, now()), $3 - interval '1 hour', $3,
			now() - interval '100 days'
		FROM generate_series(1, $4) AS i`, stream, status, lastAttempt, n)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.pool.Exec(ctx, `
		INSERT INTO webhook_attempts (delivery_id, n, at, status, latency_ms)
		SELECT d.id, k, d.last_attempt_at, 500, 12 FROM webhook_deliveries d, generate_series(1, d.attempts) AS k
		WHERE d.stream_name = $1`, stream)
	if err != nil {
		t.Fatal(err)
	}
}

// TestFinishedDeliveriesArePurgedWithTheirAttemptsAfterTheRetention: the
// delivery log keeps what is pending however old, and what finished
// within the retention; the rest goes with its attempts, more than one
// statement's batch of it.
func TestFinishedDeliveriesArePurgedWithTheirAttemptsAfterTheRetention(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cutoff := time.Now().Add(-DefaultRetention)
	before, after := cutoff.Add(-time.Minute), cutoff.Add(time.Minute)
	addDeliveries(t, e, "old-succeeded", purgeBatch+1, "succeeded", &before)
	addDeliveries(t, e, "old-failed", 1, "failed", &before)
	addDeliveries(t, e, "recent-succeeded", 1, "succeeded", &after)
	addDeliveries(t, e, "recent-failed", 1, "failed", &after)
	addDeliveries(t, e, "old-pending-retried", 1, "pending", &before)
	addDeliveries(t, e, "old-pending-untried", 1, "pending", nil)

	n, err := NewDeliveries(e.pool, nil).Purge(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if n != purgeBatch+2 {
		t.Errorf("purged %d deliveries, want %d", n, purgeBatch+2)
	}
	var kept []string
	var attempts int
	err = e.pool.QueryRow(ctx, `SELECT array_agg(stream_name ORDER BY stream_name), (SELECT count(*) FROM webhook_attempts)
		FROM webhook_deliveries`).Scan(&kept, &attempts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"old-pending-retried", "old-pending-untried", "recent-failed", "recent-succeeded"}
	if !slices.Equal(kept, want) || attempts != 6 {
		t.Errorf("kept %v with %d attempts, want %v with their 6", kept, attempts, want)
	}
}
