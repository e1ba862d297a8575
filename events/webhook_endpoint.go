package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// KindWebhookEndpoint is the stream kind of webhook endpoints: one stream
// per endpoint, named like every created entity's (StreamName).
const KindWebhookEndpoint = "webhook_endpoint"

// The events of a webhook endpoint's stream. They are not public events:
// the feed and the deliveries never show them.
const (
	TypeWebhookEndpointCreated       = "WebhookEndpointCreated"
	TypeWebhookEndpointUpdated       = "WebhookEndpointUpdated"
	TypeWebhookEndpointSecretRotated = "WebhookEndpointSecretRotated"
	TypeWebhookEndpointDeleted       = "WebhookEndpointDeleted"
)

// PreviousSecretValidity is how long the previous generation of an
// endpoint's secret keeps signing beside the new one after a rotation, so
// that a receiver can switch to the new secret without refusing a delivery.
const PreviousSecretValidity = 24 * time.Hour

// WebhookEndpointCreated registers a URL that receives the account's public
// events. The signing secret is never recorded: it is derived from the
// service's master key, the account, the endpoint and SecretGeneration.
type WebhookEndpointCreated struct {
	EndpointID string `json:"endpoint_id"`
	AccountID  string `json:"account_id"`
	URL        string `json:"url"`
	// EventTypes are the public event types sent; empty means all.
	EventTypes       []string  `json:"event_types"`
	Description      string    `json:"description,omitempty"`
	Enabled          bool      `json:"enabled"`
	SecretGeneration int       `json:"secret_generation"`
	CreatedAt        time.Time `json:"created_at"`
}

// WebhookEndpointUpdated records an update of an endpoint (a merge patch
// by its owner, or the dispatcher disabling it): its whole mutable state
// after the update, and Changed, the fields the update changed.
type WebhookEndpointUpdated struct {
	EndpointID  string   `json:"endpoint_id"`
	AccountID   string   `json:"account_id"`
	URL         string   `json:"url"`
	EventTypes  []string `json:"event_types"`
	Description string   `json:"description,omitempty"`
	Enabled     bool     `json:"enabled"`
	// DisabledReason says why the service disabled the endpoint; empty
	// when it is enabled or its owner disabled it.
	DisabledReason string    `json:"disabled_reason,omitempty"`
	Changed        []string  `json:"changed"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// WebhookEndpointSecretRotated starts a new generation of the endpoint's
// secret; the previous one signs beside it until PreviousValidUntil
// (RotatedAt + PreviousSecretValidity).
type WebhookEndpointSecretRotated struct {
	EndpointID         string    `json:"endpoint_id"`
	AccountID          string    `json:"account_id"`
	SecretGeneration   int       `json:"secret_generation"`
	PreviousValidUntil time.Time `json:"previous_valid_until"`
	RotatedAt          time.Time `json:"rotated_at"`
}

// WebhookEndpointDeleted deletes an endpoint: nothing more is delivered to
// it, and it is gone from the API. Its stream stays (the audit log).
type WebhookEndpointDeleted struct {
	EndpointID string    `json:"endpoint_id"`
	AccountID  string    `json:"account_id"`
	DeletedAt  time.Time `json:"deleted_at"`
}

// ErrNotAWebhookEndpointStream means a stream does not start with
// WebhookEndpointCreated.
var ErrNotAWebhookEndpointStream = errors.New("events: not a webhook endpoint stream")

// WebhookEndpoint is an endpoint as its stream's events make it: the
// created endpoint with every later update and rotation applied (the
// embedded WebhookEndpointCreated holds the current fields and secret
// generation; CreatedAt stays the creation time).
type WebhookEndpoint struct {
	WebhookEndpointCreated
	DisabledReason string
	// PreviousValidUntil is when the previous secret generation stops
	// signing; nil before the first rotation.
	PreviousValidUntil *time.Time
	DeletedAt          *time.Time
	UpdatedAt          time.Time
	// Version counts the stream's events: 1 when created, +1 per event.
	Version int
}

// FoldWebhookEndpoint folds a webhook endpoint stream's events, in
// revision order.
func FoldWebhookEndpoint(evs []RecordedEvent) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	for i, ev := range evs {
		if err := e.apply(ev, i == 0); err != nil {
			return WebhookEndpoint{}, fmt.Errorf("fold %s at revision %d: %w", ev.Stream, ev.Revision, err)
		}
	}
	if e.Version == 0 {
		return WebhookEndpoint{}, ErrNotAWebhookEndpointStream
	}
	return e, nil
}

func (e *WebhookEndpoint) apply(ev RecordedEvent, first bool) error {
	if first != (ev.Type == TypeWebhookEndpointCreated) {
		return ErrNotAWebhookEndpointStream
	}
	var err error
	switch ev.Type {
	case TypeWebhookEndpointCreated:
		err = json.Unmarshal(ev.Data, &e.WebhookEndpointCreated)
		e.UpdatedAt = e.CreatedAt
	case TypeWebhookEndpointUpdated:
		var u WebhookEndpointUpdated
		err = json.Unmarshal(ev.Data, &u)
		e.URL, e.EventTypes, e.Description, e.Enabled = u.URL, u.EventTypes, u.Description, u.Enabled
		e.DisabledReason, e.UpdatedAt = u.DisabledReason, u.UpdatedAt
	case TypeWebhookEndpointSecretRotated:
		var r WebhookEndpointSecretRotated
		err = json.Unmarshal(ev.Data, &r)
		e.SecretGeneration, e.PreviousValidUntil, e.UpdatedAt = r.SecretGeneration, &r.PreviousValidUntil, r.RotatedAt
	case TypeWebhookEndpointDeleted:
		var d WebhookEndpointDeleted
		err = json.Unmarshal(ev.Data, &d)
		e.DeletedAt, e.UpdatedAt = &d.DeletedAt, d.DeletedAt
	default:
		return fmt.Errorf("unexpected event type %q", ev.Type)
	}
	e.Version++
	return err
}
