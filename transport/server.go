// Package transport is the HTTP edge: routes, request parsing, auth
// middleware, the one error table and JSON rendering.
//
// Where things are: routes.go is the route table; companies.go,
// customers.go and invoices.go hold each resource's handlers (create, get,
// list, and an invoice's issue and void); probes.go the health probes and
// the OpenAPI document; errors.go the one table that turns errors into
// statuses; conditional.go ETags and If-None-Match; params.go and body.go
// what a request may carry; render*.go the response bodies.
package transport

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/einvoice/pdf"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// DefaultMaxBodyBytes is the 413 threshold when Config.MaxBodyBytes is not
// set, and MAX_BODY_BYTES's default: 1 MiB.
const DefaultMaxBodyBytes = 1 << 20

// Config holds the server's collaborators, built once by cmd.
type Config struct {
	Commands *command.Handler
	Queries  *query.Store
	Auth     Authenticator
	Logger   *slog.Logger
	// MaxBodyBytes is the 413 threshold (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Ready reports whether the service can serve (database, event store,
	// projectors); nil means always ready.
	Ready func(ctx context.Context) error
	// QuarantinedEvents counts the events projections set aside because
	// they could not apply them; /readyz reports it. One such event does
	// not make the service unready: every other account is served.
	QuarantinedEvents func(ctx context.Context) (int64, error)
	// Metrics, when set, observes every request and every successful
	// command (metrics.go).
	Metrics Metrics
	// PDF renders GET .../invoices/{invoice_id}/pdf; made once (it keeps
	// what every render needs). Without it that route answers 500.
	PDF *pdf.Renderer
	// Deliveries is the webhook delivery log (webhook_deliveries.go);
	// without it those routes answer 500.
	Deliveries WebhookDeliveries
	// WebhookEndpointExists, when set, tells whether the account has the
	// endpoint, for the delivery log's 404.
	WebhookEndpointExists func(ctx context.Context, accountID, endpointID string) (bool, error)
	// EventStore is read to render the public events of GET /v1/events
	// (EventRenderer). Without it those routes answer 500.
	EventStore events.Store
}

type server struct {
	Config
	logger *slog.Logger
	bodies bodyBuffers
}

// NewHandler returns the service's HTTP handler.
func NewHandler(cfg Config) http.Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &server{Config: cfg, logger: cfg.Logger}
	h := withRequestID(s.withAccessLog(cleanPaths(s.routes())))
	if cfg.Metrics != nil {
		h = withMetrics(cfg.Metrics, h)
	}
	return h
}

// read and write wrap an operation's handler: the token is verified and
// must grant reading (either scope) or writing.
func (s *server) read(h handlerFunc) http.Handler  { return s.adapt(s.authenticated(canRead, h)) }
func (s *server) write(h handlerFunc) http.Handler { return s.adapt(s.authenticated(canWrite, h)) }
