package projections

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// batchTimeout bounds one batch transaction, so that a stuck database cannot
// hold shutdown forever.
const batchTimeout = 30 * time.Second

// errNotLeader means another process holds the projection's lock.
var errNotLeader = errors.New("projection is run by another process")

// errCheckpointMoved means the checkpoint changed under us: another worker
// committed a batch, so ours must not.
var errCheckpointMoved = errors.New("checkpoint moved by another worker")

// RunnerOptions tune a Runner; the zero value is fine.
type RunnerOptions struct {
	BatchSize   int           // events per transaction while catching up (default 500)
	MinBackoff  time.Duration // first retry delay after a failure (default 100 ms)
	MaxBackoff  time.Duration // longest retry delay (default 5 s)
	StandbyPoll time.Duration // how often a standby tries the lock (default 1 s)
	afterCommit func(events.Position)
}

func (o *RunnerOptions) defaults() {
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.StandbyPoll <= 0 {
		o.StandbyPoll = time.Second
	}
}

// Runner runs one projection: lock, checkpoint, subscription, batches.
type Runner struct {
	proj   Projection
	store  events.Store
	pool   *pgxpool.Pool
	logger *slog.Logger
	opts   RunnerOptions

	mu      sync.Mutex
	leading bool
	lastErr error
}

// NewRunner returns a runner of proj that reads store and writes to pool.
func NewRunner(proj Projection, store events.Store, pool *pgxpool.Pool, logger *slog.Logger, opts RunnerOptions) *Runner {
	opts.defaults()
	return &Runner{proj: proj, store: store, pool: pool, logger: logger.With("projection", proj.Name()), opts: opts}
}

// Leading reports whether this runner currently holds the projection's lock.
func (r *Runner) Leading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leading
}

// Err returns the error of the last failed attempt, nil once it recovers.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Run runs the projection until ctx ends, restarting after errors with
// exponential backoff and standing by while another process leads.
func (r *Runner) Run(ctx context.Context) {
	backoff := r.opts.MinBackoff
	for ctx.Err() == nil {
		err := r.lead(ctx)
		wait := r.opts.StandbyPoll
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errNotLeader):
			r.setState(false, nil)
		default:
			r.setState(false, err)
			r.logger.Error("projection failed; restarting", "error", err, "backoff", backoff)
			wait, backoff = backoff, min(backoff*2, r.opts.MaxBackoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (r *Runner) setState(leading bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading, r.lastErr = leading, err
}

// lockKey maps a projection name to its advisory lock.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("projection:" + name))
	return int64(h.Sum64())
}

// lead takes the projection's session lock on a dedicated connection and
// projects until ctx ends or something fails.
func (r *Runner) lead(ctx context.Context) error {
	pooled, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire lock connection: %w", err)
	}
	// The session lock lives as long as this connection; never pool it again.
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(r.proj.Name())).Scan(&got); err != nil {
		return fmt.Errorf("try lock: %w", err)
	}
	if !got {
		return errNotLeader
	}
	pos, err := r.loadCheckpoint(ctx)
	if err != nil {
		return err
	}
	r.setState(true, nil)
	return r.follow(ctx, pos)
}

func (r *Runner) follow(ctx context.Context, pos events.Position) error {
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := r.store.SubscribeAll(subCtx, pos)
	if err != nil {
		return fmt.Errorf("subscribe from %s: %w", pos, err)
	}
	for {
		batch, ok := r.nextBatch(ctx, sub)
		if !ok {
			if err := sub.Err(); err != nil {
				return fmt.Errorf("subscription: %w", err)
			}
			return ctx.Err()
		}
		// A batch in flight when ctx ends still commits: shutdown stops
		// projectors after their current batch, not in the middle of it.
		batchCtx, cancelBatch := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
		next, err := r.applyBatch(batchCtx, pos, batch)
		cancelBatch()
		if err != nil {
			return err
		}
		pos = next
		if r.opts.afterCommit != nil {
			r.opts.afterCommit(pos)
		}
	}
}

// nextBatch blocks for one event, then takes whatever else is already
// waiting, up to the batch size.
func (r *Runner) nextBatch(ctx context.Context, sub events.Subscription) ([]events.RecordedEvent, bool) {
	var batch []events.RecordedEvent
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			return nil, false
		}
		batch = append(batch, ev)
	case <-ctx.Done():
		return nil, false
	}
	for len(batch) < r.opts.BatchSize {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return batch, true
			}
			batch = append(batch, ev)
		default:
			return batch, true
		}
	}
	return batch, true
}

// applyBatch writes the batch's rows and the new checkpoint in one
// transaction; the checkpoint update is a compare-and-swap on the old one.
func (r *Runner) applyBatch(ctx context.Context, from events.Position, batch []events.RecordedEvent) (events.Position, error) {
	to := batch[len(batch)-1].Position
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		for _, ev := range batch {
			if err := r.proj.Apply(ctx, tx, ev); err != nil {
				return fmt.Errorf("apply %s at %s: %w", ev.Type, ev.Position, err)
			}
		}
		tag, err := tx.Exec(ctx, `
			UPDATE projection_checkpoints SET position = $3, updated_at = now()
			WHERE name = $1 AND position = $2`, r.proj.Name(), from.String(), to.String())
		if err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return errCheckpointMoved
		}
		return nil
	})
	if err != nil {
		return from, err
	}
	return to, nil
}

func (r *Runner) loadCheckpoint(ctx context.Context) (events.Position, error) {
	_, err := r.pool.Exec(ctx, `
		INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2)
		ON CONFLICT (name) DO NOTHING`, r.proj.Name(), events.Position{}.String())
	if err != nil {
		return events.Position{}, fmt.Errorf("create checkpoint: %w", err)
	}
	var s string
	if err := r.pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = $1`, r.proj.Name()).Scan(&s); err != nil {
		return events.Position{}, fmt.Errorf("load checkpoint: %w", err)
	}
	return events.ParsePosition(s)
}
