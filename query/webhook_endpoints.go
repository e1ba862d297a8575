package query

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
)

// WebhookEndpoint is a row of the webhook_endpoints read model. It holds
// no secret: webhook.Secret derives the current one from the master key,
// AccountID, ID and SecretGeneration, and the previous one from
// SecretGeneration-1 while PreviousValidUntil is in the future.
type WebhookEndpoint struct {
	ID        string
	AccountID string
	URL       string
	// EventTypes are the public event types delivered; empty means all.
	EventTypes         []string
	Description        string
	Enabled            bool
	DisabledReason     string
	SecretGeneration   int
	PreviousValidUntil *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Version            int
	// Position is the global position of the event that created the
	// endpoint: an event after it is one the endpoint subscribed to.
	Position events.Position
}

// Subscribes reports whether the endpoint receives events of the public
// type publicType.
func (e WebhookEndpoint) Subscribes(publicType string) bool {
	if len(e.EventTypes) == 0 {
		return true
	}
	for _, t := range e.EventTypes {
		if t == publicType {
			return true
		}
	}
	return false
}

// SigningGenerations are the secret generations that sign a delivery sent
// at now, newest first: the current one, and the previous one until
// PreviousValidUntil (a rotation's grace period).
func (e WebhookEndpoint) SigningGenerations(now time.Time) []int {
	if e.PreviousValidUntil != nil && now.Before(*e.PreviousValidUntil) && e.SecretGeneration > 1 {
		return []int{e.SecretGeneration, e.SecretGeneration - 1}
	}
	return []int{e.SecretGeneration}
}

const webhookEndpointColumns = `position_hi, position_lo, id::text, account_id, url, event_types,
	coalesce(description, ''), enabled, coalesce(disabled_reason, ''), secret_generation, previous_valid_until,
	created_at, updated_at, version`

// WebhookEndpoint returns the account's endpoint, or events.ErrNotFound
// (deleted endpoints too).
func (s *Store) WebhookEndpoint(ctx context.Context, accountID, id string) (WebhookEndpoint, error) {
	if !validID(id) {
		return WebhookEndpoint{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanWebhookEndpoints, webhookEndpointByID(accountID, id))
}

var webhookEndpointLookup = newLookup(webhookEndpointColumns, "webhook_endpoints", accountOwned, "deleted_at IS NULL")

func webhookEndpointByID(accountID, id string) statement {
	return webhookEndpointLookup.of(id, accountID)
}

// WebhookEndpointStream returns the event stream of the account's
// endpoint, deleted or not, or events.ErrNotFound.
func (s *Store) WebhookEndpointStream(ctx context.Context, accountID, id string) (string, error) {
	if !validID(id) {
		return "", events.ErrNotFound
	}
	return streamName(ctx, s, webhookEndpointStreamByID(accountID, id))
}

var webhookEndpointStreamLookup = newLookup("stream_name", "webhook_endpoints", accountOwned)

func webhookEndpointStreamByID(accountID, id string) statement {
	return webhookEndpointStreamLookup.of(id, accountID)
}

// WebhookEndpoints lists the account's endpoints (not deleted) in creation
// order.
func (s *Store) WebhookEndpoints(ctx context.Context, accountID string, p PageRequest) (Page[WebhookEndpoint], error) {
	return page(ctx, s.pool, scanWebhookEndpoints, webhookEndpointList(accountID), p)
}

// webhookEndpointList is served by webhook_endpoints_by_account.
func webhookEndpointList(accountID string) listing {
	return listing{
		table: "webhook_endpoints",
		scope: scope("webhook_endpoints", accountID),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.and("deleted_at IS NULL")
			return q.statement(webhookEndpointColumns, "webhook_endpoints", after, limit)
		},
	}
}

// WebhookEndpointsFor returns every endpoint of the account that receives
// deliveries (enabled, not deleted), in creation order: the dispatcher's
// read. An account has few endpoints, so there is no page.
func (s *Store) WebhookEndpointsFor(ctx context.Context, accountID string) ([]WebhookEndpoint, error) {
	st := webhookEndpointsFor(accountID)
	rows, err := s.pool.Query(ctx, st.sql, st.args...)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoints of %s: %w", accountID, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	items, _, err := scanWebhookEndpoints(rows, 4)
	if err != nil {
		return nil, pgerr.MarkUnavailable(err, events.ErrUnavailable)
	}
	return items, nil
}

// webhookEndpointsFor is served by webhook_endpoints_enabled_by_account.
func webhookEndpointsFor(accountID string) statement {
	return statement{
		sql: "SELECT " + webhookEndpointColumns + ` FROM webhook_endpoints
			WHERE account_id = $1 AND enabled AND deleted_at IS NULL ORDER BY position_hi, position_lo`,
		args: []any{accountID},
	}
}

func scanWebhookEndpoints(rows pgx.Rows, capacity int) ([]WebhookEndpoint, []rowKey, error) {
	defer rows.Close()
	endpoints := make([]WebhookEndpoint, 0, capacity)
	keys := make([]rowKey, 0, capacity)
	for rows.Next() {
		var (
			e WebhookEndpoint
			k rowKey
		)
		err := rows.Scan(&k.hi, &k.lo, &e.ID, &e.AccountID, &e.URL, &e.EventTypes, &e.Description, &e.Enabled,
			&e.DisabledReason, &e.SecretGeneration, &e.PreviousValidUntil, &e.CreatedAt, &e.UpdatedAt, &e.Version)
		if err != nil {
			return nil, nil, fmt.Errorf("scan webhook endpoint: %w", err)
		}
		e.Position = events.NewPosition(uint64(k.hi), uint64(k.lo))
		endpoints = append(endpoints, e)
		keys = append(keys, k)
	}
	return endpoints, keys, rows.Err()
}
