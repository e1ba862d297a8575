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

// batchTimeout bounds one batch transaction, so that a stuck database cannot
// hold shutdown forever.
const batchTimeout = 30 * time.Second

// RunnerOptions tune a Runner; the zero value is fine.
type RunnerOptions struct {
	BatchSize int // events per transaction while catching up (default 500)
	Retry         // backoff and stand-by polling
	// Prepare runs once, holding the projection's lock, before the first
	// batch: serve uses it to rebuild a projection whose tables are older
	// than its code, so that only one instance rebuilds.
	Prepare func(ctx context.Context, p Projection) error
	// Observer, when set, is told of every batch the runner commits.
	Observer    Observer
	afterCommit func(events.Position)
}

// Observer learns of committed batches, for metrics. It is called on the
// projector's goroutine right after the commit, so it must return quickly.
type Observer interface {
	Committed(CommittedBatch)
}

// CommittedBatch describes a batch whose rows and checkpoint committed.
type CommittedBatch struct {
	Projection string
	// Rebuild marks a rebuild's batch, written into its shadow tables.
	Rebuild bool
	// Events counts the batch's events, quarantined ones included.
	Events int
	// Position is the checkpoint after the batch.
	Position events.Position
	// LastRecordedAt is when the batch's last event was recorded.
	LastRecordedAt time.Time
}

// observe tells o of a committed batch, if there is an observer.
func observe(o Observer, name string, rebuild bool, pos events.Position, batch []events.RecordedEvent) {
	if o == nil || len(batch) == 0 {
		return
	}
	o.Committed(CommittedBatch{Projection: name, Rebuild: rebuild, Events: len(batch), Position: pos,
		LastRecordedAt: batch[len(batch)-1].RecordedAt})
}

func (o *RunnerOptions) defaults() {
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	o.Retry.defaults()
}

// Runner runs one projection: lock, checkpoint, subscription, batches.
type Runner struct {
	proj   Projection
	store  events.Store
	pool   *pgxpool.Pool
	logger *slog.Logger
	opts   RunnerOptions

	mu       sync.Mutex
	leading  bool
	lastErr  error
	prepared bool
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
// exponential backoff (see Retry.run) and standing by while another process
// leads.
func (r *Runner) Run(ctx context.Context) {
	r.opts.Retry.run(ctx, r.logger, func(err error) { r.setState(false, err) }, r.lead)
}

func (r *Runner) setState(leading bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading, r.lastErr = leading, err
}

// lead takes the projection's session lock on a dedicated connection and
// projects until ctx ends or something fails. It reports whether a batch
// committed.
func (r *Runner) lead(ctx context.Context) (committed bool, err error) {
	conn, err := tryLead(ctx, r.pool, r.proj.Name())
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if r.opts.Prepare != nil && !r.prepared {
		if err := r.opts.Prepare(ctx, r.proj); err != nil {
			return false, fmt.Errorf("prepare: %w", err)
		}
		r.prepared = true
	}
	pos, err := loadCheckpoint(ctx, r.pool, r.proj.Name())
	if err != nil {
		return false, err
	}
	q, err := loadQuarantine(ctx, r.pool, r.proj.Name())
	if err != nil {
		return false, err
	}
	r.setState(true, nil)
	return r.follow(ctx, pos, q)
}

// follow applies the subscription's events in batches from pos; q is the
// leading session's list of quarantined streams.
func (r *Runner) follow(ctx context.Context, pos events.Position, q *quarantine) (committed bool, err error) {
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := r.store.SubscribeAll(subCtx, pos)
	if err != nil {
		return false, fmt.Errorf("subscribe from %s: %w", pos, err)
	}
	for {
		batch, ok := nextBatch(ctx, sub, r.opts.BatchSize)
		if !ok {
			if err := sub.Err(); err != nil {
				return committed, fmt.Errorf("subscription: %w", err)
			}
			return committed, ctx.Err()
		}
		if pos, err = r.apply(ctx, q, pos, batch); err != nil {
			return committed, err
		}
		committed = true
		observe(r.opts.Observer, r.proj.Name(), false, pos, batch)
		if r.opts.afterCommit != nil {
			r.opts.afterCommit(pos)
		}
	}
}

// apply writes one batch. When a retry or a swap changed the quarantine
// meanwhile, the batch rolled back: reload the list and write it again.
func (r *Runner) apply(ctx context.Context, q *quarantine, pos events.Position, batch []events.RecordedEvent) (events.Position, error) {
	for {
		// A batch in flight when ctx ends still commits: shutdown stops
		// projectors after their current batch, not in the middle of it.
		batchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
		next, set, err := applyBatch(batchCtx, r.pool, r.proj, target{checkpoint: r.proj.Name()}, q, pos, batch)
		cancel()
		if !errors.Is(err, errQuarantineChanged) || ctx.Err() != nil {
			r.logQuarantined(set)
			return next, err
		}
		fresh, err := loadQuarantine(ctx, r.pool, r.proj.Name())
		if err != nil {
			return pos, err
		}
		*q = *fresh
	}
}

func (r *Runner) logQuarantined(set []QuarantinedEvent) {
	for _, qe := range set {
		r.logger.Warn("event quarantined; the projection goes on without it",
			"position", qe.Position.String(), "stream", qe.Stream, "revision", qe.Revision,
			"type", qe.Type, "error", qe.Error)
	}
}
