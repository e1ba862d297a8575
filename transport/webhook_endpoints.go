package transport

import (
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Webhook endpoints: POST and GET /v1/webhook_endpoints, GET, PATCH and
// DELETE /v1/webhook_endpoints/{webhook_endpoint_id}, and POST
// .../rotate_secret. The secret is in the create's and the rotation's
// answers only.

func (s *server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, s.Commands.ParseCreateWebhookEndpoint)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateWebhookEndpoint(r.Context(), commandRequest(r), body)
	if err != nil {
		return err
	}
	e := created.Value
	writeCreated(w, webhookEndpointLocation(e.Endpoint.EndpointID), created.Replayed, webhookEndpointWithSecret(e))
	return nil
}

func (s *server) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointParam(r)
	if err != nil {
		return err
	}
	e, err := s.Queries.WebhookEndpoint(r.Context(), principal(r).AccountID, id)
	if err != nil {
		return err
	}
	writeResource(w, r, etag(e.ID, e.Version), webhookEndpointFromQuery(e))
	return nil
}

func (s *server) listWebhookEndpoints(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	params := parseList(perr, r.URL.Query())
	if err := perr.OrNil(); err != nil {
		return err
	}
	page, err := s.Queries.WebhookEndpoints(r.Context(), principal(r).AccountID, params.page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, webhookEndpointFromQuery))
	return nil
}

func (s *server) updateWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointParam(r)
	if err != nil {
		return err
	}
	body, err := decodePatch(r, s.MaxBodyBytes, s.Commands.ParseUpdateWebhookEndpoint)
	if err != nil {
		return err
	}
	changed, err := s.Commands.UpdateWebhookEndpoint(r.Context(), commandRequest(r), id, body)
	if err != nil {
		return err
	}
	e := changed.Value
	writeChanged(w, etag(e.EndpointID, e.Version), changed.Replayed, webhookEndpointFromState(e))
	return nil
}

func (s *server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointParam(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyOptional, command.ParseEmpty)
	if err != nil {
		return err
	}
	rotated, err := s.Commands.RotateWebhookSecret(r.Context(), commandRequest(r), id, body)
	if err != nil {
		return err
	}
	e := rotated.Value
	writeChanged(w, etag(e.Endpoint.EndpointID, e.Endpoint.Version), rotated.Replayed, webhookEndpointWithSecret(e))
	return nil
}

// deleteWebhookEndpoint answers 204, a replay too (marked as one).
func (s *server) deleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointParam(r)
	if err != nil {
		return err
	}
	deleted, err := s.Commands.DeleteWebhookEndpoint(r.Context(), commandRequest(r), id)
	if err != nil {
		return err
	}
	markReplayed(w, deleted.Replayed)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// webhookEndpointParam reads and checks {webhook_endpoint_id}.
func webhookEndpointParam(r *http.Request) (string, error) {
	perr := &command.ValidationError{}
	id := pathUUID(perr, "webhook_endpoint_id", r.PathValue("webhook_endpoint_id"))
	return id, perr.OrNil()
}

func webhookEndpointLocation(id string) string { return "/v1/webhook_endpoints/" + id }

// webhookEndpointJSON is a webhook endpoint; Secret is set in the create's
// and the rotation's answers only.
type webhookEndpointJSON struct {
	ID                 string   `json:"id"`
	URL                string   `json:"url"`
	EventTypes         []string `json:"event_types"`
	Description        string   `json:"description,omitempty"`
	Enabled            bool     `json:"enabled"`
	DisabledReason     *string  `json:"disabled_reason"`
	SecretGeneration   int      `json:"secret_generation"`
	PreviousValidUntil *string  `json:"previous_valid_until"`
	Secret             string   `json:"secret,omitempty"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
	Version            int      `json:"version"`
}

// renderedEventTypes is ["*"] for all (stored as none).
func renderedEventTypes(types []string) []string {
	if len(types) == 0 {
		return []string{command.AllEventTypes}
	}
	return types
}

func nullableText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func webhookEndpointFromState(e events.WebhookEndpoint) webhookEndpointJSON {
	return webhookEndpointJSON{
		ID: e.EndpointID, URL: e.URL, EventTypes: renderedEventTypes(e.EventTypes), Description: e.Description,
		Enabled: e.Enabled, DisabledReason: nullableText(e.DisabledReason), SecretGeneration: e.SecretGeneration,
		PreviousValidUntil: nullableTimestamp(e.PreviousValidUntil), CreatedAt: timestamp(e.CreatedAt),
		UpdatedAt: timestamp(e.UpdatedAt), Version: e.Version,
	}
}

func webhookEndpointWithSecret(e command.WebhookEndpointWithSecret) webhookEndpointJSON {
	out := webhookEndpointFromState(e.Endpoint)
	out.Secret = e.Secret
	return out
}

func webhookEndpointFromQuery(e query.WebhookEndpoint) webhookEndpointJSON {
	return webhookEndpointJSON{
		ID: e.ID, URL: e.URL, EventTypes: renderedEventTypes(e.EventTypes), Description: e.Description,
		Enabled: e.Enabled, DisabledReason: nullableText(e.DisabledReason), SecretGeneration: e.SecretGeneration,
		PreviousValidUntil: nullableTimestamp(e.PreviousValidUntil), CreatedAt: timestamp(e.CreatedAt),
		UpdatedAt: timestamp(e.UpdatedAt), Version: e.Version,
	}
}
