package projections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// Status describes one projection for operators.
type Status struct {
	Name        string
	CodeVersion int
	LiveVersion int // 0 when the tables were never created
	Checkpoint  events.Position
	// LagEvents counts this service's events after the checkpoint; LagAge is
	// how long the oldest of them has waited (0 when caught up).
	LagEvents int64
	LagAge    time.Duration
	// Building is the checkpoint of an unfinished rebuild, if any.
	Building *events.Position
	// Quarantined counts the events the projection set aside because it
	// could not apply them (see QuarantinedEvents, RetryQuarantined).
	Quarantined int64
}

// lagCountCap bounds the events counted for lag, so status stays quick on
// a projection that is very far behind.
const lagCountCap = 1_000_000

// Statuses reports every projection's version, checkpoint, lag and
// quarantined events.
func Statuses(ctx context.Context, pool *pgxpool.Pool, store events.Store, projs []Projection, now time.Time) ([]Status, error) {
	var out []Status
	for _, p := range projs {
		st, err := statusOf(ctx, pool, store, p, now)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func statusOf(ctx context.Context, pool *pgxpool.Pool, store events.Store, p Projection, now time.Time) (Status, error) {
	st := Status{Name: p.Name(), CodeVersion: p.Version()}
	err := pool.QueryRow(ctx, `SELECT version FROM public.projection_versions WHERE name = $1`, p.Name()).Scan(&st.LiveVersion)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("version of %s: %w", p.Name(), err)
	}
	if st.Checkpoint, err = readCheckpoint(ctx, pool, p.Name()); err != nil {
		return st, err
	}
	building, err := readCheckpoint(ctx, pool, buildCheckpoint(p))
	if err != nil {
		return st, err
	}
	if building != (events.Position{}) {
		st.Building = &building
	}
	if st.LagEvents, st.LagAge, err = lag(ctx, store, st.Checkpoint, now); err != nil {
		return st, err
	}
	st.Quarantined, err = countQuarantine(ctx, pool, []string{p.Name()})
	return st, err
}

// readCheckpoint returns a checkpoint without creating it; zero if absent.
func readCheckpoint(ctx context.Context, pool *pgxpool.Pool, name string) (events.Position, error) {
	var s string
	err := pool.QueryRow(ctx, `SELECT position FROM public.projection_checkpoints WHERE name = $1`, name).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return events.Position{}, nil
	}
	if err != nil {
		return events.Position{}, fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return events.ParsePosition(s)
}

func lag(ctx context.Context, store events.Store, from events.Position, now time.Time) (int64, time.Duration, error) {
	var count int64
	var age time.Duration
	for count < lagCountCap {
		page, err := store.ReadAll(ctx, from, 1000)
		if err != nil {
			return 0, 0, fmt.Errorf("lag after %s: %w", from, err)
		}
		if len(page) == 0 {
			break
		}
		if count == 0 {
			age = now.Sub(page[0].RecordedAt)
		}
		count += int64(len(page))
		from = page[len(page)-1].Position
	}
	return count, age, nil
}
