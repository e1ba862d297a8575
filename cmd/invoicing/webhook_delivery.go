package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/cmd/invoicing/internal/telemetry"
	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
	"github.com/invoicing/invoicing/publicevents"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/webhook"
	"github.com/invoicing/invoicing/webhook/migrations"
)

// deliveryConfig tunes webhook delivery (docs/configuration.md).
type deliveryConfig struct {
	RetryFor     time.Duration // WEBHOOK_RETRY_FOR: retries after the first attempt
	DisableAfter time.Duration // WEBHOOK_DISABLE_AFTER: a dead endpoint is disabled
	Retention    time.Duration // WEBHOOK_DELIVERY_RETENTION: finished deliveries kept
	Timeout      time.Duration // WEBHOOK_TIMEOUT: an attempt's bound
	// BackoffMin and BackoffMax (WEBHOOK_BACKOFF_MIN, _MAX) shape the retry
	// delays; tests shorten them to see many retries in seconds.
	BackoffMin, BackoffMax time.Duration
	Workers                int // WEBHOOK_WORKERS: attempts in flight per instance
	// resolver, when set (by tests), resolves endpoint hosts for the URL
	// guard, at registration and at delivery.
	resolver webhook.Resolver
}

// loadDeliveryConfig reads the WEBHOOK_* delivery settings.
func loadDeliveryConfig(getenv func(string) string, cfg *config, problems *[]error) {
	d := deliveryConfig{Workers: 16}
	d.RetryFor = duration(getenv, "WEBHOOK_RETRY_FOR", webhook.DefaultRetryFor, problems)
	d.DisableAfter = duration(getenv, "WEBHOOK_DISABLE_AFTER", webhook.DefaultDisableAfter, problems)
	d.Retention = duration(getenv, "WEBHOOK_DELIVERY_RETENTION", webhook.DefaultRetention, problems)
	d.Timeout = duration(getenv, "WEBHOOK_TIMEOUT", webhook.DefaultTimeout, problems)
	d.BackoffMin = duration(getenv, "WEBHOOK_BACKOFF_MIN", webhook.DefaultBackoffMin, problems)
	d.BackoffMax = duration(getenv, "WEBHOOK_BACKOFF_MAX", webhook.DefaultBackoffMax, problems)
	if d.BackoffMax < d.BackoffMin {
		*problems = append(*problems, fmt.Errorf("WEBHOOK_BACKOFF_MAX=%s: want at least WEBHOOK_BACKOFF_MIN (%s)", d.BackoffMax, d.BackoffMin))
	}
	if v := getenv("WEBHOOK_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1000 {
			*problems = append(*problems, fmt.Errorf("WEBHOOK_WORKERS=%q: want a number from 1 to 1000", v))
		}
		d.Workers = n
	}
	cfg.Delivery = d
}

// deliveryEndpoints gives webhook delivery the account's live endpoints
// from the read model, each with the secrets that sign for it now: the
// current generation's, and the previous one's while it is still valid
// after a rotation.
type deliveryEndpoints struct {
	q   *query.Store
	key []byte
	now func() time.Time
}

// For implements webhook.Endpoints.
func (d deliveryEndpoints) For(ctx context.Context, accountID string) ([]webhook.Endpoint, error) {
	eps, err := d.q.WebhookEndpointsFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]webhook.Endpoint, len(eps))
	for i, e := range eps {
		secrets, err := d.secrets(e)
		if err != nil {
			return nil, err
		}
		out[i] = webhook.Endpoint{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, Secrets: secrets,
			CreatedAt: e.CreatedAt, Position: e.Position}
	}
	return out, nil
}

func (d deliveryEndpoints) secrets(e query.WebhookEndpoint) ([]string, error) {
	var secrets []string
	for _, gen := range e.SigningGenerations(d.now()) {
		secret, err := webhook.Secret(d.key, e.AccountID, e.ID, gen)
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", e.ID, err)
		}
		secrets = append(secrets, secret)
	}
	return secrets, nil
}

// disableEndpoint is the senders' webhook.SenderOptions.Disable: the write
// side disables the endpoint (WebhookEndpointUpdated, enabled false), with
// the dispatcher as the actor. The idempotency key is derived from the
// endpoint and the reason, which names the failing streak's start: a retry
// of the same disabling replays, a later streak is a new one.
func disableEndpoint(commands *command.Handler) func(ctx context.Context, accountID, endpointID, reason string) error {
	return func(ctx context.Context, accountID, endpointID, reason string) error {
		sum := sha256.Sum256([]byte(endpointID + "\x00" + reason))
		req := command.Request{
			Actor:          command.Actor{AccountID: accountID, Subject: "webhook-dispatcher"},
			RequestID:      "webhook-disable-" + hex.EncodeToString(sum[:8]),
			IdempotencyKey: "webhook-disable-" + hex.EncodeToString(sum[:16]),
		}
		_, err := commands.DisableWebhookEndpoint(ctx, req, endpointID, reason)
		return err
	}
}

// webhookDelivery is serve's webhook delivery: the dispatcher (one
// instance at a time), this instance's senders, and the delivery log the
// API reads, purged of what is older than retention.
type webhookDelivery struct {
	dispatcher *webhook.Dispatcher
	sender     *webhook.Sender
	log        *webhook.Deliveries
	retention  time.Duration
	logger     *slog.Logger
}

// deliveryWiring is what newWebhookDelivery needs from open.
type deliveryWiring struct {
	cfg      deliveryConfig
	store    events.Store
	pool     *pgxpool.Pool
	logger   *slog.Logger
	group    *projections.Group
	queries  *query.Store
	commands *command.Handler
	key      []byte
	guard    *webhook.Guard
	obs      *observability
}

func newWebhookDelivery(w deliveryWiring) *webhookDelivery {
	eps := deliveryEndpoints{q: w.queries, key: w.key, now: time.Now}
	var sender *webhook.Sender
	log := webhook.NewDeliveries(w.pool, func() { sender.Wake() }) // a manual retry is sent at once
	sender = webhook.NewSender(w.pool, w.store, transport.RenderPublicEvent, eps, w.logger, webhook.SenderOptions{
		Workers: w.cfg.Workers, Timeout: w.cfg.Timeout, RetryFor: w.cfg.RetryFor, DisableAfter: w.cfg.DisableAfter,
		BackoffMin: w.cfg.BackoffMin, BackoffMax: w.cfg.BackoffMax, Guard: w.guard,
		Disable: disableEndpoint(w.commands), Observe: w.obs.webhookObserver(log),
	})
	// The dispatcher reads the endpoints' read model: it waits until that
	// has applied each batch, so an endpoint created just before an event
	// gets it. An event the read model quarantined it has gone past
	// (quarantine.go): waiting on would stop every account's deliveries
	// for one event nobody can apply.
	await := func(ctx context.Context, pos events.Position) error {
		err := w.group.WaitFor(ctx, pos, events.TypeWebhookEndpointCreated)
		if errors.Is(err, projections.ErrQuarantined) {
			return nil
		}
		return err
	}
	dispatcher := webhook.NewDispatcher(w.store, w.pool, w.logger, publicevents.TypeOf, eps, webhook.DispatcherOptions{
		Await: await, Enqueued: sender.Wake,
	})
	return &webhookDelivery{dispatcher: dispatcher, sender: sender, log: log, retention: w.cfg.Retention,
		logger: w.logger.With("component", "webhook-retention")}
}

// run runs the dispatcher, the senders and the log's retention until ctx
// ends.
func (d *webhookDelivery) run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(3)
	go func() {
		defer wg.Done()
		d.dispatcher.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		d.sender.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		d.log.KeepFor(ctx, d.retention, webhook.PurgeInterval, d.logger)
	}()
}

// webhookEndpointExists is the delivery log's 404: the endpoint's read
// model (a deleted endpoint is gone).
func webhookEndpointExists(q *query.Store) func(ctx context.Context, accountID, endpointID string) (bool, error) {
	return func(ctx context.Context, accountID, endpointID string) (bool, error) {
		_, err := q.WebhookEndpoint(ctx, accountID, endpointID)
		if errors.Is(err, events.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// migrateWebhooks creates the delivery tables.
func migrateWebhooks(ctx context.Context, pool *pgxpool.Pool) error {
	if err := migrations.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("migrate the webhook deliveries: %w", err)
	}
	return nil
}

// webhookObserver registers the delivery metrics and returns the senders'
// observer; nil without metrics.
func (o *observability) webhookObserver(log *webhook.Deliveries) func(string) {
	if o.registry == nil {
		return nil
	}
	o.registry.MustRegister(telemetry.NewWebhookQueue(log))
	return telemetry.NewWebhookMetrics(o.registry).Observe
}
