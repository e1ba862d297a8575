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
	"github.com/invoicing/invoicing/internal/follow"
)

// DefaultBatchSize bounds a runner's transaction while catching up: a
// catch-up of 100,000 invoices ran 1.7 times faster with 2,000 than with
// 500, as each commit and each multi-row INSERT carries more. A batch takes
// at most one page of the store's subscription, so pgstore.PageSize is the
// same (a test keeps them so).
const DefaultBatchSize = 2000

// RunnerOptions tune a Runner; the zero value is fine.
type RunnerOptions struct {
	// BatchSize bounds the events of one transaction while catching up
	// (default DefaultBatchSize).
	BatchSize int
	// CheckpointEvery bounds how long the checkpoint stays behind events
	// the projection does not handle (default DefaultCheckpointEvery).
	CheckpointEvery time.Duration
	follow.Retry    // backoff and stand-by polling
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
		o.BatchSize = DefaultBatchSize
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	o.Retry.Defaults()
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
	// applied is, while leading, the position up to which every event this
	// projection handles is committed; quarantined tells whether the
	// leading session knows of quarantined events (see Group.WaitFor).
	applied     events.Position
	quarantined bool
	// builtAhead counts the batches written with statements built while
	// the batch before them was written (see readAhead).
	builtAhead int
	// catchingUp tells whether the last batch was full: more events were
	// waiting (see CatchingUp).
	catchingUp bool
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
// exponential backoff (see follow.Retry.Run) and standing by while another
// process leads.
func (r *Runner) Run(ctx context.Context) {
	r.opts.Retry.Run(ctx, r.logger, func(err error) { r.setState(false, err) }, r.lead)
}

func (r *Runner) setApplied(pos events.Position, quarantined bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied, r.quarantined = pos, quarantined
}

// appliedLocally reports whether this process leads the projection with no
// quarantine it knows of (local), and, if so, whether it has committed
// every event it handles up to pos (reached); not local means "ask the
// database".
func (r *Runner) appliedLocally(pos events.Position) (reached, local bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	local = r.leading && !r.quarantined
	return local && r.applied.Compare(pos) >= 0, local
}

func (r *Runner) setState(leading bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading, r.lastErr = leading, err
}

// lead takes the projection's session lock on a dedicated connection and
// projects until ctx ends, its lock session ends (follow.Watch) or
// something fails. It reports whether a batch committed.
func (r *Runner) lead(ctx context.Context) (committed bool, err error) {
	conn, err := follow.TryLead(ctx, r.pool, r.proj.Name())
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	ctx, stop := follow.Watch(ctx, conn)
	defer stop()
	committed, err = r.leadOn(ctx)
	return committed, follow.Lost(ctx, err)
}

// leadOn projects while this process holds the lock, as lead's ctx says.
func (r *Runner) leadOn(ctx context.Context) (committed bool, err error) {
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
	r.setApplied(pos, len(q.streams) > 0)
	return r.follow(ctx, pos, q)
}

// DefaultCheckpointEvery bounds how long a runner keeps its checkpoint
// behind events it does not handle (see follow).
const DefaultCheckpointEvery = time.Second

// follow applies the subscription's events in batches from pos; q is the
// leading session's list of quarantined streams.
//
// A batch holding no event the projection handles is not committed at
// once: its checkpoint moves in memory, and reaches the database with the
// next batch that writes rows, or after CheckpointEvery (idle or not).
// Writers wait only for the projections that handle their event, so no
// create waits for a checkpoint-only commit; and a restart re-reads at most
// CheckpointEvery worth of events this projection ignores.
func (r *Runner) follow(ctx context.Context, pos events.Position, q *quarantine) (committed bool, err error) {
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := r.store.SubscribeAll(subCtx, pos, handledTypes(r.proj)...)
	if err != nil {
		return false, fmt.Errorf("subscribe from %s: %w", pos, err)
	}
	skipped := skippedEvents{every: r.opts.CheckpointEvery}
	var ahead *readAhead
	defer func() { ahead.wait() }() // it reads sub: done before sub ends
	for {
		batch, pre := ahead.wait()
		if ahead != nil && len(batch) == 0 {
			r.noteBatch(0, nil) // nothing was waiting: caught up
		}
		if ahead = nil; ctx.Err() != nil {
			return committed, ctx.Err() // shutdown: not one batch more
		}
		if len(batch) == 0 {
			var ok bool
			if batch, ok = follow.NextBatch(ctx, sub, r.opts.BatchSize, skipped.flush()); !ok {
				if err := sub.Err(); err != nil {
					return committed, fmt.Errorf("subscription: %w", err)
				}
				return committed, ctx.Err()
			}
		}
		if batch == nil { // the flush timer: the last skipped event stands for all
			batch = []events.RecordedEvent{skipped.last}
		} else if !slices.ContainsFunc(batch, r.handles) && skipped.add(batch) {
			r.setApplied(batch[len(batch)-1].Position, len(q.streams) > 0)
			r.noteBatch(len(batch), nil)
			continue
		}
		ahead = startReadAhead(r.proj, sub, batch, r.opts.BatchSize)
		r.noteBatch(len(batch), pre)
		if pos, err = r.apply(ctx, q, pos, batch, pre); err != nil {
			return committed, err
		}
		committed, skipped = true, skippedEvents{every: r.opts.CheckpointEvery}
		r.setApplied(pos, len(q.streams) > 0)
		observe(r.opts.Observer, r.proj.Name(), false, pos, batch)
		if r.opts.afterCommit != nil {
			r.opts.afterCommit(pos)
		}
	}
}

// noteBatch records a batch about to be written: n events, built ahead or
// not.
func (r *Runner) noteBatch(n int, pre *built) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catchingUp = n >= r.opts.BatchSize
	if pre != nil {
		r.builtAhead++
	}
}

// CatchingUp reports whether the runner leads and its last batch was full:
// it is reading a backlog, not following appends. Its subscription leaves
// out most events the projection does not handle (events.Store), so a
// runner whose events are rare in the backlog (companies among invoices)
// gets short batches while behind and is not reported: its catch-up costs
// the database a scan of the index, not the service, and ends soon. One
// whose events fill the backlog writes slower than its subscription reads,
// so the subscription's buffer fills its batches.
func (r *Runner) CatchingUp() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leading && r.catchingUp
}

func (r *Runner) handles(ev events.RecordedEvent) bool { return r.proj.Handles(ev.Type) }

// handledTypes are the event types whose payloads p reads.
func handledTypes(p Projection) []string {
	var out []string
	for _, t := range events.Types {
		if p.Handles(t) {
			out = append(out, t)
		}
	}
	return out
}

// skippedEvents are the events a runner passed without committing.
type skippedEvents struct {
	every time.Duration // how long the checkpoint may stay behind
	last  events.RecordedEvent
	since time.Time // zero when none is pending
	timer *time.Timer
}

// add records a batch the runner skips; false when the pending checkpoint
// is every old and must be committed with this batch.
func (s *skippedEvents) add(batch []events.RecordedEvent) bool {
	if s.since.IsZero() {
		s.since = time.Now()
	} else if time.Since(s.since) >= s.every {
		return false
	}
	s.last = batch[len(batch)-1]
	return true
}

// flush fires when the pending checkpoint is due; nil when none is pending.
func (s *skippedEvents) flush() <-chan time.Time {
	if s.since.IsZero() {
		return nil
	}
	if s.timer == nil {
		s.timer = time.NewTimer(time.Until(s.since.Add(s.every)))
	}
	return s.timer.C
}

// apply writes one batch. When a retry or a swap changed the quarantine
// meanwhile, the batch rolled back: reload the list and write it again.
// pre, when not nil, holds the batch's statements, built ahead.
func (r *Runner) apply(ctx context.Context, q *quarantine, pos events.Position, batch []events.RecordedEvent, pre *built) (events.Position, error) {
	for ; ; pre = nil { // a pgx.Batch is sent once
		// A batch in flight when ctx ends still commits: shutdown stops
		// projectors after their current batch, not in the middle of it.
		batchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), follow.BatchTimeout)
		next, set, err := applyBatch(batchCtx, r.pool, r.proj, target{checkpoint: r.proj.Name()}, q, pos, batch, pre)
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
