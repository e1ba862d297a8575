package audit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// ErrNoSeal means no seal has been taken yet.
var ErrNoSeal = errors.New("audit: no seal has been taken yet")

// readAllPage is how many events a verification reads at a time.
const readAllPage = 1000

const sealColumns = `seq, chain, sealed_at, public_key, signature`

// LatestSeal returns the newest stored seal, or ErrNoSeal.
func LatestSeal(ctx context.Context, pool *pgxpool.Pool) (Seal, error) {
	seals, err := querySeals(ctx, pool, `SELECT `+sealColumns+` FROM public.audit_seals ORDER BY seq DESC LIMIT 1`)
	if err != nil {
		return Seal{}, err
	}
	if len(seals) == 0 {
		return Seal{}, ErrNoSeal
	}
	return seals[0], nil
}

// StoredSeals returns every stored seal, oldest first.
func StoredSeals(ctx context.Context, pool *pgxpool.Pool) ([]Seal, error) {
	return querySeals(ctx, pool, `SELECT `+sealColumns+` FROM public.audit_seals ORDER BY seq`)
}

func querySeals(ctx context.Context, pool *pgxpool.Pool, sql string) ([]Seal, error) {
	rows, err := pool.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("read seals: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Seal, error) {
		var (
			s     Seal
			seq   int64
			chain []byte
		)
		err := row.Scan(&seq, &chain, &s.SealedAt, &s.PublicKey, &s.Signature)
		var c ChainHash
		copy(c[:], chain)
		s.Version, s.Seq, s.Chain, s.SealedAt = SealVersion, uint64(seq), c.String(), s.SealedAt.UTC()
		return s, err
	})
}

// RecordedLinks returns the chain links the sealer recorded, in order.
func RecordedLinks(ctx context.Context, pool *pgxpool.Pool) ([]ChainLink, error) {
	rows, err := pool.Query(ctx, `SELECT seq, event_id, chain FROM public.audit_chain ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read the chain: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ChainLink, error) {
		var (
			l     ChainLink
			seq   int64
			id    uuid.UUID
			chain []byte
		)
		err := row.Scan(&seq, &id, &chain)
		l.Seq, l.EventID = uint64(seq), id
		copy(l.Chain[:], chain)
		return l, err
	})
}

// LinksAt returns the recorded links of the events at positions, for
// exports; events not chained yet are absent from the map.
func LinksAt(ctx context.Context, pool *pgxpool.Pool, positions []events.Position) (map[events.Position]ChainLink, error) {
	texts := make([]string, len(positions))
	for i, p := range positions {
		texts[i] = p.String()
	}
	rows, err := pool.Query(ctx, `SELECT position, seq, event_id, chain FROM public.audit_chain WHERE position = ANY($1)`, texts)
	if err != nil {
		return nil, fmt.Errorf("read chain links: %w", err)
	}
	out := make(map[events.Position]ChainLink, len(positions))
	var (
		pos   string
		seq   int64
		id    uuid.UUID
		chain []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &seq, &id, &chain}, func() error {
		p, err := events.ParsePosition(pos)
		if err != nil {
			return err
		}
		l := ChainLink{Seq: uint64(seq), EventID: id}
		copy(l.Chain[:], chain)
		out[p] = l
		return nil
	})
	return out, err
}

// RecomputeLinks reads the whole log in global order and recomputes its
// chain.
func RecomputeLinks(ctx context.Context, store events.Store) ([]ChainLink, error) {
	var b ChainBuilder
	var from events.Position
	for {
		page, err := store.ReadAll(ctx, from, readAllPage)
		if err != nil {
			return nil, fmt.Errorf("read the log after %s: %w", from, err)
		}
		for _, ev := range page {
			if _, err := b.Add(ev); err != nil {
				return nil, err
			}
		}
		if len(page) < readAllPage {
			return b.Links(), nil
		}
		from = page[len(page)-1].Position
	}
}

// VerifyLog recomputes the chain from the store and checks it against the
// recorded links, every stored seal and the extra seals an auditor kept;
// trusted, when set, is the only key whose signatures are accepted. It
// does not look at the read models: a log rewritten and then rebuilt into
// projections is caught all the same.
func VerifyLog(ctx context.Context, pool *pgxpool.Pool, store events.Store, extra []Seal, trusted ed25519.PublicKey) (LogReport, error) {
	recorded, err := RecordedLinks(ctx, pool)
	if err != nil {
		return LogReport{}, err
	}
	seals, err := StoredSeals(ctx, pool)
	if err != nil {
		return LogReport{}, err
	}
	now, err := RecomputeLinks(ctx, store)
	if err != nil {
		return LogReport{}, err
	}
	return VerifyLinks(now, recorded, append(seals, extra...), trusted), nil
}
