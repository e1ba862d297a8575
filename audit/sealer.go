package audit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
)

// Defaults of the sealer: how often it seals.
const (
	DefaultSealEvery    = 1000
	DefaultSealInterval = time.Minute
)

// defaultBatchSize is how many events one transaction of the chain
// covers, unless SealerOptions.BatchSize says otherwise.
const defaultBatchSize = 500

// sealerLock names the sealer's advisory lock: one instance follows the log
// at a time. (Each write of the chain takes writeLock besides, because
// `audit seal` writes it too; see chainWriter.)
const sealerLock = "audit-chain"

// SealerOptions tune a Sealer; the zero value is fine.
type SealerOptions struct {
	SealEvery    int                // seal after this many newly chained events (default DefaultSealEvery)
	SealInterval time.Duration      // and at least this often while any are unsealed (default DefaultSealInterval)
	Key          ed25519.PrivateKey // signs the seals when set
	BatchSize    int                // events per transaction (default 500)
	// Linger is how long the sealer waits between reads of the log once it
	// has caught up (default 250 ms; four times that after a read found
	// nothing): the chain needs no low latency, and few, larger
	// transactions leave the database to the writes clients wait for.
	Linger time.Duration
	// Yield, when set and true, makes a sealer that is behind read one
	// page per Linger instead of reading on at once: serve passes
	// projections.Group.CatchingUp, so that after a restore or a long
	// outage the read models, which clients wait for, get the CPU before
	// the chain, which nobody waits for. The sealer catches up once they
	// have.
	Yield        func() bool
	follow.Retry                  // backoff and stand-by polling
	Now          func() time.Time // the clock of seals (default time.Now)
}

func (o *SealerOptions) defaults() {
	if o.SealEvery <= 0 {
		o.SealEvery = DefaultSealEvery
	}
	if o.SealInterval <= 0 {
		o.SealInterval = DefaultSealInterval
	}
	if o.BatchSize <= 0 {
		o.BatchSize = defaultBatchSize
	}
	if o.Linger <= 0 {
		o.Linger = 250 * time.Millisecond
	}
	o.Retry.Defaults()
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Sealer records the audit chain: it follows the store's global order like
// a projection (one leader at a time, a checkpoint that commits with its
// rows) and writes each event's sequence number and chain link, and
// periodic seals. Appends never wait for it, so it does not serialise
// writes; the chain is as current as the projections.
type Sealer struct {
	store  events.Store
	pool   *pgxpool.Pool
	logger *slog.Logger
	opts   SealerOptions

	mu      sync.Mutex
	lastErr error
}

// NewSealer returns a sealer reading store and writing to pool.
func NewSealer(store events.Store, pool *pgxpool.Pool, logger *slog.Logger, opts SealerOptions) *Sealer {
	opts.defaults()
	return &Sealer{store: store, pool: pool, logger: logger.With("component", "sealer"), opts: opts}
}

// Err returns the error of the last failed attempt, nil once it recovers.
func (s *Sealer) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

func (s *Sealer) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
}

// Run chains events until ctx ends, restarting after failures with
// backoff (see follow.Retry.Run) and standing by while another instance
// leads.
func (s *Sealer) Run(ctx context.Context) {
	s.opts.Retry.Run(ctx, s.logger, s.setErr, s.lead)
}

func (s *Sealer) lead(ctx context.Context) (committed bool, err error) {
	conn, err := follow.TryLead(ctx, s.pool, sealerLock)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	watched, stop := follow.Watch(ctx, conn)
	defer stop()
	head, err := loadChainHead(watched, s.pool)
	if err != nil {
		return false, err
	}
	s.setErr(nil)
	committed, err = s.follow(watched, head)
	return committed, follow.Lost(watched, err)
}

// follow chains the log from head on. It reads pages with ReadAll rather
// than subscribing: a subscription is woken by every commit, while the
// chain needs no low latency, so polling once per Linger while caught up
// keeps the sealer's load on the database small and flat however busy the
// writers are. Every poll also checks whether a seal is due. When `audit
// seal` has moved the chain since head, it reads on from the new head.
func (s *Sealer) follow(ctx context.Context, head chainHead) (committed bool, err error) {
	w := chainWriter{pool: s.pool, key: s.opts.Key}
	for ctx.Err() == nil {
		page, err := s.store.ReadAll(ctx, head.position, s.opts.BatchSize)
		if err != nil {
			return committed, fmt.Errorf("read the log after %s: %w", head.position, err)
		}
		// A page read when ctx ends still commits: shutdown stops the
		// sealer after its current batch, not in the middle of it.
		batchCtx, cancelBatch := context.WithTimeout(context.WithoutCancel(ctx), follow.BatchTimeout)
		next, _, err := w.commit(batchCtx, head, page, s.due(head, len(page)))
		if errors.Is(err, errChainMoved) {
			head, err = loadChainHead(batchCtx, s.pool)
			cancelBatch()
			if err != nil {
				return committed, err
			}
			continue
		}
		cancelBatch()
		if err != nil {
			return committed, err
		}
		head, committed = next, committed || len(page) > 0
		if len(page) == s.opts.BatchSize && (s.opts.Yield == nil || !s.opts.Yield()) {
			continue // behind: read on at once
		}
		wait := s.opts.Linger
		if len(page) == 0 {
			wait *= idleLingers
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return committed, ctx.Err()
}

// idleLingers is how many Lingers the sealer waits after a read that
// found nothing new. Each read is three statements (ReadAll waits for the
// transactions open when it began), so an idle service's sealer read
// twelve a second and was most of the idle service's statements (make
// bench-scale's idle table, docs/benchmarks.md); once a second is three.
// Under load every read finds events and the pace stays one Linger.
const idleLingers = 4

// due returns when to seal after chaining n more events after head: now,
// if SealEvery events or SealInterval have passed since the last seal;
// the zero time, no seal, otherwise.
func (s *Sealer) due(head chainHead, n int) time.Time {
	now := s.opts.Now().UTC().Truncate(time.Microsecond)
	seq := head.seq + uint64(n)
	if seq > head.sealedSeq && (seq-head.sealedSeq >= uint64(s.opts.SealEvery) || now.Sub(head.sealedAt) >= s.opts.SealInterval) {
		return now
	}
	return time.Time{}
}
