package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

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
