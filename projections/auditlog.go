package projections

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
var ErrNoSeal = errors.New("projections: no seal has been taken yet")

// readAllPage is how many events a verification reads at a time.
const readAllPage = 1000

const sealColumns = `seq, chain, sealed_at, public_key, signature`

// LatestSeal returns the newest stored seal, or ErrNoSeal.
func LatestSeal(ctx context.Context, pool *pgxpool.Pool) (events.Seal, error) {
	seals, err := querySeals(ctx, pool, `SELECT `+sealColumns+` FROM public.audit_seals ORDER BY seq DESC LIMIT 1`)
	if err != nil {
		return events.Seal{}, err
	}
	if len(seals) == 0 {
		return events.Seal{}, ErrNoSeal
	}
	return seals[0], nil
}

// StoredSeals returns every stored seal, oldest first.
func StoredSeals(ctx context.Context, pool *pgxpool.Pool) ([]events.Seal, error) {
	return querySeals(ctx, pool, `SELECT `+sealColumns+` FROM public.audit_seals ORDER BY seq`)
}

func querySeals(ctx context.Context, pool *pgxpool.Pool, sql string) ([]events.Seal, error) {
	rows, err := pool.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("read seals: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Seal, error) {
		var (
			s     events.Seal
			seq   int64
			chain []byte
		)
		err := row.Scan(&seq, &chain, &s.SealedAt, &s.PublicKey, &s.Signature)
		var c events.ChainHash
		copy(c[:], chain)
		s.Version, s.Seq, s.Chain, s.SealedAt = events.SealVersion, uint64(seq), c.String(), s.SealedAt.UTC()
		return s, err
	})
}

// RecordedLinks returns the chain links the sealer recorded, in order.
func RecordedLinks(ctx context.Context, pool *pgxpool.Pool) ([]events.ChainLink, error) {
	rows, err := pool.Query(ctx, `SELECT seq, event_id, chain FROM public.audit_chain ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read the chain: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.ChainLink, error) {
		var (
			l     events.ChainLink
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
func LinksAt(ctx context.Context, pool *pgxpool.Pool, positions []events.Position) (map[events.Position]events.ChainLink, error) {
	texts := make([]string, len(positions))
	for i, p := range positions {
		texts[i] = p.String()
	}
	rows, err := pool.Query(ctx, `SELECT position, seq, event_id, chain FROM public.audit_chain WHERE position = ANY($1)`, texts)
	if err != nil {
		return nil, fmt.Errorf("read chain links: %w", err)
	}
	out := make(map[events.Position]events.ChainLink, len(positions))
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
		l := events.ChainLink{Seq: uint64(seq), EventID: id}
		copy(l.Chain[:], chain)
		out[p] = l
		return nil
	})
	return out, err
}

// RecomputeLinks reads the whole log in global order and recomputes its
// chain.
func RecomputeLinks(ctx context.Context, store events.Store) ([]events.ChainLink, error) {
	var b events.ChainBuilder
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
func VerifyLog(ctx context.Context, pool *pgxpool.Pool, store events.Store, extra []events.Seal, trusted ed25519.PublicKey) (events.LogReport, error) {
	recorded, err := RecordedLinks(ctx, pool)
	if err != nil {
		return events.LogReport{}, err
	}
	seals, err := StoredSeals(ctx, pool)
	if err != nil {
		return events.LogReport{}, err
	}
	now, err := RecomputeLinks(ctx, store)
	if err != nil {
		return events.LogReport{}, err
	}
	return events.VerifyLinks(now, recorded, append(seals, extra...), trusted), nil
}

// ErrUnknownEntity means no read model knows an id.
var ErrUnknownEntity = errors.New("projections: no company, customer or invoice has this id")

// EntityStreams returns the streams that hold an entity's events, by its
// company, customer or invoice id (stream names are hashes only the service
// can compute): the entity's own stream, and for a company its invoice
// numbering stream when it has one. It reads the read models, across
// accounts: it is an operator's and auditor's tool.
func EntityStreams(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID) ([]string, error) {
	var stream, account, kind string
	err := pool.QueryRow(ctx, `
		SELECT stream_name, account_id, 'company' FROM companies WHERE id = $1
		UNION ALL SELECT stream_name, account_id, 'customer' FROM customers WHERE id = $1
		UNION ALL SELECT stream_name, account_id, 'invoice' FROM invoices WHERE id = $1
		LIMIT 1`, id).Scan(&stream, &account, &kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownEntity, id)
	}
	if err != nil {
		return nil, fmt.Errorf("find the streams of %s: %w", id, err)
	}
	streams := []string{stream}
	if kind == "company" {
		streams = append(streams, events.NumberingStreamName(account, id.String()))
	}
	return streams, nil
}
