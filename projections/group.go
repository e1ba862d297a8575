package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// ErrWaitTimeout means a projection had not reached a position in time.
var ErrWaitTimeout = errors.New("projections: read models not caught up in time")

// Group runs a set of projections and tells writers when the read models
// have caught up with an event (read-your-writes).
type Group struct {
	runners []*Runner
	names   []string
	pool    *pgxpool.Pool

	mu       sync.Mutex
	progress chan struct{} // closed and replaced after every local commit
}

// NewGroup builds a runner for each projection.
func NewGroup(projs []Projection, store events.Store, pool *pgxpool.Pool, logger *slog.Logger, opts RunnerOptions) *Group {
	g := &Group{pool: pool, progress: make(chan struct{})}
	opts.afterCommit = func(events.Position) { g.signal() }
	for _, p := range projs {
		g.runners = append(g.runners, NewRunner(p, store, pool, logger, opts))
		g.names = append(g.names, p.Name())
	}
	return g
}

// Run runs every projection until ctx ends.
func (g *Group) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, r := range g.runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Run(ctx)
		}()
	}
	wg.Wait()
}

// Err reports a projection whose last attempt failed, for readiness checks.
func (g *Group) Err() error {
	for _, r := range g.runners {
		if err := r.Err(); err != nil {
			return fmt.Errorf("projection %s: %w", r.proj.Name(), err)
		}
	}
	return nil
}

func (g *Group) signal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.progress)
	g.progress = make(chan struct{})
}

func (g *Group) progressed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.progress
}

// waitPoll bounds how long WaitFor sleeps between checkpoint reads when the
// projections run in another process and no local commit wakes it.
const waitPoll = 20 * time.Millisecond

// WaitFor blocks until every projection's checkpoint has reached pos, or
// ctx ends (ErrWaitTimeout when its deadline passed). It reads the
// checkpoints from the database, so it works whichever instance runs them.
func (g *Group) WaitFor(ctx context.Context, pos events.Position) error {
	for {
		woken := g.progressed()
		done, err := g.reached(ctx, pos)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting for %s): %w", ErrWaitTimeout, pos, ctx.Err())
		case <-woken:
		case <-time.After(waitPoll):
		}
	}
}

func (g *Group) reached(ctx context.Context, pos events.Position) (bool, error) {
	rows, err := g.pool.Query(ctx, `SELECT position FROM projection_checkpoints WHERE name = ANY($1)`, g.names)
	if err != nil {
		return false, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return false, err
		}
		cp, err := events.ParsePosition(s)
		if err != nil {
			return false, err
		}
		if cp.Compare(pos) < 0 {
			return false, nil
		}
		seen++
	}
	return seen == len(g.names), rows.Err()
}
