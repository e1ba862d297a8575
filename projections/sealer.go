package projections

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
)

// Defaults of the sealer: how often it seals.
const (
	DefaultSealEvery    = 1000
	DefaultSealInterval = time.Minute
)

// sealerLock names the sealer's advisory lock: one instance chains at a time.
const sealerLock = "audit-chain"

// SealerOptions tune a Sealer; the zero value is fine.
type SealerOptions struct {
	SealEvery    int                // seal after this many newly chained events (default DefaultSealEvery)
	SealInterval time.Duration      // and at least this often while any are unsealed (default DefaultSealInterval)
	Key          ed25519.PrivateKey // signs the seals when set
	BatchSize    int                // events per transaction (default 500)
	// Linger is how long the sealer waits between reads of the log once it
	// has caught up (default 250 ms): the chain needs no low latency, and
	// few, larger transactions leave the database to the writes clients
	// wait for.
	Linger time.Duration
	// Yield, when set and true, makes a sealer that is behind read one
	// page per Linger instead of reading on at once: serve passes
	// Group.CatchingUp, so that after a restore or a long outage the read
	// models, which clients wait for, get the CPU before the chain, which
	// nobody waits for. The sealer catches up once they have.
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
		o.BatchSize = 500
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
// backoff (see follow.Retry.Run) and standing by while another instance leads.
func (s *Sealer) Run(ctx context.Context) {
	s.opts.Retry.Run(ctx, s.logger, s.setErr, s.lead)
}

// chainHead is the last chained event and the last seal.
type chainHead struct {
	seq       uint64
	position  events.Position
	chain     events.ChainHash
	sealedSeq uint64
	sealedAt  time.Time
}

func (s *Sealer) lead(ctx context.Context) (committed bool, err error) {
	conn, err := follow.TryLead(ctx, s.pool, sealerLock)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	head, err := loadChainHead(ctx, s.pool)
	if err != nil {
		return false, err
	}
	s.setErr(nil)
	return s.follow(ctx, head)
}

// follow chains the log from head on. It reads pages with ReadAll rather
// than subscribing: a subscription is woken by every commit, while the
// chain needs no low latency, so polling once per Linger while caught up
// keeps the sealer's load on the database small and flat however busy the
// writers are. Every poll also checks whether a seal is due.
func (s *Sealer) follow(ctx context.Context, head chainHead) (committed bool, err error) {
	for ctx.Err() == nil {
		page, err := s.store.ReadAll(ctx, head.position, s.opts.BatchSize)
		if err != nil {
			return committed, fmt.Errorf("read the log after %s: %w", head.position, err)
		}
		// A page read when ctx ends still commits: shutdown stops the
		// sealer after its current batch, not in the middle of it.
		batchCtx, cancelBatch := context.WithTimeout(context.WithoutCancel(ctx), follow.BatchTimeout)
		head, err = s.commit(batchCtx, head, page)
		cancelBatch()
		if err != nil {
			return committed, err
		}
		committed = committed || len(page) > 0
		if len(page) == s.opts.BatchSize && (s.opts.Yield == nil || !s.opts.Yield()) {
			continue // behind: read on at once
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.opts.Linger):
		}
	}
	return committed, ctx.Err()
}

// commit chains the batch and takes a seal when one is due, in one
// transaction: a crash loses the whole batch or nothing, and the next
// leader resumes from the last committed link. The commit does not wait
// for the WAL flush (synchronous_commit off): links and seals are derived
// from the log alone, so a batch lost in a crash is chained again to the
// very same hashes, and a seal someone copied before the crash still
// verifies.
func (s *Sealer) commit(ctx context.Context, head chainHead, batch []events.RecordedEvent) (chainHead, error) {
	next, rows, err := link(head, batch)
	if err != nil {
		return head, err
	}
	now := s.opts.Now().UTC().Truncate(time.Microsecond)
	due := next.seq > next.sealedSeq &&
		(next.seq-next.sealedSeq >= uint64(s.opts.SealEvery) || now.Sub(next.sealedAt) >= s.opts.SealInterval)
	if len(rows) == 0 && !due {
		return head, nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"public", "audit_chain"},
			[]string{"seq", "position", "event_id", "chain"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("write chain links: %w", err)
		}
		if !due {
			return nil
		}
		return s.seal(ctx, tx, next, now)
	})
	if err != nil {
		return head, err
	}
	if due {
		next.sealedSeq, next.sealedAt = next.seq, now
	}
	return next, nil
}

// link computes the batch's links after head.
func link(head chainHead, batch []events.RecordedEvent) (chainHead, [][]any, error) {
	rows := make([][]any, 0, len(batch))
	for _, ev := range batch {
		next, err := events.Chain(head.chain, ev)
		if err != nil {
			return head, nil, err
		}
		head.seq++
		head.chain, head.position = next, ev.Position
		rows = append(rows, []any{int64(head.seq), ev.Position.String(), uuid.UUID(ev.ID), next[:]})
	}
	return head, rows, nil
}

func (s *Sealer) seal(ctx context.Context, tx pgx.Tx, head chainHead, now time.Time) error {
	seal := events.Seal{Version: events.SealVersion, Seq: head.seq, Chain: head.chain.String(), SealedAt: now}
	if s.opts.Key != nil {
		if err := seal.Sign(s.opts.Key); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO public.audit_seals (seq, chain, sealed_at, public_key, signature) VALUES ($1, $2, $3, $4, $5)`,
		int64(seal.Seq), head.chain[:], seal.SealedAt, seal.PublicKey, seal.Signature)
	if err != nil {
		return fmt.Errorf("write seal at %d: %w", seal.Seq, err)
	}
	return nil
}

// loadChainHead reads the last link and the last seal.
func loadChainHead(ctx context.Context, db querier) (chainHead, error) {
	var h chainHead
	var seq int64
	var pos string
	var chain []byte
	err := db.QueryRow(ctx, `SELECT seq, position, chain FROM public.audit_chain ORDER BY seq DESC LIMIT 1`).Scan(&seq, &pos, &chain)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return h, fmt.Errorf("load the chain's head: %w", err)
	}
	if err == nil {
		if h.position, err = events.ParsePosition(pos); err != nil {
			return h, err
		}
		h.seq = uint64(seq)
		copy(h.chain[:], chain)
	}
	err = db.QueryRow(ctx, `SELECT seq, sealed_at FROM public.audit_seals ORDER BY seq DESC LIMIT 1`).Scan(&seq, &h.sealedAt)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return h, fmt.Errorf("load the last seal: %w", err)
	}
	if err == nil {
		h.sealedSeq = uint64(seq)
	}
	return h, nil
}
