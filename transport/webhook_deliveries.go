package transport

import (
	"context"
	"errors"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/webhook"
)

// WebhookDeliveries is an endpoint's delivery log; *webhook.Deliveries
// implements it.
type WebhookDeliveries interface {
	List(ctx context.Context, accountID, endpointID, after string, limit int) ([]webhook.Delivery, string, error)
	Retry(ctx context.Context, accountID, endpointID, deliveryID, key string) (webhook.Delivery, error)
	HasDeliveries(ctx context.Context, accountID, endpointID string) (bool, error)
}

// deliveryJSON is a delivery: attempts counts its attempts, attempt_log
// lists them, oldest first.
type deliveryJSON struct {
	ID            string        `json:"id"`
	EndpointID    string        `json:"endpoint_id"`
	EventID       string        `json:"event_id"`
	EventType     string        `json:"event_type"`
	Status        string        `json:"status"`
	Attempts      int           `json:"attempts"`
	NextAttemptAt *string       `json:"next_attempt_at"`
	CreatedAt     string        `json:"created_at"`
	AttemptLog    []attemptJSON `json:"attempt_log"`
}

type attemptJSON struct {
	At         string `json:"at"`
	StatusCode *int   `json:"status_code"`
	LatencyMS  int    `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

func deliveryFromLog(d webhook.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Status: d.Status, Attempts: len(d.Attempts), NextAttemptAt: nullableTimestamp(d.NextAttemptAt),
		CreatedAt: timestamp(d.CreatedAt), AttemptLog: make([]attemptJSON, len(d.Attempts))}
	for i, a := range d.Attempts {
		out.AttemptLog[i] = attemptJSON{At: timestamp(a.At), StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error}
	}
	return out
}

// errNoDeliveries is the 500 of a server built without a delivery log.
var errNoDeliveries = errors.New("transport: no webhook delivery log configured")

func (s *server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	if s.Deliveries == nil {
		return errNoDeliveries
	}
	perr := &command.ValidationError{}
	params := parseList(perr, r.URL.Query())
	endpointID := pathUUID(perr, "webhook_endpoint_id", r.PathValue("webhook_endpoint_id"))
	if err := perr.OrNil(); err != nil {
		return err
	}
	account := principal(r).AccountID
	if err := s.webhookEndpointKnown(r.Context(), account, endpointID); err != nil {
		return err
	}
	items, next, err := s.Deliveries.List(r.Context(), account, endpointID, params.page.After, params.page.Limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(query.Page[webhook.Delivery]{Items: items, NextCursor: next}, deliveryFromLog))
	return nil
}

func (s *server) retryWebhookDelivery(w http.ResponseWriter, r *http.Request) error {
	if s.Deliveries == nil {
		return errNoDeliveries
	}
	perr := &command.ValidationError{}
	endpointID := pathUUID(perr, "webhook_endpoint_id", r.PathValue("webhook_endpoint_id"))
	deliveryID := pathUUID(perr, "delivery_id", r.PathValue("delivery_id"))
	if err := perr.OrNil(); err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if err := command.CheckIdempotencyKey(key); err != nil {
		return err
	}
	d, err := s.Deliveries.Retry(r.Context(), principal(r).AccountID, endpointID, deliveryID, key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveryFromLog(d))
	return nil
}

// webhookEndpointKnown is the delivery log's 404: an endpoint of another
// account, or none, is not found. WebhookEndpointExists answers when cmd
// sets it (the endpoints' read model); else an endpoint is known by its
// deliveries.
func (s *server) webhookEndpointKnown(ctx context.Context, accountID, endpointID string) error {
	exists := s.WebhookEndpointExists
	if exists == nil {
		exists = s.Deliveries.HasDeliveries
	}
	ok, err := exists(ctx, accountID, endpointID)
	if err != nil {
		return err
	}
	if !ok {
		return webhook.ErrNotFound
	}
	return nil
}
