package audit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
)

// writeLock names the transaction-level advisory lock every write of the
// chain takes: the leading sealer's batches and `audit seal` (SealNow).
// It is not sealerLock, which the leader holds for as long as it leads.
const writeLock = "audit-chain:write"

// errChainMoved means the chain or its seals grew since the writer read its
// head: another writer committed first. The transaction wrote nothing; the
// writer reads the head again and goes on from there.
var errChainMoved = errors.New("audit: the chain moved since its head was read")

// chainHead is the last chained event and the last seal.
type chainHead struct {
	seq       uint64
	position  events.Position
	chain     ChainHash
	sealedSeq uint64
	sealedAt  time.Time
}

// querier is what a pool and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// chainWriter is the one path by which the chain and its seals grow.
type chainWriter struct {
	pool *pgxpool.Pool
	key  ed25519.PrivateKey // signs the seals when set
}

// commit chains the batch after head and, unless sealAt is zero, seals the
// new head at sealAt, in one transaction: a crash loses the whole batch or
// nothing, and the next writer resumes from the last committed link. It
// returns the new head and the seal it took, if any.
//
// The transaction first takes writeLock and checks that head is still the
// chain's head (errChainMoved otherwise), so writers take turns and none
// writes after a head another has moved: the chain cannot fork. (The
// primary keys on seq would refuse a fork too, as a failed write.)
//
// The commit does not wait for the WAL flush (synchronous_commit off):
// links and seals are derived from the log alone, so a batch lost in a
// crash is chained again to the very same hashes, and a seal someone copied
// before the crash still verifies.
func (w chainWriter) commit(ctx context.Context, head chainHead, batch []events.RecordedEvent, sealAt time.Time) (chainHead, Seal, error) {
	if len(batch) == 0 && sealAt.IsZero() {
		return head, Seal{}, nil
	}
	next, rows, err := link(head, batch)
	if err != nil {
		return head, Seal{}, err
	}
	var seal Seal
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := takeTurn(ctx, tx, head); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"public", "audit_chain"},
			[]string{"seq", "position", "event_id", "chain"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("write chain links: %w", err)
		}
		if sealAt.IsZero() {
			return nil
		}
		seal, err = w.seal(ctx, tx, next, sealAt)
		return err
	})
	if err != nil {
		return head, Seal{}, err
	}
	if !sealAt.IsZero() {
		next.sealedSeq, next.sealedAt = next.seq, sealAt
	}
	return next, seal, nil
}

// takeTurn waits for writeLock, then checks that head is the chain's head:
// read after the lock, the statement sees whatever the writer before
// committed.
func takeTurn(ctx context.Context, tx pgx.Tx, head chainHead) error {
	// One round trip: without arguments, Exec sends both statements as one
	// simple query.
	_, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(%d)`, follow.LockKey(writeLock)))
	if err != nil {
		return fmt.Errorf("take the chain's write lock: %w", err)
	}
	var seq, sealed int64
	err = tx.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM public.audit_chain),
		(SELECT coalesce(max(seq), 0) FROM public.audit_seals)`).Scan(&seq, &sealed)
	if err != nil {
		return fmt.Errorf("check the chain's head: %w", err)
	}
	if uint64(seq) != head.seq || uint64(sealed) != head.sealedSeq {
		return errChainMoved
	}
	return nil
}

// link computes the batch's links after head.
func link(head chainHead, batch []events.RecordedEvent) (chainHead, [][]any, error) {
	rows := make([][]any, 0, len(batch))
	for _, ev := range batch {
		next, err := Chain(head.chain, ev)
		if err != nil {
			return head, nil, err
		}
		head.seq++
		head.chain, head.position = next, ev.Position
		rows = append(rows, []any{int64(head.seq), ev.Position.String(), ev.ID, next[:]}) // ev.ID as [16]byte: see pgstore's eventColumns
	}
	return head, rows, nil
}

// seal writes the seal of head, signed when the writer has a key.
func (w chainWriter) seal(ctx context.Context, tx pgx.Tx, head chainHead, at time.Time) (Seal, error) {
	seal := Seal{Version: SealVersion, Seq: head.seq, Chain: head.chain.String(), SealedAt: at}
	if w.key != nil {
		if err := seal.Sign(w.key); err != nil {
			return Seal{}, err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO public.audit_seals (seq, chain, sealed_at, public_key, signature) VALUES ($1, $2, $3, $4, $5)`,
		int64(seal.Seq), head.chain[:], seal.SealedAt, seal.PublicKey, seal.Signature)
	if err != nil {
		return Seal{}, fmt.Errorf("write seal at %d: %w", seal.Seq, err)
	}
	return seal, nil
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
