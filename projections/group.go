package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// ErrWaitTimeout means a projection had not reached a position in time.
var ErrWaitTimeout = errors.New("projections: read models not caught up in time")

// ErrQuarantined means a projection quarantined the event waited for: the
// read models will not show it until an operator retries it
// (RetryQuarantined).
var ErrQuarantined = errors.New("projections: event quarantined; the read models do not show it")

// Group runs a set of projections and tells writers when the read models
// have caught up with an event (read-your-writes).
type Group struct {
	runners []*Runner
	names   []string
	pool    *pgxpool.Pool
	// byType holds, for each of this service's event types, the runners
	// of the projections that handle it: what a writer waits for.
	byType map[string]handlers

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
	g.byType = map[string]handlers{}
	for _, t := range events.Types {
		g.byType[t] = g.handling(t)
	}
	return g
}

// handlers are the runners of the projections that handle an event type,
// and their names.
type handlers struct {
	runners []*Runner
	names   []string
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

// CatchingUp reports whether any of this process's runners is reading a
// backlog (see Runner.CatchingUp): the audit sealer then leaves them the
// CPU (see audit.SealerOptions.Yield).
func (g *Group) CatchingUp() bool {
	return slices.ContainsFunc(g.runners, (*Runner).CatchingUp)
}

// Err reports a projection whose last attempt failed, for readiness checks.
// Quarantined events are not failures: the projections go on for everyone
// else (see QuarantineCount).
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

// QuarantineCount returns how many events the group's projections have
// quarantined, for the readiness probe to report. It is no reason to be
// unready: the projections go on with every other event.
func (g *Group) QuarantineCount(ctx context.Context) (int64, error) {
	return countQuarantine(ctx, g.pool, g.names)
}

// waitPoll bounds how long WaitFor sleeps between checks when no local
// commit wakes it: the projections run in another process, or the database
// does not answer.
const waitPoll = 20 * time.Millisecond

// WaitFor blocks until every projection that handles eventType has applied
// the event at pos, or ctx ends (ErrWaitTimeout). It returns an error
// wrapping ErrQuarantined as soon as one of them has quarantined it.
//
// When this process leads those projections, their runners' memory answers
// and every local commit wakes the waiters: no query. Otherwise (another
// instance leads, or a quarantine is known) it reads the checkpoints from
// the database, which works whichever instance runs the projections. When
// the database does not answer it keeps trying until ctx ends, and the
// ErrWaitTimeout then wraps the last error too.
func (g *Group) WaitFor(ctx context.Context, pos events.Position, eventType string) error {
	h, ok := g.byType[eventType]
	if !ok {
		h = g.handling(eventType)
	}
	var lastErr error
	for {
		woken := g.progressed()
		done, local := h.reachedLocally(pos)
		var err error
		if !done && !local {
			done, err = g.reached(ctx, pos, h.names)
		}
		switch {
		case errors.Is(err, ErrQuarantined):
			return err
		case err != nil && ctx.Err() == nil:
			lastErr = err
		case done:
			return nil
		}
		select {
		case <-ctx.Done():
			return waitTimeout(ctx, pos, lastErr)
		case <-woken:
		case <-time.After(waitPoll):
		}
	}
}

// handling returns the runners of the projections that handle eventType.
func (g *Group) handling(eventType string) handlers {
	var h handlers
	for _, r := range g.runners {
		if r.proj.Handles(eventType) {
			h.runners, h.names = append(h.runners, r), append(h.names, r.proj.Name())
		}
	}
	return h
}

// reachedLocally reports whether every runner has applied pos in this
// process (done), and whether this process leads them all with no known
// quarantine (local): then only a local commit can move them, and waiting
// for one needs no query.
func (h handlers) reachedLocally(pos events.Position) (done, local bool) {
	done, local = true, true
	for _, r := range h.runners {
		reached, leads := r.appliedLocally(pos)
		done, local = done && reached, local && leads
	}
	return done, local
}

func waitTimeout(ctx context.Context, pos events.Position, lastErr error) error {
	if lastErr == nil {
		return fmt.Errorf("%w (waiting for %s): %w", ErrWaitTimeout, pos, ctx.Err())
	}
	return fmt.Errorf("%w (waiting for %s): %w; last error: %w", ErrWaitTimeout, pos, ctx.Err(), lastErr)
}

// reachedSQL reads every checkpoint and, in the same round trip, whether
// the event at $2 is quarantined under it (a primary-key probe).
const reachedSQL = `
	SELECT c.name, c.position, EXISTS (
		SELECT 1 FROM public.projection_quarantine q WHERE q.name = c.name AND q.position = $2)
	FROM public.projection_checkpoints c WHERE c.name = ANY($1)`

func (g *Group) reached(ctx context.Context, pos events.Position, names []string) (bool, error) {
	rows, err := g.pool.Query(ctx, reachedSQL, names, pos.String())
	if err != nil {
		return false, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	seen, behind := 0, false
	for rows.Next() {
		var (
			name, s     string
			quarantined bool
		)
		if err := rows.Scan(&name, &s, &quarantined); err != nil {
			return false, fmt.Errorf("read checkpoints: %w", err)
		}
		if quarantined {
			return false, fmt.Errorf("%w: projection %s set aside the event at %s", ErrQuarantined, name, pos)
		}
		cp, err := events.ParsePosition(s)
		if err != nil {
			return false, fmt.Errorf("checkpoint of %s: %w", name, err)
		}
		behind = behind || cp.Compare(pos) < 0
		seen++
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read checkpoints: %w", err)
	}
	return seen == len(names) && !behind, nil
}

// Checkpoint is a projection's committed position and how many events it
// has quarantined, as the database holds them.
type Checkpoint struct {
	Name        string
	Position    events.Position // zero when the projection never ran
	Quarantined int64
}

// checkpointsSQL reads every named checkpoint and its quarantine count in
// one round trip: primary-key lookups, cheap enough for every scrape.
const checkpointsSQL = `
	SELECT n.name, coalesce(c.position, ''),
		(SELECT count(*) FROM public.projection_quarantine q WHERE q.name = n.name)
	FROM unnest($1::text[]) AS n(name)
	LEFT JOIN public.projection_checkpoints c ON c.name = n.name`

// Checkpoints returns the group's checkpoints from the database, so it
// works whichever instance runs the projectors; metrics compute lag from it.
func (g *Group) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	rows, err := g.pool.Query(ctx, checkpointsSQL, g.names)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		var (
			cp Checkpoint
			s  string
		)
		if err := rows.Scan(&cp.Name, &s, &cp.Quarantined); err != nil {
			return nil, fmt.Errorf("read checkpoints: %w", err)
		}
		if s != "" {
			if cp.Position, err = events.ParsePosition(s); err != nil {
				return nil, fmt.Errorf("checkpoint of %s: %w", cp.Name, err)
			}
		}
		out = append(out, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	return out, nil
}
