package projections

import (
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// WebhookEndpoints projects a webhook endpoint's events into the
// webhook_endpoints table: its creation as a row, updates, rotations and
// deletion onto it.
type WebhookEndpoints struct{}

var webhookEndpointsSchema = mustSchema("webhook_endpoints.sql")

// Name implements Projection.
func (WebhookEndpoints) Name() string { return "webhook_endpoints" }

// Version implements Projection.
func (WebhookEndpoints) Version() int { return 1 }

// Schema implements Projection.
func (WebhookEndpoints) Schema() string { return webhookEndpointsSchema }

// Tables implements Projection.
func (WebhookEndpoints) Tables() []string { return []string{"webhook_endpoints"} }

// Handles implements Projection.
func (WebhookEndpoints) Handles(eventType string) bool {
	switch eventType {
	case events.TypeWebhookEndpointCreated, events.TypeWebhookEndpointUpdated,
		events.TypeWebhookEndpointSecretRotated, events.TypeWebhookEndpointDeleted:
		return true
	}
	return false
}

// Apply implements Projection.
func (WebhookEndpoints) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	const name = "webhook_endpoints"
	version := int64(ev.Revision) + 1
	switch ev.Type {
	case events.TypeWebhookEndpointCreated:
		var e events.WebhookEndpointCreated
		if err := decode(name, ev, &e); err != nil {
			return err
		}
		hi, lo := key(ev)
		batch.Queue(`
			INSERT INTO webhook_endpoints (position_hi, position_lo, id, account_id, stream_name, url, event_types,
				description, enabled, secret_generation, created_at, updated_at, version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)
			ON CONFLICT (id) DO NOTHING`,
			hi, lo, e.EndpointID, e.AccountID, ev.Stream, e.URL, nonNilStrings(e.EventTypes),
			nullable(e.Description), e.Enabled, e.SecretGeneration, e.CreatedAt, version)
	case events.TypeWebhookEndpointUpdated:
		var e events.WebhookEndpointUpdated
		if err := decode(name, ev, &e); err != nil {
			return err
		}
		batch.Queue(`
			UPDATE webhook_endpoints SET url = $2, event_types = $3, description = $4, enabled = $5,
				disabled_reason = $6, updated_at = $7, version = $8
			WHERE id = $1`,
			e.EndpointID, e.URL, nonNilStrings(e.EventTypes), nullable(e.Description), e.Enabled,
			nullable(e.DisabledReason), e.UpdatedAt, version)
	case events.TypeWebhookEndpointSecretRotated:
		var e events.WebhookEndpointSecretRotated
		if err := decode(name, ev, &e); err != nil {
			return err
		}
		batch.Queue(`
			UPDATE webhook_endpoints SET secret_generation = $2, previous_valid_until = $3, updated_at = $4, version = $5
			WHERE id = $1`,
			e.EndpointID, e.SecretGeneration, e.PreviousValidUntil, e.RotatedAt, version)
	case events.TypeWebhookEndpointDeleted:
		var e events.WebhookEndpointDeleted
		if err := decode(name, ev, &e); err != nil {
			return err
		}
		batch.Queue(`UPDATE webhook_endpoints SET deleted_at = $2, updated_at = $2, version = $3 WHERE id = $1`,
			e.EndpointID, e.DeletedAt, version)
	}
	return nil
}

// nonNilStrings stores an absent list as an empty array, never NULL.
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
