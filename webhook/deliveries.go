package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// ErrNotFound means no such delivery (or endpoint) in the account.
var ErrNotFound = errors.New("webhook: not found")

// ErrInvalidCursor means an `after` cursor this list did not issue.
var ErrInvalidCursor = errors.New("webhook: the cursor is invalid")

// Delivery is one event's delivery to one endpoint, with its attempts.
type Delivery struct {
	ID         string
	EndpointID string
	EventID    string
	EventType  string
	Status     string // pending, succeeded or failed
	Attempts   []Attempt
	// NextAttemptAt is when a pending delivery is tried next; nil once it
	// succeeded or failed.
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	cursor        string
}

// Attempt is one try of a delivery.
type Attempt struct {
	At         time.Time
	StatusCode *int // nil when no answer came
	LatencyMS  int
	Error      string
}

// Deliveries is the delivery log of the API: list, read, retry by hand.
type Deliveries struct {
	pool *pgxpool.Pool
	wake func()
	now  func() time.Time
}

// NewDeliveries returns the log in pool. wake, when set, is called after a
// manual retry (cmd passes the local Sender's Wake).
func NewDeliveries(pool *pgxpool.Pool, wake func()) *Deliveries {
	return &Deliveries{pool: pool, wake: wake, now: time.Now}
}

const deliveryColumns = `d.id::text, d.endpoint_id, d.event_id::text, d.event_type, d.status, d.next_attempt_at,
	d.created_at, d.position_hi, d.position_lo`

// The delivery log's statements; webhook/plans_test.go holds each to its
// index.
const (
	// listSQL: $5 deliveries of endpoint $2 of account $1 after the cursor
	// ($3, $4), in log order.
	listSQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d
		WHERE d.account_id = $1 AND d.endpoint_id = $2 AND (d.position_hi, d.position_lo) > ($3, $4)
		ORDER BY d.position_hi, d.position_lo LIMIT $5`
	getSQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d
		WHERE d.account_id = $1 AND d.endpoint_id = $2 AND d.id = $3::uuid`
	// hasDeliveriesSQL looks for the endpoint's first delivery in the log's
	// order: an EXISTS would let the planner scan the table for any row of
	// an endpoint it thinks common.
	hasDeliveriesSQL = `SELECT count(*) > 0 FROM (SELECT FROM webhook_deliveries WHERE account_id = $1 AND endpoint_id = $2
		ORDER BY position_hi, position_lo LIMIT 1) AS first`
	// attemptsSQL reads the attempts of each delivery of $1 on its own, an
	// index probe each: one ANY over a page's ids, or a join with them, is
	// a filter the planner may apply to the whole table when it expects
	// many rows to match. OFFSET 0 keeps the subquery from being merged
	// into such a join.
	attemptsSQL = `SELECT d.id::text, a.at, a.status, a.latency_ms, coalesce(a.error, '')
		FROM unnest($1::text[]::uuid[]) AS d(id)
		CROSS JOIN LATERAL (SELECT at, status, latency_ms, error, n FROM webhook_attempts WHERE delivery_id = d.id
			OFFSET 0) AS a
		ORDER BY d.id, a.n`
	// retrySQL makes delivery $3 due at $4, with idempotency-key $5.
	retrySQL = `UPDATE webhook_deliveries SET next_attempt_at = $4,
			expires_at = CASE WHEN status = 'failed' THEN $4 ELSE expires_at END, status = 'pending', retry_key = $5
		WHERE account_id = $1 AND endpoint_id = $2 AND id = $3::uuid AND status IN ('pending', 'failed')
			AND retry_key IS DISTINCT FROM $5`
	statsSQL = `SELECT count(*) FILTER (WHERE attempts > 0), min(created_at)
		FROM webhook_deliveries WHERE status = 'pending'`
)

// List returns up to limit deliveries of an endpoint after the cursor
// (empty: from the first), oldest event first, and the cursor of the last
// when more follow ("" at the end).
func (d *Deliveries) List(ctx context.Context, accountID, endpointID, after string, limit int) ([]Delivery, string, error) {
	hi, lo, err := decodeCursor(after)
	if err != nil {
		return nil, "", err
	}
	rows, err := d.pool.Query(ctx, listSQL, accountID, endpointID, hi, lo, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries: %w", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = list[limit-1].cursor
	}
	if err := d.withAttempts(ctx, list); err != nil {
		return nil, "", err
	}
	return list, next, nil
}

// Get returns one delivery of an endpoint, or ErrNotFound.
func (d *Deliveries) Get(ctx context.Context, accountID, endpointID, deliveryID string) (Delivery, error) {
	if _, ok := events.ParseUUID(deliveryID); !ok {
		return Delivery{}, ErrNotFound
	}
	rows, err := d.pool.Query(ctx, getSQL, accountID, endpointID, deliveryID)
	if err != nil {
		return Delivery{}, fmt.Errorf("read delivery: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return Delivery{}, fmt.Errorf("read delivery: %w", err)
	}
	if len(list) == 0 {
		return Delivery{}, ErrNotFound
	}
	return list[0], d.withAttempts(ctx, list)
}

// HasDeliveries reports whether the account has any delivery to the
// endpoint: the existence check of the delivery log until the endpoints'
// read model answers it.
func (d *Deliveries) HasDeliveries(ctx context.Context, accountID, endpointID string) (bool, error) {
	var ok bool
	err := d.pool.QueryRow(ctx, hasDeliveriesSQL, accountID, endpointID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look for deliveries: %w", err)
	}
	return ok, nil
}

// Retry makes a pending or failed delivery due now and returns it. A
// failed one gets one more attempt (its retry period is over: it expires
// now), a pending one keeps its period; a succeeded one is left as it is.
// key is the request's idempotency-key: a retry with the key of the last
// one changes nothing, so a client repeating its request after a timeout
// does not cause another attempt.
func (d *Deliveries) Retry(ctx context.Context, accountID, endpointID, deliveryID, key string) (Delivery, error) {
	if _, ok := events.ParseUUID(deliveryID); !ok {
		return Delivery{}, ErrNotFound
	}
	now := d.now()
	_, err := d.pool.Exec(ctx, retrySQL, accountID, endpointID, deliveryID, now, key)
	if err != nil {
		return Delivery{}, fmt.Errorf("retry delivery: %w", err)
	}
	if d.wake != nil {
		d.wake()
	}
	return d.Get(ctx, accountID, endpointID, deliveryID)
}

func scanDelivery(row pgx.CollectableRow) (Delivery, error) {
	var (
		x      Delivery
		next   time.Time
		hi, lo int64
	)
	err := row.Scan(&x.ID, &x.EndpointID, &x.EventID, &x.EventType, &x.Status, &next, &x.CreatedAt, &hi, &lo)
	if x.Status == "pending" {
		next = next.UTC()
		x.NextAttemptAt = &next
	}
	x.CreatedAt, x.cursor = x.CreatedAt.UTC(), encodeCursor(hi, lo)
	x.Attempts = []Attempt{}
	return x, err
}

// withAttempts fills in the attempts of list, in one query.
func (d *Deliveries) withAttempts(ctx context.Context, list []Delivery) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	byID := make(map[string]*Delivery, len(list))
	for i := range list {
		ids[i], byID[list[i].ID] = list[i].ID, &list[i]
	}
	rows, err := d.pool.Query(ctx, attemptsSQL, ids)
	if err != nil {
		return fmt.Errorf("read attempts: %w", err)
	}
	var (
		id string
		a  Attempt
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &a.At, &a.StatusCode, &a.LatencyMS, &a.Error}, func() error {
		a.At = a.At.UTC()
		byID[id].Attempts = append(byID[id].Attempts, a)
		a = Attempt{}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read attempts: %w", err)
	}
	return nil
}

// The cursor is the last delivery's log position, opaque to clients. It
// needs no check: tenancy is the query's WHERE, not the cursor.
func encodeCursor(hi, lo int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(hi, 10) + "." + strconv.FormatInt(lo, 10)))
}

func decodeCursor(s string) (hi, lo int64, err error) {
	if s == "" {
		return -1, -1, nil
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	h, l, ok := strings.Cut(string(raw), ".")
	if err != nil || !ok {
		return 0, 0, ErrInvalidCursor
	}
	hi, err1 := strconv.ParseInt(h, 10, 64)
	lo, err2 := strconv.ParseInt(l, 10, 64)
	if err1 != nil || err2 != nil || hi < 0 || lo < 0 {
		return 0, 0, ErrInvalidCursor
	}
	return hi, lo, nil
}

// Stats are the gauges of the delivery queue.
type Stats struct {
	// RetriesPending counts pending deliveries that have failed at least
	// once.
	RetriesPending int64
	// OldestPending is the age of the oldest pending delivery (0: none).
	OldestPending time.Duration
}

// Stats reads the queue's gauges; metrics read them on each scrape, so
// every instance reports the shared queue.
func (d *Deliveries) Stats(ctx context.Context) (Stats, error) {
	var (
		s      Stats
		oldest *time.Time
	)
	err := d.pool.QueryRow(ctx, statsSQL).Scan(&s.RetriesPending, &oldest)
	if err != nil {
		return Stats{}, fmt.Errorf("read the delivery queue: %w", err)
	}
	if oldest != nil {
		s.OldestPending = max(d.now().Sub(*oldest), 0)
	}
	return s, nil
}
