package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/invoicing/invoicing/events"
)

// Webhook endpoints: an account registers URLs that receive its public
// events, signed with a secret the service derives and shows twice only
// (in the create's and the rotation's answers).

var (
	opCreateWebhookEndpoint  = operation{name: "webhook_endpoints.create", kind: events.KindWebhookEndpoint}
	opUpdateWebhookEndpoint  = operation{name: "webhook_endpoints.update", kind: events.KindWebhookEndpoint}
	opRotateWebhookSecret    = operation{name: "webhook_endpoints.rotate_secret", kind: events.KindWebhookEndpoint}
	opDeleteWebhookEndpoint  = operation{name: "webhook_endpoints.delete", kind: events.KindWebhookEndpoint}
	opDisableWebhookEndpoint = operation{name: "webhook_endpoints.disable", kind: events.KindWebhookEndpoint}
)

// AllEventTypes is the event_types entry that subscribes to every public
// event type, those to come included; it stands alone.
const AllEventTypes = "*"

// MaxWebhookURLLength is the longest endpoint URL (webhook.MaxURLLength,
// which this package cannot import: cmd's tests hold the two equal).
const MaxWebhookURLLength = 2048

var (
	webhookURL         = text{min: 1, max: MaxWebhookURLLength}
	webhookDescription = text{min: 1, max: 500}
)

// URLChecker decides whether a URL may receive deliveries (the scheme, and
// where its host resolves to). cmd wires webhook.Guard, so that this
// package neither dials nor resolves.
type URLChecker interface {
	// CheckURL returns a *URLRefusedError when the URL is refused, nil
	// when it is accepted, any other error when it could not decide.
	CheckURL(ctx context.Context, raw string) error
}

// URLRefusedError says why an endpoint URL is refused; its Reason is for
// the client (422 at url).
type URLRefusedError struct {
	Reason string
}

func (e *URLRefusedError) Error() string { return "the URL is refused: " + e.Reason }

// SecretDeriver derives the signing secret of one generation of an
// endpoint's secret from the service's master key (webhook.Secret); cmd
// holds the key.
type SecretDeriver interface {
	Secret(accountID, endpointID string, generation int) (string, error)
}

// WebhookEndpointDirectory finds an endpoint's stream, deleted endpoints
// included (a change of one is ErrInvalidState, not a 404), or answers
// events.ErrNotFound.
type WebhookEndpointDirectory interface {
	WebhookEndpointStream(ctx context.Context, accountID, endpointID string) (string, error)
}

// WebhookEndpointRequest is a validated create-endpoint request, and the
// state an update's merge patch applies to. Its JSON form is the request's
// fingerprint.
type WebhookEndpointRequest struct {
	URL string `json:"url"`
	// EventTypes is nil when omitted (all), else as sent.
	EventTypes  []string `json:"event_types,omitempty"`
	Description string   `json:"description,omitempty"`
	// Enabled is set by updates only; nil means enabled.
	Enabled *bool `json:"enabled,omitempty"`
}

// UpdateWebhookEndpoint is a merge patch (RFC 7396) over url, event_types,
// description and enabled.
type UpdateWebhookEndpoint = Patch[WebhookEndpointRequest]

// EmptyRequest is the body of a request that takes none: empty, or {}.
type EmptyRequest struct{}

// WebhookEndpointWithSecret is an endpoint with its current signing secret:
// what a create and a rotation answer, the only answers that show it.
type WebhookEndpointWithSecret struct {
	Endpoint events.WebhookEndpoint
	Secret   string
}

var (
	webhookCreateFields = []string{"url", "event_types", "description"}
	webhookUpdateFields = []string{"url", "event_types", "description", "enabled"}
	webhookReadOnly     = []string{"id", "disabled_reason", "secret_generation", "previous_valid_until", "secret",
		"created_at", "updated_at", "version"}
)

// ParseCreateWebhookEndpoint decodes and validates a create-endpoint body
// (Parsed): event_types are checked against Config.PublicEventTypes. The
// URL's host is resolved by the use case, not here.
func (h *Handler) ParseCreateWebhookEndpoint(raw []byte) (Parsed[WebhookEndpointRequest], error) {
	return parseBody(raw, h.readWebhookEndpoint(webhookCreateFields))
}

// ParseUpdateWebhookEndpoint decodes an update-endpoint merge patch and
// checks its fields (Parsed).
func (h *Handler) ParseUpdateWebhookEndpoint(raw []byte) (Parsed[UpdateWebhookEndpoint], error) {
	return parsePatch(raw, webhookUpdateFields, webhookReadOnly, h.readWebhookEndpoint(webhookUpdateFields))
}

// ParseEmpty decodes the body of a request that takes none (a rotation):
// empty, or {}.
func ParseEmpty(raw []byte) (Parsed[EmptyRequest], error) {
	return parseBody(raw, func(r *reader, body map[string]any) EmptyRequest {
		r.openObject("", body)
		return EmptyRequest{}
	})
}

func (h *Handler) readWebhookEndpoint(fields []string) func(*reader, map[string]any) WebhookEndpointRequest {
	return func(r *reader, body map[string]any) WebhookEndpointRequest {
		o, _ := r.openObject("", body, fields...)
		in := WebhookEndpointRequest{
			URL:         o.reqStr("url", webhookURL),
			Description: o.str("description", webhookDescription),
			EventTypes:  h.readEventTypes(o),
		}
		if v, ok := o.get("enabled"); ok {
			if b, isBool := v.(bool); isBool {
				in.Enabled = &b
			} else {
				r.add(join(o.path, "enabled"), "must be a boolean")
			}
		}
		return in
	}
}

// maxEventTypes bounds event_types (each type is listed once at most, so
// the public types alone bound it; this keeps a huge body from being
// checked item by item).
const maxEventTypes = 100

// readEventTypes reads event_types: public event types, each once, or "*"
// alone.
func (h *Handler) readEventTypes(o object) []string {
	const field = "event_types"
	items, ok := o.array(field, 1, maxEventTypes, false)
	if !ok {
		return nil
	}
	path := join(o.path, field)
	types := make([]string, 0, len(items))
	for i, item := range items {
		s, isString := item.(string)
		switch {
		case !isString:
			o.r.add(index(path, i), "must be a string")
		case s == AllEventTypes && len(items) > 1:
			o.r.add(index(path, i), "%q stands alone: it subscribes to every type", AllEventTypes)
		case s != AllEventTypes && !slices.Contains(h.cfg.PublicEventTypes, s):
			o.r.add(index(path, i), "must be a public event type (docs/public-events.md) or %q", AllEventTypes)
		case slices.Contains(types, s):
			o.r.add(index(path, i), "is listed twice")
		default:
			types = append(types, s)
		}
	}
	return types
}

// CreateWebhookEndpoint registers an endpoint of the caller's account, or
// replays the one an earlier identical request with the same key created;
// either way with its first secret, derived again (so the same).
func (h *Handler) CreateWebhookEndpoint(ctx context.Context, req Request, body Parsed[WebhookEndpointRequest]) (Result[WebhookEndpointWithSecret], error) {
	var out Result[WebhookEndpointWithSecret]
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return out, err
	}
	in, err := body.Valid()
	if err != nil {
		return out, err
	}
	fp, err := fingerprint(opCreateWebhookEndpoint, "", in)
	if err != nil {
		return out, err
	}
	// A replay answers what was created even if the URL's host resolves
	// elsewhere by now, so it is looked for before the URL is checked.
	stream := events.StreamName(opCreateWebhookEndpoint.kind, req.Actor.AccountID, opCreateWebhookEndpoint.name, "", req.IdempotencyKey)
	var created Result[events.WebhookEndpointCreated]
	done, err := h.replay(ctx, stream, fp, &created.Value)
	switch {
	case err != nil:
		return out, err
	case done:
		created.Replayed = true
	default:
		if err := h.checkWebhookURL(ctx, in.URL); err != nil {
			return out, err
		}
		build := func() (string, events.WebhookEndpointCreated, error) {
			id, err := h.newID()
			if err != nil {
				return "", events.WebhookEndpointCreated{}, err
			}
			return events.TypeWebhookEndpointCreated, in.created(id, req.Actor.AccountID, h.now()), nil
		}
		if created, err = create(ctx, h, req, opCreateWebhookEndpoint, "", fp, build); err != nil {
			return out, err
		}
	}
	ep := events.WebhookEndpoint{WebhookEndpointCreated: created.Value, UpdatedAt: created.Value.CreatedAt, Version: 1}
	return h.withSecret(ep, created.Replayed)
}

func (in WebhookEndpointRequest) created(id, accountID string, now time.Time) events.WebhookEndpointCreated {
	return events.WebhookEndpointCreated{
		EndpointID: id, AccountID: accountID, URL: in.URL, EventTypes: storedEventTypes(in.EventTypes),
		Description: in.Description, Enabled: true, SecretGeneration: 1, CreatedAt: now,
	}
}

// storedEventTypes is a request's event_types as the events record them:
// [] for all.
func storedEventTypes(types []string) []string {
	if len(types) == 0 || (len(types) == 1 && types[0] == AllEventTypes) {
		return []string{}
	}
	return types
}

// checkWebhookURL asks the URLChecker; a refusal is a violation at url.
func (h *Handler) checkWebhookURL(ctx context.Context, raw string) error {
	if h.cfg.URLChecker == nil {
		return errors.New("command: no URLChecker configured")
	}
	err := h.cfg.URLChecker.CheckURL(ctx, raw)
	var refused *URLRefusedError
	if errors.As(err, &refused) {
		return &ValidationError{Violations: []Violation{{Path: "url", Message: refused.Reason}}}
	}
	if err != nil {
		return fmt.Errorf("check the endpoint URL: %w", err)
	}
	return nil
}

// withSecret derives the endpoint's current secret.
func (h *Handler) withSecret(ep events.WebhookEndpoint, replayed bool) (Result[WebhookEndpointWithSecret], error) {
	if h.cfg.WebhookSecrets == nil {
		return Result[WebhookEndpointWithSecret]{}, errors.New("command: no webhook SecretDeriver configured")
	}
	secret, err := h.cfg.WebhookSecrets.Secret(ep.AccountID, ep.EndpointID, ep.SecretGeneration)
	if err != nil {
		return Result[WebhookEndpointWithSecret]{}, fmt.Errorf("derive the secret of webhook endpoint %s: %w", ep.EndpointID, err)
	}
	return Result[WebhookEndpointWithSecret]{Value: WebhookEndpointWithSecret{Endpoint: ep, Secret: secret}, Replayed: replayed}, nil
}

// webhookEndpoints is the endpoint entity of lifecycle operations.
var webhookEndpoints = entity[events.WebhookEndpoint]{kind: "webhook endpoint", fold: events.FoldWebhookEndpoint,
	version: func(e events.WebhookEndpoint) int { return e.Version },
	id:      func(e events.WebhookEndpoint) string { return e.EndpointID }}

// webhookEndpointLifecycle starts a lifecycle operation on the caller's
// endpoint, in the order of a write's checks: the key (400), the endpoint
// (404), the body's violations (422).
func (h *Handler) webhookEndpointLifecycle(ctx context.Context, req Request, op operation, endpointID string, input func() (any, error)) (lifecycle[events.WebhookEndpoint], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return lifecycle[events.WebhookEndpoint]{}, err
	}
	if h.cfg.WebhookEndpoints == nil {
		return lifecycle[events.WebhookEndpoint]{}, errors.New("command: no WebhookEndpointDirectory configured")
	}
	stream, err := h.cfg.WebhookEndpoints.WebhookEndpointStream(ctx, req.Actor.AccountID, endpointID)
	if err != nil {
		return lifecycle[events.WebhookEndpoint]{}, fmt.Errorf("webhook endpoint %s: %w", endpointID, err)
	}
	in, err := input()
	if err != nil {
		return lifecycle[events.WebhookEndpoint]{}, err
	}
	return newLifecycle(req, webhookEndpoints, op, endpointID, endpointID, stream, in)
}

// notDeleted is ErrInvalidState for a deleted endpoint.
func notDeleted(e events.WebhookEndpoint) error {
	if e.DeletedAt != nil {
		return stateOf("webhook_endpoint_id", "the webhook endpoint is deleted")
	}
	return nil
}

// UpdateWebhookEndpoint applies a merge patch to the caller's endpoint: the
// endpoint as its create request would render it (enabled included),
// patched, must pass every rule of a create, and a new URL the URLChecker.
// Enabling an endpoint clears its disabled_reason. A patch that changes
// nothing appends nothing.
func (h *Handler) UpdateWebhookEndpoint(ctx context.Context, req Request, endpointID string, body Parsed[UpdateWebhookEndpoint]) (Result[events.WebhookEndpoint], error) {
	lc, err := h.webhookEndpointLifecycle(ctx, req, opUpdateWebhookEndpoint, endpointID, func() (any, error) { return body.Valid() })
	if err != nil {
		return Result[events.WebhookEndpoint]{}, err
	}
	patch, _ := body.Valid()
	return change(ctx, h, lc, func(e events.WebhookEndpoint) (events.EventData, error) {
		if err := notDeleted(e); err != nil {
			return events.EventData{}, err
		}
		before, err := asObject(webhookEndpointRequest(e))
		if err != nil {
			return events.EventData{}, err
		}
		in, err := patch.Apply(before)
		if err != nil {
			return events.EventData{}, err
		}
		after, err := asObject(webhookEndpointRequest(in.applyTo(e)))
		if err != nil {
			return events.EventData{}, err
		}
		changed := changedFields(before, after)
		if len(changed) == 0 {
			return events.EventData{}, nil
		}
		if in.URL != e.URL {
			if err := h.checkWebhookURL(ctx, in.URL); err != nil {
				return events.EventData{}, err
			}
		}
		next := in.applyTo(e)
		u := events.WebhookEndpointUpdated{EndpointID: e.EndpointID, AccountID: e.AccountID, URL: next.URL,
			EventTypes: next.EventTypes, Description: next.Description, Enabled: next.Enabled,
			DisabledReason: next.DisabledReason, Changed: changed, UpdatedAt: h.now()}
		return newEvent(lc.stream, uint64(e.Version), events.TypeWebhookEndpointUpdated, u, lc.metadata)
	})
}

// applyTo is the endpoint with the request's state: a disabled endpoint
// keeps its reason while it stays disabled.
func (in WebhookEndpointRequest) applyTo(e events.WebhookEndpoint) events.WebhookEndpoint {
	enabled := in.Enabled == nil || *in.Enabled
	if enabled || e.Enabled {
		e.DisabledReason = ""
	}
	e.URL, e.EventTypes, e.Description, e.Enabled = in.URL, storedEventTypes(in.EventTypes), in.Description, enabled
	return e
}

// webhookEndpointRequest renders an endpoint as the request that would
// make it, enabled explicit: what an update's merge patch applies to.
func webhookEndpointRequest(e events.WebhookEndpoint) WebhookEndpointRequest {
	types := e.EventTypes
	if len(types) == 0 {
		types = []string{AllEventTypes}
	}
	return WebhookEndpointRequest{URL: e.URL, EventTypes: types, Description: e.Description, Enabled: ptr(e.Enabled)}
}

// RotateWebhookSecret starts a new generation of the endpoint's secret and
// answers it; the previous generation keeps signing beside it for
// events.PreviousSecretValidity. A replay answers the same secret.
func (h *Handler) RotateWebhookSecret(ctx context.Context, req Request, endpointID string, body Parsed[EmptyRequest]) (Result[WebhookEndpointWithSecret], error) {
	lc, err := h.webhookEndpointLifecycle(ctx, req, opRotateWebhookSecret, endpointID, func() (any, error) { return body.Valid() })
	if err != nil {
		return Result[WebhookEndpointWithSecret]{}, err
	}
	res, err := change(ctx, h, lc, func(e events.WebhookEndpoint) (events.EventData, error) {
		if err := notDeleted(e); err != nil {
			return events.EventData{}, err
		}
		at := h.now()
		r := events.WebhookEndpointSecretRotated{EndpointID: e.EndpointID, AccountID: e.AccountID,
			SecretGeneration: e.SecretGeneration + 1, PreviousValidUntil: at.Add(events.PreviousSecretValidity), RotatedAt: at}
		return newEvent(lc.stream, uint64(e.Version), events.TypeWebhookEndpointSecretRotated, r, lc.metadata)
	})
	if err != nil {
		return Result[WebhookEndpointWithSecret]{}, err
	}
	return h.withSecret(res.Value, res.Replayed)
}

// DeleteWebhookEndpoint deletes the caller's endpoint: nothing more is
// delivered to it, and reads no longer find it. Deleting a deleted
// endpoint (with another key) is ErrInvalidState.
func (h *Handler) DeleteWebhookEndpoint(ctx context.Context, req Request, endpointID string) (Result[events.WebhookEndpoint], error) {
	lc, err := h.webhookEndpointLifecycle(ctx, req, opDeleteWebhookEndpoint, endpointID, func() (any, error) { return EmptyRequest{}, nil })
	if err != nil {
		return Result[events.WebhookEndpoint]{}, err
	}
	return change(ctx, h, lc, func(e events.WebhookEndpoint) (events.EventData, error) {
		if err := notDeleted(e); err != nil {
			return events.EventData{}, err
		}
		d := events.WebhookEndpointDeleted{EndpointID: e.EndpointID, AccountID: e.AccountID, DeletedAt: h.now()}
		return newEvent(lc.stream, uint64(e.Version), events.TypeWebhookEndpointDeleted, d, lc.metadata)
	})
}

// DisableWebhookEndpoint is the service disabling an endpoint whose
// deliveries keep failing (the dispatcher calls it, with a Request naming
// itself as the actor and an idempotency key of its choosing): enabled
// false, with reason as its disabled_reason. An endpoint already disabled,
// or deleted, is left as it is.
func (h *Handler) DisableWebhookEndpoint(ctx context.Context, req Request, endpointID, reason string) (Result[events.WebhookEndpoint], error) {
	input := struct {
		Reason string `json:"reason"`
	}{reason}
	lc, err := h.webhookEndpointLifecycle(ctx, req, opDisableWebhookEndpoint, endpointID, func() (any, error) { return input, nil })
	if err != nil {
		return Result[events.WebhookEndpoint]{}, err
	}
	return change(ctx, h, lc, func(e events.WebhookEndpoint) (events.EventData, error) {
		if e.DeletedAt != nil || !e.Enabled {
			return events.EventData{}, nil
		}
		u := events.WebhookEndpointUpdated{EndpointID: e.EndpointID, AccountID: e.AccountID, URL: e.URL,
			EventTypes: e.EventTypes, Description: e.Description, Enabled: false, DisabledReason: reason,
			Changed: []string{"enabled"}, UpdatedAt: h.now()}
		return newEvent(lc.stream, uint64(e.Version), events.TypeWebhookEndpointUpdated, u, lc.metadata)
	})
}
